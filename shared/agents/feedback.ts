/**
 * The leader's live feedback as a follower agent learns of it (rules.md, R-60, R-61): each signal
 * as it comes, with how many of the follower's steps in its turn came before it. Live it arrives
 * as the server's `feedback` notice; offline, from an accepted action's outcome (a log's
 * `feedback` event replayed). A signal can come only in the follower's turn, so the signals
 * heard are those of the follower's current turn, forgotten when it is over.
 */
import type { FeedbackSignal } from '../engine/actions';
import type { GameConfig } from '../engine/config';
import type { Outcome } from '../engine/transition';
import type { Notice } from '../protocol/messages';

export interface LeaderFeedback {
  readonly signal: FeedbackSignal;
  /** The follower's steps in its current turn before the signal (0: before its first). */
  readonly afterStep: number;
}

/** The feedback an accepted action gave, from its outcome (null for any other action). */
export function feedbackOfOutcome(outcome: Outcome, config: GameConfig): LeaderFeedback | null {
  return outcome.feedback ? { signal: outcome.feedback.signal, afterStep: config.followerSteps - outcome.turn.stepsLeft } : null;
}

/** The feedback a server's `notice` carries (null for a notice of another kind). */
export function feedbackOfNotice(notice: Notice): LeaderFeedback | null {
  return notice.kind === 'feedback' ? { signal: notice.signal, afterStep: notice.afterStep } : null;
}

/** The signals heard in the follower's current turn, in order. */
export class FeedbackHeard {
  private signals: readonly LeaderFeedback[] = [];

  heard(feedback: LeaderFeedback): void {
    this.signals = [...this.signals, feedback];
  }

  /** The follower's turn is over (or has not begun): its signals are forgotten. */
  forget(): void {
    if (this.signals.length > 0) this.signals = [];
  }

  /** The signals of the follower's current turn, in order: the same array until another is heard. */
  get inTurn(): readonly LeaderFeedback[] {
    return this.signals;
  }
}
