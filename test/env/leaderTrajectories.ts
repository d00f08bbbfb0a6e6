/**
 * Reference trajectories for the Python package's LeaderEnv equivalence test: plays
 * shared/env/leaderEnv.ts's LeaderEnv on the seeds read from stdin as JSON, and writes every action
 * and what the environment returned as JSON to stdout. Run with `node --import tsx test/env/leaderTrajectories.ts`.
 *
 * The leader acts on its view by `tellingPolicy`, a `random` share of its actions drawn at random
 * instead (refusals happen); the built-in follower plays inside the steps.
 *
 * Input: a list of {seed, maxSteps, follower, random}. Output: for each, the reset's {view, info}
 * and every step as {action, instruction, view, reward, terminated, truncated, info}, `action`
 * an index into LEADER_ACTION_NAMES.
 */
import { readFileSync } from 'node:fs';
import { Draw, seedRng } from '../../shared/engine/rng';
import { LEADER_AGENT_CODES, type LeaderAgentAction } from '../../shared/agents/types';
import { LeaderEnv } from '../../shared/env/leaderEnv';
import { LEADER_ACTION_NAMES } from '../../shared/env/observationArrays';
import { tellingPolicy } from './leaderPolicies';

interface Episode {
  readonly seed: number;
  readonly maxSteps: number;
  readonly follower: 'heuristic' | 'random';
  readonly random: number;
}

const episodes: Episode[] = JSON.parse(readFileSync(0, 'utf8'));
const trajectories = episodes.map(({ seed, maxSteps, follower, random }) => {
  const env = new LeaderEnv({ maxSteps, follower });
  const draw = new Draw(seedRng(seed));
  const policy = tellingPolicy();
  const reset = env.reset({ seed });
  const steps = [];
  let view = reset.view;
  for (;;) {
    const action: LeaderAgentAction = draw.chance(random) ? draw.pick<LeaderAgentAction>([...LEADER_AGENT_CODES, { instruction: 'pick up the card' }]) : policy(view);
    const result = env.step(action);
    const index = typeof action === 'object' ? LEADER_ACTION_NAMES.indexOf('INSTRUCTION') : LEADER_ACTION_NAMES.indexOf(action);
    steps.push({ action: index, instruction: typeof action === 'object' ? action.instruction : undefined, ...result });
    view = result.view;
    if (result.terminated || result.truncated) break;
  }
  return { reset, steps };
});
process.stdout.write(JSON.stringify(trajectories));
