/**
 * Seeded procedural maps in the spirit of the original CerealBar generator: on all-grass land,
 * two ponds, a hill and one branching path, then groves of trees, structures and path-side
 * objects on the grass, and the two players' start poses on the path.
 *
 * Every random choice comes from one Draw seeded with the map's seed, and the arithmetic is on
 * integers, so a seed gives the same map on every machine. Props are only placed where they
 * cannot split a walkable area in two (see `keepsNeighboursConnected`), so the largest walkable
 * area after the terrain steps stays whole; the spawns are drawn inside it.
 */
import { HEADINGS, neighbourTable, type Pose } from '../engine/hex';
import { cellAt, MAP_FORMAT, MAP_FORMAT_VERSION, largestRegion, type GameMap, type Prop, type PropType } from '../engine/map';
import { Draw, seedRng } from '../engine/rng';

export interface GenerateOptions {
  width?: number;
  height?: number;
}

export const DEFAULT_MAP_SIZE = 25;
export const MIN_MAP_SIZE = 10;
export const MAX_MAP_SIZE = 100;

/** The original's numbers, for a 25 x 25 map; other sizes scale the counts with the area. */
const REFERENCE_AREA = 25 * 25;
const PONDS = 2;
const POND_SIZE = 8;
const HILLS = 1;
const HILL_SIZE = 17;
const TREES = 29;
const STRUCTURES = 8;
const PATH_OBJECTS = 25;
const MAX_SPLITS = 10;
/** A path segment may split once it has this many cells since its start or its last split. */
const CELLS_BEFORE_SPLIT = 4;
const SPLIT_CHANCE = 0.2;
/** Cells a branch may add: branches stay short so that the path does not fill the map. */
const BRANCH_MIN = 5;
const BRANCH_MAX = 15;
/** A shorter path (blocked early by a pond or the hill) is redrawn: players start on the path. */
const MIN_PATH_CELLS = 20;
/** Structures prefer grass this close to the path or water, as in the original. */
const STRUCTURE_REACH = 2;
/** The play region must hold at least this many inner cells (or half the inner cells of a small map). */
const MIN_REGION_INNER_CELLS = 150;
/** Redraws (with the same Draw, so still deterministic) before giving up on a seed. */
const MAX_ATTEMPTS = 50;

export const TREE_VARIANTS = [
  'pine', 'oak', 'palm', 'birch', 'bush-tree', 'fir', 'maple', 'willow', 'cypress', 'spruce', 'cherry', 'dead-tree',
] as const;
export const HUT_VARIANTS = ['red', 'blue', 'yellow', 'green', 'white'] as const;
export const PLANT_VARIANTS = ['bush', 'yellow-bush', 'tall-grass', 'red-flower', 'purple-flower', 'blue-flower'] as const;
export const LAMP_VARIANT = 'street';
/** Huts are the commonest structure, as in the original's five hut colours. */
const STRUCTURE_TYPES: readonly PropType[] = ['hut', 'hut', 'hut', 'house', 'windmill', 'tower', 'tent'];
const LAMP_CHANCE = 0.3;

// Terrain codes; LETTERS[code] is the map file's letter.
const GRASS = 0;
const PATH = 1;
const WATER = 2;
const DEEP_WATER = 3;
const HILL = 4;
const LETTERS = 'GPWDH';

/** The map being built: terrain codes and props by cell index (y * width + x). */
interface Canvas {
  readonly width: number;
  readonly height: number;
  readonly area: number;
  /** neighbours[i * 6 + h] is the cell one step from i in HEADINGS[h], or -1 off the map. */
  readonly neighbours: Int32Array;
  readonly terrain: Uint8Array;
  readonly props: (Prop | undefined)[];
  /** Props in the order they were placed, which is the order of the map file. */
  readonly placed: Prop[];
}

export function generateMap(seed: number, options: GenerateOptions = {}): GameMap {
  if (!Number.isSafeInteger(seed)) throw new RangeError(`the seed must be an integer, got ${seed}`);
  const width = checkedSize('width', options.width);
  const height = checkedSize('height', options.height);
  const draw = new Draw(seedRng(seed));
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const canvas = newCanvas(width, height);
    if (!shapeTerrain(canvas, draw)) continue;
    placeProps(canvas, draw);
    const spawn = drawSpawn(canvas, draw);
    if (spawn) return toMap(canvas, seed, spawn);
  }
  throw new Error(`no playable ${width}x${height} map from seed ${seed} after ${MAX_ATTEMPTS} attempts`);
}

function checkedSize(name: string, value = DEFAULT_MAP_SIZE): number {
  if (!Number.isInteger(value) || value < MIN_MAP_SIZE || value > MAX_MAP_SIZE) {
    throw new RangeError(`the map ${name} must be an integer from ${MIN_MAP_SIZE} to ${MAX_MAP_SIZE}, got ${value}`);
  }
  return value;
}

/** The original's count for a 25 x 25 map, scaled to this map's area, at least 1. */
function scaled(canvas: Canvas, count: number): number {
  return Math.max(1, Math.round((count * canvas.area) / REFERENCE_AREA));
}

// ---------------------------------------------------------------------------------------------
// Canvas

function newCanvas(width: number, height: number): Canvas {
  const area = width * height;
  return {
    width,
    height,
    area,
    neighbours: neighbourTable(width, height),
    terrain: new Uint8Array(area),
    props: new Array<Prop | undefined>(area),
    placed: [],
  };
}

function isEdge(canvas: Canvas, index: number): boolean {
  const x = index % canvas.width;
  const y = (index - x) / canvas.width;
  return x === 0 || y === 0 || x === canvas.width - 1 || y === canvas.height - 1;
}

function isWalkable(canvas: Canvas, index: number): boolean {
  return canvas.terrain[index] <= PATH && canvas.props[index] === undefined;
}

// ---------------------------------------------------------------------------------------------
// Terrain: ponds, hills, the path

/** Lays ponds, hills and the path; false when the path came out too short to play on. */
function shapeTerrain(canvas: Canvas, draw: Draw): boolean {
  for (let i = scaled(canvas, PONDS); i > 0; i--) {
    const pond = growBlob(canvas, draw, POND_SIZE + draw.int(-2, 2), WATER);
    deepenMiddle(canvas, pond);
  }
  for (let i = scaled(canvas, HILLS); i > 0; i--) growBlob(canvas, draw, HILL_SIZE + draw.int(-3, 3), HILL);
  // A path's length grows with the map's side rather than its area, and so does this minimum.
  return layPath(canvas, draw) >= Math.round((MIN_PATH_CELLS * Math.min(canvas.width, canvas.height)) / DEFAULT_MAP_SIZE);
}

/**
 * Turns about `size` grass cells around a random start into `terrain`, each new cell a random
 * neighbour of a cell already taken, chosen with a bias towards the first cells so that the blob
 * is compact (a pond then has a middle for deep water). The start keeps two cells from the edge
 * so that the blob's shape shows.
 */
function growBlob(canvas: Canvas, draw: Draw, size: number, terrain: number): number[] {
  const starts: number[] = [];
  for (let y = 2; y < canvas.height - 2; y++) {
    for (let x = 2; x < canvas.width - 2; x++) if (canvas.terrain[y * canvas.width + x] === GRASS) starts.push(y * canvas.width + x);
  }
  const start = draw.pick(starts);
  canvas.terrain[start] = terrain;
  const blob = [start];
  for (let tries = size * 20; blob.length < size && tries > 0; tries--) {
    const from = blob[draw.int(0, draw.int(0, blob.length - 1))];
    const next = canvas.neighbours[from * 6 + draw.int(0, 5)];
    if (next >= 0 && canvas.terrain[next] === GRASS) {
      canvas.terrain[next] = terrain;
      blob.push(next);
    }
  }
  return blob;
}

/** Pond cells surrounded by water on all six sides become deep water. */
function deepenMiddle(canvas: Canvas, pond: readonly number[]): void {
  const isWater = (i: number) => i >= 0 && (canvas.terrain[i] === WATER || canvas.terrain[i] === DEEP_WATER);
  for (const cell of pond) {
    if (canvas.neighbours.subarray(cell * 6, cell * 6 + 6).every(isWater)) canvas.terrain[cell] = DEEP_WATER;
  }
}

interface Segment {
  cell: number;
  /** The cell before `cell`, or -1. */
  previous: number;
  /** Index into HEADINGS of the segment's general direction; each step deviates by at most 60 degrees. */
  heading: number;
  /** Most cells the segment may add. */
  budget: number;
}

/**
 * One branching path from a random grass cell on the edge; returns its number of cells. Each
 * segment wanders within 60 degrees of its direction, so it never turns back on itself nor
 * touches its own cells beyond the last two (a zigzag touches the cell two back). It ends at
 * the edge, at obstacles it cannot pass, on meeting other path (which makes a junction rather
 * than two paths side by side), or when its budget is spent. The first segment may cross the
 * whole map; branches are short, so the path does not fill the map.
 */
function layPath(canvas: Canvas, draw: Draw): number {
  const starts: number[] = [];
  for (let i = 0; i < canvas.area; i++) {
    if (isEdge(canvas, i) && !isCorner(canvas, i) && canvas.terrain[i] === GRASS) starts.push(i);
  }
  const start = draw.pick(starts);
  canvas.terrain[start] = PATH;
  const segments: Segment[] = [{ cell: start, previous: -1, heading: inwardHeading(canvas, draw, start), budget: canvas.area }];
  const maxSplits = scaled(canvas, MAX_SPLITS);
  let splits = 0;
  let cells = 1;
  while (segments.length > 0) {
    const segment = segments.pop()!;
    let sinceSplit = 1;
    for (let laid = 0; laid < segment.budget; laid++) {
      const next = wander(canvas, draw, segment);
      if (next < 0) break;
      const crossing = canvas.terrain[next] === PATH;
      // A branch's first cells touch the path it leaves; after that, touching path means meeting it.
      const meets = crossing || (laid >= 2 && touchesOtherPath(canvas, next, segment));
      if (!crossing) cells++;
      canvas.terrain[next] = PATH;
      segment.previous = segment.cell;
      segment.cell = next;
      if (meets) break;
      sinceSplit++;
      if (sinceSplit >= CELLS_BEFORE_SPLIT && splits < maxSplits && draw.chance(SPLIT_CHANCE)) {
        // Branches leave at 120 degrees so that they do not run alongside their parent.
        const heading = (segment.heading + draw.pick([2, 4])) % 6;
        segments.push({ cell: next, previous: segment.previous, heading, budget: draw.int(BRANCH_MIN, BRANCH_MAX) });
        splits++;
        sinceSplit = 0;
      }
    }
  }
  return cells;
}

function isCorner(canvas: Canvas, index: number): boolean {
  const { x, y } = cellAt(canvas, index);
  return (x === 0 || x === canvas.width - 1) && (y === 0 || y === canvas.height - 1);
}

/** A random direction from an edge cell (not a corner) that leads away from the edge. */
function inwardHeading(canvas: Canvas, draw: Draw, cell: number): number {
  const inward = [0, 1, 2, 3, 4, 5].filter((h) => {
    const next = canvas.neighbours[cell * 6 + h];
    return next >= 0 && distanceToEdge(canvas, next) > distanceToEdge(canvas, cell);
  });
  return draw.pick(inward);
}

function distanceToEdge(canvas: Canvas, index: number): number {
  const { x, y } = cellAt(canvas, index);
  return Math.min(x, y, canvas.width - 1 - x, canvas.height - 1 - y);
}

/**
 * The segment's next cell: straight on or 60 degrees left or right, chosen at random but
 * avoiding the edge and existing path where it can (see `bestWay`). When all three are blocked
 * by obstacles the segment turns by 120 degrees to go round them and keeps that direction; at
 * the map's edge it ends instead of running along the edge. Returns -1 when the segment ends.
 */
function wander(canvas: Canvas, draw: Draw, segment: Segment): number {
  const h = segment.heading;
  const forward = [(h + draw.pick([5, 0, 0, 1])) % 6, h, (h + 5) % 6, (h + 1) % 6];
  let way = bestWay(canvas, segment.cell, forward);
  const atEdge = forward.some((f) => canvas.neighbours[segment.cell * 6 + f] < 0);
  if (way < 0 && !atEdge) {
    way = bestWay(canvas, segment.cell, draw.shuffled([(h + 2) % 6, (h + 4) % 6]));
    if (way >= 0) segment.heading = way;
  }
  return way < 0 ? -1 : canvas.neighbours[segment.cell * 6 + way];
}

/**
 * The first of `headings` leading to inner grass, else to edge grass, else to path (so that a
 * segment keeps off the edge and crosses path only when it must); -1 when none is open.
 */
function bestWay(canvas: Canvas, cell: number, headings: readonly number[]): number {
  const target = (h: number) => canvas.neighbours[cell * 6 + h];
  const open = headings.filter((h) => target(h) >= 0 && canvas.terrain[target(h)] <= PATH);
  return (
    open.find((h) => canvas.terrain[target(h)] === GRASS && !isEdge(canvas, target(h))) ??
    open.find((h) => canvas.terrain[target(h)] === GRASS) ??
    open[0] ??
    -1
  );
}

/** True when `cell` has a path neighbour other than the segment's last two cells. */
function touchesOtherPath(canvas: Canvas, cell: number, segment: Segment): boolean {
  for (let h = 0; h < 6; h++) {
    const n = canvas.neighbours[cell * 6 + h];
    if (n >= 0 && n !== segment.cell && n !== segment.previous && canvas.terrain[n] === PATH) return true;
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Props

function placeProps(canvas: Canvas, draw: Draw): void {
  plantGroves(canvas, draw, scaled(canvas, TREES));
  placeStructures(canvas, draw, scaled(canvas, STRUCTURES));
  placePathObjects(canvas, draw, scaled(canvas, PATH_OBJECTS));
}

/**
 * True when blocking `cell` leaves its walkable neighbours connected to each other. Neighbours
 * in HEADINGS order form a ring in which consecutive cells touch, so that holds exactly when
 * the walkable neighbours form at most one unbroken arc of the ring. A prop placed only where
 * this holds can never split a walkable area, and needs no search of the whole map.
 */
function keepsNeighboursConnected(canvas: Canvas, cell: number): boolean {
  let arcs = 0;
  for (let h = 0; h < 6; h++) {
    const here = canvas.neighbours[cell * 6 + h];
    const before = canvas.neighbours[cell * 6 + ((h + 5) % 6)];
    if (here >= 0 && isWalkable(canvas, here) && !(before >= 0 && isWalkable(canvas, before))) arcs++;
  }
  return arcs <= 1;
}

/** Props go only on free grass where they split nothing. */
function canPlace(canvas: Canvas, cell: number): boolean {
  return canvas.terrain[cell] === GRASS && canvas.props[cell] === undefined && keepsNeighboursConnected(canvas, cell);
}

function place(canvas: Canvas, draw: Draw, cell: number, type: PropType, variant: string): void {
  const x = cell % canvas.width;
  // A literal, not a spread of cellAt: every prop gets one hidden class, and maps are made per game.
  const prop: Prop = { x, y: (cell - x) / canvas.width, type, variant, rotation: draw.pick(HEADINGS) };
  canvas.props[cell] = prop;
  canvas.placed.push(prop);
}

/** Trees in groves of 2 to 6 of one kind, each grown like a blob from a random free cell. */
function plantGroves(canvas: Canvas, draw: Draw, count: number): void {
  let planted = 0;
  for (let tries = count * 10; planted < count && tries > 0; tries--) {
    const centre = draw.int(0, canvas.area - 1);
    if (!canPlace(canvas, centre)) continue;
    const variant = draw.pick(TREE_VARIANTS);
    const size = Math.min(count - planted, draw.int(2, 6));
    place(canvas, draw, centre, 'tree', variant);
    const grove = [centre];
    for (let growTries = size * 6; grove.length < size && growTries > 0; growTries--) {
      const next = canvas.neighbours[draw.pick(grove) * 6 + draw.int(0, 5)];
      if (next >= 0 && canPlace(canvas, next)) {
        place(canvas, draw, next, 'tree', variant);
        grove.push(next);
      }
    }
    planted += grove.length;
  }
}

/** Structures on grass near the path or water when there is room, else anywhere on grass. */
function placeStructures(canvas: Canvas, draw: Draw, count: number): void {
  const isNear = cellsNearPathOrWater(canvas);
  const near: number[] = [];
  const far: number[] = [];
  for (let i = 0; i < canvas.area; i++) (isNear[i] ? near : far).push(i);
  const placed = scatter(canvas, draw, near, count, (cell) => placeStructure(canvas, draw, cell));
  scatter(canvas, draw, far, count - placed, (cell) => placeStructure(canvas, draw, cell));
}

function placeStructure(canvas: Canvas, draw: Draw, cell: number): void {
  const type = draw.pick(STRUCTURE_TYPES);
  place(canvas, draw, cell, type, type === 'hut' ? draw.pick(HUT_VARIANTS) : '');
}

/** Cells within STRUCTURE_REACH steps of a path or water cell, by a search from all of them at once. */
function cellsNearPathOrWater(canvas: Canvas): Uint8Array {
  const near = new Uint8Array(canvas.area);
  let frontier: number[] = [];
  for (let i = 0; i < canvas.area; i++) {
    if (canvas.terrain[i] === PATH || canvas.terrain[i] === WATER || canvas.terrain[i] === DEEP_WATER) {
      near[i] = 1;
      frontier.push(i);
    }
  }
  for (let distance = 1; distance <= STRUCTURE_REACH; distance++) {
    const next: number[] = [];
    for (const cell of frontier) {
      for (let h = 0; h < 6; h++) {
        const n = canvas.neighbours[cell * 6 + h];
        if (n >= 0 && !near[n]) {
          near[n] = 1;
          next.push(n);
        }
      }
    }
    frontier = next;
  }
  return near;
}

/** Lamps and plants on grass beside the path. */
function placePathObjects(canvas: Canvas, draw: Draw, count: number): void {
  const beside: number[] = [];
  for (let i = 0; i < canvas.area; i++) {
    if (canvas.terrain[i] !== GRASS) continue;
    for (let h = 0; h < 6; h++) {
      const n = canvas.neighbours[i * 6 + h];
      if (n >= 0 && canvas.terrain[n] === PATH) {
        beside.push(i);
        break;
      }
    }
  }
  scatter(canvas, draw, beside, count, (cell) => {
    if (draw.chance(LAMP_CHANCE)) place(canvas, draw, cell, 'lamp', LAMP_VARIANT);
    else place(canvas, draw, cell, 'plant', draw.pick(PLANT_VARIANTS));
  });
}

/** Calls `put` on up to `count` of `cells`, in random order, where a prop may go; returns how many. */
function scatter(canvas: Canvas, draw: Draw, cells: readonly number[], count: number, put: (cell: number) => void): number {
  let placed = 0;
  for (const cell of draw.shuffled(cells)) {
    if (placed >= count) break;
    if (!canPlace(canvas, cell)) continue;
    put(cell);
    placed++;
  }
  return placed;
}

// ---------------------------------------------------------------------------------------------
// Spawns and output

/**
 * Start poses on two distinct inner path cells of the largest walkable area, facing north-east
 * as in the original; null when that area is too small or has too little path, so the caller
 * redraws the map.
 */
function drawSpawn(canvas: Canvas, draw: Draw): { leader: Pose; follower: Pose } | null {
  const region = largestWalkableArea(canvas);
  const inner = region.filter((i) => !isEdge(canvas, i));
  const innerCells = (canvas.width - 2) * (canvas.height - 2);
  if (inner.length < Math.min(MIN_REGION_INNER_CELLS, Math.floor(innerCells / 2))) return null;
  const paths = inner.filter((i) => canvas.terrain[i] === PATH);
  if (paths.length < 2) return null;
  const leader = draw.pick(paths);
  const follower = draw.pick(paths.filter((i) => i !== leader));
  return {
    leader: { ...cellAt(canvas, leader), heading: 'NE' },
    follower: { ...cellAt(canvas, follower), heading: 'NE' },
  };
}

/** The cells of the largest connected walkable area (ties: the one with the lowest cell). */
function largestWalkableArea(canvas: Canvas): number[] {
  const walkable = new Uint8Array(canvas.area);
  for (let i = 0; i < canvas.area; i++) walkable[i] = isWalkable(canvas, i) ? 1 : 0;
  const region = largestRegion(canvas.neighbours, walkable);
  const cells: number[] = [];
  for (let i = 0; i < canvas.area; i++) if (region[i]) cells.push(i);
  return cells;
}

function toMap(canvas: Canvas, seed: number, spawn: { leader: Pose; follower: Pose }): GameMap {
  const terrain: string[] = [];
  for (let y = 0; y < canvas.height; y++) {
    let row = '';
    for (let x = 0; x < canvas.width; x++) row += LETTERS[canvas.terrain[y * canvas.width + x]];
    terrain.push(row);
  }
  return {
    format: MAP_FORMAT,
    version: MAP_FORMAT_VERSION,
    name: `generated-${seed}`,
    seed,
    width: canvas.width,
    height: canvas.height,
    terrain,
    props: canvas.placed,
    spawn,
  };
}
