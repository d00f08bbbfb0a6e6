/**
 * The scripted leader: each turn it plans a valid set from the board as it will be once the
 * queued instructions are carried out, takes one card itself when it can reach it this turn,
 * gives the follower one templated instruction per remaining card, and ends its turn. A few
 * seeded habits make the rarer rules happen: it sometimes lets the turn time out (with an empty
 * queue that skips the follower's turn) or walks ahead with all its steps. Like any player, it
 * takes only legal actions: never a move into an obstacle.
 */
import { COLORS, COUNTS, SHAPES, allDifferent, describeCard, isValidSet, type Card, type CardFace } from '../engine/cards';
import { hexDistance, type Cell } from '../engine/hex';
import { Draw, type RngState } from '../engine/rng';
import type { GameState } from '../engine/state';
import type { Action, Move } from '../engine/actions';
import type { PathPlanner } from '../nav/pathing';

/**
 * What the scripted leader plans from: the board as the leader sees it. An engine state is one
 * (self-play), and so is a leader's observation (the scripted leader agent), `nextCardId` then
 * being the newest card's id + 1: a set's new cards always get the next ids.
 */
export type LeaderBoard = Pick<GameState, 'cards' | 'leader' | 'follower' | 'nextCardId'> & {
  readonly queue: readonly { readonly id: number }[];
  readonly turn: { readonly stepsLeft: number };
};

/** What an instruction asks for: step on this card so that its selection becomes `select`. */
export interface CardTask {
  readonly cardId: number;
  readonly select: boolean;
}

/** A scripted player's next action; an instruction carries the task the harness files under its id. */
export interface Decision {
  readonly action: Action;
  readonly task?: CardTask;
}

/** How often the leader does the unusual things (per turn). */
export type LeaderHabits = { readonly [K in keyof typeof LEADER_HABITS]: number };

export const LEADER_HABITS = {
  /** Lets the turn run out instead of ending it. */
  timeout: 0.05,
  /** Of those timeouts, the share where it does nothing at all (rule 3 when the queue is empty). */
  idleTimeout: 0.5,
  /** Takes a card itself when one of the planned cards is within this turn's steps. */
  help: 0.8,
  /** Spends its remaining steps walking toward the card the follower will finish on. */
  walkAhead: 0.3,
} as const;

/**
 * Planning calls this hundreds of times per plan. A local binding skips the getter that
 * ESM-to-CommonJS loaders such as tsx put on every use of an imported function, which in these
 * loops costs several times the call itself.
 */
const cellsApart = hexDistance;

const SELECT_TEMPLATES = ['pick up the CARD', 'get the CARD', 'go to the CARD', 'grab the CARD', 'collect the CARD'];
const UNSELECT_TEMPLATES = ['unselect the CARD', 'deselect the CARD', 'step on the CARD again to unselect it'];

interface SetPlan {
  /** The board's nextCardId when planned: a set made since then makes the plan stale. */
  readonly nextCardId: number;
  own: CardTask | null;
  /** In the order the follower should do them. */
  readonly forFollower: readonly CardTask[];
  issued: number;
  /** Id of the card the follower will finish on (the leader may walk toward it), or -1. */
  readonly followerEnd: number;
}

interface LeaderTurn {
  timeout: 'none' | 'idle' | 'late';
  helps: boolean;
  walksAhead: boolean;
  plan: SetPlan | null;
}

/** What a ScriptedLeader carries from one decision to the next, to resume it from (its planner's caches aside). */
export interface LeaderMemory {
  readonly draw: RngState;
  readonly turn: Readonly<LeaderTurn>;
  readonly layout: Layout | null;
}

export class ScriptedLeader {
  private turn: LeaderTurn = { timeout: 'none', helps: false, walksAhead: false, plan: null };
  /** The board's valid sets and card distances, kept while no set is made. */
  private layout: Layout | null = null;

  /** A leader that goes on as the one `memory` was taken from would, planning with `paths` and writing its tasks into `tasks`. */
  static resume(paths: PathPlanner, tasks: ReadonlyMap<number, CardTask>, memory: LeaderMemory, habits: LeaderHabits = LEADER_HABITS): ScriptedLeader {
    const leader = new ScriptedLeader(paths, new Draw(memory.draw), tasks, habits);
    leader.turn = copyTurn(memory.turn);
    leader.layout = memory.layout;
    return leader;
  }

  constructor(
    private readonly paths: PathPlanner,
    private readonly draw: Draw,
    private readonly tasks: ReadonlyMap<number, CardTask>,
    private readonly habits: LeaderHabits = LEADER_HABITS,
  ) {}

  /** Its memory now: copies, so that the leader going on does not change it. */
  memory(): LeaderMemory {
    return { draw: this.draw.state(), turn: copyTurn(this.turn), layout: this.layout };
  }

  startTurn(): void {
    const habits = this.habits;
    const timesOut = this.draw.chance(habits.timeout);
    this.turn = {
      timeout: !timesOut ? 'none' : this.draw.chance(habits.idleTimeout) ? 'idle' : 'late',
      helps: this.draw.chance(habits.help),
      walksAhead: this.draw.chance(habits.walkAhead),
      plan: null,
    };
  }

  decide(state: LeaderBoard): Decision {
    const turn = this.turn;
    if (turn.timeout === 'idle') return { action: { type: 'timeout', actor: 'server', role: 'leader' } };
    const plan = this.currentPlan(state);
    const stepsLeft = state.turn.stepsLeft;
    if (plan.own && stepsLeft > 0) {
      const walk = this.walkToOwnCard(state, plan);
      if (walk) return move(walk);
    }
    if (turn.walksAhead && stepsLeft > 0) {
      const walk = this.walkAhead(state, plan);
      if (walk) return move(walk);
      turn.walksAhead = false;
    }
    if (plan.issued < plan.forFollower.length) {
      const task = plan.forFollower[plan.issued++];
      return { action: { type: 'instruction', actor: 'leader', text: this.instructionText(state, task) }, task };
    }
    // End Turn needs a queued instruction; with none (no reachable set) only time can end the turn.
    if (turn.timeout === 'late' || state.queue.length === 0) {
      return { action: { type: 'timeout', actor: 'server', role: 'leader' } };
    }
    return { action: { type: 'endTurn', actor: 'leader' } };
  }

  /**
   * This turn's plan, made again after a set: the board and the selection then changed. When the
   * queued instructions already finish a set there is nothing to add (and nothing to compute).
   */
  private currentPlan(state: LeaderBoard): SetPlan {
    if (this.turn.plan?.nextCardId !== state.nextCardId) {
      const pending = this.pendingTasks(state);
      if (finishesSet(state.cards, pending)) {
        this.turn.plan = { nextCardId: state.nextCardId, own: null, forFollower: [], issued: 0, followerEnd: pending[pending.length - 1].cardId };
      } else {
        if (this.layout?.nextCardId !== state.nextCardId) this.layout = describeLayout(state);
        this.turn.plan = planSet(state, this.paths, this.layout, pending, this.turn.helps);
      }
    }
    return this.turn.plan;
  }

  private pendingTasks(state: LeaderBoard): CardTask[] {
    return state.queue.flatMap((instruction) => this.tasks.get(instruction.id) ?? []);
  }

  private walkToOwnCard(state: LeaderBoard, plan: SetPlan): Move | null {
    const own = plan.own!;
    const card = state.cards.find((c) => c.id === own.cardId);
    if (!card || card.selected === own.select) {
      plan.own = null;
      return null;
    }
    return this.paths.nextMove(state.cards, state.leader, card);
  }

  /** Toward the follower's last card, to be near it next turn; it stops next to it, not on it. */
  private walkAhead(state: LeaderBoard, plan: SetPlan): Move | null {
    const card = state.cards.find((c) => c.id === plan.followerEnd);
    if (!card || this.paths.cellsTo(state.cards, state.leader, card) <= 1) return null;
    return this.paths.nextMove(state.cards, state.leader, card);
  }

  private instructionText(state: LeaderBoard, task: CardTask): string {
    const card = state.cards.find((c) => c.id === task.cardId)!;
    const template = this.draw.pick(task.select ? SELECT_TEMPLATES : UNSELECT_TEMPLATES);
    return template.replace('CARD', describeCard(card));
  }
}

/** A turn and its plan are changed in place as the leader goes (plan.own, plan.issued); their tasks and layout never are. */
function copyTurn(turn: Readonly<LeaderTurn>): LeaderTurn {
  return { ...turn, plan: turn.plan && { ...turn.plan } };
}

function move(which: Move): Decision {
  return { action: { type: 'move', actor: 'leader', move: which } };
}

/**
 * What planning needs that changes only when a set is made: the board's valid sets as index
 * triples (cards by their index in the state, an order toggles keep) and the hex distances
 * between cards.
 */
interface Layout {
  readonly nextCardId: number;
  /** Valid sets, three card indices each, one after the other. */
  readonly sets: readonly number[];
  /** apart[i * n + j]: hex distance between cards i and j. */
  readonly apart: Int16Array;
}

function describeLayout(state: LeaderBoard): Layout {
  const { cards } = state;
  const n = cards.length;
  const apart = new Int16Array(n * n);
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) apart[i * n + j] = apart[j * n + i] = cellsApart(cards[i], cards[j]);
  }
  return { nextCardId: state.nextCardId, sets: validSets(cards), apart };
}

/**
 * Every valid set among `cards`, as index triples i < j < k in ascending order. allDifferent
 * compares pairs, so three pairwise compatible cards are a valid set: the pairs are bit rows, and
 * for each compatible pair i < j the k > j compatible with both are read off their rows' AND.
 */
export function validSets(cards: readonly CardFace[]): number[] {
  const n = cards.length;
  // Bit k of row i: cards i and k can be in one set.
  const words = Math.ceil(n / 32);
  const compatible = new Uint32Array(n * words);
  const faces = cards.map(faceCode);
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      if (!facesCompatible(faces[i], faces[j], cards[i], cards[j])) continue;
      compatible[i * words + (j >>> 5)] |= 1 << (j & 31);
      compatible[j * words + (i >>> 5)] |= 1 << (i & 31);
    }
  }
  // A plain array: a typed array this long is allocated outside the heap, at several times the cost.
  const sets: number[] = [];
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      if (!(compatible[i * words + (j >>> 5)] & (1 << (j & 31)))) continue;
      for (let word = (j + 1) >>> 5; word < words; word++) {
        let both = compatible[i * words + word] & compatible[j * words + word];
        if (word === (j + 1) >>> 5) both &= ~0 << ((j + 1) & 31);
        while (both !== 0) {
          const low = both & -both;
          both ^= low;
          sets.push(i, j, word * 32 + 31 - Math.clz32(low));
        }
      }
    }
  }
  return sets;
}

const FACES = COLORS.length * SHAPES.length * COUNTS.length;

function faceCode(face: CardFace): number {
  return (COLORS.indexOf(face.color) * SHAPES.length + SHAPES.indexOf(face.shape)) * COUNTS.length + COUNTS.indexOf(face.count);
}

/**
 * allDifferent for two faces, remembered by face codes (1 yes, 0 no, -1 not asked yet): planning
 * asks about hundreds of pairs per set made, and there are only 147 faces. It is the engine's
 * answer, cached; a pure function's cache is safe to share between games.
 */
const pairCompatible = new Int8Array(FACES * FACES).fill(-1);

function facesCompatible(codeA: number, codeB: number, a: CardFace, b: CardFace): number {
  const key = codeA * FACES + codeB;
  if (pairCompatible[key] < 0) pairCompatible[key] = allDifferent([a, b]) ? 1 : 0;
  return pairCompatible[key];
}

/**
 * The players' side of the planning problem: which cards are selected once the queued
 * instructions are done, and how far the players are from each card. Distances are straight hex
 * distances: cheap, and obstacles seldom change which set is best; the chosen cards are then
 * checked with real walks.
 */
interface Board {
  readonly layout: Layout;
  readonly cards: readonly Card[];
  readonly selected: Uint8Array;
  /** From the follower (or from its last queued card); -1 when it cannot reach the card. */
  readonly firstLeg: Int16Array;
  readonly fromLeader: Int16Array;
  /** Cells the leader may walk to a card of its own; -1 when it does not help this turn. */
  readonly leaderBudget: number;
}

/** The cards to step on for one set: the leader's (or -1) and the follower's in walking order. */
interface Assignment {
  readonly own: number;
  readonly route: readonly number[];
  readonly cost: number;
}

/** Attempts at a plan, each after finding that the follower cannot reach one of the chosen cards. */
const PLAN_ATTEMPTS = 3;

/**
 * Picks the valid set that is cheapest to reach from the projected selection: every card whose
 * projected selection differs from "in the set" must be stepped on (selected extras included,
 * which is how an invalid selection gets corrected). The cost is the follower's estimated walk.
 */
function planSet(state: LeaderBoard, paths: PathPlanner, layout: Layout, pending: readonly CardTask[], leaderHelps: boolean): SetPlan {
  const board = describeBoard(state, layout, pending, leaderHelps);
  for (let attempt = 0; attempt < PLAN_ATTEMPTS; attempt++) {
    const best = cheapestSet(board);
    if (!best) break;
    const walledOff = best.route.find((i) => paths.cellsTo(state.cards, state.follower, board.cards[i]) < 0);
    if (walledOff === undefined) return toPlan(state, paths, board, best, pending);
    board.firstLeg[walledOff] = -1;
  }
  return { nextCardId: state.nextCardId, own: null, forFollower: [], issued: 0, followerEnd: -1 };
}

/** True when the cards selected once the queued instructions are done form a valid set. */
function finishesSet(cards: readonly Card[], pending: readonly CardTask[]): boolean {
  if (pending.length === 0) return false;
  const finalSelection = (card: Card): boolean => {
    let selected = card.selected;
    for (const task of pending) if (task.cardId === card.id) selected = task.select;
    return selected;
  };
  return isValidSet(cards.filter(finalSelection));
}

function describeBoard(state: LeaderBoard, layout: Layout, pending: readonly CardTask[], leaderHelps: boolean): Board {
  const { cards, follower, leader } = state;
  const n = cards.length;
  const selected = new Uint8Array(n);
  for (let i = 0; i < n; i++) selected[i] = cards[i].selected ? 1 : 0;
  let followerStart: Cell = follower;
  for (const task of pending) {
    const i = cards.findIndex((card) => card.id === task.cardId);
    if (i < 0) continue;
    selected[i] = task.select ? 1 : 0;
    // After its queued instructions the follower stands on the last one's card.
    followerStart = cards[i];
  }
  const firstLeg = new Int16Array(n);
  const fromLeader = new Int16Array(n);
  for (let i = 0; i < n; i++) {
    firstLeg[i] = cellsApart(followerStart, cards[i]);
    fromLeader[i] = cellsApart(leader, cards[i]);
  }
  return { layout, cards, selected, firstLeg, fromLeader, leaderBudget: leaderHelps ? state.turn.stepsLeft : -1 };
}

/** The cheapest assignment over all valid sets. It runs for every plan, so it hardly allocates. */
function cheapestSet(board: Board): Assignment | null {
  const { selected } = board;
  const { sets } = board.layout;
  const extras: number[] = [];
  for (let i = 0; i < selected.length; i++) if (selected[i]) extras.push(i);
  const toStep = new Int32Array(extras.length + 3);
  // The best so far is kept in these, and made an Assignment once at the end.
  const bestRoute = new Int32Array(extras.length + 3);
  let bestLength = -1;
  let bestOwn = -1;
  let bestCost = Infinity;
  for (let s = 0; s < sets.length; s += 3) {
    const a = sets[s];
    const b = sets[s + 1];
    const c = sets[s + 2];
    let count = 0;
    for (const i of extras) if (i !== a && i !== b && i !== c) toStep[count++] = i;
    if (!selected[a]) toStep[count++] = a;
    if (!selected[b]) toStep[count++] = b;
    if (!selected[c]) toStep[count++] = c;
    const own = takeOwnCard(board, toStep, count);
    const routeLength = own < 0 ? count : count - 1;
    const cost = orderRoute(board, toStep, routeLength, bestCost);
    if (cost >= 0) {
      bestRoute.set(toStep.subarray(0, routeLength));
      bestLength = routeLength;
      bestOwn = own;
      bestCost = cost;
    }
  }
  return bestLength < 0 ? null : { own: bestOwn, route: Array.from(bestRoute.subarray(0, bestLength)), cost: bestCost };
}

/**
 * The leader takes the card nearest to it if it is within its steps this turn (by cells; turns are
 * checked later). Its index is returned and moved to the end of `toStep`, or -1.
 */
function takeOwnCard(board: Board, toStep: Int32Array, count: number): number {
  let at = -1;
  for (let position = 0; position < count; position++) {
    const distance = board.fromLeader[toStep[position]];
    if (distance <= board.leaderBudget && (at < 0 || distance < board.fromLeader[toStep[at]])) at = position;
  }
  if (at < 0) return -1;
  const own = toStep[at];
  toStep[at] = toStep[count - 1];
  toStep[count - 1] = own;
  return own;
}

/**
 * Orders the follower's cards nearest first, in place, and returns the walk's estimated length;
 * -1 as soon as it reaches `toBeat`, or when the follower cannot reach one of the cards.
 */
function orderRoute(board: Board, toStep: Int32Array, length: number, toBeat: number): number {
  const { firstLeg, cards } = board;
  const { apart } = board.layout;
  const n = cards.length;
  let cost = 0;
  for (let position = 0; position < length; position++) {
    let next = -1;
    let nextLeg = Infinity;
    for (let candidate = position; candidate < length; candidate++) {
      const i = toStep[candidate];
      if (firstLeg[i] < 0) return -1;
      const leg = position === 0 ? firstLeg[i] : apart[toStep[position - 1] * n + i];
      if (leg < nextLeg) {
        next = candidate;
        nextLeg = leg;
      }
    }
    cost += nextLeg;
    if (cost >= toBeat) return -1;
    const chosen = toStep[next];
    toStep[next] = toStep[position];
    toStep[position] = chosen;
  }
  return cost;
}

/** Turns the assignment into tasks; the leader's card goes to the follower if turns make it too far. */
function toPlan(state: LeaderBoard, paths: PathPlanner, board: Board, best: Assignment, pending: readonly CardTask[]): SetPlan {
  const task = (i: number): CardTask => ({ cardId: board.cards[i].id, select: !board.selected[i] });
  const { own, route } = best;
  const ownSteps = own >= 0 ? paths.pathLength(state.cards, state.leader, board.cards[own]) : -1;
  const ownFits = ownSteps >= 0 && ownSteps <= state.turn.stepsLeft;
  const forFollower = (own >= 0 && !ownFits ? [...route, own] : route).map(task);
  const last = forFollower[forFollower.length - 1] ?? pending[pending.length - 1];
  return {
    nextCardId: state.nextCardId,
    own: ownFits ? task(own) : null,
    forFollower,
    issued: 0,
    followerEnd: last ? last.cardId : -1,
  };
}
