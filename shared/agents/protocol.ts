/**
 * The agent protocol: how the host (evaluation, self-play, the environment, the server's bot
 * seats) talks to an agent written in any language, in either seat. JSON Lines over the agent's
 * stdin and stdout: the host writes one JSON object per line and, for every message but `close`,
 * reads exactly one answer line. docs/agents.md describes it for agent writers, with a transcript
 * for each seat.
 *
 *   host  {"type":"hello","protocol":"cerealbar-agent","version":2,"versions":[2,3],"role":"follower"}
 *   agent {"type":"hello","protocol":"cerealbar-agent","version":3,"name":"...","oracle":false}
 *   host  {"type":"reset","role":"follower","episode":{...EpisodeStart}}   agent {"type":"ready"}
 *   host  {"type":"observe","observation":{...},"text":"..."}            agent {"type":"act","action":"MF"}
 *                                                                          or {"type":"act","actions":["MF","RL"]}
 *   host  {"type":"close"}                                                (no answer; the agent exits)
 *
 * Version 2: observations carry the follower's known map, sent only when it changed.
 * Version 3: the leader's seat (hello and reset name the role; a leader's observation is its
 * LeaderObservation, its actions the codes and {"instruction": "..."}), and plans (`actions`).
 * The leader's live feedback and cancelling reach a follower in its observation, in fields an
 * agent may ignore (`feedback`, and `cancelled` on the previous instruction), present only in
 * games with those rules: no version changes for them.
 * In the follower's seat the host's hello still says version 2, so that agents written for it,
 * which check the version, keep working; `versions` lists every version the host speaks there.
 */
import { z } from 'zod';
import { FEEDBACK_SIGNALS, FOLLOWER_CODES, instructionLength, sanitizeInstruction } from '../engine/actions';
import { COLORS, COUNTS, SHAPES } from '../engine/cards';
import { PROP_TYPES, poseSchema } from '../engine/map';
import type { Role } from '../engine/state';
import {
  LEADER_AGENT_CODES,
  OBSERVATION_VERSION,
  type EpisodeStart,
  type FollowerObservation,
  type LeaderAgentAction,
  type LeaderObservation,
} from './types';

export const PROTOCOL_NAME = 'cerealbar-agent';
/** The newest version: the leader's seat, and plans. */
export const PROTOCOL_VERSION = 3;
/** The versions the host speaks in each seat: follower agents written for version 2 still play. */
export const SEAT_VERSIONS: Readonly<Record<Role, readonly number[]>> = { follower: [2, 3], leader: [3] };
/** Longest plan an agent may answer: a turn has tens of steps, never hundreds. */
export const MAX_PLAN_ACTIONS = 100;

/**
 * An observation on the wire: `map` is left out when it is the same as in the episode's previous
 * observation (the agent keeps the last one it was sent), so that a step's line stays short.
 */
export type WireObservation = Omit<FollowerObservation, 'map'> & { readonly map?: FollowerObservation['map'] };
/** The leader's observation on the wire: `map` (which never changes) only in an episode's first. */
export type WireLeaderObservation = Omit<LeaderObservation, 'map'> & { readonly map?: LeaderObservation['map'] };

const cell = z.object({ x: z.number().int(), y: z.number().int() });
const instruction = z.object({ id: z.number().int().min(0), text: z.string() }).nullable();
const card = cell.extend({
  id: z.number().int().min(0),
  color: z.enum(COLORS),
  shape: z.enum(SHAPES),
  count: z.union(COUNTS.map((count) => z.literal(count))),
  selected: z.boolean(),
});

/**
 * A whole observation (its map included) as JSON, for programs that hand one back to be encoded
 * (the Python package's agents): every cell must lie on its map.
 */
export const followerObservationSchema = z
  .object({
    version: z.literal(OBSERVATION_VERSION),
    instruction,
    previousInstruction: z.object({ id: z.number().int().min(0), text: z.string(), cancelled: z.literal(true).optional() }).nullable(),
    pose: poseSchema,
    stepsLeft: z.number().int().min(0),
    turnsLeft: z.number().int().min(0),
    score: z.number().int().min(0),
    visibleCells: z.array(cell),
    visibleCards: z.array(card),
    rememberedCards: z.array(card.extend({ seenAgo: z.number().int().min(1) })),
    leader: poseSchema.nullable(),
    map: z.object({
      width: z.number().int().min(1).max(100),
      height: z.number().int().min(1).max(100),
      terrain: z.array(z.string().regex(/^[GPWDH?]*$/, 'terrain rows use only the letters G P W D H and ?')),
      props: z.array(cell.extend({ type: z.enum(PROP_TYPES), variant: z.string(), rotation: poseSchema.shape.heading })),
    }),
    legal: z.array(z.enum(FOLLOWER_CODES)),
    feedback: z.array(z.object({ signal: z.enum(FEEDBACK_SIGNALS), afterStep: z.number().int().min(0) })).optional(),
  })
  .superRefine((observation, ctx) => {
    const { width, height, terrain } = observation.map;
    if (terrain.length !== height || terrain.some((row) => row.length !== width)) {
      ctx.addIssue({ code: 'custom', path: ['map', 'terrain'], message: `must be ${height} rows of ${width} cells` });
    }
    const cells: [string, { x: number; y: number } | null][] = [
      ['pose', observation.pose],
      ['leader', observation.leader],
      ...observation.visibleCells.map((at, i) => [`visibleCells.${i}`, at] as [string, { x: number; y: number }]),
      ...observation.visibleCards.map((at, i) => [`visibleCards.${i}`, at] as [string, { x: number; y: number }]),
      ...observation.rememberedCards.map((at, i) => [`rememberedCards.${i}`, at] as [string, { x: number; y: number }]),
      ...observation.map.props.map((at, i) => [`map.props.${i}`, at] as [string, { x: number; y: number }]),
    ];
    for (const [path, at] of cells) {
      if (at && !(at.x >= 0 && at.y >= 0 && at.x < width && at.y < height)) {
        ctx.addIssue({ code: 'custom', path: path.split('.'), message: `(${at.x}, ${at.y}) is off the ${width} x ${height} map` });
      }
    }
  });

export type HostMessage =
  | {
      readonly type: 'hello';
      readonly protocol: typeof PROTOCOL_NAME;
      /** The oldest of `versions`: what a version-2 follower agent checks. */
      readonly version: number;
      readonly versions: readonly number[];
      readonly role: Role;
    }
  | { readonly type: 'reset'; readonly role: Role; readonly episode: EpisodeStart }
  | { readonly type: 'observe'; readonly observation: WireObservation | WireLeaderObservation; readonly text: string }
  | { readonly type: 'close' };

/**
 * The agent's hello. `protocol` and `version` are checked apart from the schema, so that a
 * mismatch is reported as such rather than as a malformed message.
 */
export const agentHelloSchema = z.object({
  type: z.literal('hello'),
  protocol: z.string(),
  version: z.number(),
  name: z.string().min(1).max(100),
  /** The agent's own version, for log headers and reports (version 3). */
  agentVersion: z.string().min(1).max(100).optional(),
  /** Asks for the full state in every observation (oracle agents only). */
  oracle: z.boolean().default(false),
  /** Asks for the recorded human actions in every reset (oracle agents only). */
  needsRecording: z.boolean().default(false),
});
export type AgentHello = z.output<typeof agentHelloSchema>;

export const readySchema = z.object({ type: z.literal('ready') });

/** `action` and `actions` are read by `readAnswer`, which tells exactly what is wrong with them. */
export const actSchema = z.object({ type: z.literal('act'), action: z.unknown().optional(), actions: z.unknown().optional() });
export type ActMessage = z.output<typeof actSchema>;

export const AGENT_MESSAGE_TYPES = ['hello', 'ready', 'act'] as const;
export type AgentMessageType = (typeof AGENT_MESSAGE_TYPES)[number];

export function hostHello(role: Role): HostMessage {
  const versions = SEAT_VERSIONS[role];
  return { type: 'hello', protocol: PROTOCOL_NAME, version: versions[0], versions, role };
}

/**
 * What is wrong with an answer: `protocol` when it is not shaped as the protocol says (a value of
 * the wrong type, neither or both of action and actions), `illegal-action` when it is well formed
 * but names no action of the seat (an unknown code, an empty or too long instruction).
 */
export interface AnswerProblem {
  readonly kind: 'protocol' | 'illegal-action';
  readonly message: string;
}

/** Reads one action of a plan: the action, or what is wrong with it (`where` names it: `action`, `actions[2]`). */
type ActionReader<A> = (value: unknown, where: string) => A | AnswerProblem;

/** The plan an act message holds (one action is a plan of one), or what is wrong with it. */
export function readAnswer<A>(act: ActMessage, readAction: ActionReader<A>): A[] | AnswerProblem {
  const single = act.action !== undefined;
  if (single === (act.actions !== undefined)) {
    return protocolProblem('an act message holds either "action" (one action) or "actions" (a list of them, a plan)');
  }
  if (single) {
    const action = readAction(act.action, 'action');
    return isProblem(action) ? action : [action];
  }
  if (!Array.isArray(act.actions)) return protocolProblem('"actions" must be a list');
  if (act.actions.length > MAX_PLAN_ACTIONS) {
    return { kind: 'illegal-action', message: `answered a plan of ${act.actions.length} actions; at most ${MAX_PLAN_ACTIONS}` };
  }
  const plan: A[] = [];
  for (const [i, value] of act.actions.entries()) {
    const action = readAction(value, `actions[${i}]`);
    if (isProblem(action)) return action;
    plan.push(action);
  }
  return plan;
}

export function isProblem(value: unknown): value is AnswerProblem {
  return typeof value === 'object' && value !== null && 'kind' in value && 'message' in value;
}

/** A follower's action: one of its five codes. */
export const readFollowerAction: ActionReader<(typeof FOLLOWER_CODES)[number]> = (value, where) => {
  if (typeof value !== 'string') return protocolProblem(`${where} must be a string, one of ${FOLLOWER_CODES.join(', ')}`);
  if (!(FOLLOWER_CODES as readonly string[]).includes(value)) {
    return { kind: 'illegal-action', message: `answered the action ${JSON.stringify(value)}${at(where)}; legal actions are ${FOLLOWER_CODES.join(', ')}` };
  }
  return value as (typeof FOLLOWER_CODES)[number];
};

/** A leader's action: a code, or `{"instruction": text}` whose text, as the game stores it, is 1 to `maxLength` characters. */
export function leaderActionReader(maxLength: number): ActionReader<LeaderAgentAction> {
  const codes = LEADER_AGENT_CODES.join(', ');
  return (value, where) => {
    if (typeof value === 'string') {
      if ((LEADER_AGENT_CODES as readonly string[]).includes(value)) return value as LeaderAgentAction;
      return { kind: 'illegal-action', message: `answered the action ${JSON.stringify(value)}${at(where)}; legal actions are ${codes} and {"instruction": "..."}` };
    }
    const keys = typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.keys(value) : [];
    const text = (value as { instruction?: unknown } | null)?.instruction;
    if (keys.length !== 1 || typeof text !== 'string') {
      return protocolProblem(`${where} must be one of ${codes} or {"instruction": "<text>"}`);
    }
    const length = instructionLength(sanitizeInstruction(text));
    if (length === 0) return { kind: 'illegal-action', message: `answered an empty instruction${at(where)}` };
    if (length > maxLength) {
      return { kind: 'illegal-action', message: `answered an instruction of ${length} characters${at(where)}; at most ${maxLength}` };
    }
    return { instruction: text };
  };
}

function at(where: string): string {
  return where === 'action' ? '' : ` (${where})`;
}

function protocolProblem(message: string): AnswerProblem {
  return { kind: 'protocol', message: `sent a malformed act message (${message})` };
}
