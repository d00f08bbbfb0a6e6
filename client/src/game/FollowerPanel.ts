/**
 * The follower's side panel: only the previous and the current instruction (the server sends no
 * others), and "Done: next instruction". A current instruction shown in the leader's turn is one
 * the follower's last turn ended on: the panel says it is still to be done. The previous
 * instruction may be one the leader cancelled, and says so.
 */
import { h, setChildren } from '../ui/dom';
import { keyHelp } from './keyHelp';
import { instructionItem } from './LeaderPanel';
import { currentTag, unfinishedInstructionNote } from './messages';
import type { GameConnection, GameView } from './session';

export const DONE_KEY = 'd';

export class FollowerPanel {
  readonly element: HTMLElement;
  private readonly current = h('ol', { class: 'instructions follower-instructions', 'aria-label': 'Current instruction' });
  private readonly previous = h('ol', { class: 'instructions', 'aria-label': 'Previous instruction' });
  private readonly note = h('p', { class: 'instruction-note', hidden: true });
  private readonly done = h('button', { type: 'button', class: 'done-button' }, 'Done: next instruction');
  private view: GameView | null = null;

  constructor(private readonly session: GameConnection) {
    this.done.addEventListener('click', () => this.markDone());
    this.element = h(
      'aside',
      { class: 'side follower-panel' },
      h('h2', {}, 'Current instruction'),
      this.current,
      this.note,
      this.done,
      h('h2', {}, 'Previous instruction'),
      this.previous,
      keyHelp(h('kbd', {}, 'D'), ' done with the instruction'),
    );
  }

  update(view: GameView): void {
    this.view = view;
    const current = view.instructions.find((i) => i.status === 'current');
    // A cancelled instruction is finished too, without being done.
    const previous = view.instructions.filter((i) => i.status === 'done' || i.status === 'cancelled').at(-1);
    setChildren(this.current, current ? instructionItem(current, currentTag(view)) : h('li', { class: 'empty' }, 'No instruction yet: wait for the leader.'));
    const note = unfinishedInstructionNote(view);
    this.note.textContent = note ?? '';
    this.note.hidden = note === null;
    setChildren(this.previous, previous ? instructionItem(previous, previous.status === 'cancelled' ? 'Cancelled by the leader' : 'Done') : h('li', { class: 'empty' }, 'None yet.'));
    this.done.disabled = !this.canMarkDone();
  }

  markDone(): void {
    if (this.canMarkDone()) this.session.send({ type: 'done' });
  }

  private canMarkDone(): boolean {
    return this.view?.phase === 'playing' && this.view.legal.done && this.session.connected;
  }
}
