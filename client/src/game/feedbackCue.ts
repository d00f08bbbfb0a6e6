/**
 * The leader's live feedback as the follower sees it, at once, over the world: a thumb up or down
 * and its words ("Good", "Not that"), so that it never rests on colour alone, fading after a few
 * seconds. A newer signal replaces the one showing.
 */
import type { FeedbackSignal } from '../../../shared/engine/actions';
import { h, setChildren } from '../ui/dom';
import { thumbIcon } from '../ui/icons';
import { FEEDBACK_WORDS } from './messages';

/** How long a signal stays (its last second fades: styles.css). */
const CUE_SECONDS = 4;

export class FeedbackCue {
  readonly element = h('div', { class: 'feedback-cue', role: 'status', hidden: true });
  private hide: ReturnType<typeof setTimeout> | undefined;

  show(signal: FeedbackSignal): void {
    clearTimeout(this.hide);
    setChildren(this.element, thumbIcon(signal), h('span', { class: 'words' }, h('strong', {}, FEEDBACK_WORDS[signal]), h('small', {}, "The leader's feedback")));
    this.element.dataset.signal = signal;
    // The fade starts again for a newer signal.
    this.element.hidden = true;
    void this.element.offsetWidth;
    this.element.hidden = false;
    this.hide = setTimeout(() => {
      this.element.hidden = true;
    }, CUE_SECONDS * 1000);
  }

  dispose(): void {
    clearTimeout(this.hide);
  }
}
