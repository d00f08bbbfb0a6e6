/**
 * The leader's controls in the follower's turn, as far as the game's rules allow (the view's
 * `legal.feedback` and `legal.cancel`): Good and Not that (live feedback), and Cancel, which
 * cancels the current and every queued instruction and ends the follower's turn. Cancel asks to be
 * pressed again within a few seconds, so that a stray click or key does not empty the queue. The
 * server's `feedback` notice is the confirmation shown beside the controls.
 */
import type { FeedbackSignal } from '../../../shared/engine/actions';
import { h } from '../ui/dom';
import { crossIcon, thumbIcon } from '../ui/icons';
import { chordName, INTERJECTION_SHORTCUTS, type Interjection } from './keyHelp';
import { cancelConfirmText, FEEDBACK_WORDS, feedbackSentText } from './messages';
import type { GameConnection, GameView } from './session';

/** How long a first press of Cancel waits for the second. */
const CONFIRM_SECONDS = 3;
/** How long the confirmation of a feedback stays beside the controls. */
const SENT_SECONDS = 4;

const FEEDBACK_TITLES: Readonly<Record<FeedbackSignal, string>> = {
  positive: 'Tell the follower it is doing the right thing',
  negative: 'Tell the follower that is not what you meant',
};

/** The instructions a cancel would take: the current one and every queued one. */
export function pendingInstructions(view: Pick<GameView, 'instructions'>): number {
  return view.instructions.filter((instruction) => instruction.status === 'current' || instruction.status === 'queued').length;
}

export class InterjectionControls {
  readonly element: HTMLElement;
  private readonly feedback: Record<FeedbackSignal, HTMLButtonElement>;
  private readonly feedbackRow: HTMLElement;
  private readonly cancel: HTMLButtonElement;
  private readonly note = h('p', { class: 'interjection-note', role: 'status' });
  private view: GameView | null = null;
  /** When a first press of Cancel stops waiting for the second (epoch ms), or 0. */
  private armedUntil = 0;
  private disarm: ReturnType<typeof setTimeout> | undefined;
  private clearNote: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly session: GameConnection) {
    const feedbackButton = (signal: FeedbackSignal) =>
      h(
        'button',
        { type: 'button', class: `feedback ${signal}`, 'data-signal': signal, title: `${FEEDBACK_TITLES[signal]} (${chordName(signal)})`, 'aria-keyshortcuts': INTERJECTION_SHORTCUTS[signal] },
        thumbIcon(signal),
        h('span', {}, FEEDBACK_WORDS[signal]),
      );
    this.feedback = { positive: feedbackButton('positive'), negative: feedbackButton('negative') };
    for (const signal of ['positive', 'negative'] as const) this.feedback[signal].addEventListener('click', () => this.interject(signal));
    this.feedbackRow = h('div', { class: 'feedback-buttons' }, this.feedback.positive, this.feedback.negative);
    this.cancel = h(
      'button',
      { type: 'button', class: 'cancel-instructions', 'aria-keyshortcuts': INTERJECTION_SHORTCUTS.cancel },
      crossIcon(),
      h('span', { class: 'label' }),
    );
    this.cancel.addEventListener('click', () => this.interject('cancel'));
    this.element = h(
      'section',
      { class: 'interjections', 'aria-labelledby': 'interjections-heading', hidden: true },
      h('h2', { id: 'interjections-heading' }, "During the follower's turn"),
      this.feedbackRow,
      this.cancel,
      this.note,
    );
    this.showCancel();
  }

  update(view: GameView): void {
    this.view = view;
    const legal = view.phase === 'playing' ? view.legal : null;
    this.element.hidden = !legal?.feedback && !legal?.cancel;
    this.feedbackRow.hidden = !legal?.feedback;
    this.cancel.hidden = !legal?.cancel;
    if (!legal?.cancel) this.stopWaiting();
    this.refresh();
  }

  /** The connection came or went: the buttons follow it. */
  refresh(): void {
    const connected = this.session.connected;
    for (const button of Object.values(this.feedback)) button.disabled = !connected;
    this.cancel.disabled = !connected;
    this.showCancel();
  }

  /**
   * A press of a control or its chord. Feedback is sent at once; Cancel the second time within
   * CONFIRM_SECONDS. Returns why nothing was sent, when the rules do not allow it now.
   */
  interject(kind: Interjection): string | null {
    const view = this.view;
    const allowed = view?.phase === 'playing' && (kind === 'cancel' ? view.legal.cancel : view.legal.feedback);
    if (!view || !allowed) return kind === 'cancel' ? "Instructions can be cancelled only during the follower's turn." : "Feedback can be sent only during the follower's turn.";
    if (kind !== 'cancel') {
      this.session.send({ type: 'feedback', signal: kind });
      return null;
    }
    if (Date.now() < this.armedUntil) {
      this.stopWaiting();
      this.session.send({ type: 'cancel' });
      this.say('');
      return null;
    }
    this.armedUntil = Date.now() + CONFIRM_SECONDS * 1000;
    this.disarm = setTimeout(() => {
      this.stopWaiting();
      this.say('');
    }, CONFIRM_SECONDS * 1000);
    this.showCancel();
    this.say(cancelConfirmText(pendingInstructions(view), chordName('cancel'), CONFIRM_SECONDS));
    return null;
  }

  /** The server accepted a feedback (its `feedback` notice): said beside the controls for a few seconds. */
  sent(signal: FeedbackSignal, afterStep: number): void {
    this.say(feedbackSentText(signal, afterStep), SENT_SECONDS);
    this.note.dataset.signal = signal;
  }

  dispose(): void {
    clearTimeout(this.disarm);
    clearTimeout(this.clearNote);
  }

  private stopWaiting(): void {
    clearTimeout(this.disarm);
    this.armedUntil = 0;
    this.showCancel();
  }

  private showCancel(): void {
    const armed = this.armedUntil > 0;
    this.cancel.classList.toggle('armed', armed);
    this.cancel.querySelector('.label')!.textContent = armed ? 'Press again to cancel' : 'Cancel instructions';
    this.cancel.title = armed ? 'Cancel the instructions and end the follower\'s turn' : `Cancel the current and queued instructions: press twice (${chordName('cancel')} twice)`;
  }

  /** Words beside the controls; with `seconds`, they go after that long. */
  private say(text: string, seconds?: number): void {
    clearTimeout(this.clearNote);
    this.note.textContent = text;
    delete this.note.dataset.signal;
    if (seconds !== undefined) this.clearNote = setTimeout(() => this.say(''), seconds * 1000);
  }
}
