/**
 * The game room's message protocol, shared by the server, the browser client and TypeScript bots.
 * docs/protocol.md describes it for clients in any language.
 */
import { z } from 'zod';
import { FEEDBACK_SIGNALS, playerActionSchema } from '../engine/actions';
import { ACTION_ERROR_CODES } from '../engine/errors';
import type { PlayerView } from '../engine/playerView';
import { ROLES, type Role } from '../engine/state';

export const ROOM_NAME = 'cerealbar';
export const LOBBY_NAME = 'lobby';

/** Milliseconds between the server's state patches, unless a room is configured otherwise. */
export const DEFAULT_PATCH_RATE_MS = 20;

/**
 * Largest WebSocket frame the server reads. It holds any instruction a config allows (10,000 code
 * points of at most 4 bytes each in UTF-8) with room to spare, so an instruction that is too long
 * is answered INSTRUCTION_TOO_LONG; a bigger frame closes the connection with CLOSE_FRAME_TOO_LARGE.
 */
export const MAX_FRAME_BYTES = 64 * 1024;
/** Frames a connection may send in a second: far above a person's or a sane bot's pace. */
export const MAX_MESSAGES_PER_SECOND = 100;
/** WebSocket close codes (RFC 6455) of a connection the server closes for breaking a limit. */
export const CLOSE_RATE_LIMITED = 1008; // Policy Violation; the reason starts with RATE_LIMITED
export const CLOSE_FRAME_TOO_LARGE = 1009; // Message Too Big
export const CLOSE_BAD_FRAME = 1007; // Invalid Frame Payload Data: not a message Colyseus can decode
/** A study's worker whose session ended while it waited for a partner (docs/protocol.md, P-105). */
export const CLOSE_STUDY_ENDED = 4100;
/** A study's worker whose role changed while it waited (the researcher promoted it): its page shows its next step (P-114). */
export const CLOSE_ROLE_CHANGED = 4101;

/** Why the server closed a player's connection; the partner is told in its `partnerLeft` notice. */
export const EXPULSION_CODES = ['RATE_LIMITED', 'FRAME_TOO_LARGE', 'BAD_FRAME'] as const;
export interface Expulsion {
  readonly code: (typeof EXPULSION_CODES)[number];
  readonly message: string;
}

/** The one message a player sends to act: a PlayerAction, the engine's action vocabulary. */
export const ACTION_MESSAGE = 'action';
export const clientMessageSchemas = { [ACTION_MESSAGE]: playerActionSchema } as const;
export type ClientMessageType = keyof typeof clientMessageSchemas;

const optionalId = z.string().trim().min(1).max(200).optional();

/** The pool quick play meets in when a join names none. */
export const DEFAULT_POOL = 'default';

/** A matchmaking pool's name (a study's pool too). */
export const poolNameSchema = z.string().trim().min(1).max(50).regex(/^[A-Za-z0-9_-]+$/, 'pool names use letters, digits, _ and -');

/** Options for joining the game room or the lobby. */
export const joinOptionsSchema = z.object({
  role: z.enum(['leader', 'follower', 'any']).default('any'),
  pool: poolNameSchema.default(DEFAULT_POOL),
  /** Joins the private game with this code (in any case); there must be one. */
  code: z.string().trim().toLowerCase().min(1).max(50).regex(/^[a-z0-9_-]+$/, 'codes use letters, digits, _ and -').optional(),
  /** Creates a private game: the server draws its code and sends it in the `seat` message. */
  private: z.boolean().default(false),
  /** A leader asks for the server's agent follower (the scripted one unless the server names another) instead of waiting for a human. */
  botFollower: z.boolean().default(false),
  /** A follower asks for the server's agent leader (the scripted one unless the server names another) instead of waiting for a human. */
  botLeader: z.boolean().default(false),
  /** Crowdsourcing ids, kept as given. */
  workerId: optionalId,
  assignmentId: optionalId,
  hitId: optionalId,
})
  .refine((options) => !(options.private && options.code), { error: 'a new private game gets its code from the server: leave code out', path: ['code'] })
  .refine((options) => !(options.botFollower && options.role === 'follower'), { error: 'only a leader can ask for the scripted follower', path: ['botFollower'] })
  .refine((options) => !(options.botLeader && options.role === 'leader'), { error: 'only a follower can ask for an agent leader', path: ['botLeader'] })
  .refine((options) => !(options.botLeader && options.botFollower), { error: 'a game has one agent: ask for an agent leader or an agent follower, not both', path: ['botLeader'] });
export type JoinOptions = z.output<typeof joinOptionsSchema>;

/** The seat a join asks the server to fill with its agent (botLeader, botFollower), or null: such a game is a new one of its own. */
export function agentSeatAsked(options: Pick<JoinOptions, 'botLeader' | 'botFollower'>): Role | null {
  if (options.botFollower) return 'follower';
  if (options.botLeader) return 'leader';
  return null;
}

/** The seat a join asks for the player: the one the server's agent leaves it, when it asks for an agent partner. */
export function playerSeatAsked(options: Pick<JoinOptions, 'role' | 'botLeader' | 'botFollower'>): JoinOptions['role'] {
  const agent = agentSeatAsked(options);
  if (agent === null) return options.role;
  return agent === 'leader' ? 'follower' : 'leader';
}

/** What the server answers a join naming a code that no game waiting for a player has. */
export const NO_GAME_WITH_CODE = 'no game with this code';

/**
 * A join refused because no process has room for a new game now (HTTP 503 at matchmaking, with a
 * Retry-After of this many seconds): the page says so and asks again by itself.
 */
export const BUSY_STATUS = 503;
export const BUSY_RETRY_AFTER_SECONDS = 5;

/** `seat`: the player's seat, sent once it has joined; `code` is the private game's code to share. */
export interface SeatMessage {
  readonly role: Role;
  readonly playerId: string;
  readonly code?: string;
}

/** Error codes the server sends in `error` messages: the engine's, and the protocol's own. */
export const PROTOCOL_ERROR_CODES = ['UNKNOWN_MESSAGE', 'BAD_MESSAGE', 'NOT_A_PLAYER', 'GAME_NOT_STARTED', 'GAME_ENDED'] as const;
export type ErrorCode = (typeof ACTION_ERROR_CODES)[number] | (typeof PROTOCOL_ERROR_CODES)[number];

export interface ErrorMessage {
  readonly code: ErrorCode;
  readonly message: string;
  /** The message type that was refused. */
  readonly refused: string;
}

/**
 * `notice`: something happened that the player's view does not say, by its `kind` (docs/protocol.md,
 * P-24 to P-30, P-116, P-120, P-122, P-150, P-154). Every notice the server sends is one of these.
 */
export const noticeSchema = z.discriminatedUnion('kind', [
  /** To the follower only: the leader's turn ended with an empty queue, so the follower's is skipped. */
  z.object({ kind: z.literal('turnSkipped') }),
  /** To both: the turn of `role` ran out of time. */
  z.object({ kind: z.literal('timeout'), role: z.enum(ROLES) }),
  /** To the partner: the player's connection dropped; its seat is kept for `seconds`. */
  z.object({ kind: z.literal('partnerDisconnected'), seconds: z.number().min(0) }),
  z.object({ kind: z.literal('partnerReconnected') }),
  /** To the partner: the player left for good; `reason` and `message` when the server closed its connection (P-78). */
  z.object({ kind: z.literal('partnerLeft'), reason: z.enum(EXPULSION_CODES).optional(), message: z.string().optional() }),
  /** To the leader, from an agent follower: why it marked an instruction done without doing it (P-116, P-140). */
  z.object({ kind: z.literal('followerGaveUp'), message: z.string() }),
  /** To the partner of an agent seat: its agent stopped for the rest of the game, and the seat goes on without it (P-150). */
  z.object({ kind: z.literal('agentStopped'), message: z.string() }),
  /** To both players, once the server runs again after it stopped for `seconds` (a stall): the turn kept the time it had left (P-154). */
  z.object({ kind: z.literal('serverStalled'), seconds: z.number().int().min(0) }),
  /** To both, as the leader's live feedback is accepted; `afterStep`: the steps the follower had taken in its turn. */
  z.object({ kind: z.literal('feedback'), signal: z.enum(FEEDBACK_SIGNALS), afterStep: z.number().int().min(0) }),
  /** To both, as the leader cancels the follower's instructions: the follower's turn is over. */
  z.object({ kind: z.literal('cancelled') }),
  /** To both: the game ended, why (the log's end reason) and its final score; `message` when it could not be saved. */
  z.object({ kind: z.literal('gameOver'), reason: z.string(), score: z.number().int().min(0), message: z.string().optional() }),
]);
export type Notice = z.output<typeof noticeSchema>;

/** The game as one player's screen shows it: its `playerView`, and the room's facts about the session. */
export interface ClientView extends PlayerView {
  readonly phase: 'playing' | 'ended';
  /** When the current turn times out, in the server's clock (epoch ms); 0 when no turn runs. */
  readonly turnDeadline: number;
  /** False while the other player's connection is down. */
  readonly partnerConnected: boolean;
  /** Why the game ended (the log's end reason); '' while it goes on. */
  readonly endReason: string;
}

/**
 * `view`: the player's view when the game starts (and after a reconnection) in full, then only the
 * top-level fields that changed. Built from the player's view alone, so nothing else can leak.
 */
export interface ViewMessage {
  /** True when `changes` is the whole view (the client replaces what it had). */
  readonly full: boolean;
  readonly changes: Partial<ClientView>;
  /** The server's clock (epoch ms) when it sent this: a client corrects its own by the difference to count down to turnDeadline. */
  readonly serverNow: number;
}

/** The top-level fields of `next` that differ from `previous` (compared by value). */
export function viewChanges(previous: ClientView, next: ClientView): Partial<ClientView> {
  const changes: Record<string, unknown> = {};
  for (const key of Object.keys(next) as (keyof ClientView)[]) {
    if (!sameValue(previous[key], next[key])) changes[key] = next[key];
  }
  return changes as Partial<ClientView>;
}

/** Deep equality of JSON-like values (what a view holds), without building strings: views are compared on every action. */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameValue(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    if (!sameValue((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}

/** A view message applied to the view a client holds. */
export function applyViewMessage(view: ClientView | null, message: ViewMessage): ClientView {
  if (message.full || view === null) return message.changes as ClientView;
  return { ...view, ...message.changes };
}

/** `queue`: a waiting player's place among the open games of its pool and code lacking the same seat. */
export interface QueueMessage {
  /** 1 for the game the matchmaker fills first. */
  readonly position: number;
  /** How many such games wait, this one included. */
  readonly waiting: number;
}
