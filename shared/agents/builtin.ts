/**
 * Built-in follower agents, as baselines that need nothing but the observation:
 * - `random`: a uniformly random move each step, and DONE with probability 1/10, so that an
 *   episode lasts 10 actions on average. Seeded from the episode id: a run is reproducible.
 * - `heuristic`: reads the card an instruction names (colour, shape, count, "unselect") and walks
 *   to the nearest known card that fits; when it knows none, it heads for the place the
 *   instruction gives ("4 hexes ahead, slightly to the right"), if any, looking on the way; then it
 *   turns in place looking. It also follows bare moves ("turn left", "go forward 3").
 *   When it marks an instruction DONE without doing it, `gaveUp` says why, for the leader.
 */
import type { Card } from '../engine/cards';
import { hexDistance, type Cell } from '../engine/hex';
import { buildWorld, type GameMap } from '../engine/map';
import { UNSEEN, type KnownMap } from '../engine/playerView';
import { mapFromKnown } from './observation';
import { Draw, seedRng } from '../engine/rng';
import { MOVES, type Move } from '../engine/actions';
import { PathPlanner } from '../nav/pathing';
import { describeCardRequest, hintedCell, matchingCards, NUMBER_WORDS, readCardRequest, readPlaceHint, type CardRequest } from './instructions';
import type { AgentAction, EpisodeStart, FollowerAgent, FollowerObservation } from './types';

export const RANDOM_DONE_PROBABILITY = 0.1;

export class RandomAgent implements FollowerAgent {
  readonly name = 'random';
  private draw = new Draw(seedRng(0));

  reset(start: EpisodeStart): void {
    this.draw = new Draw(seedRng(hashString(start.episodeId)));
  }

  act(): AgentAction {
    return this.draw.chance(RANDOM_DONE_PROBABILITY) ? 'DONE' : this.draw.pick(MOVES);
  }
}

/** FNV-1a: a stable 32-bit seed from a string (episode ids are strings). */
export function hashString(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** Turns in place (six make a full circle) before the heuristic gives up looking for its card. */
export const MAX_LOOKING_TURNS = 6;
/** Repeats are capped at a follower turn's default steps: a larger number is more likely misread than meant. */
const MAX_REPEATS = 10;

/** Hexes toward a place given without a distance ("the red star on your left"): enough to bring that side into view. */
export const HINT_DEFAULT_DISTANCE = 2;
/** A walk toward a hinted place ends within this many hexes of it: from there the card is in view or near it. */
const HINT_REACHED = 1;

/** Where the instruction says the card is, as a cell, and the steps the walk there may still take. */
interface HintWalk {
  readonly cell: Cell;
  stepsLeft: number;
}

/** What the heuristic is doing for the current instruction. */
type Plan =
  | {
      readonly kind: 'card';
      readonly request: CardRequest;
      target: Card | null;
      turnsLooking: number;
      /** The walk toward the place the instruction gives; null when it gives none, or once done. */
      hint: HintWalk | null;
      /** Set when the instruction gives a place: it was told from where the follower reads it, walking forward as a person would. */
      readonly forwardOnly: boolean;
      /** The rest of a turn around begun instead of stepping back. */
      readonly turning: Move[];
    }
  | { readonly kind: 'moves'; readonly moves: Move[] }
  | { readonly kind: 'unread' };

/** What the heuristic understands, for a leader whose instruction it could not follow. */
export const HEURISTIC_UNDERSTANDS =
  'I understand instructions that name a card by its colour, shape and number ("pick up the 2 red stars", "unselect the green cube"), where it is from me ("3 hexes ahead, slightly to the left") and bare moves ("turn left", "go forward 3").';

export class HeuristicAgent implements FollowerAgent {
  readonly name = 'heuristic';
  /** Plans on the terrain the follower has seen (unseen cells are walls), rebuilt when it sees more. */
  private paths: { readonly on: KnownMap; readonly planner: PathPlanner } | null = null;
  /** Plans toward a hinted place, where unseen cells are taken as open ground. */
  private openPaths: { readonly on: KnownMap; readonly planner: PathPlanner } | null = null;
  private instructionId: number | null = null;
  private plan: Plan = { kind: 'moves', moves: [] };
  /** Why the last action, a DONE, ended the instruction without doing it, in the follower's words to the leader; null after any other action. */
  gaveUp: string | null = null;

  reset(_start: EpisodeStart): void {
    this.paths = null;
    this.openPaths = null;
    this.instructionId = null;
    this.gaveUp = null;
  }

  act(obs: FollowerObservation): AgentAction {
    this.gaveUp = null;
    if (!obs.instruction) return 'DONE';
    const text = obs.instruction.text;
    if (obs.instruction.id !== this.instructionId) {
      this.instructionId = obs.instruction.id;
      this.plan = planFor(text, obs);
    }
    if (this.plan.kind === 'unread') {
      this.gaveUp = `I did not understand "${text}", so I marked it done. ${HEURISTIC_UNDERSTANDS}`;
      return 'DONE';
    }
    if (this.plan.kind === 'moves') return this.plan.moves.shift() ?? 'DONE';
    const action = this.cardStep(this.plan, obs);
    if (action === 'DONE' && this.plan.target === null) {
      this.gaveUp = `I found no ${describeCardRequest(this.plan.request)} that I could reach, even after looking around, so I marked "${text}" done. I know only the cards I have seen.`;
    }
    return action;
  }

  /** Toward the target card; DONE once stepping on it changed its selection, or when no card fits. */
  private cardStep(plan: Extract<Plan, { kind: 'card' }>, obs: FollowerObservation): AgentAction {
    const known = knownCards(obs);
    if (plan.target) {
      const target = plan.target;
      const now = known.find((card) => card.id === target.id);
      // Standing on it with its selection changed, or with it gone (it completed a set): done.
      if (obs.pose.x === target.x && obs.pose.y === target.y && now?.selected !== target.selected) return 'DONE';
      // Elsewhere, take in what changed meanwhile; a card that vanished is replaced by the next best.
      plan.target = now ?? null;
    }
    const turn = plan.turning.shift();
    if (turn) return turn;
    plan.target ??= this.nearestMatch(plan.request, known, obs);
    const move = plan.target && this.planner(obs).nextMove(known, obs.pose, plan.target);
    if (move) return walk(plan, move);
    plan.target = null;
    // No known card fits (or none can be reached): toward where the instruction says it is, looking on the way.
    const towardHint = plan.hint && this.hintStep(plan.hint, known, obs);
    if (towardHint) return walk(plan, towardHint);
    plan.hint = null;
    // Nothing fits, or it cannot be reached: look around, then give up.
    if (plan.turnsLooking >= MAX_LOOKING_TURNS) return 'DONE';
    plan.turnsLooking++;
    return 'RR';
  }

  /** A step toward the hinted cell, or null once near it, out of steps for it, or when it cannot be reached. */
  private hintStep(hint: HintWalk, known: readonly Card[], obs: FollowerObservation): Move | null {
    if (hexDistance(obs.pose, hint.cell) <= HINT_REACHED || hint.stepsLeft <= 0) return null;
    hint.stepsLeft--;
    return this.openPlanner(obs).nextMoveToward(known, obs.pose, hint.cell);
  }

  /** The matching card with the shortest walk (other known cards are walls); ties by id. */
  private nearestMatch(request: CardRequest, known: readonly Card[], obs: FollowerObservation): Card | null {
    let best: { card: Card; steps: number } | null = null;
    for (const card of matchingCards(request, known)) {
      const steps = this.planner(obs).pathLength(known, obs.pose, card);
      if (steps >= 0 && (!best || steps < best.steps || (steps === best.steps && card.id < best.card.id))) best = { card, steps };
    }
    return best?.card ?? null;
  }

  private planner(obs: FollowerObservation): PathPlanner {
    if (this.paths?.on !== obs.map) this.paths = { on: obs.map, planner: new PathPlanner(buildWorld(mapFromKnown(obs.map))) };
    return this.paths.planner;
  }

  private openPlanner(obs: FollowerObservation): PathPlanner {
    if (this.openPaths?.on !== obs.map) this.openPaths = { on: obs.map, planner: new PathPlanner(buildWorld(openMapFromKnown(obs.map))) };
    return this.openPaths.planner;
  }
}

/** The known map with unseen cells taken as open ground, to walk toward a place the follower has only been told of. */
function openMapFromKnown(known: KnownMap): GameMap {
  return { ...mapFromKnown(known), terrain: known.terrain.map((row) => row.replaceAll(UNSEEN, 'G')) };
}

/**
 * The walk's next move; for an instruction that gave a place, a step back becomes a turn around:
 * walking forward the follower sees the cells it nears (and never steps onto a card it has not
 * seen), and it faces the way it went, as the leader who placed the next card supposed.
 */
function walk(plan: Extract<Plan, { kind: 'card' }>, move: Move): Move {
  if (!plan.forwardOnly || move !== 'MB') return move;
  plan.turning.push(...TURN_AROUND.slice(1));
  return TURN_AROUND[0];
}

/** Visible and remembered cards, by id (remembered ones as last seen). */
function knownCards(obs: FollowerObservation): Card[] {
  return [...obs.visibleCards, ...obs.rememberedCards].sort((a, b) => a.id - b.id);
}

function planFor(text: string, obs: FollowerObservation): Plan {
  const request = readCardRequest(text);
  if (request) {
    const hint = hintWalk(text, obs);
    return { kind: 'card', request, target: null, turnsLooking: 0, hint, forwardOnly: hint !== null, turning: [] };
  }
  const moves = readMoves(text);
  return moves.length > 0 ? { kind: 'moves', moves } : { kind: 'unread' };
}

/**
 * The walk toward the place an instruction gives, from where the follower reads it. It may take
 * about twice the steps of a straight walk there (detours, turns) before the follower looks around.
 */
function hintWalk(text: string, obs: FollowerObservation): HintWalk | null {
  const hint = readPlaceHint(text);
  if (!hint) return null;
  const distance = hint.distance ?? HINT_DEFAULT_DISTANCE;
  const cell = hintedCell(obs.pose, { distance, bearing: hint.bearing }, obs.map);
  return cell && { cell, stepsLeft: 2 * distance + 4 };
}

const TURN_AROUND: readonly Move[] = ['RR', 'RR', 'RR'];
const TURN_MOVES: Readonly<Record<string, readonly Move[]>> = { left: ['RL'], right: ['RR'], around: TURN_AROUND };
const MOVE_PHRASES = new RegExp(
  String.raw`turn\s+(around|left|right)|(?:go|move|walk|step)\s+(forward|ahead|straight|backwards?|back)` +
    String.raw`(?:\s+(\d+|${Object.keys(NUMBER_WORDS).join('|')})\b)?`,
  'g',
);

/**
 * Bare moves, in the order given: "turn left", "turn right", "turn around" (three right turns),
 * "go/move/walk/step forward|ahead|straight [N]" and "go/move/walk/step back|backward(s) [N]".
 */
export function readMoves(text: string): Move[] {
  const moves: Move[] = [];
  for (const [, turn, way, times] of text.toLowerCase().matchAll(MOVE_PHRASES)) {
    if (turn) moves.push(...TURN_MOVES[turn]);
    else moves.push(...Array<Move>(repeats(times)).fill(way.startsWith('back') ? 'MB' : 'MF'));
  }
  return moves;
}

function repeats(word: string | undefined): number {
  if (word === undefined) return 1;
  return Math.min(Math.max(/^\d+$/.test(word) ? Number(word) : NUMBER_WORDS[word], 1), MAX_REPEATS);
}
