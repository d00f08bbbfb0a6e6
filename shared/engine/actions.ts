/**
 * The one action vocabulary. A player chooses a `PlayerAction`; with its actor it is the engine's
 * `Action`. The protocol, the log, agents, the environment and the bots all speak it, and every
 * conversion (short codes, zod parsing) lives here.
 */
import { z } from 'zod';
import type { Role } from './state';

export const MOVES = ['MF', 'MB', 'RL', 'RR'] as const;
/** Move forward, move back, rotate left, rotate right. */
export type Move = (typeof MOVES)[number];

/** The leader's live feedback during the follower's turn (CB2's thumbs up and down). */
export const FEEDBACK_SIGNALS = ['positive', 'negative'] as const;
export type FeedbackSignal = (typeof FEEDBACK_SIGNALS)[number];

/** What a player asks for. */
export type PlayerAction =
  | { readonly type: 'move'; readonly move: Move }
  | { readonly type: 'instruction'; readonly text: string }
  | { readonly type: 'endTurn' }
  | { readonly type: 'done' }
  | { readonly type: 'feedback'; readonly signal: FeedbackSignal }
  | { readonly type: 'cancel' };

/** A turn out of time, declared by whoever keeps time (the server). */
export interface TimeoutAction {
  readonly type: 'timeout';
  readonly actor: 'server';
  readonly role: Role;
}

/** Every action a game accepts: a player's, with its actor, or a timeout. */
export type Action = (PlayerAction & { readonly actor: Role }) | TimeoutAction;
export type ActionType = Action['type'];
export const ACTION_TYPES: readonly ActionType[] = ['move', 'instruction', 'endTurn', 'done', 'feedback', 'cancel', 'timeout'];

/**
 * Longest text, in UTF-16 units, the edge accepts before the engine judges it: at least as many as
 * the largest frame the server reads can carry (every unit takes a byte or more), so the engine,
 * not the schema, answers any text that arrives; and far above config.maxInstructionLength.
 */
export const MAX_INSTRUCTION_TEXT = 65_536;

/** A player action as received from outside (a client, an agent): validated, never trusted. */
export const playerActionSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('move'), move: z.enum(MOVES) }),
  z.strictObject({ type: z.literal('instruction'), text: z.string().max(MAX_INSTRUCTION_TEXT) }),
  z.strictObject({ type: z.literal('endTurn') }),
  z.strictObject({ type: z.literal('done') }),
  z.strictObject({ type: z.literal('feedback'), signal: z.enum(FEEDBACK_SIGNALS) }),
  z.strictObject({ type: z.literal('cancel') }),
]);

/** Short codes for the actions that carry no text: the agents' and the environment's vocabulary. */
export const ACTION_CODES = ['MF', 'MB', 'RL', 'RR', 'DONE', 'END'] as const;
export type ActionCode = (typeof ACTION_CODES)[number];
/** The follower's codes: the four moves and DONE (the follower neither instructs nor ends turns). */
export const FOLLOWER_CODES = ['MF', 'MB', 'RL', 'RR', 'DONE'] as const;
export type FollowerCode = (typeof FOLLOWER_CODES)[number];

export function isActionCode(value: unknown): value is ActionCode {
  return typeof value === 'string' && (ACTION_CODES as readonly string[]).includes(value);
}

export function isFollowerCode(value: unknown): value is FollowerCode {
  return typeof value === 'string' && (FOLLOWER_CODES as readonly string[]).includes(value);
}

const MOVE_ACTIONS: Readonly<Record<Move, PlayerAction>> = {
  MF: { type: 'move', move: 'MF' },
  MB: { type: 'move', move: 'MB' },
  RL: { type: 'move', move: 'RL' },
  RR: { type: 'move', move: 'RR' },
};
const DONE: PlayerAction = { type: 'done' };
const END_TURN: PlayerAction = { type: 'endTurn' };

/** The action a short code stands for. */
export function actionOfCode(code: ActionCode): PlayerAction {
  if (code === 'DONE') return DONE;
  if (code === 'END') return END_TURN;
  return MOVE_ACTIONS[code];
}

/** The short code of an action, or null for one without a code (an instruction, feedback, a cancel). */
export function codeOf(action: PlayerAction): ActionCode | null {
  switch (action.type) {
    case 'move':
      return action.move;
    case 'done':
      return 'DONE';
    case 'endTurn':
      return 'END';
    case 'instruction':
    case 'feedback':
    case 'cancel':
      return null;
  }
}

/** `action` by `actor`: the engine's Action. */
export function byActor(actor: Role, action: PlayerAction): Action {
  switch (action.type) {
    case 'move':
      return { type: 'move', actor, move: action.move };
    case 'instruction':
      return { type: 'instruction', actor, text: action.text };
    case 'endTurn':
      return { type: 'endTurn', actor };
    case 'done':
      return { type: 'done', actor };
    case 'feedback':
      return { type: 'feedback', actor, signal: action.signal };
    case 'cancel':
      return { type: 'cancel', actor };
  }
}

/** What a player asked for in `action` (its actor left out). */
export function withoutActor(action: PlayerAction & { readonly actor: Role }): PlayerAction {
  switch (action.type) {
    case 'move':
      return { type: 'move', move: action.move };
    case 'instruction':
      return { type: 'instruction', text: action.text };
    case 'endTurn':
      return { type: 'endTurn' };
    case 'done':
      return { type: 'done' };
    case 'feedback':
      return { type: 'feedback', signal: action.signal };
    case 'cancel':
      return { type: 'cancel' };
  }
}

// Control characters (C0, DEL, C1) other than white space, which becomes a plain space, and
// unpaired UTF-16 surrogates, which no encoder can carry.
const CONTROL_CHARACTERS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
// Invisible characters that would let a text show one thing and hold another: bidi marks,
// embeddings, overrides and isolates (ALM, LRM, RLM, U+202A-U+202E, U+2066-U+2069); zero-width
// space, word joiner, invisible operators and the BOM; deprecated format controls; and tag
// characters outside an emoji subdivision flag (they can spell hidden ASCII). ZWNJ and ZWJ stay:
// Persian, Indic scripts and emoji sequences need them.
const INVISIBLE_CHARACTERS = /[\u061C\u200B\u200E\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\uFEFF]|(?<!\u{1F3F4}[\u{E0030}-\u{E0039}\u{E0061}-\u{E007A}]{0,5})[\u{E0000}-\u{E007F}]/gu;
const WHITE_SPACE_RUNS = /[\t\n\r ]+/g;

/**
 * An instruction's length in Unicode code points, what a person counts as characters in nearly
 * all text (an emoji counts 1, not its 2 UTF-16 units). The limit `maxInstructionLength` is in
 * these units.
 */
export function instructionLength(text: string): number {
  let codePoints = 0;
  for (const _ of text) codePoints++; // a string iterates by code points
  return codePoints;
}

/** An instruction as it is stored and shown: control and invisible characters removed, white space collapsed, trimmed. */
export function sanitizeInstruction(text: string): string {
  return text.replace(CONTROL_CHARACTERS, '').replace(INVISIBLE_CHARACTERS, '').replace(WHITE_SPACE_RUNS, ' ').trim();
}
