/**
 * The leader's side panel: the instruction box (Enter sends), End Turn, and every instruction
 * marked done, current, or not yet seen by the follower. What is enabled comes from the view's
 * legal actions, and the length limit from the game's config.
 */
import { instructionLength, sanitizeInstruction } from '../../../shared/engine/actions';
import type { InstructionView } from '../../../shared/engine/playerView';
import { h, setChildren } from '../ui/dom';
import { keyHelp } from './keyHelp';
import { currentTag, unfinishedInstructionNote } from './messages';
import type { GameConnection, GameView } from './session';

function instructionTag(instruction: InstructionView, view: GameView): string {
  if (instruction.status === 'done') return 'Done';
  if (!instruction.shown) return instruction.status === 'current' ? 'Next · not seen yet' : 'Not seen yet';
  return instruction.status === 'current' ? currentTag(view) : 'Queued';
}

export function instructionItem(instruction: InstructionView, tag: string): HTMLElement {
  return h(
    'li',
    { class: `${instruction.status}${instruction.shown ? '' : ' unsent'}`, 'data-instruction': instruction.id },
    h('span', { class: 'tag' }, tag),
    instruction.text,
  );
}

export class LeaderPanel {
  readonly element: HTMLElement;
  private readonly input = h('textarea', {
    class: 'instruction-input',
    placeholder: 'Tell the follower what to do, e.g. "Turn left and pick up the two red stars by the pond."',
    'aria-label': 'Instruction',
  });
  private readonly count = h('span', { class: 'count' });
  private readonly send = h('button', { type: 'submit', class: 'send' }, 'Send');
  private readonly endTurn = h('button', { type: 'button', class: 'end-turn' }, 'End turn');
  private readonly list = h('ol', { class: 'instructions', 'aria-label': 'Instructions' });
  private readonly note = h('p', { class: 'instruction-note', hidden: true });
  private view: GameView | null = null;

  constructor(private readonly session: GameConnection) {
    const form = h('form', { class: 'instruction-form' }, this.input, h('div', { class: 'row' }, this.count, this.send));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.submit();
    });
    this.input.addEventListener('keydown', (event) => {
      if (event.key === 'Enter' && !event.shiftKey) {
        event.preventDefault();
        this.submit();
      }
      // Escape gives the arrow keys back to the avatar.
      if (event.key === 'Escape') this.input.blur();
    });
    this.input.addEventListener('input', () => this.refresh());
    this.endTurn.addEventListener('click', () => {
      if (this.view?.legal.endTurn && this.session.connected) this.session.send({ type: 'endTurn' });
    });
    this.element = h(
      'aside',
      { class: 'side leader-panel' },
      h('h2', {}, 'Write an instruction'),
      form,
      this.endTurn,
      h('h2', {}, 'Instructions'),
      this.note,
      this.list,
      keyHelp(h('kbd', {}, 'Enter'), ' sends the instruction, ', h('kbd', {}, 'Esc'), ' leaves the text box'),
    );
    this.refresh();
  }

  update(view: GameView): void {
    const added = view.instructions.length > (this.view?.instructions.length ?? 0);
    this.view = view;
    setChildren(
      this.list,
      ...(view.instructions.length === 0
        ? [h('li', { class: 'empty' }, 'No instructions yet.')]
        : view.instructions.map((instruction) => instructionItem(instruction, instructionTag(instruction, view)))),
    );
    const note = unfinishedInstructionNote(view);
    this.note.textContent = note ?? '';
    this.note.hidden = note === null;
    // A new instruction is shown even when the list is long enough to scroll.
    if (added) this.list.lastElementChild?.scrollIntoView({ block: 'nearest' });
    this.refresh();
  }

  private canInstruct(): boolean {
    return this.view?.phase === 'playing' && this.view.legal.instruction && this.session.connected;
  }

  private refresh(): void {
    const maxLength = this.view?.legal.maxInstructionLength ?? this.view?.config.maxInstructionLength;
    // Counted as the server counts: the cleaned text, in characters (code points).
    const length = instructionLength(sanitizeInstruction(this.input.value));
    const tooLong = maxLength !== undefined && length > maxLength;
    this.count.textContent = maxLength === undefined ? '' : `${length} / ${maxLength}`;
    this.count.classList.toggle('over', tooLong);
    this.send.disabled = !this.canInstruct() || length === 0 || tooLong;
    const canEnd = this.view?.phase === 'playing' && this.view.legal.endTurn && this.session.connected;
    this.endTurn.disabled = !canEnd;
    const myTurn = this.view?.turn.role === 'leader';
    this.endTurn.title = canEnd ? 'Give control to the follower' : myTurn ? 'Send an instruction first' : "Wait for the follower's turn to end";
  }

  private submit(): void {
    const text = sanitizeInstruction(this.input.value);
    const maxLength = this.view?.legal.maxInstructionLength ?? Infinity;
    if (!this.canInstruct() || text.length === 0 || instructionLength(text) > maxLength) return;
    if (this.session.send({ type: 'instruction', text })) {
      this.input.value = '';
      // The arrow keys go back to the avatar; a click or Tab returns to the box.
      this.input.blur();
    }
    this.refresh();
  }
}
