/**
 * Reference trajectories for the Python package's equivalence test (python/tests): plays the
 * TypeScript FollowerEnv on the episodes and actions read from stdin as JSON, and writes what it
 * returned as JSON to stdout. Run with `node --import tsx test/env/followerTrajectories.ts`.
 *
 * Input: a list of {reward, gamma, maxSteps, actions, seed} or {..., log, instruction}, where
 * `actions` are indices into AGENT_ACTIONS and `log` is a log file's path. Output: for each, the
 * reset's {observation, info} and every step's {observation, reward, terminated, truncated, info},
 * until the episode ends or the actions run out.
 */
import { readFileSync } from 'node:fs';
import { describeObservation } from '../../shared/agents/language';
import { AGENT_ACTIONS } from '../../shared/agents/types';
import { FollowerEnv, type RewardKind } from '../../shared/env/env';
import { loadRecording } from '../../shared/eval/recording';

interface Episode {
  readonly reward: RewardKind;
  readonly gamma: number;
  readonly maxSteps: number;
  readonly actions: readonly number[];
  readonly seed?: number;
  readonly log?: string;
  readonly instruction?: number;
}

const episodes: Episode[] = JSON.parse(readFileSync(0, 'utf8'));
const trajectories = episodes.map((episode) => {
  const env = new FollowerEnv({ reward: episode.reward, gamma: episode.gamma, maxSteps: episode.maxSteps });
  const reset =
    episode.log === undefined ? env.reset({ seed: episode.seed! }) : env.reset({ log: loadRecording(readFileSync(episode.log, 'utf8')), instruction: episode.instruction! });
  const steps = [];
  for (const action of episode.actions) {
    const step = env.step(AGENT_ACTIONS[action]);
    steps.push({ ...step, description: describeObservation(step.observation) });
    if (step.terminated || step.truncated) break;
  }
  return { reset: { ...reset, description: describeObservation(reset.observation) }, steps };
});
process.stdout.write(JSON.stringify(trajectories));
