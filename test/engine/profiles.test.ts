/** Rules profiles (cerealbar, cb2) and walls between cells: what CB2's games need, with CerealBar's rules unchanged. */
import { DEFAULT_CONFIG, RULES_PROFILES, makeConfig, profileConfig } from '../../shared/engine/config';
import { legalActions } from '../../shared/engine/legal';
import { buildWorld, mapSchema, stepTarget, type GameMap } from '../../shared/engine/map';
import { startGame, type GameState } from '../../shared/engine/state';
import type { Card } from '../../shared/engine/cards';
import { mv, play, timeout } from './helpers';
import { GeodesicDistance } from '../../shared/eval/distance';
import { PathPlanner } from '../../shared/nav/pathing';
import { HEADINGS } from '../../shared/engine/hex';
import { emptyMemory, playerView, remember } from '../../shared/engine/playerView';
import { ObservationTracker } from '../../shared/agents/observation';
import { describeObservation } from '../../shared/agents/language';
import { FollowerArrays } from '../../shared/env/observationArrays';
import { concat } from '../../shared/env/wire';

/** A 7 x 7 grass map with a hill in the middle row and `extra` map fields. */
function smallMap(extra: Partial<GameMap> = {}): GameMap {
  const terrain = Array.from({ length: 7 }, (_, y) => (y === 3 ? 'GGGHGGG' : 'GGGGGGG'));
  return mapSchema.parse({ format: 'cerealbar-map', version: 1, width: 7, height: 7, terrain, ...extra });
}

/** Three cards forming a set, on the cells given (ids 0-2), plus the rest of `count` cards far away. */
function cards(cells: readonly { x: number; y: number }[], count = 3): Card[] {
  const faces = [
    { color: 'red', shape: 'star', count: 1 },
    { color: 'blue', shape: 'heart', count: 2 },
    { color: 'green', shape: 'plus', count: 3 },
  ] as const;
  return cells.slice(0, count).map((cell, id) => ({ id, ...cell, ...faces[id % 3], selected: false }));
}

function game(map: GameMap, config = DEFAULT_CONFIG, leader = { x: 1, y: 1, heading: 'E' as const }, cardCells = [{ x: 5, y: 5 }, { x: 5, y: 4 }, { x: 4, y: 5 }]): GameState {
  return startGame({ ...config, cardCount: 3 }, map, { leader, follower: { x: 1, y: 5, heading: 'NE' }, cards: cards(cardCells), rng: [1, 2, 3, 4] });
}

describe('R-58: walls', () => {
  // Cell (2, 1) faces its east neighbour (3, 1) across a wall.
  const walled = smallMap({ walls: [{ x: 2, y: 1, side: 'E' }] });

  test('a wall blocks a step across it, both ways, and nothing else', () => {
    const world = buildWorld(walled);
    expect(stepTarget(world, { x: 2, y: 1 }, 'E')).toBeNull();
    expect(stepTarget(world, { x: 3, y: 1 }, 'W')).toBeNull();
    expect(stepTarget(world, { x: 2, y: 1 }, 'W')).toEqual({ x: 1, y: 1 });
    expect(stepTarget(buildWorld(smallMap()), { x: 2, y: 1 }, 'E')).toEqual({ x: 3, y: 1 });
  });

  test('a move into a wall changes nothing and costs nothing; the legal moves leave it out', () => {
    const start = game(walled, DEFAULT_CONFIG, { x: 2, y: 1, heading: 'E' });
    expect(legalActions(start, 'leader').moves).toEqual(['MB', 'RL', 'RR']);
    const { state, outcomes } = play(start, mv('leader', 'MF'));
    expect(outcomes[0]).toMatchObject({ pose: { x: 2, y: 1, heading: 'E' }, blocked: true });
    expect(state.turn.stepsLeft).toBe(start.turn.stepsLeft);
    // Around it: the cell behind the wall is reached by another way.
    const around = play(start, mv('leader', 'RL'), mv('leader', 'MF'), mv('leader', 'RR'), mv('leader', 'RR'), mv('leader', 'MF'));
    expect(around.state.leader).toMatchObject({ x: 3, y: 1 });
  });

  test('paths and distances go around a wall', () => {
    const open = new GeodesicDistance(buildWorld(smallMap()));
    const walled = new GeodesicDistance(buildWorld(smallMap({ walls: [{ x: 2, y: 1, side: 'E' }] })));
    expect(open.between({ x: 2, y: 1 }, { x: 3, y: 1 })).toBe(1);
    expect(walled.between({ x: 2, y: 1 }, { x: 3, y: 1 })).toBe(2);
    expect(new PathPlanner(buildWorld(smallMap({ walls: [{ x: 2, y: 1, side: 'E' }] }))).nextMove([], { x: 2, y: 1, heading: 'E' }, { x: 3, y: 1 })).not.toBe('MF');
  });

  test('walls off the map are refused by the map format', () => {
    expect(() => smallMap({ walls: [{ x: 9, y: 1, side: 'E' }] })).toThrow(/wall at \(9, 1\) is off the map/);
  });
});

describe('R-59: rules profiles', () => {
  test('cerealbar is the default config; cb2 changes only what CB2 does differently', () => {
    expect(profileConfig('cerealbar')).toEqual(DEFAULT_CONFIG);
    const cb2 = profileConfig('cb2');
    expect(cb2).toEqual({ ...DEFAULT_CONFIG, ...RULES_PROFILES.cb2, turnSeconds: { leader: 60, follower: 180 }, extraTurns: [5, 4, 4, 3, 3, 2, 2, 1, 1] });
    expect(profileConfig('cb2', { turnSeconds: { follower: 600 } }).turnSeconds).toEqual({ leader: 60, follower: 600 });
  });

  test('hills: obstacles in CerealBar, walkable in CB2', () => {
    const map = smallMap();
    expect(stepTarget(buildWorld(map), { x: 3, y: 2 }, 'NE')).toBeNull();
    const world = buildWorld(map, profileConfig('cb2'));
    expect(world.walkable[3 * 7 + 3]).toBe(1);
    expect(stepTarget(world, { x: 2, y: 3 }, 'E')).toEqual({ x: 3, y: 3 });
    // One world per map and rules.
    expect(buildWorld(map, profileConfig('cb2'))).toBe(world);
    expect(buildWorld(map)).not.toBe(world);
  });

  test('cards on the outer ring: refused in CerealBar, allowed in CB2', () => {
    const edge = [{ x: 0, y: 6 }, { x: 6, y: 0 }, { x: 6, y: 6 }];
    expect(() => game(smallMap(), DEFAULT_CONFIG, undefined, edge)).toThrow(/not on a reachable inner cell/);
    expect(game(smallMap(), profileConfig('cb2'), undefined, edge).cards).toHaveLength(3);
  });

  test('rounds: six in CerealBar, seven in CB2 (its turns_left counts 6 down to 0)', () => {
    const rounds = (config = DEFAULT_CONFIG) => {
      let state = game(smallMap(), config);
      let count = 0;
      while (!state.gameOver) {
        state = play(state, timeout('leader')).state; // nothing queued: the follower's turn is skipped
        count++;
      }
      return count;
    };
    expect(rounds()).toBe(6);
    expect(rounds(profileConfig('cb2'))).toBe(7);
  });

  test('extra turns: CB2 gives none for a tenth set, CerealBar one', () => {
    expect(makeConfig().extraTurns[9]).toBe(1);
    expect(profileConfig('cb2').extraTurns[9] ?? 0).toBe(0);
  });

  test('a set made across a mountain in CB2 rules scores and adds turns as in CerealBar', () => {
    // The three cards lie on the middle row, the first on the hill (3, 3).
    const row = [{ x: 3, y: 3 }, { x: 4, y: 3 }, { x: 5, y: 3 }];
    const start = game(smallMap(), profileConfig('cb2'), { x: 2, y: 3, heading: 'E' }, row);
    const { state, outcomes } = play(start, mv('leader', 'MF'), mv('leader', 'MF'), mv('leader', 'MF'));
    expect(outcomes.map((outcome) => outcome.toggled)).toEqual([[0], [1], [2]]);
    expect(outcomes[2].set).toMatchObject({ cards: [0, 1, 2], extraTurns: 5 });
    expect([state.score, state.turnsLeft]).toEqual([1, 7 + 5]);
  });
});

describe('R-58: walls in what each player knows', () => {
  // The follower stands at (2, 1) facing the wall on its east side; a second wall lies behind it, out of view.
  const map = smallMap({ walls: [{ x: 2, y: 1, side: 'E' }, { x: 0, y: 6, side: 'E' }] });
  const state = startGame({ ...DEFAULT_CONFIG, cardCount: 3 }, map, {
    leader: { x: 5, y: 5, heading: 'NE' },
    follower: { x: 2, y: 1, heading: 'E' },
    cards: cards([{ x: 5, y: 3 }, { x: 4, y: 3 }, { x: 4, y: 5 }]),
    rng: [1, 2, 3, 4],
  });

  test('the follower knows the walls beside cells it has seen; the leader knows them all', () => {
    const observation = new ObservationTracker().observe(state);
    expect(observation.map.walls).toEqual([{ x: 2, y: 1, side: 'E' }]);
    expect(playerView(state, 'leader', remember(emptyMemory('leader'), state)).map.walls).toEqual(map.walls);
    // A map without walls gives a known map without the field, as before walls existed.
    expect(new ObservationTracker().observe(game(smallMap())).map).not.toHaveProperty('walls');
  });

  test('the description names the cliff ahead, and the arrays mark both sides of it', () => {
    const observation = new ObservationTracker().observe(state);
    expect(describeObservation(observation)).toMatch(/The way ahead is blocked by a cliff\.$/);
    const arrays = new FollowerArrays({ grid: { width: 7, height: 7 }, config: DEFAULT_CONFIG, maxSteps: 50, description: false, shaping: false });
    const block = concat(arrays.encode(observation, { reward: 0, terminated: false, truncated: false }, { score: 0, points: 0, steps: 0, instructionId: null }));
    const field = arrays.layout.arrays.find((array) => array.name === 'walls')!;
    const walls = block.subarray(field.offset, field.offset + 49);
    expect(walls[1 * 7 + 2]).toBe(1 << HEADINGS.indexOf('E'));
    expect(walls[1 * 7 + 3]).toBe(1 << HEADINGS.indexOf('W'));
    expect(walls.reduce((sum, value) => sum + value, 0)).toBe((1 << 1) + (1 << 4));
  });
});
