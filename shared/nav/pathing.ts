/**
 * Path planning for the scripted players: walks from a pose onto a target cell in few steps (MF,
 * MB, RL and RR each cost one), never entering another card's cell on the way, since that would
 * toggle the card.
 *
 * Per target, one BFS gives every cell's distance to it (cards other than the target are walls);
 * it is kept while the cards stay where they are (they only come and go when a set is made), so
 * each step of a walk is a lookup. The walk then moves to a closer cell along its heading's axis
 * (MF or MB: moving backwards saves turns), and otherwise turns once: one turn always reaches
 * either other axis. Among closer cells it prefers one from which it can go on without turning.
 * This is optimal in cells walked and close to optimal in turns (about 1% more steps than the
 * fewest, over whole boards), at a fraction of the cost of a search over (cell, heading) pairs.
 *
 * Cells and headings are integers here for speed; the tables that relate them come from the
 * engine's own geometry (stepFrom, rotateLeft, ...).
 */
import type { Card } from '../engine/cards';
import { HEADINGS, hexDistance, opposite, rotateLeft, rotateRight, type Cell, type Heading, type Pose } from '../engine/hex';
import { cellIndex, type World } from '../engine/map';
import type { Move } from '../engine/actions';

const DIRECTIONS = HEADINGS.length;
const headingIndex = (heading: Heading): number => HEADINGS.indexOf(heading);
const OPPOSITE = HEADINGS.map((h) => headingIndex(opposite(h)));
const LEFT_OF = HEADINGS.map((h) => headingIndex(rotateLeft(h)));
const RIGHT_OF = HEADINGS.map((h) => headingIndex(rotateRight(h)));
/** A heading and its opposite share an axis, named by the smaller heading index. */
const AXIS = HEADINGS.map((_, h) => Math.min(h, OPPOSITE[h]));
const NONE = -1;
/** A field's mark on a card other than its goal: a wall to the search, and no distance (like NONE, below 0). */
const CARD = -2;

/**
 * Distances to one goal, found by a BFS that is resumed only as far as a request needs: a walk
 * from a cell at distance d only ever looks at cells closer than d.
 */
interface Field {
  /** 0 on the goal, CARD on other cards, -1 where the search has not (or cannot) come. */
  readonly distance: Int16Array;
  readonly queue: Uint16Array;
  head: number;
  tail: number;
}

/**
 * Plans walks on one world. It remembers the card layout it last saw and drops its cached
 * distances when the layout changes; whether cards are selected does not matter. The cards it is
 * given are arrays never changed once made, as the engine's states hold them: it knows again an
 * array it was last given without looking into it.
 */
export class PathPlanner {
  /** neighbour[cell * 6 + heading]: the walkable cell one step that way, or -1. */
  private readonly neighbour: Int32Array;
  private layoutCells: number[] = [];
  /** The cards array the layout was last checked against. */
  private layoutOf: readonly Card[] | null = null;
  private readonly fields = new Map<number, Field>();
  /** Arrays of fields dropped with an old layout, reused for new goals: a planner searches many goals per game. */
  private readonly spare: { readonly distance: Int16Array; readonly queue: Uint16Array }[] = [];

  /**
   * One planner per world for callers that plan on it one after another (evaluation's episodes on
   * one recorded game): its answers do not depend on what it holds, and its distance fields come
   * back with the world.
   */
  static shared(world: World): PathPlanner {
    let planner = sharedPlanners.get(world);
    if (!planner) sharedPlanners.set(world, (planner = new PathPlanner(world)));
    return planner;
  }

  constructor(readonly world: World) {
    // For every cell and heading, the cell one step reaches (or NONE = -1): walls included.
    this.neighbour = world.steps;
  }

  /** The first move of a walk from `pose` onto `target`, or null when cards or obstacles wall it off, or no one may stand on it. */
  nextMove(cards: readonly Card[], pose: Pose, target: Cell): Move | null {
    const start = cellIndex(this.world, pose);
    const move = this.chooseMove(this.fieldFor(cards, target, start).distance, start, headingIndex(pose.heading));
    return move === NONE ? null : MOVE_NAMES[move];
  }

  /**
   * The first move of a walk toward `target`, a place rather than a cell to stand on (where an
   * instruction says a card is): as `nextMove` onto a cell one may stand on; toward one no one may
   * (a hill, water, a tree), a walk that ends next to it, so null once there.
   */
  nextMoveToward(cards: readonly Card[], pose: Pose, target: Cell): Move | null {
    const start = cellIndex(this.world, pose);
    const around = !this.standable(target);
    if (around && hexDistance(pose, target) <= 1) return null;
    const move = this.chooseMove(this.fieldFor(cards, target, start, around).distance, start, headingIndex(pose.heading));
    return move === NONE ? null : MOVE_NAMES[move];
  }

  /** Steps of the walk `nextMove` would make from `pose` onto `target`, or -1 when there is none (a target no one may stand on included). */
  pathLength(cards: readonly Card[], pose: Pose, target: Cell): number {
    const goal = cellIndex(this.world, target);
    let cell = cellIndex(this.world, pose);
    const field = this.fieldFor(cards, target, cell).distance;
    let h = headingIndex(pose.heading);
    for (let steps = 1; steps <= 2 * field.length; steps++) {
      const move = this.chooseMove(field, cell, h);
      if (move === NONE) return NONE;
      if (move === MF || move === MB) cell = this.neighbour[cell * DIRECTIONS + (move === MF ? h : OPPOSITE[h])];
      else h = move === RL ? LEFT_OF[h] : RIGHT_OF[h];
      if (cell === goal && (move === MF || move === MB)) return steps;
    }
    throw new Error(`walk to (${target.x}, ${target.y}) does not end`);
  }

  /** Cells (not counting turns) a walk from `from` onto `target` passes, or -1 when there is none. */
  cellsTo(cards: readonly Card[], from: Cell, target: Cell): number {
    const start = cellIndex(this.world, from);
    return this.distanceAt(this.fieldFor(cards, target, start).distance, start);
  }

  private standable(target: Cell): boolean {
    return this.world.walkable[cellIndex(this.world, target)] === 1;
  }

  /**
   * The field to `target`, searched far enough for a walk from `start`. With `around`, toward a
   * target no one may stand on: the field of its neighbours, a walk to the nearest of them.
   */
  private fieldFor(cards: readonly Card[], target: Cell, start: number, around = false): Field {
    this.syncLayout(cards);
    const goal = cellIndex(this.world, target);
    const cells = this.world.width * this.world.height;
    // A target no one may stand on has two fields: none (no walk onto it) and its neighbours' (around it).
    const key = around ? goal + cells : goal;
    let field = this.fields.get(key);
    if (!field) {
      const arrays = this.spare.pop() ?? { distance: new Int16Array(cells), queue: new Uint16Array(cells) };
      arrays.distance.fill(NONE);
      // The other cards are marked in the field itself, so that the search reads one array.
      for (const card of this.layoutCells) arrays.distance[card] = CARD;
      // The search goes out from the goal along steps out of each cell, which the walk takes back
      // in: a step between two walkable cells goes both ways, but one out of a cell no one may
      // stand on (a hill, a prop, or ground not yet seen, in a plan on the follower's known map)
      // has no way back. Such a goal is reached by no walk, and its field stays empty; searched,
      // it gives its neighbours distance 1, where a walk onto it would turn for ever: only a walk
      // around it, which ends next to it (`nextMoveToward`), searches it.
      const searched = around || this.standable(target);
      field = { distance: arrays.distance, queue: arrays.queue, head: 0, tail: searched ? 1 : 0 };
      field.distance[goal] = 0;
      field.queue[0] = goal;
      this.fields.set(key, field);
    }
    this.searchFor(field, start);
    return field;
  }

  /** Resumes the search until `cell`'s distance d is known and every cell at distance d - 1 is found. */
  private searchFor(field: Field, cell: number): void {
    const { distance, queue } = field;
    while (field.head < field.tail) {
      const known = this.distanceAt(distance, cell);
      const frontier = distance[queue[field.head]];
      if (known !== NONE && frontier >= known - 1) return;
      this.searchLevel(field, frontier);
    }
  }

  /** Expands every queued cell at distance `level`; cards other than the goal are walls (CARD). */
  private searchLevel(field: Field, level: number): void {
    const { distance, queue } = field;
    const { neighbour } = this;
    let { head, tail } = field;
    while (head < tail && distance[queue[head]] === level) {
      const cell = queue[head++];
      for (let h = cell * DIRECTIONS, end = h + DIRECTIONS; h < end; h++) {
        const next = neighbour[h];
        if (next === NONE || distance[next] !== NONE) continue;
        distance[next] = level + 1;
        queue[tail++] = next;
      }
    }
    field.head = head;
    field.tail = tail;
  }

  /** How far `cell` is from the goal; a player standing on a card (or on the goal) must first step off. */
  private distanceAt(field: Int16Array, cell: number): number {
    if (field[cell] > 0) return field[cell];
    let nearest = NONE;
    for (let h = cell * DIRECTIONS, end = h + DIRECTIONS; h < end; h++) {
      const next = this.neighbour[h];
      if (next !== NONE && field[next] >= 0 && (nearest === NONE || field[next] < nearest)) nearest = field[next];
    }
    return nearest === NONE ? NONE : nearest + 1;
  }

  /** True when `next` is a cell one closer to the goal than `distance` (never another card: those are -1). */
  private isCloser(field: Int16Array, next: number, distance: number): boolean {
    return next !== NONE && field[next] === distance - 1;
  }

  /** 0 when `cell` has a closer neighbour along `axis`, so that a walk there can go on straight; else 1. */
  private turnsNeeded(field: Int16Array, cell: number, axis: number): number {
    const distance = field[cell];
    if (distance === 0) return 0;
    const base = cell * DIRECTIONS;
    const straightOn =
      this.isCloser(field, this.neighbour[base + axis], distance) ||
      this.isCloser(field, this.neighbour[base + OPPOSITE[axis]], distance);
    return straightOn ? 0 : 1;
  }

  /** MF or MB to a closer cell when the heading allows it, else the turn toward the best axis. */
  private chooseMove(field: Int16Array, cell: number, h: number): number {
    const distance = this.distanceAt(field, cell);
    if (distance === NONE) return NONE;
    const base = cell * DIRECTIONS;
    const ahead = this.neighbour[base + h];
    const behind = this.neighbour[base + OPPOSITE[h]];
    const forwardTurns = this.isCloser(field, ahead, distance) ? this.turnsNeeded(field, ahead, AXIS[h]) : 2;
    const backwardTurns = this.isCloser(field, behind, distance) ? this.turnsNeeded(field, behind, AXIS[h]) : 2;
    if (forwardTurns < 2 || backwardTurns < 2) return forwardTurns <= backwardTurns ? MF : MB;
    let bestAxis = NONE;
    let bestTurns = 2;
    for (let direction = 0; direction < DIRECTIONS; direction++) {
      const next = this.neighbour[base + direction];
      if (!this.isCloser(field, next, distance)) continue;
      const turns = this.turnsNeeded(field, next, AXIS[direction]);
      if (turns < bestTurns) {
        bestAxis = AXIS[direction];
        bestTurns = turns;
      }
    }
    return AXIS[RIGHT_OF[h]] === bestAxis ? RR : RL;
  }

  /**
   * The layout is the cards' cells, in order: cards never move within a game, but games sharing
   * a planner (one per world: PathPlanner.shared, a batch's kept level) may give one id to cards
   * on different cells.
   */
  private syncLayout(cards: readonly Card[]): void {
    // A state's cards never change: the same array is the same layout (the usual case, asked at every step).
    if (cards === this.layoutOf) return;
    this.layoutOf = cards;
    const cells = this.layoutCells;
    if (cards.length === cells.length && cards.every((card, i) => cellIndex(this.world, card) === cells[i])) return;
    this.layoutCells = cards.map((card) => cellIndex(this.world, card));
    for (const { distance, queue } of this.fields.values()) this.spare.push({ distance, queue });
    this.fields.clear();
  }
}

const sharedPlanners = new WeakMap<World, PathPlanner>();

/** Moves as small integers in the walk code, named by MOVE_NAMES. */
const MF = 0;
const MB = 1;
const RL = 2;
const RR = 3;
const MOVE_NAMES: readonly Move[] = ['MF', 'MB', 'RL', 'RR'];

