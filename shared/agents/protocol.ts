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
import type { EpisodeStart, FollowerObservation } from './types';

export const PROTOCOL_NAME = 'cerealbar-agent';
export const PROTOCOL_VERSION = 2;

/**
 * An observation on the wire: `map` is left out when it is the same as in the episode's previous
 * observation (the agent keeps the last one it was sent), so that a step's line stays short.
 */
export type WireObservation = Omit<FollowerObservation, 'map'> & { readonly map?: FollowerObservation['map'] };

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
