/** One test (at least) for each rule of Table 2 and for every refused action. */
import {
  buildWorld,
  COLORS,
  COUNTS,
  createGame,
  Draw,
  drawCards,
  emptyMemory,
  instructionLength,
  isValidSet,
  isWalkable,
  makeConfig,
  mapSchema,
  playerView,
  PROP_TYPES,
  remember,
  sanitizeInstruction,
  seedRng,
  SHAPES,
  step,
  type GameState,
} from '../../shared/engine';
import { makeHeader } from '../../shared/log/recorder';
import { generateMap } from '../../shared/maps/generate';
import { card, makeState, SET_FACES, smallMap } from '../fixtures';
import { done, endTurn, expectRefused, mv, play, say, timeout } from './helpers';

/** A state in the follower's turn with `n` instructions queued. */
function followerTurn(n: number, spec = {}): GameState {
  const instructions = Array.from({ length: n }, (_, i) => say(`instruction ${i}`));
  return play(makeState(spec), ...instructions, endTurn).state;
}

describe('R-1, rule 1: an instruction joins the end of the queue and costs no step', () => {
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

  test('R-36: the follower cannot give instructions, in its turn or not', () => {
    expectRefused(makeState(), { type: 'instruction', actor: 'follower', text: 'hi' }, 'FOLLOWER_CANNOT_INSTRUCT');
    expectRefused(followerTurn(1), { type: 'instruction', actor: 'follower', text: 'hi' }, 'FOLLOWER_CANNOT_INSTRUCT');
  });

  test('R-39: the leader cannot give instructions during the follower turn', () => {
    expectRefused(followerTurn(1), say('more'), 'NOT_YOUR_TURN');
  });

  test('R-42, R-43: empty and over-long instructions are refused', () => {
    expectRefused(makeState(), say('   '), 'EMPTY_INSTRUCTION');
    expectRefused(makeState(), say('x'.repeat(301)), 'INSTRUCTION_TOO_LONG');
    expect(step(makeState(), say('x'.repeat(300))).ok).toBe(true);
  });
});

describe('R-2, rule 2: the leader ends its turn with a non-empty queue: the follower plays with Ψ_f steps', () => {
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

describe('R-3, rule 3: the leader ends its turn with an empty queue: a new leader turn, the follower turn is skipped', () => {
  test('R-27, R-41: End Turn with an empty queue is refused like the disabled button, by default', () => {
    expectRefused(makeState(), endTurn, 'EMPTY_QUEUE');
  });

  test('R-29: a leader timeout with an empty queue skips the follower turn, which still uses a turn', () => {
    const { state, outcomes } = play(makeState(), mv('leader', 'MF'), timeout('leader'));
    expect(state.turn).toEqual({ role: 'leader', stepsLeft: 5 });
    expect(state.turnsLeft).toBe(5);
    expect(outcomes[1].turnEnded).toEqual({ reason: 'timeout', followerSkipped: true });
  });

  test('R-27: with endTurnWithEmptyQueue, End Turn itself applies rule 3', () => {
    const { state, outcomes } = play(makeState({ config: { endTurnWithEmptyQueue: true } }), endTurn);
    expect(state.turn).toEqual({ role: 'leader', stepsLeft: 5 });
    expect(state.turnsLeft).toBe(5);
    expect(outcomes[0].turnEnded).toEqual({ reason: 'end-turn', followerSkipped: true });
  });
});

describe('R-4, rule 4: the leader out of steps keeps control', () => {
  test('R-40: after five moves the leader still has control with 0 steps, and cannot move', () => {
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

describe('R-5, rule 5: DONE with more instructions queued removes the head and costs no step', () => {
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

describe('R-6, rule 6: DONE on the last instruction hands control to the leader with Ψ_l steps', () => {
  test('the queue empties, the round ends and the leader plays', () => {
    const { state, outcomes } = play(followerTurn(1), mv('follower', 'RR'), done);
    expect(state.queue).toEqual([]);
    expect(state.turn).toEqual({ role: 'leader', stepsLeft: 5 });
    expect(state.turnsLeft).toBe(5);
    expect(outcomes[1].turnEnded).toEqual({ reason: 'all-done' });
  });
});

describe('R-7, rule 7: the follower out of steps hands control to the leader at once', () => {
  test('the tenth step ends the turn; the queue is kept', () => {
    const moves = Array.from({ length: 10 }, (_, i) => mv('follower', i % 2 ? 'RL' : 'RR'));
    const { state, outcomes } = play(followerTurn(2), ...moves);
    expect(outcomes[8].turn).toEqual({ role: 'follower', stepsLeft: 1 });
    expect(outcomes[9].turnEnded).toEqual({ reason: 'out-of-steps' });
    expect(state.turn).toEqual({ role: 'leader', stepsLeft: 5 });
    expect(state.turnsLeft).toBe(5);
    expect(state.queue).toHaveLength(2);
  });

  test('R-18, R-26: a set made with the last step scores, and the instruction stays current for both players until DONE', () => {
    // The follower faces the set's three cards; with three steps the third card is its last step.
    const { state, outcomes } = play(makeState({ config: { followerSteps: 3 } }), say('take the three cards'), endTurn, mv('follower', 'MF'), mv('follower', 'MF'), mv('follower', 'MF'));
    expect(outcomes[4]).toMatchObject({ set: { cards: [0, 1, 2] }, turnEnded: { reason: 'out-of-steps' }, score: 1, turn: { role: 'leader', stepsLeft: 5 } });
    expect(state.queue).toEqual([{ id: 0, text: 'take the three cards' }]);
    expect(state.previousInstruction).toBeNull();
    for (const role of ['leader', 'follower'] as const) {
      const memory = remember(emptyMemory(role), state);
      expect(playerView(state, role, memory).instructions).toEqual([{ id: 0, text: 'take the three cards', status: 'current', shown: true }]);
    }
    // The leader may end its turn at once (the queue is not empty), and DONE in the next follower turn finishes it.
    const after = play(state, endTurn, done).state;
    expect(after.queue).toEqual([]);
    expect(after.previousInstruction).toEqual({ id: 0, text: 'take the three cards' });
  });

  test('R-30: a follower timeout ends the turn like running out of steps', () => {
    const { state, outcomes } = play(followerTurn(2), mv('follower', 'RR'), timeout('follower'));
    expect(state.turn).toEqual({ role: 'leader', stepsLeft: 5 });
    expect(state.turnsLeft).toBe(5);
    expect(state.queue).toHaveLength(2);
    expect(outcomes[1].turnEnded).toEqual({ reason: 'timeout' });
  });
});

describe('R-8, rule 8: world actions change the world and cost a step', () => {
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

describe('R-24: blocked moves change nothing and cost no step', () => {
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

  test('R-13: players do not block each other', () => {
    const { state } = play(makeState({ leader: { x: 0, y: 4, heading: 'E' } }), mv('leader', 'MF'));
    expect(state.leader).toMatchObject(state.follower);
  });
});

describe('R-17: cards: moving onto a card toggles it, for either player', () => {
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

  test('R-18: three selected cards with all properties different vanish, score +1, three new cards appear', () => {
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

  test('R-22: extra turns follow the schedule: +5 for the first set by default', () => {
    const { state, outcomes } = collect();
    expect(outcomes[2].set?.extraTurns).toBe(5);
    expect(state.turnsLeft).toBe(11);
  });

  test('R-22: the schedule decays and then adds nothing', () => {
    const schedule = [5, 4, 4, 3, 3, 2, 2, 1, 1, 1];
    const cards = [card(0, 2, 4, { color: 'red', shape: 'star', count: 1 }), card(1, 3, 4, { color: 'blue', shape: 'heart', count: 2 }), card(2, 4, 4, { color: 'green', shape: 'cube', count: 3 })];
    for (let score = 0; score <= schedule.length; score++) {
      const start = { ...followerTurn(1, { cards }), score };
      const { outcomes } = play(start, mv('follower', 'MF'), mv('follower', 'MF'), mv('follower', 'MF'));
      expect(outcomes[2].set?.extraTurns).toBe(schedule[score] ?? 0);
    }
  });

  test('R-22: the schedule is configurable', () => {
    const start = followerTurn(1, { config: { extraTurns: [2] } });
    const { state } = play(start, mv('follower', 'MF'), mv('follower', 'MF'), mv('follower', 'MF'));
    expect(state.turnsLeft).toBe(8);
  });

  test('R-18, R-19: a repeated property is no set: nothing vanishes', () => {
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

  test('R-20: the new cards leave the board with at least one valid set', () => {
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
  test('R-25, R-33: the game ends when the turns run out, and every action is then refused', () => {
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

  test('R-25: six turns each by default: six skipped rounds end the game', () => {
    let state = makeState();
    for (let round = 0; round < 6; round++) {
      expect(state.gameOver).toBe(false);
      state = play(state, timeout('leader')).state;
    }
    expect(state.gameOver).toBe(true);
  });
});

describe('R-32: actions that are not defined are refused and change nothing', () => {
  test('R-39: out of turn', () => {
    expectRefused(makeState(), mv('follower', 'MF'), 'NOT_YOUR_TURN');
    expectRefused(makeState(), done, 'NOT_YOUR_TURN');
    expectRefused(followerTurn(1), mv('leader', 'MF'), 'NOT_YOUR_TURN');
    expectRefused(followerTurn(1), endTurn, 'NOT_YOUR_TURN');
  });

  test('R-37, R-38: end turn from the follower and DONE from the leader', () => {
    expectRefused(followerTurn(1), { type: 'endTurn', actor: 'follower' }, 'FOLLOWER_CANNOT_END_TURN');
    expectRefused(makeState(), { type: 'done', actor: 'leader' }, 'LEADER_CANNOT_MARK_DONE');
    expectRefused(followerTurn(1), { type: 'done', actor: 'leader' }, 'LEADER_CANNOT_MARK_DONE');
  });

  test('R-35: a timeout for a turn that is already over', () => {
    expectRefused(makeState(), timeout('follower'), 'STALE_TIMEOUT');
    expectRefused(followerTurn(1), timeout('leader'), 'STALE_TIMEOUT');
  });

  test('R-57: an instruction when the queue holds maxQueuedInstructions is QUEUE_FULL, before its text is judged; DONE makes room', () => {
    const instructions = (n: number) => Array.from({ length: n }, (_, i) => say(`step ${i}`));
    const full = play(makeState(), ...instructions(50)).state; // the default cap
    expect(full.queue).toHaveLength(50);
    expectRefused(full, say('one more'), 'QUEUE_FULL');
    expectRefused(full, say(''), 'QUEUE_FULL');
    expectRefused(full, say('x'.repeat(301)), 'QUEUE_FULL');
    expectRefused(full, { type: 'instruction', actor: 'follower', text: 'hi' }, 'FOLLOWER_CANNOT_INSTRUCT');
    const small = play(makeState({ config: { maxQueuedInstructions: 2 } }), say('a'), say('b')).state;
    expectRefused(small, say('c'), 'QUEUE_FULL');
    const roomAgain = play(small, endTurn, done, timeout('follower')).state;
    expect(play(roomAgain, say('c')).state.queue.map((i) => i.text)).toEqual(['b', 'c']);
    // null: no cap, as in the paper.
    expect(play(makeState({ config: { maxQueuedInstructions: null } }), ...instructions(60)).state.queue).toHaveLength(60);
  });

  test('R-41: DONE with an empty queue (a hand-built state the rules never reach)', () => {
    expectRefused({ ...followerTurn(1), queue: [] }, done, 'EMPTY_QUEUE');
  });

  test('R-34, R-47: malformed actions', () => {
    const state = makeState();
    expectRefused(state, { type: 'fly', actor: 'leader' } as never, 'MALFORMED_ACTION');
    expectRefused(state, { type: 'move', actor: 'leader', move: 'JUMP' } as never, 'MALFORMED_ACTION');
    expectRefused(state, { type: 'move', actor: 'ghost', move: 'MF' } as never, 'MALFORMED_ACTION');
    expectRefused(state, { type: 'timeout', actor: 'leader', role: 'leader' } as never, 'MALFORMED_ACTION');
    expectRefused(state, null as never, 'MALFORMED_ACTION');
    expectRefused(state, { type: 'instruction', actor: 'leader', text: 42 } as never, 'MALFORMED_ACTION');
  });
});

describe('the world and the cards', () => {
  test('R-13: grass and path are walkable; water, deep water, hills and every prop are not', () => {
    const map = mapSchema.parse({
      format: 'cerealbar-map',
      version: 1,
      name: 'terrain',
      width: 8,
      height: 3,
      terrain: ['GPWDHGGG', 'GGGGGGGG', 'GGGGGGGG'],
      props: PROP_TYPES.map((type, x) => ({ x, y: 1, type, variant: 'a', rotation: 'NE' })),
    });
    const world = buildWorld(map);
    const row = (y: number) => [0, 1, 2, 3, 4, 5, 6, 7].map((x) => isWalkable(world, { x, y }));
    expect(row(0)).toEqual([true, true, false, false, false, true, true, true]);
    expect(row(1)).toEqual([false, false, false, false, false, false, false, false]);
    expect(row(2)).toEqual([true, true, true, true, true, true, true, true]);
  });

  test('R-15: cards are drawn from 7 colours x 7 shapes x counts 1-3, independently, duplicates included', () => {
    expect([COLORS.length, SHAPES.length, COUNTS]).toEqual([7, 7, [1, 2, 3]]);
    const faces = new Map<string, number>();
    for (let seed = 0; seed < 40; seed++) {
      for (const c of createGame(makeConfig(), generateMap(seed), seed).cards) {
        const key = `${c.color} ${c.shape} ${c.count}`;
        faces.set(key, (faces.get(key) ?? 0) + 1);
      }
    }
    const used = (i: 0 | 1 | 2) => new Set([...faces.keys()].map((key) => key.split(' ')[i]));
    expect([used(0).size, used(1).size, used(2).size]).toEqual([7, 7, 3]);
    expect(Math.max(...faces.values())).toBeGreaterThan(1); // the same face on two cards happens
  });

  test('R-21: after 100 draws without a set, the three new cards are drawn as a set of their own', () => {
    /** A generator stuck on the first colour, shape and count: random faces never make a set. */
    class StuckDraw extends Draw {
      facePicks = 0;
      override pick<T>(items: readonly T[]): T {
        if (items === (COLORS as readonly unknown[]) || items === (SHAPES as readonly unknown[]) || items === (COUNTS as readonly unknown[])) {
          this.facePicks++;
          return items[0];
        }
        return super.pick(items);
      }
    }
    const draw = new StuckDraw(seedRng(1));
    const world = buildWorld(smallMap());
    const cards = drawCards(draw, world, new Set(), 3, 0, []);
    expect(draw.facePicks).toBe(100 * 3 * 3);
    expect(isValidSet(cards)).toBe(true);
  });

  test('R-23: with six turns each and the default schedule, a game lasts at most 32 turns each (64 player turns)', () => {
    const config = makeConfig();
    expect(config.turnsPerPlayer + config.extraTurns.reduce((a, b) => a + b, 0)).toBe(32);
    expect(config.extraTurns).toEqual([5, 4, 4, 3, 3, 2, 2, 1, 1, 1]);
  });

  test('R-28: 45 s for the leader and 15 s for the follower, in the config every log header records', () => {
    expect(makeConfig().turnSeconds).toEqual({ leader: 45, follower: 15 });
    const state = makeState();
    const header = makeHeader({ gameId: 'g', startedAt: new Date(0), seed: 1, config: state.config, map: state.world.map, setup: { leader: state.leader, follower: state.follower, cards: state.cards, rng: state.rng } });
    expect(header.config.turnSeconds).toEqual({ leader: 45, follower: 15 });
  });

  test("R-29: the leader's timeout with instructions queued ends its turn like End Turn: the follower plays", () => {
    const { state, outcomes } = play(makeState(), say('go'), timeout('leader'));
    expect(state.turn).toEqual({ role: 'follower', stepsLeft: 10 });
    expect(outcomes[1].turnEnded).toEqual({ reason: 'timeout' });
  });

  test('R-45: replacement cards that break the placement rules are refused as BAD_REPLACEMENT_CARDS', () => {
    const { state } = play(makeState(), say('go'), endTurn, mv('follower', 'MF'), mv('follower', 'MF'));
    const inWater = [card(5, 4, 2, SET_FACES[0]), card(6, 7, 7, SET_FACES[1]), card(7, 7, 5, SET_FACES[2])];
    const result = step(state, mv('follower', 'MF'), { replacementCards: inWater });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatchObject({ code: 'BAD_REPLACEMENT_CARDS', message: expect.stringContaining('(4, 2)') });
    expect(step(state, mv('follower', 'MF')).ok).toBe(true);
  });
});

describe('edge cases, decided', () => {
  test('R-46: a timeout for a role that does not exist is MALFORMED_ACTION, not STALE_TIMEOUT', () => {
    expectRefused(makeState(), { type: 'timeout', actor: 'server', role: 'referee' } as never, 'MALFORMED_ACTION');
    expectRefused(makeState(), { type: 'timeout', actor: 'server' } as never, 'MALFORMED_ACTION');
    expectRefused(followerTurn(1), { type: 'timeout', actor: 'server', role: 'referee' } as never, 'MALFORMED_ACTION');
  });

  test('R-47: an instruction whose text is not a string is MALFORMED_ACTION, even from the wrong role', () => {
    for (const text of [42, null, undefined, ['go'], { text: 'go' }]) {
      expectRefused(makeState(), { type: 'instruction', actor: 'leader', text } as never, 'MALFORMED_ACTION');
      expectRefused(followerTurn(1), { type: 'instruction', actor: 'follower', text } as never, 'MALFORMED_ACTION');
    }
  });

  test('R-48: the engine keeps the text as given, untrimmed; only white space is EMPTY_INSTRUCTION', () => {
    const { state } = play(makeState(), say('  go\tleft  '));
    expect(state.queue[0].text).toBe('  go\tleft  ');
    for (const blank of ['', ' ', '\n\t ', '\u00a0\u2003']) expectRefused(makeState(), say(blank), 'EMPTY_INSTRUCTION');
  });

  test('R-50: length is counted in code points: 300 emoji are within the limit, 301 are not', () => {
    expect(instructionLength('🙂')).toBe(1);
    expect(instructionLength('é')).toBe(1);
    expect(instructionLength('e\u0301')).toBe(2); // a combining accent is a code point of its own
    expect(instructionLength('👩‍👩‍👧')).toBe(5); // three people joined by two zero-width joiners
    expect(instructionLength('\ud83d')).toBe(1); // an unpaired surrogate counts once
    expect(step(makeState(), say('🙂'.repeat(300))).ok).toBe(true);
    expectRefused(makeState(), say('🙂'.repeat(301)), 'INSTRUCTION_TOO_LONG');
    expectRefused(makeState({ config: { maxInstructionLength: 5 } }), say('abcdef'), 'INSTRUCTION_TOO_LONG');
    expect(step(makeState({ config: { maxInstructionLength: 5 } }), say('ab🙂de')).ok).toBe(true);
  });

  test('R-50: the limit applies to the sanitised text: removed invisible characters do not count, kept joiners do', () => {
    const padded = `${'x'.repeat(300)}${'\u200B'.repeat(50)}\u202E`;
    expect(step(makeState(), say(sanitizeInstruction(padded))).ok).toBe(true);
    expect(instructionLength(sanitizeInstruction('a\u200Cb'))).toBe(3); // ZWNJ stays and counts
  });
});
