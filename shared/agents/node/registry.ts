/**
 * Agents by name or as a command line to run, for either seat. Followers: `random`, `heuristic`,
 * `static-oracle`, `oracle`; leaders: `scripted`. Any other spec is a program run with
 * `/bin/sh -c spec` that speaks the agent protocol in that seat.
 */
import { createBuiltinAgent } from '../builtin';
import { Oracle, StaticOracle } from '../oracles';
import { ScriptedLeaderAgent } from '../scriptedLeader';
import { ProcessAgent, ProcessLeaderAgent, type ProcessAgentOptions } from './processAgent';
import type { AgentIdentity, FollowerAgent, LeaderAgent } from '../types';
import type { Role } from '../../engine/state';

export const FOLLOWER_AGENT_NAMES = ['random', 'heuristic', 'static-oracle', 'oracle'] as const;
export const LEADER_AGENT_NAMES = ['scripted'] as const;
/** The built-in followers (the names the follower-only commands list). */
export const AGENT_NAMES = FOLLOWER_AGENT_NAMES;
export const AGENT_NAMES_BY_ROLE: Readonly<Record<Role, readonly string[]>> = { follower: FOLLOWER_AGENT_NAMES, leader: LEADER_AGENT_NAMES };

/**
 * A built-in follower when `spec` names one, otherwise a program run with `/bin/sh -c spec`, ready
 * once its handshake has told what it wants (oracle observations, the recording).
 */
export async function createAgent(spec: string, processOptions: ProcessAgentOptions = {}): Promise<FollowerAgent> {
  refuseOtherSeat(spec, 'follower');
  if (spec === 'static-oracle') return new StaticOracle();
  if (spec === 'oracle') return new Oracle();
  return createBuiltinAgent(spec) ?? shaken(new ProcessAgent(spec, processOptions));
}

/** The built-in leader `spec` names, otherwise a program that speaks the protocol in the leader's seat, its handshake done. */
export async function createLeaderAgent(spec: string, processOptions: ProcessAgentOptions = {}): Promise<LeaderAgent> {
  refuseOtherSeat(spec, 'leader');
  if (spec === 'scripted') return new ScriptedLeaderAgent();
  return shaken(new ProcessLeaderAgent(spec, processOptions));
}

/** An agent for `role`'s seat, with the seat's role beside it so that a caller can tell which it got. */
export type SeatAgent = { readonly role: 'follower'; readonly agent: FollowerAgent } | { readonly role: 'leader'; readonly agent: LeaderAgent };

export async function createSeatAgent(spec: string, role: Role, processOptions: ProcessAgentOptions = {}): Promise<SeatAgent> {
  return role === 'leader'
    ? { role, agent: await createLeaderAgent(spec, processOptions) }
    : { role, agent: await createAgent(spec, processOptions) };
}

/** Who played a seat, for log headers and reports: the name and version the agent gave, and the spec that started it. */
export function agentIdentity(agent: FollowerAgent | LeaderAgent, spec: string): AgentIdentity {
  return { name: agent.name, ...(agent.version !== undefined && { version: agent.version }), spec };
}

/** A built-in agent of the other seat is a mistake to say so, not a command to run. */
function refuseOtherSeat(spec: string, role: Role): void {
  const other: Role = role === 'leader' ? 'follower' : 'leader';
  if (AGENT_NAMES_BY_ROLE[other].includes(spec)) {
    throw new Error(`${JSON.stringify(spec)} is a built-in ${other}; the built-in ${role}s are ${AGENT_NAMES_BY_ROLE[role].join(', ')}`);
  }
}

async function shaken<A extends ProcessAgent | ProcessLeaderAgent>(agent: A): Promise<A> {
  try {
    await agent.handshake();
  } catch (error) {
    await agent.close();
    throw error;
  }
  return agent;
}
