/** The two-player environment: both seats as agents, only the player in control acts, each sees its own view. */
import { actionOfCode, byActor, sanitizeInstruction, type Action } from '../../shared/engine/actions';
import { DEFAULT_CONFIG } from '../../shared/engine/config';
import { emptyMemory, playerView, remember } from '../../shared/engine/playerView';
import { createGame, type GameState } from '../../shared/engine/state';
import { step } from '../../shared/engine/transition';
import { HeuristicAgent } from '../../shared/agents/builtin';
import { ObservationTracker } from '../../shared/agents/observation';
import { GameEnv, type GameAction, type GameEnvStep } from '../../shared/env/gameEnv';
import { generateMap } from '../../shared/maps/generate';
import { tellingPolicy } from './leaderPolicies';

/** Leader by `tellingPolicy`, follower by the heuristic agent, each on its own view, until the episode ends. */
function playWhole(env: GameEnv, seed: number): { reset: GameEnvStep; steps: { action: GameAction; result: GameEnvStep }[] } {
  const reset = env.reset({ seed });
  const leader = tellingPolicy();
  const follower = new HeuristicAgent();
  follower.reset({ episodeId: reset.episodeId });
  const steps: { action: GameAction; result: GameEnvStep }[] = [];
  let last: GameEnvStep = reset;
  while (!last.terminated && !last.truncated) {
    const action: GameAction = last.control === 'leader' ? { role: 'leader', action: leader(last.leader) } : { role: 'follower', action: follower.act(last.follower) };
    last = env.step(action);
    steps.push({ action, result: last });
  }
  return { reset, steps };
}

function engineActionOf(action: GameAction): Action {
  if (action.role === 'follower') return byActor('follower', actionOfCode(action.action));
  const leader = action.action;
  if (typeof leader === 'object') return { type: 'instruction', actor: 'leader', text: sanitizeInstruction(leader.instruction) };
  return byActor('leader', actionOfCode(leader));
}

describe('GameEnv', () => {
  test('reset: a fresh game on generateMap(seed), the leader in control, each player with its own view', () => {
    const reset = new GameEnv().reset({ seed: 5 });
    const state = createGame(DEFAULT_CONFIG, generateMap(5), 5);
    expect(reset.control).toBe('leader');
    expect(reset.episodeId).toBe('selfplay-5');
    expect(reset.leader).toEqual(playerView(state, 'leader', remember(emptyMemory('leader'), state)));
    expect(reset.follower).toEqual(new ObservationTracker().observe(state));
    expect(reset.follower.legal).toEqual([]);
    expect(reset.info).toEqual({ score: 0, points: 0, steps: 0, actor: null, outcome: null, refused: null });
    expect([reset.reward, reset.terminated, reset.truncated]).toEqual([0, false, false]);
  });

  test('a whole game: turns alternate, each view is the playerView of the same states, and the shared reward is the points made', () => {
    const env = new GameEnv();
    const { reset, steps } = playWhole(env, 6);
    // The same actions played on the engine directly, with each player's memory kept apart.
    let state: GameState = createGame(DEFAULT_CONFIG, generateMap(6), 6);
    let leaderMemory = remember(emptyMemory('leader'), state);
    const follower = new ObservationTracker();
    follower.observe(state);
    let control = reset.control;
    const roles = new Set<string>();
    for (const { action, result } of steps) {
      expect(action.role).toBe(control); // only the player in control ever acted
      const played = step(state, engineActionOf(action));
      if (!played.ok) throw new Error(`the engine refused ${JSON.stringify(action)}: ${played.error.code}`);
      expect(result.reward).toBe(played.state.score - state.score);
      expect(result.info.points).toBe(result.reward);
      state = played.state;
      leaderMemory = remember(leaderMemory, state);
      expect(result.leader).toEqual(playerView(state, 'leader', leaderMemory));
      expect(result.follower).toEqual(follower.observe(state));
      expect(result.control).toBe(state.turn.role);
      expect(result.info.actor).toBe(action.role);
      control = result.control;
      roles.add(action.role);
    }
    expect(roles).toEqual(new Set(['leader', 'follower']));
    const end = steps[steps.length - 1].result;
    expect(end.terminated).toBe(true);
    expect(end.truncated).toBe(false);
    expect(end.info.score).toBeGreaterThan(0);
    expect(steps.reduce((sum, { result }) => sum + result.reward, 0)).toBe(end.info.score);
    expect(end.info.steps).toBe(steps.length);
  });

  test("the player not in control is refused (NOT_YOUR_TURN): nothing changes but the step count", () => {
    const env = new GameEnv();
    const reset = env.reset({ seed: 3 });
    const refused = env.step({ role: 'follower', action: 'MF' });
    expect(refused.info.refused?.code).toBe('NOT_YOUR_TURN');
    expect(refused.info.outcome).toBeNull();
    expect(refused.info.steps).toBe(1);
    expect(refused.leader).toEqual(reset.leader);
    expect(refused.follower).toEqual(reset.follower);
    expect(refused.control).toBe('leader');
    // The leader's own refused action: End Turn with nothing queued.
    expect(env.step({ role: 'leader', action: 'END' }).info.refused?.code).toBe('EMPTY_QUEUE');
    env.step({ role: 'leader', action: { instruction: 'get the red star' } });
    const ended = env.step({ role: 'leader', action: 'END' });
    expect(ended.control).toBe('follower');
    expect(ended.follower.instruction?.text).toBe('get the red star');
    expect(ended.follower.legal).toContain('DONE');
    expect(env.step({ role: 'leader', action: 'MF' }).info.refused?.code).toBe('NOT_YOUR_TURN');
  });

  test('maxSteps truncates the episode, and a step after its end or an unknown action is an error', () => {
    const env = new GameEnv({ maxSteps: 3 });
    env.reset({ seed: 4 });
    expect(() => env.step({ role: 'follower', action: 'JUMP' as never })).toThrow(/unknown follower action "JUMP"/);
    expect(() => env.step({ role: 'leader', action: 'DONE' as never })).toThrow(/unknown leader action "DONE"/);
    env.step({ role: 'leader', action: 'RR' });
    env.step({ role: 'leader', action: 'RR' });
    const last = env.step({ role: 'leader', action: 'RR' });
    expect([last.terminated, last.truncated]).toEqual([false, true]);
    expect(() => env.step({ role: 'leader', action: 'RR' })).toThrow(/the episode is over/);
    expect(() => new GameEnv({ maxSteps: 0 })).toThrow(RangeError);
    expect(() => new GameEnv().step({ role: 'leader', action: 'RR' })).toThrow(/call reset\(\)/);
  });

  test('the same seed and actions give the same trajectory', () => {
    const env = new GameEnv();
    const first = playWhole(env, 8);
    playWhole(env, 9);
    expect(playWhole(new GameEnv(), 8)).toEqual(first);
    expect(playWhole(env, 8)).toEqual(first);
  });
});
