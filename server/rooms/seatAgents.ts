/**
 * The agents a server seats when a player asks for one as its partner (the join options
 * `botFollower`, `botLeader`): a built-in agent, or a program started for each game (`serve
 * --bot-follower`, `--bot-leader`; the scripted ones by default). Only agents that play from
 * what a human in the seat would see may take a live seat: the oracles, which need a recorded game
 * or the whole state, are refused.
 */
import { createAgent } from '../../shared/agents/node/registry';
import type { Role } from '../../shared/engine/state';
import type { SeatedAgent } from './botSeat';

export interface SeatAgentSpecs {
  readonly leader: string;
  readonly follower: string;
}

/** The built-in scripted agents: the `heuristic` follower and the `scripted` leader. */
export const DEFAULT_SEAT_AGENTS: SeatAgentSpecs = { leader: 'scripted', follower: 'heuristic' };

/** Starts the agent for one game's seat of `role`. */
export type SeatAgentStarter = (role: Role) => Promise<SeatedAgent>;

/** Starts `spec` as the `role` agent of a live game; rejects with the reason it cannot play there. */
export async function startSeatAgent(role: Role, spec: string): Promise<SeatedAgent> {
  if (role === 'leader') throw new Error('no agent can play the leader yet');
  const agent = await createAgent(spec);
  if (agent.needsRecording || agent.wantsOracleObservation) {
    await agent.close?.();
    throw new Error(`the ${agent.name} agent needs a recorded game or the whole state; it can only be evaluated offline`);
  }
  return { role, agent, identity: { name: agent.name, spec } };
}

/** Each game's agents from the specs (the defaults for those left out). */
export function seatAgentsFrom(specs: Partial<SeatAgentSpecs> = {}): SeatAgentStarter {
  const chosen = { ...DEFAULT_SEAT_AGENTS, ...specs };
  return (role) => startSeatAgent(role, chosen[role]);
}

/** Starts `spec` once and closes it: a server checks its agents before it takes games. Rejects with the reason. */
export async function checkSeatAgent(role: Role, spec: string): Promise<void> {
  const seated = await startSeatAgent(role, spec);
  await seated.agent.close?.();
}
