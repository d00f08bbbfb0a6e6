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
import { emptyMemory, playerView, remember, UNSEEN, type KnownMap, type Memory, type PlayerView } from '../engine/playerView';
import type { GameState, Instruction } from '../engine/state';
import { viewFrom } from '../engine/view';
import type { Outcome } from '../engine/transition';
import { FeedbackHeard, feedbackOfOutcome, type LeaderFeedback } from './feedback';
import { LEADER_AGENT_CODES, LEADER_OBSERVATION_VERSION, OBSERVATION_VERSION, type FollowerObservation, type LeaderObservation } from './types';

export interface ObserveOptions {
  /** Add the full state (every card, the leader's pose, the queue): only for oracle agents. */
  readonly oracle?: boolean;
}

/** One per episode: it holds the follower's memory of the episode's earlier moments, and the leader's feedback in its turn. */
export class ObservationTracker {
  private memory: Memory = emptyMemory('follower');
  private readonly feedback = new FeedbackHeard();

  /**
   * The follower witnesses `state` (what is in its view then), as a live follower sees every
   * moment, and hears the leader's feedback if `outcome`, the action's that led to it, carries some.
   */
  witness(state: GameState, outcome?: Outcome): void {
    this.memory = remember(this.memory, state);
    const feedback = outcome && feedbackOfOutcome(outcome, state.config);
    if (feedback) this.feedback.heard(feedback);
    if (state.turn.role !== 'follower') this.feedback.forget();
  }

  /** The follower's view of `state`, after it witnessed it. */
  view(state: GameState): PlayerView {
    this.memory = remember(this.memory, state);
    return playerView(state, 'follower', this.memory);
  }

  observe(state: GameState, options: ObserveOptions = {}): FollowerObservation {
    return observationFromView(this.view(state), options.oracle ? oracleData(state) : undefined, this.feedback.inTurn);
  }
}

/**
 * The observation a follower's view gives (with the full state, for oracle agents only), with the
 * leader's feedback heard in the follower's turn in a game that has it (the view does not hold it).
 */
export function observationFromView(view: PlayerView, oracle?: FollowerObservation['oracle'], feedback: readonly LeaderFeedback[] = []): FollowerObservation {
  if (view.role !== 'follower') throw new Error("observations are built from the follower's view");
  let current: Instruction | null = null;
  let previous: FollowerObservation['previousInstruction'] = null;
  for (const instruction of view.instructions) {
    if (instruction.status === 'current') current = copyInstruction(instruction);
    else previous = instruction.status === 'cancelled' ? { ...copyInstruction(instruction), cancelled: true } : copyInstruction(instruction);
  }
  const observation: { -readonly [K in keyof FollowerObservation]: FollowerObservation[K] } = {
    version: OBSERVATION_VERSION,
    instruction: current,
    previousInstruction: previous,
    pose: view.follower,
    stepsLeft: view.turn.stepsLeft ?? 0,
    turnsLeft: view.turnsLeft,
    score: view.score,
    visibleCells: viewFrom(view.map, view.follower, view.config.view).cells,
    visibleCards: view.cards,
    rememberedCards: view.rememberedCards,
    leader: view.leader,
    map: view.map,
    legal: FOLLOWER_CODES.filter((code) => allowsCode(view.legal, code)),
  };
  if (view.config.liveFeedback) observation.feedback = feedback.map((signal) => ({ signal: signal.signal, afterStep: signal.afterStep }));
  if (oracle) observation.oracle = oracle;
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

function oracleData(state: GameState): NonNullable<FollowerObservation['oracle']> {
  return {
    cards: state.cards.map(copyCard).sort((a, b) => a.id - b.id),
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
