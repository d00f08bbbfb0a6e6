/**
 * The agents a server seats when a player asks for one as its partner (the join options
 * `botFollower`, `botLeader`): a built-in agent, or a program started for each game (`serve
 * --bot-follower`, `--bot-leader`; the scripted ones by default). Only agents that play from
 * what a human in the seat would see may take a live seat: the oracles, which need a recorded game
 * or the whole state, are refused.
 */
import { randomUUID } from 'node:crypto';
import { logger, ServerError } from '@colyseus/core';
import { startAgent, type AgentContext } from '../../shared/agents/node/registry';
import type { Role } from '../../shared/engine/state';
import type { SeatRecord } from '../store/types';
import type { SeatedAgent } from './botSeat';

export interface SeatAgentSpecs {
  readonly leader: string;
  readonly follower: string;
}

/** The built-in scripted agents: the `heuristic` follower and the `scripted` leader. */
export const DEFAULT_SEAT_AGENTS: SeatAgentSpecs = { leader: 'scripted', follower: 'heuristic' };

/** Starts the agent for one game's seat of `role`. */
export type SeatAgentStarter = (role: Role) => Promise<SeatedAgent>;
/** Starts the agent `spec` names for a seat of `role` (startSeatAgent, or a command's own for agents it configures, such as the LLM agent). */
export type StartSeatAgent = (role: Role, spec: string) => Promise<SeatedAgent>;

/** Starts `spec` as the `role` agent of a live game (the LLM agent with `startLlm`, the command's settings); rejects with the reason it cannot play there. */
export function startSeatAgent(role: Role, spec: string, startLlm?: AgentContext['startLlm']): Promise<SeatedAgent> {
  return startAgent(spec, role, { setting: 'live', startLlm });
}

/** Each game's agents from the specs (the defaults for those left out). */
export function seatAgentsFrom(specs: Partial<SeatAgentSpecs> = {}, start: StartSeatAgent = startSeatAgent): SeatAgentStarter {
  const chosen = { ...DEFAULT_SEAT_AGENTS, ...specs };
  return (role) => start(role, chosen[role]);
}

/** Starts `spec` once and closes it: a server checks its agents before it takes games. Rejects with the reason. */
export async function checkSeatAgent(role: Role, spec: string, start: StartSeatAgent = startSeatAgent): Promise<void> {
  const seated = await start(role, spec);
  await seated.agent.close?.();
}

/**
 * The agent a join asks for (`role`, or none), started for its game. A join it cannot serve is
 * refused (503) in words for the player; the cause, which may name paths, is for the server's log.
 */
export async function startAskedAgent(start: SeatAgentStarter | undefined, role: Role | null, where: string): Promise<SeatedAgent | null> {
  if (role === null) return null;
  try {
    return await (start ?? seatAgentsFrom())(role);
  } catch (error) {
    logger.error(`${where}: the ${role} agent could not start:`, error);
    throw new ServerError(503, `the server's agent ${role} could not start; try again later, or play with a person`);
  }
}

/** `error`, once the agent started for a join that fails anyway is closed (its program stopped). */
export function droppingAgent(seated: SeatedAgent | null, error: Error): Error {
  void Promise.resolve(seated?.agent.close?.()).catch(() => undefined);
  return error;
}

/** The agent's seat as the game index and the log header's players record it: a bot (who it is is in the header's `meta.agents`). */
export function agentSeatRecord(seated: SeatedAgent): SeatRecord {
  return { role: seated.role, playerId: randomUUID(), kind: 'bot' };
}
