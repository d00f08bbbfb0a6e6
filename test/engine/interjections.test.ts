/**
 * The leader's interjections in the follower's turn (CB2's rules, each an option of the config):
 * live feedback (R-60, R-61) and cancelling instructions (R-62), what each player's view shows of
 * them (R-63), and their refusals (R-64).
 */
import { emptyMemory, legalActions, playerView, profileConfig, remember, step, type Action, type GameState, type Memory, type Role } from '../../shared/engine';
import { DEFAULT_CONFIG } from '../../shared/engine/config';
import { snapshot } from '../../shared/engine/snapshot';
import { describeEvent } from '../../shared/log/describe';
import { makeHeader, GameRecorder, serializeLine } from '../../shared/log/recorder';
import type { LogEvent, LogLine } from '../../shared/log/format';
import { replay } from '../../shared/log/replay';
import { makeState } from '../fixtures';
import { done, endTurn, expectRefused, mv, play, say } from './helpers';

const feedback = (signal: 'positive' | 'negative', actor: Role = 'leader'): Action => ({ type: 'feedback', actor, signal });
const cancel = (actor: Role = 'leader'): Action => ({ type: 'cancel', actor });
const ON = { liveFeedback: true, cancelInstructions: true } as const;

/** A game in the follower's turn after one move, with three instructions queued (0 current, 1 and 2 queued). */
function followerTurn(config: { liveFeedback?: boolean; cancelInstructions?: boolean } = ON): GameState {
  return play(makeState({ config }), say('go to the red star'), say('then the blue heart'), say('then stop'), endTurn, mv('follower', 'RL')).state;
}

/** Both players' memories after witnessing each state in turn. */
function witness(states: readonly GameState[]): Record<Role, Memory> {
  let leader = emptyMemory('leader');
  let follower = emptyMemory('follower');
  for (const state of states) {
    leader = remember(leader, state);
    follower = remember(follower, state);
  }
  return { leader, follower };
}

describe('R-60: the options', () => {
  test('both are off in the paper\'s rules and on in the cb2 profile', () => {
    expect(DEFAULT_CONFIG.liveFeedback).toBe(false);
    expect(DEFAULT_CONFIG.cancelInstructions).toBe(false);
    expect(profileConfig('cb2').liveFeedback).toBe(true);
    expect(profileConfig('cb2').cancelInstructions).toBe(true);
  });

  test('legal lists them for the leader in the follower\'s turn only, and never for the follower', () => {
    const state = followerTurn();
    expect(legalActions(state, 'leader')).toMatchObject({ feedback: true, cancel: true, moves: [], instruction: false, endTurn: false });
    expect(legalActions(state, 'follower')).toMatchObject({ feedback: false, cancel: false });
    const leaderTurn = makeState({ config: ON });
    expect(legalActions(leaderTurn, 'leader')).toMatchObject({ feedback: false, cancel: false });
    expect(legalActions(followerTurn({ liveFeedback: true }), 'leader')).toMatchObject({ feedback: true, cancel: false });
    expect(legalActions(followerTurn({ cancelInstructions: true }), 'leader')).toMatchObject({ feedback: false, cancel: true });
  });
});

describe('R-61: live feedback', () => {
  test('changes nothing in the game and is tied to the current instruction', () => {
    const state = followerTurn();
    for (const signal of ['positive', 'negative'] as const) {
      const result = step(state, feedback(signal));
      if (!result.ok) throw new Error(result.error.message);
      expect(result.state).toBe(state);
      expect(result.outcome).toMatchObject({ feedback: { signal, instruction: 0 }, turn: state.turn, turnsLeft: state.turnsLeft, score: state.score, gameOver: false });
      expect(result.outcome.turnEnded).toBeUndefined();
    }
  });

  test('follows the current instruction as the follower marks instructions done', () => {
    const { state, outcomes } = play(followerTurn(), done, feedback('negative'), done, feedback('positive'));
    expect(outcomes[1].feedback).toEqual({ signal: 'negative', instruction: 1 });
    expect(outcomes[3].feedback).toEqual({ signal: 'positive', instruction: 2 });
    expect(state.turn.role).toBe('follower');
  });
});

describe('R-62: cancelling', () => {
  test('cancels the current and every queued instruction and ends the round as when the follower runs out of steps', () => {
    const state = followerTurn();
    const result = step(state, cancel());
    if (!result.ok) throw new Error(result.error.message);
    expect(result.outcome.cancelled).toEqual([0, 1, 2]);
    expect(result.outcome.turnEnded).toEqual({ reason: 'cancelled' });
    expect(result.state.queue).toEqual([]);
    expect(result.state.cancelled).toEqual([
      { id: 0, text: 'go to the red star', current: true },
      { id: 1, text: 'then the blue heart', current: false },
      { id: 2, text: 'then stop', current: false },
    ]);
    expect(result.state.turn).toEqual({ role: 'leader', stepsLeft: DEFAULT_CONFIG.leaderSteps });
    expect(result.state.turnsLeft).toBe(state.turnsLeft - 1);
    expect(result.state.score).toBe(state.score);
    expect(result.state.follower).toEqual(state.follower);
    // As the follower's last step would have: the same turn and counters.
    const outOfSteps = play(state, ...Array.from({ length: state.turn.stepsLeft }, (_, i) => mv('follower', i % 2 ? 'RL' : 'RR'))).state;
    expect(result.state.turn).toEqual(outOfSteps.turn);
    expect(result.state.turnsLeft).toBe(outOfSteps.turnsLeft);
  });

  test('only the instructions left are cancelled; those done stay done, and a game in its last round ends', () => {
    const { state, outcomes } = play(makeState({ config: { ...ON, turnsPerPlayer: 1 } }), say('a'), say('b'), endTurn, done, cancel());
    expect(outcomes[4].cancelled).toEqual([1]);
    expect(state.previousInstruction).toEqual({ id: 0, text: 'a' });
    expect(state.cancelled).toEqual([{ id: 1, text: 'b', current: true }]);
    expect(state.gameOver).toBe(true);
  });
});

describe('R-63: what the players see of them', () => {
  test('the leader sees every cancelled instruction as cancelled, in the order written; the follower only the one it was shown', () => {
    const states = [followerTurn()];
    states.push(play(states[0], done).state); // instruction 0 done, 1 current
    states.push(play(states[1], cancel()).state); // 1 and 2 cancelled
    states.push(play(states[2], say('new one'), endTurn).state);
    const memories = witness(states);
    const last = states[states.length - 1];
    expect(playerView(last, 'leader', memories.leader).instructions.map(({ id, status, shown }) => ({ id, status, shown }))).toEqual([
      { id: 0, status: 'done', shown: true },
      { id: 1, status: 'cancelled', shown: true },
      { id: 2, status: 'cancelled', shown: true },
      { id: 3, status: 'current', shown: true },
    ]);
    const followerSees = playerView(last, 'follower', memories.follower).instructions;
    expect(followerSees.map(({ id, status }) => ({ id, status }))).toEqual([
      { id: 0, status: 'done' },
      { id: 1, status: 'cancelled' },
      { id: 2, status: 'current' }, // numbered by what the follower was shown (the engine's id is 3)
    ]);
    expect(JSON.stringify(playerView(last, 'follower', memories.follower))).not.toContain('then stop');
  });

  test('the follower cannot tell how many queued instructions a cancel removed', () => {
    // An instruction's id counts every instruction written: the follower's view numbers those it was shown.
    const one = play(makeState({ config: ON }), say('go'), endTurn, cancel(), say('next'), endTurn).state;
    const three = play(makeState({ config: ON }), say('go'), say('x'), say('y'), endTurn, cancel(), say('next'), endTurn).state;
    const followerView = (state: GameState) => playerView(state, 'follower', remember(emptyMemory('follower'), state));
    const strip = (view: ReturnType<typeof followerView>) => ({ ...view, instructions: view.instructions.map(({ id, text, status, shown }) => ({ id, text, status, shown })) });
    expect(strip(followerView(three))).toEqual(strip(followerView(one)));
  });

  test('a snapshot lists the cancelled instructions once there are any, and only then', () => {
    const state = followerTurn();
    expect(snapshot(state)).not.toHaveProperty('cancelled');
    expect(snapshot(play(state, cancel()).state).cancelled).toEqual([
      { id: 0, text: 'go to the red star', current: true },
      { id: 1, text: 'then the blue heart', current: false },
      { id: 2, text: 'then stop', current: false },
    ]);
  });
});

describe('R-64, R-66, R-67, R-68, R-69, R-70: refusals', () => {
  test('with an option off, from the follower, outside the follower\'s turn, or with an unknown signal; nothing changes', () => {
    expectRefused(followerTurn({}), feedback('positive'), 'FEEDBACK_OFF');
    expectRefused(followerTurn({}), cancel(), 'CANCEL_OFF');
    expectRefused(followerTurn({ cancelInstructions: true }), feedback('negative'), 'FEEDBACK_OFF');
    expectRefused(followerTurn({ liveFeedback: true }), cancel(), 'CANCEL_OFF');
    expectRefused(followerTurn(), feedback('positive', 'follower'), 'FOLLOWER_CANNOT_GIVE_FEEDBACK');
    expectRefused(followerTurn(), cancel('follower'), 'FOLLOWER_CANNOT_CANCEL');
    const leaderTurn = play(makeState({ config: ON }), say('go')).state;
    expectRefused(leaderTurn, feedback('positive'), 'NOT_FOLLOWER_TURN');
    expectRefused(leaderTurn, cancel(), 'NOT_FOLLOWER_TURN');
    expectRefused(followerTurn(), { type: 'feedback', actor: 'leader', signal: 'meh' } as unknown as Action, 'MALFORMED_ACTION');
    expectRefused(followerTurn(), { type: 'feedback', actor: 'leader' } as unknown as Action, 'MALFORMED_ACTION');
    const over = play(makeState({ config: { ...ON, turnsPerPlayer: 1 } }), say('go'), endTurn, cancel()).state;
    expectRefused(over, feedback('positive'), 'GAME_OVER');
    expectRefused(over, cancel(), 'GAME_OVER');
  });
});

describe('in the log', () => {
  test('R-9: feedback and cancel events are recorded, read back, described and replayed to the same states', () => {
    const start = makeState({ config: ON });
    const lines: LogLine[] = [];
    const recorder = new GameRecorder(
      makeHeader({ gameId: 'interjections', startedAt: new Date(0), seed: 1, config: start.config, map: start.world.map, setup: { leader: start.leader, follower: start.follower, cards: start.cards, rng: start.rng } }),
      (line) => lines.push(line),
    );
    const states = [recorder.state];
    const actions = [say('go to the red star'), say('then the blue heart'), endTurn, mv('follower', 'RL'), feedback('negative'), done, feedback('positive'), cancel()];
    actions.forEach((action, i) => {
      const result = recorder.apply(action, i * 100);
      if (!result.ok) throw new Error(result.error.message);
      states.push(result.state);
    });
    recorder.end(1000, 'abandoned');
    const text = lines.map((line) => `${serializeLine(line)}\n`).join('');
    const events = lines.filter((line): line is LogEvent => line.kind === 'event');
    expect(events[4]).toMatchObject({ type: 'feedback', actor: 'leader', payload: { signal: 'negative' }, outcome: { feedback: { signal: 'negative', instruction: 0 } } });
    expect(events[7]).toMatchObject({ type: 'cancel', actor: 'leader', payload: {}, outcome: { cancelled: [1], turnEnded: { reason: 'cancelled' } } });
    expect(describeEvent(events[4], start.cards)).toEqual(['The leader gave negative feedback on instruction 1']);
    expect(describeEvent(events[7], start.cards)).toEqual(["The leader cancelled instruction 2", "The follower's turn ends: the leader's turn begins (5 turns left)"]);
    const replayed: GameState[] = [];
    replay(text, { onState: (state) => replayed.push(state) });
    expect(replayed.map(snapshot)).toEqual(states.map(snapshot));
  });
});
