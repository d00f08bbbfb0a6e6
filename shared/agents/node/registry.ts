/**
 * Starts the agent a spec names for a seat: a built-in of the catalogue (shared/agents/catalogue.ts),
 * the LLM agent as the caller configures it, or any other spec as a program run with
 * `/bin/sh -c spec` that speaks the agent protocol. Every command, the server's seats and the study
 * arms start agents here, so that one spec means the same agent everywhere.
 */
import { catalogueEntry, LLM_AGENT, recordingProblem, seatProblem, type SeatSetting } from '../catalogue';
import { LlmAgent } from './llm/agent';
import { ProcessAgent, ProcessLeaderAgent, type ProcessAgentOptions } from './processAgent';
import type { AgentIdentity, FollowerAgent, LeaderAgent } from '../types';
import type { Role } from '../../engine/state';

/** An agent in `role`'s seat, with the role beside it so that a caller can tell which it got, and who it is for log headers. */
export type StartedAgent =
  | { readonly role: 'follower'; readonly agent: FollowerAgent; readonly identity: AgentIdentity }
  | { readonly role: 'leader'; readonly agent: LeaderAgent; readonly identity: AgentIdentity };

/** What a caller knows that the spec does not say. */
export interface AgentContext {
  /** Where the seat is played; agents that cannot play there are refused. */
  readonly setting: SeatSetting;
  readonly process?: ProcessAgentOptions;
  /** Starts the LLM agent with the caller's settings; absent where the caller has none (the agent is then refused). */
  readonly startLlm?: (role: Role) => Promise<FollowerAgent | LeaderAgent>;
}

/** A spec that cannot play the seat; the message is for the person who gave the spec. */
export class AgentSpecError extends Error {}

/** Starts `spec` for `role`'s seat, ready to play (a program's handshake done); rejects with the reason it cannot. */
export async function startAgent(spec: string, role: Role, context: AgentContext): Promise<StartedAgent> {
  const problem = seatProblem(spec, role, context.setting);
  if (problem) throw new AgentSpecError(problem);
  const agent = await created(spec, role, context);
  const unfit = unfitProblem(agent as FollowerAgent, context.setting);
  if (unfit) {
    await agent.close?.();
    throw new AgentSpecError(unfit);
  }
  const identity = agentIdentity(agent, spec);
  return role === 'leader' ? { role, agent: agent as LeaderAgent, identity } : { role, agent: agent as FollowerAgent, identity };
}

/** The follower `spec` names (see startAgent). */
export async function startFollower(spec: string, context: AgentContext): Promise<FollowerAgent> {
  return (await startAgent(spec, 'follower', context)).agent as FollowerAgent;
}

/** The leader `spec` names (see startAgent). */
export async function startLeader(spec: string, context: AgentContext): Promise<LeaderAgent> {
  return (await startAgent(spec, 'leader', context)).agent as LeaderAgent;
}

/** What a program said of itself in its handshake that rules it out of the setting. */
function unfitProblem(agent: Pick<FollowerAgent, 'name' | 'needsRecording' | 'wantsOracleObservation'>, setting: SeatSetting): string | null {
  if (agent.needsRecording) return recordingProblem(agent.name, setting);
  // A live seat plays from what a person in it would see, never from the whole state.
  if (agent.wantsOracleObservation && setting === 'live') return `the ${agent.name} agent asks for the whole state; a live seat plays from what a person in it would see`;
  return null;
}

/** Both seats of a game between agents, and who plays them. */
export interface AgentPair {
  readonly leader: LeaderAgent;
  readonly follower: FollowerAgent;
  readonly agents: { readonly leader: AgentIdentity; readonly follower: AgentIdentity };
}

/** An agent of a pair that did not start: which seat, and why (`cause`). */
export class SeatStartError extends Error {
  constructor(
    readonly role: Role,
    readonly spec: string,
    readonly cause: unknown,
  ) {
    super(`the ${role} ${JSON.stringify(spec)} did not start: ${(cause as Error)?.message ?? String(cause)}`);
  }
}

/** Starts the leader, then the follower (closing the leader when the follower cannot start); rejects with a SeatStartError. */
export async function startPair(specs: { readonly leader: string; readonly follower: string }, context: AgentContext): Promise<AgentPair> {
  const leader = await startAgent(specs.leader, 'leader', context).catch((error: unknown) => {
    throw new SeatStartError('leader', specs.leader, error);
  });
  const follower = await startAgent(specs.follower, 'follower', context).catch(async (error: unknown) => {
    await leader.agent.close?.();
    throw new SeatStartError('follower', specs.follower, error);
  });
  return {
    leader: leader.agent as LeaderAgent,
    follower: follower.agent as FollowerAgent,
    agents: { leader: leader.identity, follower: follower.identity },
  };
}

async function created(spec: string, role: Role, context: AgentContext): Promise<FollowerAgent | LeaderAgent> {
  const entry = catalogueEntry(spec);
  if (entry?.create) return entry.create();
  if (spec === LLM_AGENT) {
    if (!context.startLlm) throw new AgentSpecError(`the ${LLM_AGENT} agent cannot play here`);
    return context.startLlm(role);
  }
  return shaken(role === 'leader' ? new ProcessLeaderAgent(spec, context.process) : new ProcessAgent(spec, context.process));
}

/**
 * Who played a seat, for log headers and reports: the name and version the agent gave, and the spec
 * that started it; the LLM agent's spec names its model and endpoint.
 */
export function agentIdentity(agent: FollowerAgent | LeaderAgent, spec: string): AgentIdentity {
  if (agent instanceof LlmAgent) return agent.identity;
  return { name: agent.name, ...(agent.version !== undefined && { version: agent.version }), spec };
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
