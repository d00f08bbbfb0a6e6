/**
 * The scripted follower a leader can play with when no human follower is wanted: it reads the
 * card the current instruction names (colour, shape, count), walks to the nearest such card and
 * marks the instruction DONE once the card changed, or at once when it cannot tell what is meant.
 * It sees the whole board (a stand-in until learned agents, which see only the follower's view).
 */
import type { GameState } from '../../shared/engine/state';
import type { Action } from '../../shared/engine/transition';
import { matchingCards, readCardRequest } from '../../shared/selfplay/instructions';
import { PathPlanner } from '../../shared/selfplay/pathing';

export class FollowerBot {
  private planner: PathPlanner | null = null;
  /** The card chosen for the current instruction. */
  private errand: { instructionId: number; cardId: number; wantSelected: boolean } | null = null;

  /** The bot's next action in its turn. */
  decide(state: GameState): Action {
    const done: Action = { type: 'done', actor: 'follower' };
    const instruction = state.queue[0];
    if (!instruction) return done;
    this.planner ??= new PathPlanner(state.world);
    if (this.errand?.instructionId !== instruction.id) this.errand = this.chooseCard(state, instruction.id, instruction.text);
    const card = this.errand && state.cards.find((c) => c.id === this.errand!.cardId);
    if (!card || card.selected === this.errand!.wantSelected) return done;
    const move = this.planner.nextMove(state.cards, state.follower, card);
    return move ? { type: 'move', actor: 'follower', move } : done;
  }

  private chooseCard(state: GameState, instructionId: number, text: string): FollowerBot['errand'] {
    const request = readCardRequest(text);
    if (!request) return null;
    const planner = this.planner!;
    const candidates = matchingCards(request, state.cards)
      .map((card) => ({ card, steps: planner.pathLength(state.cards, state.follower, card) }))
      .filter(({ steps }) => steps >= 0)
      .sort((a, b) => a.steps - b.steps || a.card.id - b.card.id);
    if (candidates.length === 0) return null;
    const card = candidates[0].card;
    return { instructionId, cardId: card.id, wantSelected: !card.selected };
  }
}
