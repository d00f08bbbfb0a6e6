/** One test (at least) for each rule of Table 2 and for every refused action. */
import { step, type GameState } from '../../shared/engine';
import { card, makeState } from '../fixtures';
import { done, endTurn, expectRefused, mv, play, say, timeout } from './helpers';

/** A state in the follower's turn with `n` instructions queued. */
function followerTurn(n: number, spec = {}): GameState {
  const instructions = Array.from({ length: n }, (_, i) => say(`instruction ${i}`));
  return play(makeState(spec), ...instructions, endTurn).state;
}

describe('rule 1: an instruction joins the end of the queue and costs no step', () => {
  test('the queue grows in order, steps and control unchanged', () => {
    const { state, outcomes } = play(makeState(), mv('leader', 'MF'), say('first'), say('second'));
    expect(state.queue.map((i) => i.text)).toEqual(['first', 'second']);
    expect(state.queue.map((i) => i.id)).toEqual([0, 1]);
    expect(state.turn).toEqual({ role: 'leader', stepsLeft: 4 });
    expect(outcomes[2].instruction).toBe(1);
  });

  test('an instruction after the leader ran out of steps is still accepted', () => {
    const moves = Array.from({ length: 5 }, () => mv('leader', 'RR'));
    const { state } = play(makeState(), ...moves, say('late'));
    expect(state.turn.stepsLeft).toBe(0);
    expect(state.queue).toHaveLength(1);
  });

  test('the follower cannot give instructions, in its turn or not', () => {
    expectRefused(makeState(), { type: 'instruction', actor: 'follower', text: 'hi' }, 'FOLLOWER_CANNOT_INSTRUCT');
    expectRefused(followerTurn(1), { type: 'instruction', actor: 'follower', text: 'hi' }, 'FOLLOWER_CANNOT_INSTRUCT');
  });

  test('the leader cannot give instructions during the follower turn', () => {
    expectRefused(followerTurn(1), say('more'), 'NOT_YOUR_TURN');
  });

  test('empty and over-long instructions are refused', () => {
    expectRefused(makeState(), say('   '), 'EMPTY_INSTRUCTION');
    expectRefused(makeState(), say('x'.repeat(301)), 'INSTRUCTION_TOO_LONG');
    expect(step(makeState(), say('x'.repeat(300))).ok).toBe(true);
  });
});

describe('rule 2: the leader ends its turn with a non-empty queue: the follower plays with Ψ_f steps', () => {
  test('control passes with all follower steps, however many steps the leader used', () => {
    const { state, outcomes } = play(makeState(), mv('leader', 'MF'), say('go'), endTurn);
    expect(state.turn).toEqual({ role: 'follower', stepsLeft: 10 });
    expect(state.turnsLeft).toBe(6);
    expect(outcomes[2].turnEnded).toEqual({ reason: 'end-turn' });
  });

  test('Ψ_f is configurable', () => {
    const { state } = play(makeState({ config: { followerSteps: 3 } }), say('go'), endTurn);
    expect(state.turn).toEqual({ role: 'follower', stepsLeft: 3 });
  });
});

describe('rule 3: the leader ends its turn with an empty queue: a new leader turn, the follower turn is skipped', () => {
  test('End Turn with an empty queue is refused like the disabled button, by default', () => {
    expectRefused(makeState(), endTurn, 'EMPTY_QUEUE');
  });

  test('a leader timeout with an empty queue skips the follower turn, which still uses a turn', () => {
    const { state, outcomes } = play(makeState(), mv('leader', 'MF'), timeout('leader'));
    expect(state.turn).toEqual({ role: 'leader', stepsLeft: 5 });
    expect(state.turnsLeft).toBe(5);
    expect(outcomes[1].turnEnded).toEqual({ reason: 'timeout', followerSkipped: true });
  });

  test('with endTurnWithEmptyQueue, End Turn itself applies rule 3', () => {
    const { state, outcomes } = play(makeState({ config: { endTurnWithEmptyQueue: true } }), endTurn);
    expect(state.turn).toEqual({ role: 'leader', stepsLeft: 5 });
    expect(state.turnsLeft).toBe(5);
    expect(outcomes[0].turnEnded).toEqual({ reason: 'end-turn', followerSkipped: true });
  });
});

describe('rule 4: the leader out of steps keeps control', () => {
  test('after five moves the leader still has control with 0 steps, and cannot move', () => {
    const { state } = play(makeState(), ...Array.from({ length: 5 }, () => mv('leader', 'RL')));
    expect(state.turn).toEqual({ role: 'leader', stepsLeft: 0 });
    expectRefused(state, mv('leader', 'MF'), 'NO_STEPS_LEFT');
    expectRefused(state, mv('leader', 'RR'), 'NO_STEPS_LEFT');
    const after = play(state, say('now go'), endTurn).state;
    expect(after.turn).toEqual({ role: 'follower', stepsLeft: 10 });
  });

  test('Ψ_l is configurable', () => {
    const state = makeState({ config: { leaderSteps: 2 } });
    expect(state.turn.stepsLeft).toBe(2);
    expect(play(state, mv('leader', 'RL'), mv('leader', 'RL')).state.turn.stepsLeft).toBe(0);
  });
});

describe('rule 5: DONE with more instructions queued removes the head and costs no step', () => {
  test('the next instruction becomes current; the finished one becomes previous', () => {
    const start = followerTurn(3);
    const { state, outcomes } = play(start, mv('follower', 'RL'), done);
    expect(state.queue.map((i) => i.text)).toEqual(['instruction 1', 'instruction 2']);
    expect(state.previousInstruction).toEqual({ id: 0, text: 'instruction 0' });
    expect(state.turn).toEqual({ role: 'follower', stepsLeft: 9 });
    expect(outcomes[1].instruction).toBe(0);
    expect(outcomes[1].turnEnded).toBeUndefined();
  });
});

describe('rule 6: DONE on the last instruction hands control to the leader with Ψ_l steps', () => {
  test('the queue empties, the round ends and the leader plays', () => {
    const { state, outcomes } = play(followerTurn(1), mv('follower', 'RR'), done);
    expect(state.queue).toEqual([]);
    expect(state.turn).toEqual({ role: 'leader', stepsLeft: 5 });
    expect(state.turnsLeft).toBe(5);
    expect(outcomes[1].turnEnded).toEqual({ reason: 'all-done' });
  });
});

describe('rule 7: the follower out of steps hands control to the leader at once', () => {
  test('the tenth step ends the turn; the queue is kept', () => {
    const moves = Array.from({ length: 10 }, (_, i) => mv('follower', i % 2 ? 'RL' : 'RR'));
    const { state, outcomes } = play(followerTurn(2), ...moves);
    expect(outcomes[8].turn).toEqual({ role: 'follower', stepsLeft: 1 });
    expect(outcomes[9].turnEnded).toEqual({ reason: 'out-of-steps' });
    expect(state.turn).toEqual({ role: 'leader', stepsLeft: 5 });
    expect(state.turnsLeft).toBe(5);
    expect(state.queue).toHaveLength(2);
  });

  test('a follower timeout ends the turn like running out of steps', () => {
    const { state, outcomes } = play(followerTurn(2), mv('follower', 'RR'), timeout('follower'));
    expect(state.turn).toEqual({ role: 'leader', stepsLeft: 5 });
    expect(state.turnsLeft).toBe(5);
    expect(state.queue).toHaveLength(2);
    expect(outcomes[1].turnEnded).toEqual({ reason: 'timeout' });
  });
});

describe('rule 8: world actions change the world and cost a step', () => {
  test('MF, MB, RL and RR each move or turn the actor and cost one step', () => {
    const { state, outcomes } = play(makeState(), mv('leader', 'MF'), mv('leader', 'RL'), mv('leader', 'MB'), mv('leader', 'RR'));
    // (1,1) E -> MF (2,1) -> RL faces NE -> MB moves back south-west: odd row 1, SW is (2,0).
    expect(outcomes.map((o) => o.pose)).toEqual([
      { x: 2, y: 1, heading: 'E' },
      { x: 2, y: 1, heading: 'NE' },
      { x: 2, y: 0, heading: 'NE' },
      { x: 2, y: 0, heading: 'E' },
    ]);
    expect(state.leader).toEqual({ x: 2, y: 0, heading: 'E' });
    expect(state.turn.stepsLeft).toBe(1);
    expect(state.follower).toEqual(makeState().follower);
  });

  test('the follower moves in its own turn', () => {
    const { state } = play(followerTurn(1), mv('follower', 'RL'), mv('follower', 'MF'));
    // (1,4) facing NE after RL; even row 4: NE is (1,5).
    expect(state.follower).toEqual({ x: 1, y: 5, heading: 'NE' });
    expect(state.turn.stepsLeft).toBe(8);
  });
});

describe('blocked moves change nothing and cost no step', () => {
  test.each([
    ['water', { x: 3, y: 2, heading: 'E' as const }, 'MF'],
    ['a hill', { x: 7, y: 6, heading: 'W' as const }, 'MF'],
    ['a prop', { x: 1, y: 6, heading: 'E' as const }, 'MF'],
    ['the map edge', { x: 0, y: 1, heading: 'W' as const }, 'MF'],
    ['water, backwards', { x: 5, y: 2, heading: 'E' as const }, 'MB'],
  ])('into %s', (_what, leader, move) => {
    const state = makeState({ leader });
    const result = step(state, mv('leader', move as 'MF' | 'MB'));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.state).toBe(state);
    expect(result.outcome).toMatchObject({ blocked: true, pose: leader, turn: { role: 'leader', stepsLeft: 5 } });
  });

  test('players do not block each other', () => {
    const { state } = play(makeState({ leader: { x: 0, y: 4, heading: 'E' } }), mv('leader', 'MF'));
    expect(state.leader).toMatchObject(state.follower);
  });
});

describe('cards: moving onto a card toggles it, for either player', () => {
  test('the follower selects a card by stepping on it and unselects it by stepping on it again', () => {
    const { state, outcomes } = play(followerTurn(1), mv('follower', 'MF'), mv('follower', 'MB'), mv('follower', 'MF'));
    expect(outcomes[0].toggled).toEqual([0]);
    expect(outcomes[1].toggled).toBeUndefined();
    expect(outcomes[2].toggled).toEqual([0]);
    expect(state.cards.find((c) => c.id === 0)?.selected).toBe(false);
  });

  test('the leader selects cards too, moving backwards onto one as well', () => {
    const leader = { x: 4, y: 7, heading: 'W' as const };
    const { state, outcomes } = play(makeState({ leader }), mv('leader', 'MB'), mv('leader', 'MB'), mv('leader', 'MF'));
    expect(outcomes[0].toggled).toEqual([3]);
    expect(outcomes[0].pose).toEqual({ x: 5, y: 7, heading: 'W' });
    expect(outcomes[1].toggled).toEqual([4]);
    expect(outcomes[2].toggled).toEqual([3]);
    expect(state.cards.find((c) => c.id === 4)?.selected).toBe(true);
    expect(state.cards.find((c) => c.id === 3)?.selected).toBe(false);
  });

  test('turning on a card does not toggle it', () => {
    const { outcomes } = play(followerTurn(1), mv('follower', 'MF'), mv('follower', 'RL'), mv('follower', 'RR'));
    expect(outcomes[1].toggled).toBeUndefined();
    expect(outcomes[2].toggled).toBeUndefined();
  });
});

describe('sets', () => {
  const collect = () => play(followerTurn(1), mv('follower', 'MF'), mv('follower', 'MF'), mv('follower', 'MF'));

  test('three selected cards with all properties different vanish, score +1, three new cards appear', () => {
    const { state, outcomes } = collect();
    const set = outcomes[2].set!;
    expect(set.cards).toEqual([0, 1, 2]);
    expect(set.added.map((c) => c.id)).toEqual([5, 6, 7]);
    expect(state.score).toBe(1);
    expect(state.cards.map((c) => c.id).sort()).toEqual([3, 4, 5, 6, 7]);
    expect(state.cards.every((c) => !c.selected)).toBe(true);
    const taken = new Set(state.cards.map((c) => `${c.x},${c.y}`));
    expect(taken.size).toBe(5);
    for (const c of set.added) {
      expect(`${c.x},${c.y}`).not.toBe(`${state.follower.x},${state.follower.y}`);
      expect(c.x > 0 && c.y > 0 && c.x < 8 && c.y < 8).toBe(true);
    }
  });

  test('extra turns follow the schedule: +5 for the first set by default', () => {
    const { state, outcomes } = collect();
    expect(outcomes[2].set?.extraTurns).toBe(5);
    expect(state.turnsLeft).toBe(11);
  });

  test('the schedule decays and then adds nothing', () => {
    const schedule = [5, 4, 4, 3, 3, 2, 2, 1, 1, 1];
    const cards = [card(0, 2, 4, { color: 'red', shape: 'star', count: 1 }), card(1, 3, 4, { color: 'blue', shape: 'heart', count: 2 }), card(2, 4, 4, { color: 'green', shape: 'cube', count: 3 })];
    for (let score = 0; score <= schedule.length; score++) {
      const start = { ...followerTurn(1, { cards }), score };
      const { outcomes } = play(start, mv('follower', 'MF'), mv('follower', 'MF'), mv('follower', 'MF'));
      expect(outcomes[2].set?.extraTurns).toBe(schedule[score] ?? 0);
    }
  });

  test('the schedule is configurable', () => {
    const start = followerTurn(1, { config: { extraTurns: [2] } });
    const { state } = play(start, mv('follower', 'MF'), mv('follower', 'MF'), mv('follower', 'MF'));
    expect(state.turnsLeft).toBe(8);
  });

  test('a repeated property is no set: nothing vanishes', () => {
    const cards = [
      card(0, 2, 4, { color: 'red', shape: 'star', count: 1 }),
      card(1, 3, 4, { color: 'red', shape: 'heart', count: 2 }),
      card(2, 4, 4, { color: 'green', shape: 'cube', count: 3 }),
      card(3, 5, 7, { color: 'blue', shape: 'torus', count: 2 }),
    ];
    const { state, outcomes } = play(followerTurn(1, { cards }), mv('follower', 'MF'), mv('follower', 'MF'), mv('follower', 'MF'));
    expect(outcomes.some((o) => o.set)).toBe(false);
    expect(state.score).toBe(0);
    expect(state.cards.filter((c) => c.selected).map((c) => c.id)).toEqual([0, 1, 2]);
  });

  test('the new cards leave the board with at least one valid set', () => {
    const { state } = collect();
    const { hasValidSet } = jest.requireActual('../../shared/engine/cards');
    expect(hasValidSet(state.cards)).toBe(true);
  });

  test('a set made by the leader counts the same', () => {
    const cards = [card(0, 2, 1, { color: 'red', shape: 'star', count: 1 }), card(1, 3, 1, { color: 'blue', shape: 'heart', count: 2 }), card(2, 4, 1, { color: 'green', shape: 'cube', count: 3 })];
    const { state } = play(makeState({ cards }), mv('leader', 'MF'), mv('leader', 'MF'), mv('leader', 'MF'));
    expect(state.score).toBe(1);
    expect(state.turnsLeft).toBe(11);
  });
});

describe('the end of the game', () => {
  test('the game ends when the turns run out, and every action is then refused', () => {
    let state = makeState({ config: { turnsPerPlayer: 2 } });
    state = play(state, say('a'), endTurn, done).state;
    expect(state.turnsLeft).toBe(1);
    const { state: over, outcomes } = play(state, say('b'), endTurn, timeout('follower'));
    expect(outcomes[2].gameOver).toBe(true);
    expect(over.gameOver).toBe(true);
    expect(over.turnsLeft).toBe(0);
    expectRefused(over, say('c'), 'GAME_OVER');
    expectRefused(over, mv('leader', 'MF'), 'GAME_OVER');
    expectRefused(over, endTurn, 'GAME_OVER');
    expectRefused(over, done, 'GAME_OVER');
    expectRefused(over, timeout('leader'), 'GAME_OVER');
  });

  test('six turns each by default: six skipped rounds end the game', () => {
    let state = makeState();
    for (let round = 0; round < 6; round++) {
      expect(state.gameOver).toBe(false);
      state = play(state, timeout('leader')).state;
    }
    expect(state.gameOver).toBe(true);
  });
});

describe('actions that are not defined are refused and change nothing', () => {
  test('out of turn', () => {
    expectRefused(makeState(), mv('follower', 'MF'), 'NOT_YOUR_TURN');
    expectRefused(makeState(), done, 'NOT_YOUR_TURN');
    expectRefused(followerTurn(1), mv('leader', 'MF'), 'NOT_YOUR_TURN');
    expectRefused(followerTurn(1), endTurn, 'NOT_YOUR_TURN');
  });

  test('end turn from the follower and DONE from the leader', () => {
    expectRefused(followerTurn(1), { type: 'endTurn', actor: 'follower' }, 'FOLLOWER_CANNOT_END_TURN');
    expectRefused(makeState(), { type: 'done', actor: 'leader' }, 'LEADER_CANNOT_MARK_DONE');
    expectRefused(followerTurn(1), { type: 'done', actor: 'leader' }, 'LEADER_CANNOT_MARK_DONE');
  });

  test('a timeout for a turn that is already over', () => {
    expectRefused(makeState(), timeout('follower'), 'STALE_TIMEOUT');
    expectRefused(followerTurn(1), timeout('leader'), 'STALE_TIMEOUT');
  });

  test('DONE with an empty queue (a hand-built state the rules never reach)', () => {
    expectRefused({ ...followerTurn(1), queue: [] }, done, 'EMPTY_QUEUE');
  });

  test('malformed actions', () => {
    const state = makeState();
    expectRefused(state, { type: 'fly', actor: 'leader' } as never, 'MALFORMED_ACTION');
    expectRefused(state, { type: 'move', actor: 'leader', move: 'JUMP' } as never, 'MALFORMED_ACTION');
    expectRefused(state, { type: 'move', actor: 'ghost', move: 'MF' } as never, 'MALFORMED_ACTION');
    expectRefused(state, { type: 'timeout', actor: 'leader', role: 'leader' } as never, 'MALFORMED_ACTION');
    expectRefused(state, null as never, 'MALFORMED_ACTION');
    expectRefused(state, { type: 'instruction', actor: 'leader', text: 42 } as never, 'MALFORMED_ACTION');
  });
});
