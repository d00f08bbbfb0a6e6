/**
 * The leader's side panel: the instruction box (Enter sends), End Turn (disabled while the queue
 * is empty), and every instruction marked done, current, or not yet seen by the follower.
 */
import { MAX_INSTRUCTION_LENGTH } from '../../../shared/protocol/messages';
import { h, setChildren } from '../ui/dom';
import { keyHelp } from './keyHelp';
import type { GameSession, GameView, InstructionView } from './session';

function instructionTag(instruction: InstructionView): string {
  if (instruction.status === 'done') return 'Done';
  if (!instruction.sent) return instruction.status === 'current' ? 'Next · not seen yet' : 'Not seen yet';
  return instruction.status === 'current' ? 'Current' : 'Queued';
}

export function instructionItem(instruction: InstructionView, tag: string): HTMLElement {
  return h(
    'li',
    { class: `${instruction.status}${instruction.sent ? '' : ' unsent'}`, 'data-instruction': instruction.id },
    h('span', { class: 'tag' }, tag),
    instruction.text,
  );
}

export class LeaderPanel {
  readonly element: HTMLElement;
  private readonly input = h('textarea', {
    class: 'instruction-input',
    maxlength: MAX_INSTRUCTION_LENGTH,
    placeholder: 'Tell the follower what to do, e.g. "Turn left and pick up the two red stars by the pond."',
    'aria-label': 'Instruction',
  });
  private readonly count = h('span', { class: 'count' });
  private readonly send = h('button', { type: 'submit', class: 'send' }, 'Send');
  private readonly endTurn = h('button', { type: 'button', class: 'end-turn' }, 'End turn');
  private readonly list = h('ol', { class: 'instructions', 'aria-label': 'Instructions' });
  private view: GameView | null = null;

  constructor(private readonly session: GameSession) {
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
      if (this.myTurn()) this.session.send('endTurn');
    });
    this.element = h(
      'aside',
      { class: 'side leader-panel' },
      h('h2', {}, 'Write an instruction'),
      form,
      this.endTurn,
      h('h2', {}, 'Instructions'),
      this.list,
      keyHelp(h('kbd', {}, 'Enter'), ' sends the instruction, ', h('kbd', {}, 'Esc'), ' leaves the text box'),
    );
    this.refresh();
  }

  update(view: GameView): void {
    this.view = view;
    setChildren(
      this.list,
      ...(view.instructions.length === 0
        ? [h('li', { class: 'empty' }, 'No instructions yet.')]
        : view.instructions.map((instruction) => instructionItem(instruction, instructionTag(instruction)))),
    );
    this.refresh();
  }

  private myTurn(): boolean {
    return this.view?.phase === 'playing' && this.view.turnRole === 'leader' && this.session.connected;
  }

  private refresh(): void {
    const myTurn = this.myTurn();
    const length = this.input.value.trim().length;
    this.count.textContent = `${this.input.value.length} / ${MAX_INSTRUCTION_LENGTH}`;
    this.send.disabled = !myTurn || length === 0;
    const queued = this.view?.instructions.some((i) => i.status !== 'done') ?? false;
    this.endTurn.disabled = !myTurn || !queued;
    this.endTurn.title = queued ? 'Give control to the follower' : 'Send an instruction first';
  }

  private submit(): void {
    const text = this.input.value.trim();
    if (!this.myTurn() || text.length === 0) return;
    if (this.session.send('instruction', { text })) this.input.value = '';
    this.refresh();
  }
}
