/** Self-play: the path planner, and whole games between the scripted leader and follower. */
import fc from 'fast-check';
import { COLORS, COUNTS, SHAPES, isValidSet } from '../shared/engine/cards';
import { HEADINGS } from '../shared/engine/hex';
import { Draw, seedRng } from '../shared/engine/rng';
import {
  MOVES,
  checkPlayerAction,
  withoutActor,
  createGame,
  isInvalidSelection,
  makeConfig,
  step,
  type Card,
  type Cell,
  type GameState,
  type Move,
  type Pose,
} from '../shared/engine';
import { eventAction, eventSchema, headerSchema, endSchema, type LogEvent, type LogHeader, type LogLine } from '../shared/log/format';
import { stateFromHeader } from '../shared/log/recorder';
import { generateMap } from '../shared/maps/generate';
import { TURN_TIME_LIMIT_MS, playSelfPlayGame } from '../shared/selfplay/game';
import { PathPlanner } from '../shared/nav/pathing';
import { validSets } from '../shared/selfplay/leader';
import { play } from './engine/helpers';
import { SET_FACES, card, makeState } from './fixtures';

function playGame(seed: number): { lines: LogLine[]; state: GameState; actions: number } {
  const lines: LogLine[] = [];
  const { state, actions } = playSelfPlayGame({ seed, map: generateMap(seed) }, (line) => lines.push(line));
  return { lines, state, actions };
}

const events = (lines: readonly LogLine[]): LogEvent[] => lines.filter((line): line is LogEvent => line.kind === 'event');

/** The state after every event, by applying the logged actions again (the cards a set adds come from the same seed). */
function statesAfterEvents(lines: readonly LogLine[]): GameState[] {
  let state = stateFromHeader(lines[0] as LogHeader);
  return events(lines).map((event) => {
    const result = step(state, eventAction(event));
    if (!result.ok) throw new Error(`event ${event.seq} refused on replay: ${result.error.code}`);
    expect(result.outcome).toEqual(event.outcome);
    state = result.state;
    return state;
  });
}

describe('path planner', () => {
  /**
   * The fewest steps onto `target` from the leader's pose, by a search over the poses the engine
   * itself produces, where entering another card's cell is not allowed.
   */
  function optimalSteps(state: GameState, target: Card): number {
    const key = (pose: Pose) => `${pose.x},${pose.y},${pose.heading}`;
    const seen = new Set([key(state.leader)]);
    let frontier = [state];
    for (let steps = 1; frontier.length > 0; steps++) {
      const next: GameState[] = [];
      for (const from of frontier) {
        for (const move of MOVES) {
          const result = step(from, { type: 'move', actor: 'leader', move });
          if (!result.ok || result.outcome.blocked) continue;
          if (result.outcome.toggled?.includes(target.id)) return steps;
          if (result.outcome.toggled || seen.has(key(result.state.leader))) continue;
          seen.add(key(result.state.leader));
          next.push(result.state);
        }
      }
      frontier = next;
    }
    return -1;
  }

  /** Walks the leader with nextMove until the target toggles; returns the moves. */
  function walk(state: GameState, planner: PathPlanner, target: Cell & { id: number }): Move[] {
    const moves: Move[] = [];
    for (;;) {
      const move = planner.nextMove(state.cards, state.leader, target);
      if (!move) throw new Error('no move');
      moves.push(move);
      const result = step(state, { type: 'move', actor: 'leader', move });
      if (!result.ok) throw new Error(result.error.code);
      expect(result.outcome.blocked).toBeUndefined();
      if (result.outcome.toggled) {
        expect(result.outcome.toggled).toEqual([target.id]);
        return moves;
      }
      state = result.state;
    }
  }

  it('walks onto every card of a board without stepping on another, in at most 5% more steps than the fewest', () => {
    let fewest = 0;
    let planned = 0;
    for (let seed = 1; seed <= 3; seed++) {
      const state = createGame(makeConfig({ leaderSteps: 100 }), generateMap(seed), seed);
      const planner = new PathPlanner(state.world);
      for (const target of state.cards) {
        const optimal = optimalSteps(state, target);
        const length = planner.pathLength(state.cards, state.leader, target);
        if (optimal < 0) {
          expect(length).toBe(-1);
          expect(planner.nextMove(state.cards, state.leader, target)).toBeNull();
          continue;
        }
        expect(walk(state, planner, target)).toHaveLength(length);
        expect(length).toBeGreaterThanOrEqual(optimal);
        fewest += optimal;
        planned += length;
      }
    }
    expect(planned).toBeLessThanOrEqual(fewest * 1.05);
  });

  // On the 9 x 9 fixture map; the three SET_FACES cards make the board legal.
  const many = { config: { leaderSteps: 100 } };
  const setCards = (target: Cell, other: Cell, third: Cell = { x: 7, y: 1 }): Card[] => [
    card(0, target.x, target.y, SET_FACES[0]),
    card(1, other.x, other.y, SET_FACES[1]),
    card(2, third.x, third.y, SET_FACES[2]),
  ];

  it("answers the same whatever it holds: a planner shared by games on one map, their layouts in turn, gives each game a fresh planner's answers", () => {
    const map = generateMap(12);
    // Three games on one map, with different cards (another seed deals them); the shared planner keeps switching layouts.
    const games = [12, 13, 14].map((seed) => createGame(makeConfig(), map, seed));
    const shared = new PathPlanner(games[0].world);
    const draw = new Draw(seedRng(5));
    for (let query = 0; query < 300; query++) {
      const game = draw.pick(games);
      const fresh = new PathPlanner(game.world);
      const target = draw.pick(game.cards);
      const from = draw.pick(game.cards);
      const pose = { x: from.x, y: from.y, heading: draw.pick(HEADINGS) };
      expect(shared.nextMove(game.cards, pose, target)).toBe(fresh.nextMove(game.cards, pose, target));
      expect(shared.pathLength(game.cards, pose, target)).toBe(fresh.pathLength(game.cards, pose, target));
      expect(shared.cellsTo(game.cards, from, target)).toBe(fresh.cellsTo(game.cards, from, target));
    }
    expect(PathPlanner.shared(games[0].world)).toBe(PathPlanner.shared(games[1].world));
  });

  it('moves backwards instead of turning around', () => {
    const state = makeState({ ...many, leader: { x: 4, y: 4, heading: 'E' }, cards: setCards({ x: 2, y: 4 }, { x: 7, y: 7 }) });
    const planner = new PathPlanner(state.world);
    expect(walk(state, planner, state.cards[0])).toEqual(['MB', 'MB']);
  });

  it('steps off a card and back on to toggle the card it stands on', () => {
    const before = makeState({ ...many, leader: { x: 3, y: 4, heading: 'E' }, cards: setCards({ x: 4, y: 4 }, { x: 5, y: 4 }) });
    const { state } = play(before, { type: 'move', actor: 'leader', move: 'MF' });
    const planner = new PathPlanner(state.world);
    expect(planner.pathLength(state.cards, state.leader, state.cards[0])).toBe(optimalSteps(state, state.cards[0]));
    expect(walk(state, planner, state.cards[0])).toEqual(['MB', 'MF']);
  });

  it('goes around a card in the way', () => {
    const state = makeState({ ...many, leader: { x: 1, y: 4, heading: 'E' }, cards: setCards({ x: 3, y: 4 }, { x: 2, y: 4 }) });
    const planner = new PathPlanner(state.world);
    expect(walk(state, planner, state.cards[0])).toHaveLength(optimalSteps(state, state.cards[0]));
  });

  it('reports a card walled in by other cards as unreachable', () => {
    // The six neighbours of (4, 4) (row 4 is even) hold cards, so (4, 4) cannot be entered.
    const ring: Cell[] = [{ x: 4, y: 5 }, { x: 5, y: 4 }, { x: 4, y: 3 }, { x: 3, y: 3 }, { x: 3, y: 4 }, { x: 3, y: 5 }];
    const spare = { color: 'red', shape: 'torus', count: 2 } as const;
    const cards = [...setCards({ x: 4, y: 4 }, ring[0], ring[1]), ...ring.slice(2).map((c, i) => card(3 + i, c.x, c.y, spare))];
    const state = makeState({ ...many, leader: { x: 1, y: 1, heading: 'E' }, cards });
    const planner = new PathPlanner(state.world);
    expect(optimalSteps(state, state.cards[0])).toBe(-1);
    expect(planner.nextMove(state.cards, state.leader, state.cards[0])).toBeNull();
    expect(planner.pathLength(state.cards, state.leader, state.cards[0])).toBe(-1);
    expect(walk(state, planner, state.cards[1]).length).toBeGreaterThanOrEqual(optimalSteps(state, state.cards[1]));
  });
});

describe('self-play games', () => {
  const SEEDS = Array.from({ length: 30 }, (_, i) => i + 1);
  const games = new Map<number, ReturnType<typeof playGame>>();
  const game = (seed: number) => {
    if (!games.has(seed)) games.set(seed, playGame(seed));
    return games.get(seed)!;
  };

  it('plays a whole game: a header, accepted events, and an end line when the turns run out', () => {
    const { lines, state, actions } = game(1);
    expect(state.gameOver).toBe(true);
    const header = headerSchema.parse(lines[0]);
    expect(header.meta).toEqual({ source: 'selfplay' });
    expect(header.gameId).toBe('selfplay-1');
    const body = events(lines);
    expect(body).toHaveLength(actions);
    for (const event of body) eventSchema.parse(event);
    expect(endSchema.parse(lines[lines.length - 1])).toMatchObject({ reason: 'turns-exhausted', score: state.score });
    expect(lines).toHaveLength(actions + 2);
    statesAfterEvents(lines);
  });

  it('gives the same log for the same seed, and another for another seed', () => {
    const again = playGame(7);
    expect(JSON.stringify(again.lines)).toBe(JSON.stringify(game(7).lines));
    expect(JSON.stringify(game(8).lines)).not.toBe(JSON.stringify(game(7).lines));
  });

  it('records the options it is given', () => {
    const lines: LogLine[] = [];
    const startedAt = new Date('2024-05-01T12:00:00Z');
    playSelfPlayGame(
      { seed: 3, map: generateMap(3), config: makeConfig({ turnsPerPlayer: 2 }), gameId: 'g', startedAt, meta: { run: 'x' } },
      (line) => lines.push(line),
    );
    expect(lines[0]).toMatchObject({ gameId: 'g', startedAt: startedAt.toISOString(), meta: { source: 'selfplay', run: 'x' } });
    expect((lines[0] as LogHeader).config.turnsPerPlayer).toBe(2);
  });

  it('keeps a simulated clock: times never go back, and timeouts come exactly at the limit', () => {
    for (const seed of SEEDS) {
      let turnStart = 0;
      let last = 0;
      for (const event of events(game(seed).lines)) {
        expect(event.t).toBeGreaterThanOrEqual(last);
        last = event.t;
        if (event.type === 'timeout') expect(event.t - turnStart).toBe(TURN_TIME_LIMIT_MS[event.payload.role]);
        if (event.outcome.turnEnded) turnStart = event.t;
      }
    }
  });

  it('makes every rule happen across 30 seeds', () => {
    const seen = new Set<string>();
    for (const seed of SEEDS) {
      const { lines } = game(seed);
      const body = events(lines);
      const states = statesAfterEvents(lines);
      body.forEach((event, i) => {
        const { outcome } = event;
        const actor = event.actor === 'server' ? `${event.payload.role} timeout` : event.actor;
        if (event.type === 'instruction') seen.add('rule 1: instruction');
        if (outcome.set) seen.add('set made');
        if (outcome.set && outcome.set.extraTurns > 0 && outcome.score > 0) seen.add('set adds turns and score');
        if (outcome.turnEnded) seen.add(`${actor} turn ended: ${outcome.turnEnded.reason}`);
        if (outcome.turnEnded?.followerSkipped) seen.add('rule 3: follower skipped');
        if (event.type === 'done' && !outcome.turnEnded) seen.add('rule 5: done with more queued');
        if (outcome.toggled) seen.add(`${actor} toggled a card`);
        if (isInvalidSelection(states[i].cards.filter((c) => c.selected))) seen.add('invalid selection');
        const previous = body[i - 1];
        if (
          previous?.type === 'move' &&
          previous.actor === 'leader' &&
          previous.outcome.turn.stepsLeft === 0 &&
          (event.type === 'instruction' || event.type === 'endTurn')
        ) {
          seen.add('rule 4: leader out of steps, then instructs or ends its turn');
        }
      });
    }
    expect([...seen].sort()).toEqual(
      [
        'rule 1: instruction',
        'set made',
        'set adds turns and score',
        'leader turn ended: end-turn',
        'leader timeout turn ended: timeout',
        'follower turn ended: out-of-steps',
        'follower turn ended: all-done',
        'follower timeout turn ended: timeout',
        'rule 3: follower skipped',
        'rule 5: done with more queued',
        'leader toggled a card',
        'follower toggled a card',
        'invalid selection',
        'rule 4: leader out of steps, then instructs or ends its turn',
      ].sort(),
    );
  });

  it('takes only legal actions, as any player must: never a move into an obstacle', () => {
    let checked = 0;
    for (const seed of SEEDS) {
      const { lines } = game(seed);
      let state = stateFromHeader(lines[0] as LogHeader);
      for (const event of events(lines)) {
        const action = eventAction(event);
        if (action.type !== 'timeout') {
          expect(checkPlayerAction(state, action.actor, withoutActor(action))).toBeNull();
          checked++;
        }
        const result = step(state, action);
        if (!result.ok) throw new Error(`event ${event.seq} refused on replay: ${result.error.code}`);
        state = result.state;
      }
    }
    expect(checked).toBeGreaterThan(10_000);
  });

  it('collects sets: the mean score over 30 games is above 5', () => {
    const scores = SEEDS.map((seed) => game(seed).state.score);
    const mean = scores.reduce((a, b) => a + b, 0) / scores.length;
    expect(mean).toBeGreaterThan(5);
  });
});

describe("the scripted leader's valid sets", () => {
  test('validSets lists every valid set, each once as i < j < k in ascending order, for boards of up to 70 cards', () => {
    const face = fc.record({ color: fc.constantFrom(...COLORS), shape: fc.constantFrom(...SHAPES), count: fc.constantFrom(...COUNTS) });
    fc.assert(
      fc.property(fc.array(face, { minLength: 0, maxLength: 70, size: 'max' }), (faces) => {
        const expected: number[] = [];
        for (let i = 0; i < faces.length; i++) {
          for (let j = i + 1; j < faces.length; j++) {
            for (let k = j + 1; k < faces.length; k++) if (isValidSet([faces[i], faces[j], faces[k]])) expected.push(i, j, k);
          }
        }
        expect(Array.from(validSets(faces))).toEqual(expected);
      }),
      { numRuns: 60 },
    );
  });
});
