/**
 * Playing an agent's answers (`Answer`): one action, or a plan of several. Every host (evaluation,
 * self-play, the server's bot seats, the live agent command) plays them the same way, through a
 * PlanPlayer per seat: a plan's actions in order, then the agent is asked again. The rest of a
 * plan is dropped when the agent's view changed in a way the plan could not know: the situation it
 * was made in changed (the follower's current instruction, a new signal of the leader's feedback),
 * the engine refused an action, or the turn ended. An empty plan passes: the agent is not asked
 * again before its next turn, and the host lets the turn run out, as a human's would.
 */
import type { Answer } from './types';

/** The actions of an answer, in order: a single action is a plan of one. */
export function planOf<A>(answer: Answer<A>): readonly A[] {
  return Array.isArray(answer) ? (answer as readonly A[]) : [answer as A];
}

export class PlanPlayer<A> {
  private plan: A[] = [];
  /** The situation the plan was made in (see `next`). */
  private madeIn: string | null = null;
  /** The agent passed: it is not asked again this turn. */
  private passed = false;

  /**
   * The action to play now: the plan's next one while the plan holds, else the first of the
   * agent's new answer, asked with `ask`. Null when the agent passes: play nothing more this turn.
   * `situation` names what a plan is made for besides the turn (the follower's current
   * instruction, for example); a plan made in another situation is dropped.
   */
  async next(situation: string, ask: () => Answer<A> | Promise<Answer<A>>): Promise<A | null> {
    return this.nextNow(situation, ask);
  }

  /**
   * `next` without a wait when there is nothing to wait for: the action itself when it is
   * planned or the agent answers at once (the built-in agents), a promise only for an agent that
   * answers later. Hosts that step many games (evaluation) save a turn of the event loop per action.
   */
  nextNow(situation: string, ask: () => Answer<A> | Promise<Answer<A>>): A | null | Promise<A | null> {
    const planned = this.planned(situation);
    if (planned !== undefined) return planned;
    const answer = ask();
    return isThenable(answer) ? Promise.resolve(answer).then((later) => this.answered(situation, later)) : this.answered(situation, answer);
  }

  /** The plan's next action, null after a pass, undefined when the agent must be asked. */
  private planned(situation: string): A | null | undefined {
    if (this.passed) return null;
    if (situation !== this.madeIn) this.plan = [];
    return this.plan.length > 0 ? this.plan.shift()! : undefined;
  }

  private answered(situation: string, answer: Answer<A>): A | null {
    const actions = planOf(answer);
    this.madeIn = situation;
    if (actions.length === 0) {
      this.passed = true;
      return null;
    }
    this.plan = actions.slice(1);
    return actions[0];
  }

  /** The engine refused the action last played: the rest of the plan is dropped. */
  refused(): void {
    this.plan = [];
  }

  /** The turn ended (or a new episode begins): the plan is dropped, and a pass is over. */
  turnEnded(): void {
    this.plan = [];
    this.madeIn = null;
    this.passed = false;
  }

  /** Actions of the current plan not played yet. */
  get pending(): readonly A[] {
    return this.plan;
  }

  /** The agent passed this turn. */
  get passing(): boolean {
    return this.passed;
  }
}

/**
 * The follower's situation for `PlanPlayer.next`: a plan is made for one instruction, and for the
 * leader's feedback heard so far in the turn (a new signal has the agent asked again).
 */
export function followerSituation(instruction: { readonly id: number } | null, feedbackHeard = 0): string {
  const made = instruction ? `instruction ${instruction.id}` : 'no instruction';
  return feedbackHeard > 0 ? `${made}, ${feedbackHeard} feedback` : made;
}

function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}
