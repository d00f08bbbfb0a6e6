/** Agents by name (`random`, `heuristic`, `static-oracle`, `oracle`) or as a command line to run. */
import { createBuiltinAgent } from '../builtin';
import { Oracle, StaticOracle } from '../oracles';
import { ProcessAgent, type ProcessAgentOptions } from './processAgent';
import type { FollowerAgent } from '../types';

export const AGENT_NAMES = ['random', 'heuristic', 'static-oracle', 'oracle'] as const;

/**
 * A built-in agent when `spec` names one, otherwise a program run with `/bin/sh -c spec`, ready
 * once its handshake has told what it wants (oracle observations, the recording).
 */
export async function createAgent(spec: string, processOptions: ProcessAgentOptions = {}): Promise<FollowerAgent> {
  if (spec === 'static-oracle') return new StaticOracle();
  if (spec === 'oracle') return new Oracle();
  const builtin = createBuiltinAgent(spec);
  if (builtin) return builtin;
  const agent = new ProcessAgent(spec, processOptions);
  try {
    await agent.handshake();
  } catch (error) {
    await agent.close();
    throw error;
  }
  return agent;
}
