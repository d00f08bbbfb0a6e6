/** The bar across the top: whose turn it is at the cursor, the score, the turns and steps left. */
import type { GameState } from '../../../shared/engine/state';
import type { EndReason, LogEnd } from '../../../shared/log/format';

/** Why a game ended before its turns ran out, in words (the admin page's list of games says them too). */
export const END_REASON_WORDS: Readonly<Record<EndReason, string>> = {
  'turns-exhausted': 'no turns left',
  abandoned: 'a player left',
  interrupted: 'interrupted by a fault',
  'server-shutdown': 'the server shut down',
  'storage-failed': 'it could not be saved',
};
import { h, setChildren } from '../ui/dom';

type StatName = 'score' | 'turnsLeft' | 'stepsLeft';

const STAT_LABELS: Readonly<Record<StatName, string>> = { score: 'Score', turnsLeft: 'Turns left', stepsLeft: 'Steps left' };

export class StatusBar {
  readonly element: HTMLElement;
  private readonly turn = h('span', { class: 'turn' }, 'No game open');
  private readonly gameId = h('span', { class: 'replay-game-id' });
  private readonly live = h('span', { class: 'replay-live', hidden: true }, 'Live');
  private readonly values = {} as Record<StatName, HTMLElement>;

  constructor(...actions: HTMLElement[]) {
    const stats = (Object.keys(STAT_LABELS) as StatName[]).map((name) => {
      this.values[name] = h('span', { class: 'value' }, '–');
      return h('div', { class: 'stat', 'data-stat': name }, h('span', { class: 'label' }, STAT_LABELS[name]), this.values[name]);
    });
    this.element = h('header', { class: 'status-bar replay-status' }, h('h1', { class: 'role' }, 'Replay'), this.gameId, this.live, this.turn, ...stats, ...actions);
  }

  showGame(gameId: string): void {
    setChildren(this.gameId, gameId);
  }

  /** Marks the game as followed while it is being played. */
  showLive(live: boolean): void {
    this.live.hidden = !live;
  }

  /** The state at the cursor; `end` when the cursor is at the log's end line. */
  update(state: GameState, end: LogEnd | null = null): void {
    const over = state.gameOver || end !== null;
    this.element.dataset.replayTurn = over ? 'over' : state.turn.role;
    const ended = end && !state.gameOver ? `Game ended: ${END_REASON_WORDS[end.reason]}` : 'Game over';
    setChildren(this.turn, over ? ended : `${state.turn.role === 'leader' ? 'Leader' : 'Follower'}'s turn`);
    setChildren(this.values.score, state.score);
    setChildren(this.values.turnsLeft, state.turnsLeft);
    setChildren(this.values.stepsLeft, state.gameOver ? 0 : state.turn.stepsLeft);
  }
}
