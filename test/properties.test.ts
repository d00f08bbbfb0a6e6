/** Invariants of the engine over random action sequences, and exact replay of what was recorded. */
import fc from 'fast-check';
import { MOVES, ROLES, snapshot, type Action, type GameState, type Role } from '../shared/engine';
import { makeHeader, serializeLine, GameRecorder } from '../shared/log/recorder';
import type { LogLine } from '../shared/log/format';
import { replay } from '../shared/log/replay';
import { card, makeState } from './fixtures';

/** What to do, and whether to do it as the player in control or (one time in ten) as the other one. */
const intents = fc.array(
  fc.record({
    kind: fc.constantFrom('move', 'move', 'move', 'move', 'move', 'instruction', 'endTurn', 'done', 'timeout'),
    move: fc.constantFrom<(typeof MOVES)[number]>('MF', 'MF', 'MF', 'MB', 'RL', 'RR'),
    wrongRole: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
    text: fc.string({ maxLength: 20 }),
  }),
  { minLength: 50, maxLength: 400 },
);
function toAction(state: GameState, i: { kind: string; move: (typeof MOVES)[number]; wrongRole: boolean; text: string }): Action {
  const role: Role = i.wrongRole ? ROLES.find((r) => r !== state.turn.role)! : state.turn.role;
  switch (i.kind) {
    case 'move':
      return { type: 'move', actor: role, move: i.move };
    case 'instruction':
      return { type: 'instruction', actor: role, text: i.text };
    case 'endTurn':
      return { type: 'endTurn', actor: role };
    case 'done':
      return { type: 'done', actor: role };
    default:
      return { type: 'timeout', actor: 'server', role };
  }
}

/** Counted across runs, to show that the random play really reaches sets and game ends. */
const seen = { sets: 0, gameOvers: 0, refusals: 0 };

/**
 * Six cards with all colours and shapes different near both players: any three selected cards
 * with different counts form a set, so random walks make sets often.
 */
const SET_RICH_CARDS = [
  card(0, 2, 4, { color: 'red', shape: 'star', count: 1 }),
  card(1, 3, 4, { color: 'blue', shape: 'heart', count: 2 }),
  card(2, 3, 5, { color: 'green', shape: 'cube', count: 3 }),
  card(3, 2, 2, { color: 'pink', shape: 'torus', count: 1 }),
  card(4, 2, 1, { color: 'yellow', shape: 'plus', count: 2 }),
  card(5, 1, 3, { color: 'black', shape: 'diamond', count: 3 }),
];

function record(intentList: Parameters<typeof toAction>[1][], seed: number) {
  const start = makeState({ cards: SET_RICH_CARDS, config: { turnsPerPlayer: 6 } });
  const header = makeHeader({
    gameId: `property-${seed}`,
    startedAt: new Date(0),
    seed,
    config: start.config,
    map: start.world.map,
    setup: { leader: start.leader, follower: start.follower, cards: start.cards, rng: start.rng },
  });
  const lines: LogLine[] = [];
  const recorder = new GameRecorder(header, (line) => lines.push(line));
  const states: GameState[] = [recorder.state];
  let sets = 0;
  intentList.forEach((i, n) => {
    const before = recorder.state;
    const result = recorder.apply(toAction(before, i), n * 100);
    if (!result.ok) {
      seen.refusals += 1;
      expect(recorder.state).toBe(before);
      return;
    }
    const after = result.state;
    states.push(after);
    // Invariants.
    expect(after.turn.stepsLeft).toBeGreaterThanOrEqual(0);
    expect(after.cards).toHaveLength(before.config.cardCount);
    expect(new Set(after.cards.map((c) => `${c.x},${c.y}`)).size).toBe(after.cards.length);
    if (result.outcome.set) sets += 1;
    if (after.gameOver) seen.gameOvers += 1;
    expect(after.score).toBe(sets);
    const extra = result.outcome.set?.extraTurns ?? 0;
    expect(after.turnsLeft).toBeLessThanOrEqual(before.turnsLeft + extra);
    expect(after.turnsLeft).toBeGreaterThanOrEqual(before.turnsLeft + extra - 1);
  });
  seen.sets += sets;
  recorder.end(intentList.length * 100, 'abandoned');
  return { lines, states };
}

describe('engine invariants over random play', () => {
  test('steps never negative, cards always complete, score = sets made, turns grow only by sets', () => {
    fc.assert(fc.property(intents, fc.nat(), (list, seed) => void record(list, seed)), { numRuns: 150 });
    expect(seen.sets).toBeGreaterThan(0);
    expect(seen.gameOvers).toBeGreaterThan(0);
    expect(seen.refusals).toBeGreaterThan(0);
  });

  test('replaying the recorded log reproduces every intermediate state', () => {
    fc.assert(
      fc.property(intents, fc.nat(), (list, seed) => {
        const { lines, states } = record(list, seed);
        const text = lines.map((l) => `${serializeLine(l)}\n`).join('');
        const replayed: GameState[] = [];
        replay(text, { onState: (state) => replayed.push(state) });
        expect(replayed.length).toBe(states.length);
        replayed.forEach((state, i) => {
          expect(snapshot(state)).toEqual(snapshot(states[i]));
          expect(state.rng).toEqual(states[i].rng);
        });
      }),
      { numRuns: 100 },
    );
  });
});
