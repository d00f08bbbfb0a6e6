/**
 * The scripted follower: it reads the leader's plan for the current instruction (the task the
 * harness filed under the instruction's id), walks onto that card and marks the instruction DONE.
 * A walk cut short by the end of its steps goes on next turn. Seeded habits: now and then it steps
 * on a card next to the right one instead (so invalid selections and corrections happen), lets its
 * turn time out.
 */
import type { Card } from '../engine/cards';
import { hexDistance } from '../engine/hex';
import type { Draw } from '../engine/rng';
import type { GameState, Instruction } from '../engine/state';
import type { Move } from '../engine/actions';
import type { CardTask, Decision } from './leader';
import type { PathPlanner } from '../nav/pathing';

/** How often the follower does the unusual things. */
export const FOLLOWER_HABITS = {
  /** Per instruction: goes to the card nearest the right one. */
  wrongCard: 0.06,
  /** Per turn: stops acting after a few moves and lets the turn time out. */
  timeout: 0.03,
} as const;

/** The card the follower is walking to for an instruction, and the selection that means "done". */
interface Errand {
  readonly instructionId: number;
  readonly cardId: number;
  readonly doneWhenSelected: boolean;
}

export class ScriptedFollower {
  private errand: Errand | null = null;
  private movesBeforeIdling = Infinity;
  private moves = 0;

  constructor(
    private readonly paths: PathPlanner,
    private readonly draw: Draw,
    private readonly tasks: ReadonlyMap<number, CardTask>,
  ) {}

  startTurn(state: GameState): void {
    this.moves = 0;
    this.movesBeforeIdling = this.draw.chance(FOLLOWER_HABITS.timeout) ? this.draw.int(0, state.config.followerSteps - 1) : Infinity;
  }

  decide(state: GameState): Decision {
    if (this.moves >= this.movesBeforeIdling) return { action: { type: 'timeout', actor: 'server', role: 'follower' } };
    const errand = this.errandFor(state, state.queue[0]);
    const card = state.cards.find((c) => c.id === errand.cardId);
    // Done when the card changed as asked, vanished in a set, or cannot be reached.
    const walk = card && card.selected !== errand.doneWhenSelected && this.paths.nextMove(state.cards, state.follower, card);
    if (!walk) return { action: { type: 'done', actor: 'follower' } };
    return this.move(walk);
  }

  private move(which: Move): Decision {
    this.moves++;
    return { action: { type: 'move', actor: 'follower', move: which } };
  }

  /** The errand for the current instruction, chosen when the instruction first comes up. */
  private errandFor(state: GameState, instruction: Instruction): Errand {
    if (this.errand?.instructionId === instruction.id) return this.errand;
    const task = this.tasks.get(instruction.id);
    const asked = task && state.cards.find((c) => c.id === task.cardId);
    const wrong = asked && this.draw.chance(FOLLOWER_HABITS.wrongCard) ? nearestOther(state.cards, asked) : undefined;
    this.errand = wrong
      ? { instructionId: instruction.id, cardId: wrong.id, doneWhenSelected: !wrong.selected }
      : { instructionId: instruction.id, cardId: task?.cardId ?? -1, doneWhenSelected: task?.select ?? false };
    return this.errand;
  }
}

/** The card a careless follower takes for `card`: the closest other one. */
function nearestOther(cards: readonly Card[], card: Card): Card | undefined {
  let best: Card | undefined;
  for (const other of cards) {
    if (other.id !== card.id && (!best || hexDistance(other, card) < hexDistance(best, card))) best = other;
  }
  return best;
}
