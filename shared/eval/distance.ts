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
 * One breadth-first search per source cell, kept (at most width x height rows of width x height
 * entries, 16 bits each: a map has at most 100 x 100 cells) and run only as far as the queries so far
 * needed: a BFS finds each cell's distance for good when it first reaches it, so a search stopped
 * there and resumed later gives what the whole search gives. Because d is symmetric, a query
 * reuses the row of either endpoint before starting a new search.
 */
export class GeodesicDistance {
  private readonly rows = new Map<number, DistanceRow>();
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
   * walk reaches. One whole search, kept and shared: callers must not write into it.
   */
  fieldFrom(source: Cell): Int16Array {
    const row = this.rowFrom(this.indexOf(source));
    this.search(row, -1);
    return row.steps;
  }

  /**
   * The search from `source`, for `stepsTo`: callers that ask one source about cell after cell (the
   * follower's, step by step) keep it rather than look it up each time.
   */
  searchFrom(source: Cell): DistanceRow {
    return this.rowFrom(this.indexOf(source));
  }

  /** d(row's source, cell at `index`) in steps, -1 where no walk reaches: the search goes on only as far as that cell. */
  stepsTo(row: DistanceRow, index: number): number {
    if (!(index >= 0 && index < row.steps.length && (index | 0) === index)) throw new RangeError(`cell index ${index} is off the map (0 to ${row.steps.length - 1})`);
    if (row.steps[index] === UNREACHED) this.search(row, index);
    return row.steps[index];
  }

  private stepsBetween(from: number, to: number): number {
    const fromRow = this.rows.get(from);
    if (fromRow) return this.stepsTo(fromRow, to);
    const toRow = this.rows.get(to);
    if (toRow) return this.stepsTo(toRow, from);
    return this.stepsTo(this.rowFrom(from), to);
  }

  private indexOf(cell: Cell): number {
    if (!inBounds(this.world, cell)) throw new RangeError(`cell (${cell.x}, ${cell.y}) is off the map`);
    return cellIndex(this.world, cell);
  }

  private rowFrom(source: number): DistanceRow {
    let row = this.rows.get(source);
    if (!row) {
      const cells = this.world.walkable.length;
      row = { steps: new Int16Array(cells).fill(UNREACHED), queue: new Uint16Array(cells), head: 0, tail: 1 };
      row.steps[source] = 0;
      row.queue[0] = source;
      this.rows.set(source, row);
    }
    return row;
  }

  /**
   * Breadth-first search, resumed until cell `until` has its distance (-1: to the end). Unwalkable
   * cells get a distance (they may be the other endpoint) but the search never continues through
   * them; the source itself is always expanded.
   */
  private search(row: DistanceRow, until: number): void {
    const { walkable, steps: moves } = this.world;
    const { steps, queue } = row;
    const neighbours = this.neighbours;
    let { head, tail } = row;
    while (head < tail && (until < 0 || steps[until] === UNREACHED)) {
      const cell = queue[head++];
      const first = cell * DIRECTIONS;
      for (let d = first; d < first + DIRECTIONS; d++) {
        const next = neighbours[d];
        if (next < 0 || steps[next] !== UNREACHED) continue;
        // A walkable neighbour that no step reaches is behind a wall.
        if (walkable[next] && moves[d] < 0) continue;
        steps[next] = steps[cell] + 1;
        if (walkable[next]) queue[tail++] = next;
      }
    }
    row.head = head;
    row.tail = tail;
    if (head === tail) row.queue = NO_QUEUE;
  }
}

/** One source's search: its distances so far (-1 not reached yet), and its queue, to resume it. */
export interface DistanceRow {
  readonly steps: Int16Array;
  /** Emptied once the search is done: most kept rows never get there, but those that do need no queue. */
  queue: Uint16Array;
  head: number;
  tail: number;
}

const DIRECTIONS = HEADINGS.length;
const NO_QUEUE = new Uint16Array(0);
