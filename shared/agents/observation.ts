/**
 * Agents' observations: a player's `playerView` (the engine's one cut of what a player knows) in
 * the shape agents read. For the follower, offline (evaluation, the environment) an
 * ObservationTracker keeps the follower's memory and builds the view from engine states; live,
 * the view arrives from the server and `observationFromView` turns it into the same observation.
 * The leader's observation (`leaderObservationFromView`) needs no memory beyond its view's.
 */
import type { Card } from '../engine/cards';
import type { Pose } from '../engine/hex';
import { FOLLOWER_CODES } from '../engine/actions';
import { allowsCode } from '../engine/legal';
import { MAP_FORMAT, MAP_FORMAT_VERSION, type GameMap } from '../engine/map';
import { emptyMemory, followerInstructions, playerView, remember, rememberDone, UNSEEN, type InstructionView, type KnownMap, type Memory, type PlayerView } from '../engine/playerView';
import type { GameState, Instruction } from '../engine/state';
import { viewFrom } from '../engine/view';
import type { Outcome } from '../engine/transition';
import { FeedbackHeard, feedbackOfOutcome, type LeaderFeedback } from './feedback';
import { LEADER_AGENT_CODES, LEADER_OBSERVATION_VERSION, OBSERVATION_VERSION, type FollowerObservation, type LeaderObservation } from './types';

export interface ObserveOptions {
  /** Add the full state (every card, the leader's pose, the queue): only for oracle agents. */
  readonly oracle?: boolean;
  /**
   * False for an agent that does not read the view's parts (`FollowerAgent.readsView`): they are
   * then built only if read after all, and the observation is not a plain object (see `ViewOnRead`).
   */
  readonly view?: boolean;
}

/**
 * One per episode: it holds the follower's memory of the episode's earlier moments, and the
 * leader's feedback in its turn.
 *
 * An observation's view (visibleCells, visibleCards, rememberedCards, leader, map, legal) needs
 * the memory's cells and cards, and building it is most of what an observation costs. For an
 * agent that does not read it (`view: false`: the oracles, which play from the recorded game) it
 * is built only if read after all: the moments witnessed meanwhile are kept, and remembered in
 * order (`remember`, the engine's definition) when a view is read, so that every observation
 * holds what it would have held built at once. Until then the tracker holds those moments' states:
 * an episode's worth at most, as a tracker lives for one episode. An eager observation after lazy
 * ones builds their views too, read or not (the memory moves past their moments): hosts give one
 * agent one kind.
 */
export class ObservationTracker {
  private memory: Memory = emptyMemory('follower');
  /** The moments witnessed since the memory last caught up, in order. */
  private unremembered: GameState[] = [];
  /** Observations whose view is not built yet, in order. */
  private unbuilt: Moment[] = [];
  private witnessed = 0;
  private last: GameState | null = null;
  /** The moment of the last observation. */
  private observed: Moment | null = null;
  /** The instructions marked DONE, as the memory will have them: every observation names its instructions at once. */
  private done: readonly Instruction[] = [];
  private readonly feedback = new FeedbackHeard();

  /**
   * The follower witnesses `state` (what is in its view then), as a live follower sees every
   * moment, and hears the leader's feedback if `outcome`, the action's that led to it, carries some.
   */
  witness(state: GameState, outcome?: Outcome): void {
    this.see(state);
    const feedback = outcome && feedbackOfOutcome(outcome, state.config);
    if (feedback) this.feedback.heard(feedback);
    if (state.turn.role !== 'follower') this.feedback.forget();
  }

  /** The follower's observation of `state`, after it witnessed it. */
  observe(state: GameState, options: ObserveOptions = {}): FollowerObservation {
    this.see(state);
    const moment: Moment = { witnessed: this.witnessed, state, seen: null, view: null };
    this.unbuilt.push(moment);
    this.observed = moment;
    const feedback = state.config.liveFeedback ? this.feedback.inTurn : null;
    const oracle = options.oracle ? oracleData(state) : undefined;
    if (options.view === false) return withExtras(new ViewOnRead(state, followerInstructions(state, this.done), () => moment.view ?? this.catchUp(moment)), feedback, oracle);
    const view = this.catchUp(moment);
    const observation: FollowerObservation = {
      version: OBSERVATION_VERSION,
      ...instructionFields(followerInstructions(state, this.done)),
      pose: copyPose(state.follower),
      stepsLeft: state.turn.role === 'follower' ? state.turn.stepsLeft : 0,
      turnsLeft: state.turnsLeft,
      score: state.score,
      ...view,
    };
    return withExtras(observation, feedback, oracle);
  }

  /**
   * The follower's playerView at its last observation (its memory then), built when called as a
   * lazy observation's view is: what a picture of that view is drawn from (`ActContext.frame`).
   */
  lastView(): () => PlayerView {
    const moment = this.observed;
    if (!moment) throw new Error('the follower has made no observation yet');
    return () => {
      if (!moment.seen) this.catchUp(moment);
      return moment.seen!;
    };
  }

  private see(state: GameState): void {
    this.done = rememberDone(this.done, state.previousInstruction);
    // remember is idempotent: a moment witnessed twice in a row (a host that witnesses every
    // moment and observes some of them) is kept once.
    if (state === this.last) return;
    this.last = state;
    this.unremembered.push(state);
    this.witnessed++;
  }

  /** Remembers the moments up to `moment`'s, building the views of the observations made up to it; its view. */
  private catchUp(moment: Moment): ViewFields {
    let remembered = this.witnessed - this.unremembered.length;
    let next = 0;
    for (;;) {
      // Observations made at the moment remembered last are built from the memory then.
      while (this.unbuilt.length > 0 && this.unbuilt[0].witnessed === remembered) {
        const made = this.unbuilt.shift()!;
        made.seen = playerView(made.state, 'follower', this.memory);
        made.view = viewFields(made.seen);
      }
      if (remembered >= moment.witnessed) break;
      this.memory = remember(this.memory, this.unremembered[next++]);
      remembered++;
    }
    if (next > 0) this.unremembered = next === this.unremembered.length ? [] : this.unremembered.slice(next);
    return moment.view!;
  }
}

/** `observation` as a plain object, its view included whether or not it was built yet: safe to spread. */
export function plainObservation(observation: FollowerObservation): FollowerObservation {
  return observation instanceof ViewOnRead ? observation.toJSON() : observation;
}

/**
 * An observation whose view is built when first read, for agents that do not read it. Its view's
 * fields are getters of its class, not its own properties: spreading it or listing its keys
 * leaves them out (JSON.stringify does not: `toJSON` gives them all, as `plainObservation` does).
 */
class ViewOnRead implements FollowerObservation {
  readonly version = OBSERVATION_VERSION;
  readonly instruction: FollowerObservation['instruction'];
  readonly previousInstruction: FollowerObservation['previousInstruction'];
  readonly pose: Pose;
  readonly stepsLeft: number;
  readonly turnsLeft: number;
  readonly score: number;

  readonly #view: () => ViewFields;

  constructor(state: GameState, instructions: readonly InstructionView[], view: () => ViewFields) {
    this.#view = view;
    const { instruction, previousInstruction } = instructionFields(instructions);
    this.instruction = instruction;
    this.previousInstruction = previousInstruction;
    this.pose = copyPose(state.follower);
    this.stepsLeft = state.turn.role === 'follower' ? state.turn.stepsLeft : 0;
    this.turnsLeft = state.turnsLeft;
    this.score = state.score;
  }

  get visibleCells(): FollowerObservation['visibleCells'] {
    return this.#view().visibleCells;
  }
  get visibleCards(): FollowerObservation['visibleCards'] {
    return this.#view().visibleCards;
  }
  get rememberedCards(): FollowerObservation['rememberedCards'] {
    return this.#view().rememberedCards;
  }
  get leader(): FollowerObservation['leader'] {
    return this.#view().leader;
  }
  get map(): FollowerObservation['map'] {
    return this.#view().map;
  }
  get legal(): FollowerObservation['legal'] {
    return this.#view().legal;
  }

  toJSON(): FollowerObservation {
    const { feedback, oracle } = this as FollowerObservation;
    return {
      version: this.version,
      instruction: this.instruction,
      previousInstruction: this.previousInstruction,
      pose: this.pose,
      stepsLeft: this.stepsLeft,
      turnsLeft: this.turnsLeft,
      score: this.score,
      ...this.#view(),
      ...(feedback && { feedback }),
      ...(oracle && { oracle }),
    };
  }
}

/** An observation's moment: how many were witnessed up to it, the state, and its view (the playerView and its fields) once built. */
interface Moment {
  readonly witnessed: number;
  readonly state: GameState;
  seen: PlayerView | null;
  view: ViewFields | null;
}

type ViewFields = Pick<FollowerObservation, 'visibleCells' | 'visibleCards' | 'rememberedCards' | 'leader' | 'map' | 'legal'>;

/**
 * The observation a follower's view gives (with the full state, for oracle agents only), with the
 * leader's feedback heard in the follower's turn in a game that has it (the view does not hold it).
 */
export function observationFromView(view: PlayerView, oracle?: FollowerObservation['oracle'], feedback: readonly LeaderFeedback[] = []): FollowerObservation {
  if (view.role !== 'follower') throw new Error("observations are built from the follower's view");
  const observation: FollowerObservation = {
    version: OBSERVATION_VERSION,
    ...instructionFields(view.instructions),
    pose: view.follower,
    stepsLeft: view.turn.stepsLeft ?? 0,
    turnsLeft: view.turnsLeft,
    score: view.score,
    ...viewFields(view),
  };
  return withExtras(observation, view.config.liveFeedback ? feedback : null, oracle);
}

/** The current instruction and the one finished before it, of the instructions a follower knows. */
function instructionFields(instructions: readonly InstructionView[]): Pick<FollowerObservation, 'instruction' | 'previousInstruction'> {
  let current: Instruction | null = null;
  let previous: FollowerObservation['previousInstruction'] = null;
  for (const instruction of instructions) {
    if (instruction.status === 'current') current = copyInstruction(instruction);
    else previous = instruction.status === 'cancelled' ? { ...copyInstruction(instruction), cancelled: true } : copyInstruction(instruction);
  }
  return { instruction: current, previousInstruction: previous };
}

function viewFields(view: PlayerView): ViewFields {
  return {
    visibleCells: viewFrom(view.map, view.follower, view.config.view).cells,
    visibleCards: view.cards,
    rememberedCards: view.rememberedCards,
    leader: view.leader,
    map: view.map,
    legal: FOLLOWER_CODES.filter((code) => allowsCode(view.legal, code)),
  };
}

/** The feedback heard in the follower's turn (null in a game without live feedback) and the oracle's data, after the rest. */
function withExtras(observation: FollowerObservation, feedback: readonly LeaderFeedback[] | null, oracle: FollowerObservation['oracle'] | undefined): FollowerObservation {
  const extended = observation as { -readonly [K in keyof FollowerObservation]: FollowerObservation[K] };
  if (feedback) extended.feedback = feedback.map((signal) => ({ signal: signal.signal, afterStep: signal.afterStep }));
  if (oracle) extended.oracle = oracle;
  return observation;
}

/** The observation a leader's view gives: the whole board, both players, every instruction, what it may do. */
export function leaderObservationFromView(view: PlayerView): LeaderObservation {
  if (view.role !== 'leader' || !view.leader) throw new Error("leader observations are built from the leader's view");
  const seen = viewFrom(view.map, view.follower, view.config.view).set;
  const myTurn = view.turn.role === 'leader';
  return {
    version: LEADER_OBSERVATION_VERSION,
    role: 'leader',
    map: view.map,
    pose: view.leader,
    follower: view.follower,
    cards: view.cards,
    visibleToFollower: view.cards.filter((card) => seen.has(card.y * view.map.width + card.x)).map((card) => card.id),
    invalidCards: view.invalidCards,
    instructions: view.instructions,
    turn: { role: view.turn.role, stepsLeft: view.turn.stepsLeft ?? 0 },
    stepsLeft: myTurn ? (view.turn.stepsLeft ?? 0) : 0,
    turnsLeft: view.turnsLeft,
    score: view.score,
    legal: LEADER_AGENT_CODES.filter((code) => allowsCode(view.legal, code)),
    canInstruct: view.legal.instruction,
    maxInstructionLength: view.legal.maxInstructionLength,
  };
}

const plannable = new WeakMap<KnownMap, GameMap>();

/**
 * A map to plan on from what the follower has seen: unseen cells are given as hills (obstacles),
 * so a plan only crosses known ground. One per known map (the same object while nothing new was seen).
 */
export function mapFromKnown(known: KnownMap): GameMap {
  let map = plannable.get(known);
  if (!map) {
    map = {
      format: MAP_FORMAT,
      version: MAP_FORMAT_VERSION,
      name: '',
      width: known.width,
      height: known.height,
      terrain: known.terrain.map((row) => row.replaceAll(UNSEEN, 'H')),
      props: [...known.props],
      ...(known.walls ? { walls: [...known.walls] } : {}),
    };
    plannable.set(known, map);
  }
  return map;
}

/**
 * The oracle's cards, by the state's cards they copy: a state's cards never change, and most steps
 * keep the last step's. Observations share them (read-only, as they share `map`); a frozen array
 * would be safer but slows the oracle's every lookup by a quarter.
 */
const oracleCards = new WeakMap<readonly Card[], readonly Card[]>();

/** The whole state's data an oracle agent is given (`FollowerObservation.oracle`). */
export function oracleData(state: GameState): NonNullable<FollowerObservation['oracle']> {
  let cards = oracleCards.get(state.cards);
  if (!cards) oracleCards.set(state.cards, (cards = state.cards.map(copyCard).sort((a, b) => a.id - b.id)));
  return {
    cards,
    leader: copyPose(state.leader),
    queue: state.queue.map(copyInstruction),
  };
}

function copyCard(card: Card): Card {
  return { id: card.id, x: card.x, y: card.y, color: card.color, shape: card.shape, count: card.count, selected: card.selected };
}

function copyPose(pose: Pose): Pose {
  return { x: pose.x, y: pose.y, heading: pose.heading };
}

function copyInstruction(instruction: Instruction): Instruction {
  return { id: instruction.id, text: instruction.text };
}
