/**
 * What the batched follower environment looks up instead of computing at each step: per map, the
 * terrain and prop codes and the walls; per map size, grid and view, the grid position of every
 * cell and the follower's view cells from every pose (the engine's `viewFrom`, flattened).
 */
import type { GameConfig } from '../../engine/config';
import { HEADINGS, stepFrom, type Cell, type Pose } from '../../engine/hex';
import type { GameMap, World } from '../../engine/map';
import { viewFrom } from '../../engine/view';
import { PROP_CODE, TERRAIN_CODE_BY_CHAR, type GridSize } from '../observationArrays';

/** What the observation needs of one map and never changes: terrain and prop codes per cell, the walls as cell pairs. */
export class MapTables {
  readonly terrain: Uint8Array;
  readonly props: Uint8Array;
  /** Per wall: its cell, its side's bit, the cell across (-1 off the map), that side's bit. */
  readonly walls: Int32Array;
  /** The walls on either side of which each cell lies, by their offset in `walls`: cell c's are `walls[start[c]..start[c + 1])`. */
  readonly wallsAt: { readonly start: Int32Array; readonly walls: Int32Array };
  readonly size: SizeTables;

  constructor(
    readonly world: World,
    grid: GridSize,
    config: GameConfig,
  ) {
    const map: GameMap = world.map;
    const { width, height } = map;
    if (width > grid.width || height > grid.height) throw new RangeError(`the map is ${width} x ${height}, larger than the batch's ${grid.width} x ${grid.height} grid`);
    this.terrain = new Uint8Array(width * height);
    this.props = new Uint8Array(width * height);
    for (let y = 0; y < height; y++) {
      const row = map.terrain[y];
      for (let x = 0; x < width; x++) this.terrain[y * width + x] = TERRAIN_CODE_BY_CHAR[row.charCodeAt(x)];
    }
    // A later prop on the same cell writes over an earlier one, as the arrays' encoder does.
    for (const prop of map.props) this.props[prop.y * width + prop.x] = PROP_CODE[prop.type];
    const walls = map.walls ?? [];
    this.walls = new Int32Array(walls.length * 4);
    walls.forEach((wall, w) => {
      const side = HEADINGS.indexOf(wall.side);
      const there = stepFrom(wall, wall.side);
      const inside = there.x >= 0 && there.y >= 0 && there.x < width && there.y < height;
      this.walls.set([wall.y * width + wall.x, 1 << side, inside ? there.y * width + there.x : -1, 1 << ((side + 3) % 6)], w * 4);
    });
    this.wallsAt = wallsByCell(this.walls, width * height);
    this.size = sizeTables(map, grid, config);
  }
}

function wallsByCell(walls: Int32Array, cells: number): MapTables['wallsAt'] {
  const start = new Int32Array(cells + 1);
  const touching = (w: number): number[] => (walls[w + 2] >= 0 ? [walls[w], walls[w + 2]] : [walls[w]]);
  for (let w = 0; w < walls.length; w += 4) for (const cell of touching(w)) start[cell + 1]++;
  for (let c = 0; c < cells; c++) start[c + 1] += start[c];
  const filled = start.slice(0, cells);
  const byCell = new Int32Array(start[cells]);
  for (let w = 0; w < walls.length; w += 4) for (const cell of touching(w)) byCell[filled[cell]++] = w;
  return { start, walls: byCell };
}

/** What depends only on a map's size, the grid and the view: built once and shared by every map of that size. */
export interface SizeTables {
  /** Where each map cell lies in the padded grid. */
  readonly gridIndex: Int32Array;
  /** Each map cell as a cell, for the distance. */
  readonly cells: readonly Cell[];
  readonly view: ViewTable;
}

/** The follower's view cells (map indices) from every pose: those of pose (cell, heading) are `cells[start[p]..start[p + 1])`, p = cell·6 + heading. */
export interface ViewTable {
  readonly start: Int32Array;
  readonly cells: Int32Array;
}

const sizeTablesByKey = new Map<string, SizeTables>();

function sizeTables(dims: { width: number; height: number }, grid: GridSize, config: GameConfig): SizeTables {
  const key = `${dims.width}x${dims.height}/${grid.width}/${config.view.fovDegrees}/${config.view.range}`;
  let tables = sizeTablesByKey.get(key);
  if (!tables) {
    const gridIndex = new Int32Array(dims.width * dims.height);
    const cells: Cell[] = [];
    for (let y = 0; y < dims.height; y++) {
      for (let x = 0; x < dims.width; x++) {
        gridIndex[y * dims.width + x] = y * grid.width + x;
        cells.push({ x, y });
      }
    }
    tables = { gridIndex, cells, view: viewTable(dims, config) };
    sizeTablesByKey.set(key, tables);
  }
  return tables;
}

/** The engine's `viewFrom` for every pose, flattened. */
function viewTable(dims: { width: number; height: number }, config: GameConfig): ViewTable {
  const poses = dims.width * dims.height * HEADINGS.length;
  const start = new Int32Array(poses + 1);
  const lists: (readonly number[])[] = [];
  for (let p = 0; p < poses; p++) {
    const cell = Math.floor(p / HEADINGS.length);
    const pose: Pose = { x: cell % dims.width, y: Math.floor(cell / dims.width), heading: HEADINGS[p % HEADINGS.length] };
    const indices = viewFrom(dims, pose, config.view).indices;
    lists.push(indices);
    start[p + 1] = start[p] + indices.length;
  }
  const cells = new Int32Array(start[poses]);
  lists.forEach((indices, p) => cells.set(indices, start[p]));
  return { start, cells };
}
