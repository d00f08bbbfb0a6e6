/**
 * The leader's side panel: the instruction box (Enter sends), End Turn, the feedback and Cancel
 * controls of the follower's turn, and every instruction marked done, cancelled, current, or not
 * yet seen by the follower. What is enabled comes from the view's
 * legal actions, and the length limit from the game's config. No key meant as text is lost: the
 * box keeps the focus after sending, and takes the keys typed while it does not have it.
 */
import { instructionLength, sanitizeInstruction } from '../../../shared/engine/actions';
import type { InstructionView } from '../../../shared/engine/playerView';
import { h, setChildren } from '../ui/dom';
import { InterjectionControls } from './interjections';
import { chordName, commandKey, keyHelp, type Interjection } from './keyHelp';
import { currentTag, unfinishedInstructionNote } from './messages';
import type { GameConnection, GameView } from './session';

function instructionTag(instruction: InstructionView, view: GameView): string {
  if (instruction.status === 'done') return 'Done';
  if (instruction.status === 'cancelled') return 'Cancelled';
  if (!instruction.shown) return instruction.status === 'current' ? 'Next · not seen yet' : 'Not seen yet';
  return instruction.status === 'current' ? currentTag(view) : 'Queued';
}

export function instructionItem(instruction: InstructionView, tag: string): HTMLElement {
  return h(
    'li',
    { class: `${instruction.status}${instruction.shown ? '' : ' unsent'}`, 'data-instruction': instruction.id },
    h('span', { class: 'tag' }, tag),
    h('span', { class: 'text' }, instruction.text),
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
  private readonly endTurn = h('button', { type: 'button', class: 'end-turn', 'aria-keyshortcuts': 'Control+Enter Meta+Enter' }, 'End turn');
  private readonly list = h('ol', { class: 'instructions', 'aria-label': 'Instructions' });
  private readonly note = h('p', { class: 'instruction-note', hidden: true });
  /** Feedback and Cancel, in the follower's turn when the rules allow them. */
  readonly interjections: InterjectionControls;
  /** Their chords in the key help, when the game's rules have them. */
  private readonly interjectionKeys = h('span', { hidden: true });
  private view: GameView | null = null;

  constructor(private readonly session: GameConnection) {
    const form = h('form', { class: 'instruction-form' }, this.input, h('div', { class: 'row' }, this.count, this.send));
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      this.submit();
    });
    this.input.addEventListener('keydown', (event) => {
      // While an input method composes a character, Enter and Escape are its keys.
      if (event.isComposing) return;
      // Shift+Enter is a new line; Ctrl+Enter is the game screen's (End Turn).
      if (event.key === 'Enter' && !event.shiftKey && !event.ctrlKey && !event.metaKey) {
        event.preventDefault();
        this.submit();
      }
      // Escape gives the arrow keys back to the avatar while the box holds a draft.
      if (event.key === 'Escape') this.input.blur();
    });
    this.input.addEventListener('input', () => this.refresh());
    this.endTurn.addEventListener('click', () => {
      if (this.view?.legal.endTurn && this.session.connected) this.session.send({ type: 'endTurn' });
    });
    this.interjections = new InterjectionControls(session);
    this.element = h(
      'aside',
      { class: 'side leader-panel' },
      h('h2', {}, 'Write an instruction'),
      form,
      this.endTurn,
      this.interjections.element,
      h('h2', {}, 'Instructions'),
      this.note,
      this.list,
      keyHelp(
        h('kbd', {}, 'Enter'), ' sends the instruction, ', h('kbd', {}, commandKey()), '+', h('kbd', {}, 'Enter'), ' sends it and ends your turn', h('br'),
        'Typing anywhere writes in the box; the arrows move you while it is empty, or after ', h('kbd', {}, 'Esc'),
        this.interjectionKeys,
      ),
    );
    this.refresh();
  }

  update(view: GameView): void {
    const added = view.instructions.length > (this.view?.instructions.length ?? 0);
    if (!this.view) this.showInterjectionKeys(view);
    this.view = view;
    this.interjections.update(view);
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

  /** The chords of the interjections the game's rules have, under the others. */
  private showInterjectionKeys(view: GameView): void {
    const chord = (interjection: Interjection) => h('kbd', {}, chordName(interjection));
    const lines: (Node | string)[] = [];
    if (view.config.liveFeedback) lines.push(h('br'), "In the follower's turn: ", chord('positive'), ' good, ', chord('negative'), ' not that');
    if (view.config.cancelInstructions) lines.push(h('br'), chord('cancel'), " twice cancels the follower's instructions");
    setChildren(this.interjectionKeys, ...lines);
    this.interjectionKeys.hidden = lines.length === 0;
  }

  private canInstruct(): boolean {
    return this.view?.phase === 'playing' && this.view.legal.instruction && this.session.connected;
  }

  private canEndTurn(): boolean {
    return this.view?.phase === 'playing' && this.view.legal.endTurn && this.session.connected;
  }

  /** The most characters an instruction may have now (the view's legal actions say, or else the game's config). */
  private maxLength(): number | undefined {
    return this.view?.legal.maxInstructionLength ?? this.view?.config.maxInstructionLength;
  }

  private refresh(): void {
    const maxLength = this.maxLength();
    // Counted as the server counts: the cleaned text, in characters (code points).
    const length = instructionLength(sanitizeInstruction(this.input.value));
    const tooLong = maxLength !== undefined && length > maxLength;
    this.count.textContent = maxLength === undefined ? '' : `${length} / ${maxLength}`;
    this.count.classList.toggle('over', tooLong);
    this.send.disabled = !this.canInstruct() || length === 0 || tooLong;
    const canEnd = this.canEndTurn();
    this.endTurn.disabled = !canEnd;
    const myTurn = this.view?.turn.role === 'leader';
    this.endTurn.title = canEnd ? `Give control to the follower (${commandKey()}+Enter)` : myTurn ? 'Send an instruction first' : "Wait for the follower's turn to end";
  }

  /** Sends the box's instruction; true if it was sent. The box keeps the focus, for the next one. */
  private submit(): boolean {
    const text = sanitizeInstruction(this.input.value);
    const maxLength = this.view?.legal.maxInstructionLength ?? Infinity;
    if (!this.canInstruct() || text.length === 0 || instructionLength(text) > maxLength) return false;
    const sent = this.session.send({ type: 'instruction', text });
    if (sent) {
      this.input.value = '';
      // After Send was clicked, too: what is typed next is the next instruction.
      this.input.focus();
    }
    this.refresh();
    return sent;
  }

  /**
   * Ctrl+Enter (or Cmd+Enter) on the leader's turn: sends what the box holds, if anything, then
   * ends the turn, as Send and End turn would. Returns why nothing was done, or null.
   */
  sendAndEndTurn(): string | null {
    if (sanitizeInstruction(this.input.value) !== '') {
      if (!this.submit()) return unsentDraftText(this.input.value, this.maxLength());
    } else if (!this.canEndTurn()) {
      return 'Send an instruction first: the follower needs one for its turn.';
    }
    // Just after an instruction is sent the view does not list it yet, but the server has it, in order.
    this.session.send({ type: 'endTurn' });
    return null;
  }

  /**
   * A key meant as text, pressed while the box does not have the focus, is not lost: the box takes
   * the focus, with the caret at the end of its text, and the browser types the key into it (which
   * it does into whatever has the focus once the key's keydown is handled). Enter only focuses
   * the box. Keys stay with a text field, with a control they activate (Enter and Space on a
   * button or a link), and with a dialog; after the game, the box takes nothing. True if taken.
   */
  takeTyping(event: KeyboardEvent): boolean {
    const target = event.target instanceof HTMLElement ? event.target : null;
    if (this.view?.phase !== 'playing' || target === this.input || !target || isTextField(target) || target.closest('[role=dialog]')) return false;
    const plainEnter = event.key === 'Enter' && !event.ctrlKey && !event.metaKey && !event.altKey && !event.shiftKey;
    if (!plainEnter && !typesText(event)) return false;
    if ((event.key === 'Enter' || event.key === ' ') && activates(target)) return false;
    if (plainEnter) event.preventDefault();
    const end = this.input.value.length;
    this.input.setSelectionRange(end, end);
    this.input.focus();
    return true;
  }
}

/** Why a draft could not be sent by Ctrl+Enter: too long, or no instruction may be queued now. */
function unsentDraftText(draft: string, maxLength: number | undefined): string {
  const tooLong = maxLength !== undefined && instructionLength(sanitizeInstruction(draft)) > maxLength;
  return tooLong
    ? `The instruction is over ${maxLength} characters, so it was not sent and your turn goes on: shorten it first.`
    : 'No more instructions can be queued now, so your turn goes on: clear the box, then end your turn.';
}

/** A key that types a character (AltGr's too) or starts one (a dead key, as for an accent). */
function typesText(event: KeyboardEvent): boolean {
  if (event.metaKey || (event.ctrlKey && !event.getModifierState('AltGraph'))) return false;
  return [...event.key].length === 1 || event.key === 'Dead';
}

function isTextField(element: HTMLElement): boolean {
  return element.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(element.tagName);
}

/** An enabled control that Enter or Space presses. */
function activates(element: HTMLElement): boolean {
  const control = element.closest<HTMLElement>('button, a[href], summary, [role=button]');
  return control !== null && !(control instanceof HTMLButtonElement && control.disabled);
}
