/**
 * Builds follower observations from engine states. The follower sees only its view cone (the
 * engine's `visibleCells`, the same function that decides what a human follower's camera shows),
 * so a tracker also keeps what the follower saw before: cards out of view now are remembered as
 * they were when last seen, until the follower sees their cell again without them.
 */
import type { Card } from '../engine/cards';
import type { Pose } from '../engine/hex';
import { cellIndex } from '../engine/map';
import type { GameState, Instruction } from '../engine/state';
import { viewFrom } from '../engine/view';
import { OBSERVATION_VERSION, type FollowerObservation, type RememberedCard } from './types';

export interface ObserveOptions {
  /** Add the full state (every card, the leader's pose, the queue): only for oracle agents. */
  readonly oracle?: boolean;
}

interface Sighting {
  readonly card: Card;
  /** The observation (1-based count) in which the card was last seen. */
  readonly observation: number;
}

/** One per episode: it remembers the cards seen in the earlier observations of that episode. */
export class ObservationTracker {
  private readonly sightings = new Map<number, Sighting>();
  private observations = 0;

  observe(state: GameState, options: ObserveOptions = {}): FollowerObservation {
    this.observations++;
    const view = viewFrom(state.world, state.follower, state.config.view);
    const inView = view.set;
    const visibleCards = state.cards.filter((card) => inView.has(cellIndex(state.world, card))).map(copyCard).sort(byId);
    this.forgetRemovedCards(inView, visibleCards, state.world);
    for (const card of visibleCards) this.sightings.set(card.id, { card, observation: this.observations });
    return {
      version: OBSERVATION_VERSION,
      instruction: copyInstruction(state.queue[0] ?? null),
      previousInstruction: copyInstruction(state.previousInstruction),
      pose: copyPose(state.follower),
      stepsLeft: state.turn.role === 'follower' ? state.turn.stepsLeft : 0,
      turnsLeft: state.turnsLeft,
      score: state.score,
      visibleCells: view.cells,
      visibleCards,
      rememberedCards: this.rememberedCards(visibleCards),
      leader: inView.has(cellIndex(state.world, state.leader)) ? copyPose(state.leader) : null,
      ...(options.oracle ? { oracle: oracleData(state) } : {}),
    };
  }

  /** A remembered card whose cell is in view again but which is not there any more was removed (by a set). */
  private forgetRemovedCards(inView: ReadonlySet<number>, visibleCards: readonly Card[], world: { width: number }): void {
    const visibleIds = new Set(visibleCards.map((card) => card.id));
    for (const [id, { card }] of this.sightings) {
      if (inView.has(cellIndex(world, card)) && !visibleIds.has(id)) this.sightings.delete(id);
    }
  }

  private rememberedCards(visibleCards: readonly Card[]): RememberedCard[] {
    const visibleIds = new Set(visibleCards.map((card) => card.id));
    return [...this.sightings.values()]
      .filter(({ card }) => !visibleIds.has(card.id))
      .map(({ card, observation }) => ({ ...card, seenAgo: this.observations - observation }))
      .sort(byId);
  }
}

function oracleData(state: GameState): NonNullable<FollowerObservation['oracle']> {
  return {
    cards: state.cards.map(copyCard).sort(byId),
    leader: copyPose(state.leader),
    queue: state.queue.map((instruction) => copyInstruction(instruction)!),
  };
}

const byId = (a: { id: number }, b: { id: number }): number => a.id - b.id;

// Explicit copies: an observation holds the named fields and nothing else, and never shares
// objects with the engine state.
function copyCard(card: Card): Card {
  return { id: card.id, x: card.x, y: card.y, color: card.color, shape: card.shape, count: card.count, selected: card.selected };
}

function copyPose(pose: Pose): Pose {
  return { x: pose.x, y: pose.y, heading: pose.heading };
}

function copyInstruction(instruction: Instruction | null): Instruction | null {
  return instruction && { id: instruction.id, text: instruction.text };
}
