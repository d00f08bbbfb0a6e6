/**
 * The agent protocol: how the host (evaluation, the environment, the server's bot seat) talks to a
 * follower agent written in any language. JSON Lines over the agent's stdin and stdout: the host
 * writes one JSON object per line and, for every message but `close`, reads exactly one answer
 * line. docs/agents.md describes it for agent writers, with a transcript.
 *
 *   host  {"type":"hello","protocol":"cerealbar-agent","version":2}
 *   agent {"type":"hello","protocol":"cerealbar-agent","version":2,"name":"...","oracle":false}
 *   host  {"type":"reset","episode":{...EpisodeStart}}              agent {"type":"ready"}
 *   host  {"type":"observe","observation":{...},"text":"..."}       agent {"type":"act","action":"MF"}
 *   host  {"type":"close"}                                           (no answer; the agent exits)
 *
 * Version 2: observations carry the follower's known map, sent only when it changed.
 */
import { z } from 'zod';
import { FOLLOWER_CODES } from '../engine/actions';
import { COLORS, COUNTS, SHAPES } from '../engine/cards';
import { PROP_TYPES, poseSchema } from '../engine/map';
import { OBSERVATION_VERSION, type EpisodeStart, type FollowerObservation } from './types';

export const PROTOCOL_NAME = 'cerealbar-agent';
export const PROTOCOL_VERSION = 2;

/**
 * An observation on the wire: `map` is left out when it is the same as in the episode's previous
 * observation (the agent keeps the last one it was sent), so that a step's line stays short.
 */
export type WireObservation = Omit<FollowerObservation, 'map'> & { readonly map?: FollowerObservation['map'] };

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
    previousInstruction: instruction,
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
  | { readonly type: 'hello'; readonly protocol: typeof PROTOCOL_NAME; readonly version: typeof PROTOCOL_VERSION }
  | { readonly type: 'reset'; readonly episode: EpisodeStart }
  | { readonly type: 'observe'; readonly observation: WireObservation; readonly text: string }
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
  /** Asks for the full state in every observation (oracle agents only). */
  oracle: z.boolean().default(false),
  /** Asks for the recorded human actions in every reset (oracle agents only). */
  needsRecording: z.boolean().default(false),
});
export type AgentHello = z.output<typeof agentHelloSchema>;

export const readySchema = z.object({ type: z.literal('ready') });

/** `action` is any string here: an unknown one is an illegal action, not a malformed message. */
export const actSchema = z.object({ type: z.literal('act'), action: z.string() });

export const AGENT_MESSAGE_TYPES = ['hello', 'ready', 'act'] as const;
export type AgentMessageType = (typeof AGENT_MESSAGE_TYPES)[number];

export function hostHello(): HostMessage {
  return { type: 'hello', protocol: PROTOCOL_NAME, version: PROTOCOL_VERSION };
}
