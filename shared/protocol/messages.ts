/**
 * The game room's message protocol, shared by the server, the browser client and TypeScript bots.
 * docs/protocol.md describes it for clients in any language.
 */
import { z } from 'zod';
import type { GameConfig } from '../engine/config';
import { ACTION_ERROR_CODES } from '../engine/errors';
import type { GameMap } from '../engine/map';
import { MOVES } from '../engine/transition';

export const ROOM_NAME = 'cerealbar';
export const LOBBY_NAME = 'lobby';

/** Milliseconds between the server's state patches, unless a room is configured otherwise. */
export const DEFAULT_PATCH_RATE_MS = 20;

/** Longest instruction after sanitising, as in the original game's text box. */
export const MAX_INSTRUCTION_LENGTH = 300;

/** Messages a client sends to the game room, by type. */
export const clientMessageSchemas = {
  move: z.strictObject({ action: z.enum(MOVES) }),
  instruction: z.strictObject({ text: z.string().max(10_000) }),
  endTurn: z.strictObject({}),
  done: z.strictObject({}),
} as const;
export type ClientMessageType = keyof typeof clientMessageSchemas;
export type ClientMessage<T extends ClientMessageType> = z.output<(typeof clientMessageSchemas)[T]>;

const optionalId = z.string().trim().min(1).max(200).optional();

/** Options for joining the game room or the lobby. */
export const joinOptionsSchema = z.object({
  role: z.enum(['leader', 'follower', 'any']).default('any'),
  pool: z.string().trim().min(1).max(50).regex(/^[A-Za-z0-9_-]+$/, 'pool names use letters, digits, _ and -').default('default'),
  /** A private game: only players with the same code meet. */
  code: z.string().trim().min(1).max(50).regex(/^[A-Za-z0-9_-]+$/, 'codes use letters, digits, _ and -').optional(),
  /** A leader asks for the scripted follower instead of waiting for a human. */
  botFollower: z.boolean().default(false),
  /** Crowdsourcing ids, kept as given. */
  workerId: optionalId,
  assignmentId: optionalId,
  hitId: optionalId,
});
export type JoinOptions = z.output<typeof joinOptionsSchema>;

/** Error codes the server sends in `error` messages: the engine's, and the protocol's own. */
export const PROTOCOL_ERROR_CODES = ['UNKNOWN_MESSAGE', 'BAD_MESSAGE', 'NOT_A_PLAYER', 'GAME_NOT_STARTED', 'GAME_ENDED'] as const;
export type ErrorCode = (typeof ACTION_ERROR_CODES)[number] | (typeof PROTOCOL_ERROR_CODES)[number];

export interface ErrorMessage {
  readonly code: ErrorCode;
  readonly message: string;
  /** The message type that was refused. */
  readonly refused: string;
}

/** `map`: sent when the game starts and after a reconnection. */
export interface MapMessage {
  readonly map: GameMap;
  readonly config: GameConfig;
  /** The server's clock (epoch ms) when it sent this: a client corrects its own by the difference to count down to turnDeadline. */
  readonly serverNow: number;
}

/** `queue`: a waiting player's place among the open games of its pool and code lacking the same seat. */
export interface QueueMessage {
  /** 1 for the game the matchmaker fills first. */
  readonly position: number;
  /** How many such games wait, this one included. */
  readonly waiting: number;
}

// Control characters (C0, DEL, C1) other than white space, which becomes a plain space.
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g;
const WHITE_SPACE_RUNS = /[\t\n\r ]+/g;

/** An instruction as it is stored and shown: control characters removed, white space collapsed, trimmed. */
export function sanitizeInstruction(text: string): string {
  return text.replace(CONTROL_CHARACTERS, '').replace(WHITE_SPACE_RUNS, ' ').trim();
}
