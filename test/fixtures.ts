/** Small hand-made worlds and states for rule tests. */
import {
  makeConfig,
  mapSchema,
  seedRng,
  startGame,
  type Card,
  type CardFace,
  type GameConfigInput,
  type GameMap,
  type GameState,
  type Pose,
} from '../shared/engine';
import type { LogLine } from '../shared/log/format';
import { replay } from '../shared/log/replay';
import { generateMap } from '../shared/maps/generate';
import { playSelfPlayGame } from '../shared/selfplay/game';

/**
 * A 9 x 9 grass map, rows listed north first for readability (row 8 at the top):
 * water at (4, 2), a hill at (6, 6), a tree on (2, 6).
 */
export function smallMap(): GameMap {
  const northFirst = [
    'GGGGGGGGG', // y = 8
    'GGGGGGGGG',
    'GGGGGGHGG', // y = 6
    'GGGGGGGGG',
    'GGGGGGGGG', // y = 4
    'GGGGGGGGG',
    'GGGGWGGGG', // y = 2
    'GGGGGGGGG',
    'GGGGGGGGG', // y = 0
  ];
  return mapSchema.parse({
    format: 'cerealbar-map',
    version: 1,
    name: 'rules-fixture',
    width: 9,
    height: 9,
    terrain: [...northFirst].reverse(),
    props: [{ x: 2, y: 6, type: 'tree', variant: 'pine', rotation: 'NE' }],
  });
}

/** A valid set: all colours, shapes and counts different. */
export const SET_FACES: readonly CardFace[] = [
  { color: 'red', shape: 'star', count: 1 },
  { color: 'blue', shape: 'heart', count: 2 },
  { color: 'green', shape: 'cube', count: 3 },
];

export function card(id: number, x: number, y: number, face: CardFace, selected = false): Card {
  return { id, x, y, ...face, selected };
}

export interface StateSpec {
  leader?: Pose;
  follower?: Pose;
  cards?: Card[];
  config?: GameConfigInput;
}

/**
 * The follower at (1, 4) facing E with the set's three cards straight ahead on (2..4, 4), the
 * leader at (1, 1) facing E, and two spare cards (a red torus and a yellow plus) near the top.
 */
export function makeState(spec: StateSpec = {}): GameState {
  const cards = spec.cards ?? [
    card(0, 2, 4, SET_FACES[0]),
    card(1, 3, 4, SET_FACES[1]),
    card(2, 4, 4, SET_FACES[2]),
    card(3, 5, 7, { color: 'red', shape: 'torus', count: 2 }),
    card(4, 6, 7, { color: 'yellow', shape: 'plus', count: 1 }),
  ];
  const config = makeConfig({ cardCount: cards.length, ...spec.config });
  return startGame(config, smallMap(), {
    leader: spec.leader ?? { x: 1, y: 1, heading: 'E' },
    follower: spec.follower ?? { x: 1, y: 4, heading: 'E' },
    cards,
    rng: seedRng(42),
  });
}

/** Every state of the self-play game of `seed` (on its generated map), by replaying its log. */
export function selfPlayStates(seed: number): GameState[] {
  const lines: LogLine[] = [];
  playSelfPlayGame({ seed, map: generateMap(seed) }, (line) => lines.push(line));
  const states: GameState[] = [];
  replay(lines.map((line) => JSON.stringify(line)).join('\n'), { onState: (state) => states.push(state) });
  return states;
}
