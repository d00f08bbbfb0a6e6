/**
 * The game log: JSON Lines with a self-contained header, one line per accepted action with the
 * outcome the engine produced (and, between them, what a server's agent seat did about its agent),
 * and an end line. docs/log-format.md describes it for readers.
 */
import { z } from 'zod';
import { COLORS, COUNTS, SHAPES } from '../engine/cards';
import { configSchema } from '../engine/config';
import { mapSchema, poseSchema } from '../engine/map';
import { ROLES } from '../engine/state';
import { FEEDBACK_SIGNALS, MOVES, type Action } from '../engine/actions';
import type { Outcome } from '../engine/transition';

export const LOG_FORMAT = 'cerealbar-log';
export const LOG_FORMAT_VERSION = 1;

export const END_REASONS = ['turns-exhausted', 'abandoned', 'interrupted', 'server-shutdown', 'storage-failed'] as const;
export type EndReason = (typeof END_REASONS)[number];

const int = z.number().int();
const nonNegative = int.min(0);

export const cardSchema = z.strictObject({
  id: nonNegative,
  x: int,
  y: int,
  color: z.enum(COLORS),
  shape: z.enum(SHAPES),
  count: z.literal(COUNTS),
  selected: z.boolean(),
});

/**
 * A log's config as the rules that played it: a field added since (absent from an older header)
 * takes the value that reproduces the games before it, not the new default.
 */
function asPlayed(config: unknown): unknown {
  if (typeof config !== 'object' || config === null || 'maxQueuedInstructions' in config) return config;
  return { ...config, maxQueuedInstructions: null };
}

export const headerSchema = z.strictObject({
  kind: z.literal('header'),
  format: z.literal(LOG_FORMAT),
  formatVersion: z.literal(LOG_FORMAT_VERSION),
  engineVersion: z.string().min(1),
  gameId: z.string().min(1).max(200),
  startedAt: z.iso.datetime(),
  seed: int,
  config: z.preprocess(asPlayed, configSchema),
  map: mapSchema,
  initial: z.strictObject({
    leader: poseSchema,
    follower: poseSchema,
    cards: z.array(cardSchema),
    /** The generator's state: xoroshiro128+'s four 32-bit integers. */
    rng: z.array(z.number().int().min(-(2 ** 31)).max(2 ** 32 - 1)).length(4),
  }),
  /** Free-form facts about the game: pool, opaque player ids, crowdsourcing ids, who played. */
  meta: z.record(z.string(), z.unknown()).default({}),
  /**
   * `recorded`: the replacement cards in the set outcomes are the game's own, not the engine's
   * draws (an imported game: its platform drew them unseeded). Absent for games this engine played.
   */
  replacementCards: z.literal('recorded').optional(),
});

const roleSchema = z.enum(ROLES);
const turnSchema = z.strictObject({ role: roleSchema, stepsLeft: nonNegative });

export const outcomeSchema = z.strictObject({
  pose: poseSchema.strict().optional(),
  blocked: z.literal(true).optional(),
  toggled: z.array(nonNegative).optional(),
  set: z
    .strictObject({
      cards: z.array(nonNegative),
      added: z.array(cardSchema),
      extraTurns: nonNegative,
    })
    .optional(),
  instruction: nonNegative.optional(),
  feedback: z.strictObject({ signal: z.enum(FEEDBACK_SIGNALS), instruction: nonNegative }).optional(),
  cancelled: z.array(nonNegative).optional(),
  turnEnded: z
    .strictObject({
      reason: z.enum(['end-turn', 'timeout', 'out-of-steps', 'all-done', 'cancelled']),
      followerSkipped: z.literal(true).optional(),
    })
    .optional(),
  turn: turnSchema,
  turnsLeft: nonNegative,
  score: nonNegative,
  gameOver: z.boolean(),
});

const eventBase = { kind: z.literal('event'), seq: int.min(1), t: nonNegative, outcome: outcomeSchema };

/** One accepted action; `type` and `payload` together with `actor` make the engine's Action. */
export const eventSchema = z.discriminatedUnion('type', [
  z.strictObject({ ...eventBase, type: z.literal('move'), actor: roleSchema, payload: z.strictObject({ move: z.enum(MOVES) }) }),
  z.strictObject({ ...eventBase, type: z.literal('instruction'), actor: roleSchema, payload: z.strictObject({ text: z.string() }) }),
  z.strictObject({ ...eventBase, type: z.literal('endTurn'), actor: roleSchema, payload: z.strictObject({}) }),
  z.strictObject({ ...eventBase, type: z.literal('done'), actor: roleSchema, payload: z.strictObject({}) }),
  z.strictObject({ ...eventBase, type: z.literal('feedback'), actor: roleSchema, payload: z.strictObject({ signal: z.enum(FEEDBACK_SIGNALS) }) }),
  z.strictObject({ ...eventBase, type: z.literal('cancel'), actor: roleSchema, payload: z.strictObject({}) }),
  z.strictObject({ ...eventBase, type: z.literal('timeout'), actor: z.literal('server'), payload: z.strictObject({ role: roleSchema }) }),
]);

/** How an agent failed in its seat (P-119): it threw, its turn ended before it answered, or the game refused its answers too many times in a row. */
export const AGENT_SEAT_FAILURES = ['error', 'late', 'refused'] as const;
export type AgentSeatFailure = (typeof AGENT_SEAT_FAILURES)[number];

/**
 * What the server's seat of an agent did about it (P-147), for the researcher: the agent failed
 * (`reason`), or its seat marked the follower's instruction `instruction` done after the agent
 * failed on it twice in a row (P-140). Not an action: replay passes over it, and no player is sent it.
 */
export const agentSeatSchema = z.discriminatedUnion('type', [
  z.strictObject({ kind: z.literal('agentSeat'), t: nonNegative, role: roleSchema, type: z.literal('failed'), reason: z.enum(AGENT_SEAT_FAILURES) }),
  z.strictObject({ kind: z.literal('agentSeat'), t: nonNegative, role: roleSchema, type: z.literal('markedDone'), instruction: nonNegative }),
]);

export const endSchema = z.strictObject({
  kind: z.literal('end'),
  t: nonNegative,
  reason: z.enum(END_REASONS),
  score: nonNegative,
});

export type LogHeader = z.output<typeof headerSchema>;
export type LogEvent = z.output<typeof eventSchema>;
export type LogAgentSeat = z.output<typeof agentSeatSchema>;
/** An agent seat's line as its seat tells it: the log adds the kind and the time. */
export type AgentSeatFact = LogAgentSeat extends infer Line ? (Line extends LogAgentSeat ? Omit<Line, 'kind' | 't'> : never) : never;
export type LogEnd = z.output<typeof endSchema>;
export type LogLine = LogHeader | LogEvent | LogAgentSeat | LogEnd;

/** The engine action an event line records. */
export function eventAction(event: LogEvent): Action {
  switch (event.type) {
    case 'move':
      return { type: 'move', actor: event.actor, move: event.payload.move };
    case 'instruction':
      return { type: 'instruction', actor: event.actor, text: event.payload.text };
    case 'endTurn':
      return { type: 'endTurn', actor: event.actor };
    case 'done':
      return { type: 'done', actor: event.actor };
    case 'feedback':
      return { type: 'feedback', actor: event.actor, signal: event.payload.signal };
    case 'cancel':
      return { type: 'cancel', actor: event.actor };
    case 'timeout':
      return { type: 'timeout', actor: 'server', role: event.payload.role };
  }
}

/** The event line for an accepted action. */
export function eventLine(seq: number, t: number, action: Action, outcome: Outcome): LogEvent {
  // The schema's output types are mutable; the engine's outcome is the same shape, read-only.
  const recorded = outcome as LogEvent['outcome'];
  // Keys in the log's order: kind, seq, t, actor, type, payload, outcome.
  switch (action.type) {
    case 'move':
      return { kind: 'event', seq, t, actor: action.actor, type: 'move', payload: { move: action.move }, outcome: recorded };
    case 'instruction':
      return { kind: 'event', seq, t, actor: action.actor, type: 'instruction', payload: { text: action.text }, outcome: recorded };
    case 'endTurn':
      return { kind: 'event', seq, t, actor: action.actor, type: 'endTurn', payload: {}, outcome: recorded };
    case 'done':
      return { kind: 'event', seq, t, actor: action.actor, type: 'done', payload: {}, outcome: recorded };
    case 'feedback':
      return { kind: 'event', seq, t, actor: action.actor, type: 'feedback', payload: { signal: action.signal }, outcome: recorded };
    case 'cancel':
      return { kind: 'event', seq, t, actor: action.actor, type: 'cancel', payload: {}, outcome: recorded };
    case 'timeout':
      return { kind: 'event', seq, t, actor: 'server', type: 'timeout', payload: { role: action.role }, outcome: recorded };
  }
}

/** The rules profile a game was played by: the one its header's meta names, else the paper's. */
export function rulesProfileOf(header: LogHeader): string {
  const profile = (header.meta as { profile?: unknown }).profile;
  return typeof profile === 'string' ? profile : 'cerealbar';
}
