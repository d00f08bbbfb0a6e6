/** The headless leader environment: Gymnasium's reset/step, the built-in follower between leader turns, refusals. */
import type { LeaderAgentAction } from '../../shared/agents/types';
import { LeaderEnv, type LeaderEnvStep } from '../../shared/env/leaderEnv';
import { generateMap } from '../../shared/maps/generate';
import { randomPolicy, tellingPolicy, type Policy } from './leaderPolicies';

function play(env: LeaderEnv, seed: number, policy: Policy, limit = Infinity) {
  const reset = env.reset({ seed });
  const steps: LeaderEnvStep[] = [];
  let view = reset.view;
  while (steps.length < limit) {
    const result = env.step(policy(view));
    steps.push(result);
    view = result.view;
    if (result.terminated || result.truncated) break;
  }
  return { reset, steps };
}

const last = <T>(items: readonly T[]): T => items[items.length - 1];

describe('LeaderEnv', () => {
  test("reset: the leader's view of a fresh game on generateMap(seed), the leader to play", () => {
    const { view, info } = new LeaderEnv().reset({ seed: 5 });
    expect(view.role).toBe('leader');
    expect(view.map.terrain).toEqual(generateMap(5).terrain);
    expect(view.turn.role).toBe('leader');
    expect(view.cards).toHaveLength(view.config.cardCount);
    expect(info).toEqual({ score: 0, points: 0, steps: 0, outcome: null, refused: null, followerActions: 0, episodeId: 'selfplay-5' });
  });

  test('the built-in follower reads the instructions as text: a leader that only talks makes sets', () => {
    const { steps } = play(new LeaderEnv({ maxSteps: 2_000 }), 6, tellingPolicy());
    const end = last(steps);
    expect(end.terminated).toBe(true);
    expect(end.info.score).toBeGreaterThan(0);
    // The reward is the points made; the follower's turns are played inside the leader's steps.
    expect(steps.reduce((sum, s) => sum + s.reward, 0)).toBe(end.info.score);
    expect(steps.some((s) => s.info.followerActions > 0)).toBe(true);
    // Every step returns with the leader in control, or at the game's end.
    expect(steps.every((s) => s.terminated || s.view.turn.role === 'leader')).toBe(true);
  });

  test('an action the engine refuses changes nothing, counts as a step and says why', () => {
    const env = new LeaderEnv();
    const { view } = env.reset({ seed: 2 });
    const refused = env.step('END');
    expect(refused.info.refused?.code).toBe('EMPTY_QUEUE');
    expect(refused.info.outcome).toBeNull();
    expect(refused.info.steps).toBe(1);
    expect(refused.view).toEqual(view);
    expect(env.step({ instruction: '  \u0007 ' }).info.refused?.code).toBe('EMPTY_INSTRUCTION');
  });

  test('instructions are sanitized as the game server does', () => {
    const env = new LeaderEnv();
    env.reset({ seed: 2 });
    const { view, info } = env.step({ instruction: ' get\tthe\u200b  red\n star ' });
    expect(info.refused).toBeNull();
    expect(view.instructions.map((instruction) => instruction.text)).toEqual(['get the red star']);
  });

  test('deterministic: the same seed and actions give the same views, rewards and infos, on a used env too', () => {
    const first = play(new LeaderEnv(), 7, randomPolicy(1));
    const env = new LeaderEnv();
    play(env, 8, randomPolicy(2));
    expect(play(env, 7, randomPolicy(1))).toEqual(first);
    expect(first.steps.length).toBeGreaterThan(20);
  });

  test('truncated at the step limit; stepping after the end, unknown actions and bad options throw', () => {
    const env = new LeaderEnv({ maxSteps: 4 });
    expect(() => env.step('MF')).toThrow(/reset\(\)/);
    const { steps } = play(env, 4, () => 'RL');
    expect(steps).toHaveLength(4);
    expect([last(steps).terminated, last(steps).truncated]).toEqual([false, true]);
    expect(() => env.step('MF')).toThrow(/episode is over/);
    env.reset({ seed: 4 });
    expect(() => env.step('DONE' as LeaderAgentAction)).toThrow(/unknown leader action/);
    expect(() => new LeaderEnv({ maxSteps: 0 })).toThrow(/maxSteps/);
    expect(() => new LeaderEnv({ follower: 'oracle' as 'random' })).toThrow(/unknown follower/);
  });
});
