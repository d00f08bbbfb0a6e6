/**
 * Every agent a spec may name, in one table: its name, the seats it plays, whether it can play
 * where nothing is recorded, and how a pure one is made. Every command, the server's seats, the
 * study arms and the environments read names and checks from here; shared/agents/node/registry.ts
 * starts what is not pure (the LLM agent, programs). A spec that names no entry is a program's
 * command line.
 */
import type { Role } from '../engine/state';
import { LLM_ARM_AGENT } from '../study/arms';
import { HeuristicAgent, RandomAgent } from './builtin';
import { Oracle, StaticOracle } from './oracles';
import { ScriptedLeaderAgent } from './scriptedLeader';
import type { FollowerAgent, LeaderAgent } from './types';

/** Where a seat is played: over a logged game (`cerealbar eval --logs`), in a new game between agents, or live against a person. */
export type SeatSetting = 'logs' | 'game' | 'live';

export interface CatalogueEntry {
  readonly name: string;
  readonly roles: readonly Role[];
  /** False for agents that need a recorded game (the oracles): they play over logs only. */
  readonly needsNoRecording: boolean;
  /** Makes the agent; absent for the one that needs its settings (the LLM agent, started by the registry). */
  readonly create?: () => FollowerAgent | LeaderAgent;
}

/** The agent spec that selects the LLM agent, in either seat: the name a study file's arm gives it (the study's layer is below this one). */
export const LLM_AGENT = LLM_ARM_AGENT;

export const AGENT_CATALOGUE: readonly CatalogueEntry[] = [
  { name: 'random', roles: ['follower'], needsNoRecording: true, create: () => new RandomAgent() },
  { name: 'heuristic', roles: ['follower'], needsNoRecording: true, create: () => new HeuristicAgent() },
  { name: 'static-oracle', roles: ['follower'], needsNoRecording: false, create: () => new StaticOracle() },
  { name: 'oracle', roles: ['follower'], needsNoRecording: false, create: () => new Oracle() },
  { name: 'scripted', roles: ['leader'], needsNoRecording: true, create: () => new ScriptedLeaderAgent() },
  { name: LLM_AGENT, roles: ['follower', 'leader'], needsNoRecording: true },
];

export function catalogueEntry(name: string): CatalogueEntry | undefined {
  return AGENT_CATALOGUE.find((entry) => entry.name === name);
}

/** The built-in agents of `role`'s seat, in catalogue order; `setting` leaves out those that cannot play there. */
export function agentNames(role: Role, setting: SeatSetting = 'logs'): string[] {
  return AGENT_CATALOGUE.filter((entry) => entry.roles.includes(role) && (setting === 'logs' || entry.needsNoRecording)).map((entry) => entry.name);
}

/** The role of the other seat. */
export const otherRole = (role: Role): Role => (role === 'leader' ? 'follower' : 'leader');

/**
 * Why `spec` cannot play `role`'s seat in `setting`, in words for the person who gave it; null when
 * it can (a program's own answer, which it gives in its handshake, is checked once it has started:
 * `recordingProblem`).
 */
export function seatProblem(spec: string, role: Role, setting: SeatSetting): string | null {
  if (spec.trim() === '') return `an empty ${role} agent`;
  const entry = catalogueEntry(spec);
  if (!entry) return null;
  if (!entry.roles.includes(role)) {
    return `${JSON.stringify(spec)} is a built-in ${otherRole(role)}, not a ${role}; the built-in ${role}s are ${agentNames(role, setting).join(', ')}`;
  }
  return entry.needsNoRecording ? null : recordingProblem(spec, setting);
}

/** Why an agent that needs a recorded game cannot play in `setting`; null over logs. */
export function recordingProblem(name: string, setting: SeatSetting): string | null {
  if (setting === 'logs') return null;
  return `the ${name} agent needs a recorded game; it can only be evaluated over logs (cerealbar eval --agent ${name} --logs PATH)`;
}

/** A bare word that names no agent is a misspelling, not a program (a program is a command line: `python3 agent.py`, `./agent`). */
export function unknownNameProblem(spec: string, role: Role, setting: SeatSetting): string | null {
  if (catalogueEntry(spec) || !/^[\w.-]+$/.test(spec)) return null;
  return `${JSON.stringify(spec)} is not an agent: the built-in ${role}s are ${agentNames(role, setting).join(', ')}; a program is its command line, as in "python3 my_agent.py" or "./my_agent"`;
}

/** The built-in followers that are made at once and can play `setting` (the environments step without a process or a promise). */
export function pureFollowerNames(setting: SeatSetting): string[] {
  return agentNames('follower', setting).filter((name) => catalogueEntry(name)?.create);
}

/** The pure built-in follower `name` if it can play `setting`; null for any other name. */
export function createPureFollower(name: string, setting: SeatSetting): FollowerAgent | null {
  return pureFollowerNames(setting).includes(name) ? (catalogueEntry(name)!.create!() as FollowerAgent) : null;
}
