/**
 * The LLM agent's seats: what each role's template is given, what its replies are checked against,
 * what its plans are made for, and what it plays when a call gives no plan.
 */
import { describeLeaderObservation, describeObservation } from '../../language';
import { followerSituation } from '../../plans';
import type { AgentAction, FollowerAgent, FollowerObservation, LeaderAgent, LeaderAgentAction, LeaderObservation } from '../../types';
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
  situation: (obs) => followerSituation(obs.instruction, obs.feedback?.length),
  heard: (obs) => obs.feedback?.length ?? 0,
  fallback: () => [],
  // A conversation lasts for an instruction, whatever feedback comes meanwhile.
  conversation: (obs) => followerSituation(obs.instruction),
};

export type LlmFollower = LlmAgent<FollowerObservation, AgentAction, 'follower'> & FollowerAgent;

/** The LLM follower, once its template is loaded and its endpoint answered (see startLlmAgent). */
export function startLlmFollower(options: LlmAgentOptions): Promise<LlmFollower> {
  return startLlmAgent(FOLLOWER_SEAT, options);
}

/** The leader reads the whole board in words; with no plan it ends its turn when it may, else passes. */
export const LEADER_SEAT: Seat<LeaderObservation, LeaderAgentAction, 'leader'> = {
  role: 'leader',
  variables: (obs) => ({
    observation: describeLeaderObservation(obs),
    legal: [...obs.legal, ...(obs.canInstruct ? ['{"instruction": "..."}'] : [])].join(', '),
    can_instruct: obs.canInstruct ? 'yes' : 'no',
    max_instruction_length: String(obs.maxInstructionLength),
    steps_left: String(obs.stepsLeft),
    turns_left: String(obs.turnsLeft),
    score: String(obs.score),
  }),
  check: (obs) => ({ role: 'leader', legal: [...obs.legal], canInstruct: obs.canInstruct, maxInstructionLength: obs.maxInstructionLength }),
  // A leader's plan holds for its whole turn: only its own actions change its view then.
  situation: () => 'its turn',
  heard: () => 0,
  fallback: (obs) => (obs.legal.includes('END') ? ['END'] : []),
};

export type LlmLeader = LlmAgent<LeaderObservation, LeaderAgentAction, 'leader'> & LeaderAgent;

export function startLlmLeader(options: LlmAgentOptions): Promise<LlmLeader> {
  return startLlmAgent(LEADER_SEAT, options);
}
