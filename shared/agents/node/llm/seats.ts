/**
 * The LLM agent's seats: what each role's template is given, what its replies are checked against,
 * and what it plays when a call gives no plan.
 */
import { describeObservation } from '../../language';
import type { AgentAction, FollowerAgent, FollowerObservation } from '../../types';
import { startLlmAgent, type LlmAgent, type LlmAgentOptions, type Seat } from './agent';

/** The follower describes its view in words; with no plan it passes (its turn runs out). */
export const FOLLOWER_SEAT: Seat<FollowerObservation, AgentAction, 'follower'> = {
  role: 'follower',
  variables: (obs) => ({
    observation: describeObservation(obs),
    legal: obs.legal.join(', '),
    instruction: obs.instruction ? obs.instruction.text : 'none',
    steps_left: String(obs.stepsLeft),
    turns_left: String(obs.turnsLeft),
    score: String(obs.score),
  }),
  check: (obs) => ({ role: 'follower', legal: [...obs.legal] }),
  fallback: () => [],
};

export type LlmFollower = LlmAgent<FollowerObservation, AgentAction, 'follower'> & FollowerAgent;

/** The LLM follower, once its template is loaded and its endpoint answered (see startLlmAgent). */
export function startLlmFollower(options: LlmAgentOptions): Promise<LlmFollower> {
  return startLlmAgent(FOLLOWER_SEAT, options);
}
