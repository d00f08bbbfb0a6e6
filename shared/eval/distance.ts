/**
 * Geodesic distance on a world: the number of steps of the shortest path between two cells that
 * walks only on walkable cells (the d(n, m) of the path metrics in ./metrics.ts).
 */
import { HEADINGS, neighbourTable, type Cell } from '../engine/hex';
import { cellIndex, inBounds, type World } from '../engine/map';

/** Marks a cell the breadth-first search never reached in a distance row. */
const UNREACHED = -1;

/**
 * Shortest walkable path lengths between cells of one world, for evaluating many paths on it.
 *
 * Conventions:
 * - The two endpoints always count as walkable, since an agent stands on them; every cell strictly
 *   between them must be walkable. (So d is a true metric on walkable cells; with an unwalkable
 *   endpoint the triangle inequality may fail, which no agent path can exercise.)
 * - d(a, a) = 0; cells with no such path are `Infinity` apart; cells off the map are an error.
 * - Symmetric: a path reversed is a path between the same endpoints.
 *
 * One breadth-first search per source cell, run on first use and kept (at most width x height rows
 * of width x height entries: 625 x 625 int32 = 1.5 MB on a 25 x 25 map). Because d is symmetric, a
 * query reuses the row of either endpoint before running a new search.
 */
export class GeodesicDistance {
  private readonly rows = new Map<number, Int32Array>();
  private readonly neighbours: Int32Array;

  constructor(private readonly world: World) {
    this.neighbours = neighbourTable(world.width, world.height);
  }

  /** d(a, b) in steps. An arrow property, so it can be passed on as the metrics' `d`. */
  readonly between = (a: Cell, b: Cell): number => {
    const steps = this.stepsBetween(this.indexOf(a), this.indexOf(b));
    return steps === UNREACHED ? Infinity : steps;
  };

  /**
   * The distance field of `source`: d(source, c) at index y * width + x of each cell c, -1 where no
   * walk reaches. One search, kept and shared: callers must not write into it.
   */
  fieldFrom(source: Cell): Int32Array {
    const index = this.indexOf(source);
    return this.rows.get(index) ?? this.searchFrom(index);
  }

  private stepsBetween(from: number, to: number): number {
    const fromRow = this.rows.get(from);
    if (fromRow) return fromRow[to];
    const toRow = this.rows.get(to);
    if (toRow) return toRow[from];
    return this.searchFrom(from)[to];
  }

  private indexOf(cell: Cell): number {
    if (!inBounds(this.world, cell)) throw new RangeError(`cell (${cell.x}, ${cell.y}) is off the map`);
    return cellIndex(this.world, cell);
  }

  /**
   * Breadth-first search from `source`. Unwalkable cells get a distance (they may be the other
   * endpoint) but the search never continues through them; the source itself is always expanded.
   */
  private searchFrom(source: number): Int32Array {
    const { walkable } = this.world;
    const steps = new Int32Array(walkable.length).fill(UNREACHED);
    const queue = new Int32Array(walkable.length);
    let head = 0;
    let tail = 0;
    steps[source] = 0;
    queue[tail++] = source;
    while (head < tail) {
      const cell = queue[head++];
      const first = cell * HEADINGS.length;
      for (let d = first; d < first + HEADINGS.length; d++) {
        const next = this.neighbours[d];
        if (next < 0 || steps[next] !== UNREACHED) continue;
        // A walkable neighbour that no step reaches is behind a wall.
        if (walkable[next] && this.world.steps[d] < 0) continue;
        steps[next] = steps[cell] + 1;
        if (walkable[next]) queue[tail++] = next;
      }
    }
    this.rows.set(source, steps);
    return steps;
  }
}
