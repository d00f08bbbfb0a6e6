/**
 * Reference trajectories for the Python package's two-player (PettingZoo) equivalence test: plays
 * shared/env/gameEnv.ts's GameEnv on the seeds read from stdin as JSON, and writes every action and
 * what the environment returned as JSON to stdout. Run with `node --import tsx test/env/gameTrajectories.ts`.
 *
 * Each player acts on its own view only: the leader by `tellingPolicy`, the follower by the
 * built-in heuristic agent, so that sets are made; a `random` share of the actions are drawn at
 * random instead, so that refusals and odd moves happen too.
 *
 * Input: a list of {seed, maxSteps, random}. Output: for each, the reset and every step as
 * {role, action, control, reward, terminated, truncated, info, leader, follower, description},
 * where `action` is an index into the role's actions (and `instruction` its text).
 */
import { readFileSync } from 'node:fs';
import { FOLLOWER_CODES } from '../../shared/engine/actions';
import { Draw, seedRng } from '../../shared/engine/rng';
import { HeuristicAgent } from '../../shared/agents/builtin';
import { describeObservation } from '../../shared/agents/language';
import { GameEnv, type GameAction, type GameEnvStep } from '../../shared/env/gameEnv';
import { LEADER_AGENT_CODES, type LeaderAgentAction } from '../../shared/agents/types';
import { LEADER_ACTION_NAMES } from '../../shared/env/observationArrays';
import { tellingPolicy } from './leaderPolicies';

interface Episode {
  readonly seed: number;
  readonly maxSteps: number;
  readonly random: number;
}

function moment(result: GameEnvStep) {
  return { ...result, description: describeObservation(result.follower) };
}

const episodes: Episode[] = JSON.parse(readFileSync(0, 'utf8'));
const trajectories = episodes.map(({ seed, maxSteps, random }) => {
  const env = new GameEnv({ maxSteps });
  const draw = new Draw(seedRng(seed));
  const leader = tellingPolicy();
  const follower = new HeuristicAgent();
  const reset = env.reset({ seed });
  follower.reset({ episodeId: reset.episodeId });
  const steps = [];
  let last: GameEnvStep = reset;
  while (!last.terminated && !last.truncated) {
    let action: GameAction;
    if (last.control === 'leader') {
      const chosen = draw.chance(random) ? draw.pick<LeaderAgentAction>([...LEADER_AGENT_CODES, { instruction: 'pick up the card' }]) : leader(last.leader);
      action = { role: 'leader', action: chosen };
    } else {
      action = { role: 'follower', action: draw.chance(random) ? draw.pick(FOLLOWER_CODES) : follower.act(last.follower) };
    }
    last = env.step(action);
    const index = typeof action.action === 'string' ? (action.role === 'leader' ? LEADER_ACTION_NAMES : FOLLOWER_CODES).indexOf(action.action as never) : LEADER_ACTION_NAMES.indexOf('INSTRUCTION');
    const instruction = typeof action.action === 'object' ? action.action.instruction : undefined;
    steps.push({ role: action.role, action: index, instruction, ...moment(last) });
  }
  return { reset: moment(reset), steps };
});
process.stdout.write(JSON.stringify(trajectories));
