/**
 * The static world: terrain and props on a hex grid, the map file format
 * (validated with zod), and the derived lookup tables the engine uses.
 */
import { z } from 'zod';
import { COLORS, COUNTS, SHAPES } from './cards';
import { HEADINGS, HEADING_INDEX, type Cell, type Heading, neighbourTable } from './hex';

/** One letter per terrain in map files; grass and path are walkable, the others are obstacles. */
export const TERRAIN_LETTERS = {
  G: 'grass',
  P: 'path',
  W: 'water',
  D: 'deep_water',
  H: 'hill',
} as const;
export type TerrainLetter = keyof typeof TERRAIN_LETTERS;
export type Terrain = (typeof TERRAIN_LETTERS)[TerrainLetter];
/** Grass and path, by character code: a world is derived from every map a follower agent comes to know, so this is read often. */
const GRASS_CODE = 'G'.charCodeAt(0);
const PATH_CODE = 'P'.charCodeAt(0);
const HILL_CODE = 'H'.charCodeAt(0);

/** Props are obstacles; `variant` picks the look (tree kind, hut colour, plant kind, ...). */
export const PROP_TYPES = ['tree', 'hut', 'house', 'windmill', 'tower', 'tent', 'lamp', 'plant'] as const;
export type PropType = (typeof PROP_TYPES)[number];

export const MAP_FORMAT = 'cerealbar-map';
export const MAP_FORMAT_VERSION = 1;

const cellSchema = z.object({ x: z.number().int(), y: z.number().int() });
export const poseSchema = cellSchema.extend({ heading: z.enum(HEADINGS) });

const propSchema = z.object({
  x: z.number().int(),
  y: z.number().int(),
  type: z.enum(PROP_TYPES),
  variant: z.string().max(40).default(''),
  rotation: z.enum(HEADINGS).default('NE'),
});

export const mapSchema = z
  .object({
    format: z.literal(MAP_FORMAT),
    version: z.literal(MAP_FORMAT_VERSION),
    name: z.string().max(200).default(''),
    seed: z.number().int().optional(),
    width: z.number().int().min(3).max(100),
    height: z.number().int().min(3).max(100),
    /** terrain[y] is row y (south to north), one letter per column. */
    terrain: z.array(z.string().regex(/^[GPWDH]*$/, 'terrain rows use only the letters G P W D H')),
    props: z.array(propSchema).default([]),
    /** Optional fixed start poses; otherwise a game picks them with its seed. */
    spawn: z.object({ leader: poseSchema, follower: poseSchema }).optional(),
    /**
     * Sides that block movement between two cells (CB2's cliffs and ramp flanks): each is the side
     * of cell (x, y) that faces its neighbour in direction `side`, and blocks both ways. CerealBar
     * maps have none: there only terrain and props block.
     */
    walls: z.array(cellSchema.extend({ side: z.enum(HEADINGS) })).optional(),
    /** Optional fixed initial cards (hand-made maps such as the tutorial); otherwise a game draws them. */
    cards: z
      .array(
        cellSchema.extend({
          color: z.enum(COLORS),
          shape: z.enum(SHAPES),
          count: z.union(COUNTS.map((count) => z.literal(count))),
        }),
      )
      .optional(),
  })
  .superRefine((map, ctx) => {
    if (map.terrain.length !== map.height) {
      ctx.addIssue({ code: 'custom', path: ['terrain'], message: `has ${map.terrain.length} rows, height is ${map.height}` });
      return;
    }
    map.terrain.forEach((row, y) => {
      if (row.length !== map.width) {
        ctx.addIssue({ code: 'custom', path: ['terrain', y], message: `row ${y} has ${row.length} cells, width is ${map.width}` });
      }
    });
    (map.walls ?? []).forEach((wall, i) => {
      if (wall.x < 0 || wall.y < 0 || wall.x >= map.width || wall.y >= map.height) {
        ctx.addIssue({ code: 'custom', path: ['walls', i], message: `wall at (${wall.x}, ${wall.y}) is off the map` });
      }
    });
    const seen = new Set<number>();
    map.props.forEach((prop, i) => {
      const where = ['props', i];
      if (prop.x < 0 || prop.y < 0 || prop.x >= map.width || prop.y >= map.height) {
        ctx.addIssue({ code: 'custom', path: where, message: `prop at (${prop.x}, ${prop.y}) is off the map` });
      } else if (seen.has(prop.y * map.width + prop.x)) {
        ctx.addIssue({ code: 'custom', path: where, message: `two props on (${prop.x}, ${prop.y})` });
      }
      seen.add(prop.y * map.width + prop.x);
    });
  });

/** A map as stored in a map file or a log header. */
export type GameMap = z.output<typeof mapSchema>;
export type Prop = GameMap['props'][number];
/** A side of cell (x, y), towards its neighbour in `side`, that blocks movement both ways. */
export type Wall = NonNullable<GameMap['walls']>[number];

/** The rules that decide where players walk and cards lie (the config's, see `worldRules`). */
export interface WorldRules {
  /** Hill cells are walkable (CB2's mountain tops and ramps); in CerealBar they are obstacles. */
  readonly walkableHills: boolean;
  /** Cards may lie on the map's outer ring (CB2); CerealBar keeps them off it. */
  readonly cardsOnEdge: boolean;
}

export const CEREALBAR_WORLD_RULES: WorldRules = { walkableHills: false, cardsOnEdge: false };

/**
 * Lookup tables derived once from a map and the world rules. `walkable` marks the cells a player
 * may stand on (grass and path, hills too when the rules say so, never a prop); `steps` says where
 * a step leads; `region` marks the connected walkable region where players and cards live.
 */
export interface World {
  readonly map: GameMap;
  readonly rules: WorldRules;
  readonly width: number;
  readonly height: number;
  readonly walkable: Uint8Array;
  /**
   * `steps[i * 6 + d]`: the index of the cell a step from cell i in HEADINGS[d] reaches, or -1
   * when that cell is off the map or not walkable, or a wall stands between.
   */
  readonly steps: Int32Array;
  readonly region: Uint8Array;
  /** Cells where cards may be placed: in the region and, unless the rules allow it, not on the map's edge. */
  readonly cardCells: readonly number[];
  /** cardCellMask[i] is 1 when cell i is one of `cardCells`. */
  readonly cardCellMask: Uint8Array;
}

export function cellIndex(world: { width: number }, cell: Cell): number {
  return cell.y * world.width + cell.x;
}

export function cellAt(world: { width: number }, index: number): Cell {
  return { x: index % world.width, y: Math.floor(index / world.width) };
}

export function inBounds(world: { width: number; height: number }, cell: Cell): boolean {
  return cell.x >= 0 && cell.y >= 0 && cell.x < world.width && cell.y < world.height;
}

export function terrainAt(map: GameMap, cell: Cell): Terrain {
  return TERRAIN_LETTERS[map.terrain[cell.y][cell.x] as TerrainLetter];
}

export function isWalkable(world: World, cell: Cell): boolean {
  return inBounds(world, cell) && world.walkable[cellIndex(world, cell)] === 1;
}

/** The index of the cell a step from `cell` in direction `heading` reaches, or -1: off the map, not walkable, or a wall between. */
export function stepTargetIndex(world: World, cell: Cell, heading: Heading): number {
  if (!inBounds(world, cell)) return -1;
  return world.steps[cellIndex(world, cell) * 6 + HEADING_INDEX[heading]];
}

/** The cell a step from `cell` in direction `heading` reaches, or null: off the map, not walkable, or a wall between. */
export function stepTarget(world: World, cell: Cell, heading: Heading): Cell | null {
  const target = stepTargetIndex(world, cell, heading);
  return target < 0 ? null : cellAt(world, target);
}

/** Walkable cells connected to `start` (a cell index) by steps, as a 0/1 mask; `steps` as in World. */
export function connectedRegion(steps: Int32Array, cells: number, start: number, walkable: Uint8Array): Uint8Array {
  const region = new Uint8Array(cells);
  if (!walkable[start]) return region;
  const stack = [start];
  region[start] = 1;
  while (stack.length > 0) {
    const index = stack.pop()!;
    for (let d = index * 6; d < index * 6 + 6; d++) {
      const n = steps[d];
      if (n >= 0 && !region[n]) {
        region[n] = 1;
        stack.push(n);
      }
    }
  }
  return region;
}

function walkableMask(map: GameMap, rules: WorldRules): Uint8Array {
  const walkable = new Uint8Array(map.width * map.height);
  const hills = rules.walkableHills;
  for (let y = 0; y < map.height; y++) {
    const row = map.terrain[y];
    for (let x = 0; x < map.width; x++) {
      const code = row.charCodeAt(x);
      walkable[y * map.width + x] = code === GRASS_CODE || code === PATH_CODE || (hills && code === HILL_CODE) ? 1 : 0;
    }
  }
  for (const prop of map.props) walkable[prop.y * map.width + prop.x] = 0;
  return walkable;
}

/** World.steps: the neighbour table with unwalkable targets and walled sides (both ways) taken out. */
function stepTable(map: GameMap, walkable: Uint8Array): Int32Array {
  const neighbours = neighbourTable(map.width, map.height);
  const steps = walkableSteps(neighbours, walkable);
  for (const wall of map.walls ?? []) {
    const here = wall.y * map.width + wall.x;
    const d = HEADINGS.indexOf(wall.side);
    const there = neighbours[here * 6 + d];
    steps[here * 6 + d] = -1;
    if (there >= 0) steps[there * 6 + ((d + 3) % 6)] = -1;
  }
  return steps;
}

/** A neighbour table with the steps onto cells that are not walkable taken out. */
export function walkableSteps(neighbours: Int32Array, walkable: Uint8Array): Int32Array {
  const steps = new Int32Array(neighbours.length);
  for (let d = 0; d < neighbours.length; d++) {
    const n = neighbours[d];
    steps[d] = n >= 0 && walkable[n] ? n : -1;
  }
  return steps;
}

/**
 * The largest connected walkable region, as a 0/1 mask (ties: the one holding the lowest cell
 * index). One pass labels every region, so a map of many small islands costs no more than one.
 * `steps` as in World, or a plain neighbour table: a step onto a cell that is not walkable is
 * not taken either way.
 */
export function largestRegion(steps: Int32Array, walkable: Uint8Array): Uint8Array {
  const label = new Int32Array(walkable.length);
  const stack = new Int32Array(walkable.length);
  let best = 0;
  let bestSize = 0;
  let regions = 0;
  for (let i = 0; i < walkable.length; i++) {
    if (!walkable[i] || label[i]) continue;
    const id = ++regions;
    label[i] = id;
    let size = 0;
    let top = 0;
    stack[top++] = i;
    while (top > 0) {
      const index = stack[--top];
      size++;
      for (let d = index * 6; d < index * 6 + 6; d++) {
        const n = steps[d];
        if (n >= 0 && walkable[n] && !label[n]) {
          label[n] = id;
          stack[top++] = n;
        }
      }
    }
    if (size > bestSize) {
      best = id;
      bestSize = size;
    }
  }
  const region = new Uint8Array(walkable.length);
  if (best > 0) for (let i = 0; i < walkable.length; i++) region[i] = label[i] === best ? 1 : 0;
  return region;
}

const worlds = new WeakMap<GameMap, World[]>();

/**
 * Derives the world's lookup tables, once per map object and rules (maps are never mutated). The
 * play region is the component holding the map's leader spawn when it has one, otherwise the
 * largest walkable component.
 */
export function buildWorld(map: GameMap, rules: WorldRules = CEREALBAR_WORLD_RULES): World {
  let derived = worlds.get(map);
  if (!derived) worlds.set(map, (derived = []));
  let world = derived.find((known) => known.rules.walkableHills === rules.walkableHills && known.rules.cardsOnEdge === rules.cardsOnEdge);
  if (!world) {
    world = deriveWorld(map, { walkableHills: rules.walkableHills, cardsOnEdge: rules.cardsOnEdge });
    derived.push(world);
  }
  return world;
}

function deriveWorld(map: GameMap, rules: WorldRules): World {
  const walkable = walkableMask(map, rules);
  const steps = stepTable(map, walkable);
  const region = map.spawn && inBounds(map, map.spawn.leader)
    ? connectedRegion(steps, walkable.length, cellIndex(map, map.spawn.leader), walkable)
    : largestRegion(steps, walkable);
  const cardCells: number[] = [];
  const cardCellMask = new Uint8Array(map.width * map.height);
  const margin = rules.cardsOnEdge ? 0 : 1;
  for (let y = margin; y < map.height - margin; y++) {
    for (let x = margin; x < map.width - margin; x++) {
      const i = y * map.width + x;
      if (region[i]) {
        cardCells.push(i);
        cardCellMask[i] = 1;
      }
    }
  }
  return { map, rules, width: map.width, height: map.height, walkable, steps, region, cardCells, cardCellMask };
}
