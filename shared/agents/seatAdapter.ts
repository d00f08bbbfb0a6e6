/**
 * An agent in its seat, as every host plays it (a game played here, `playAgentGame`; the server's
 * agent seats; `cerealbar agent`): from the seat's view (its `playerView`, what a person in the
 * seat is shown) the role's observation, with the drawn part of that view for an agent shown
 * pictures (`ActContext.frame`); the agent asked when its plan needs it (PlanPlayer); and
 * each action of its answer read as the agent protocol reads a program's (protocol.ts) and made
 * the game's. Whether the game accepts the action is for the host to find out, through the
 * engine's checks.
 */
import type { PlayerAction } from '../engine/actions';
import { frameView } from '../frames/frame';
import type { InstructionView, PlayerView } from '../engine/playerView';
import type { Role } from '../engine/state';
import type { Notice } from '../protocol/messages';
import { followerPlayerAction, leaderPlayerAction } from './actions';
import { FeedbackHeard, feedbackOfNotice, type LeaderFeedback } from './feedback';
import { leaderObservationFromView, observationFromView } from './observation';
import { followerSituation, PlanPlayer } from './plans';
import { isProblem, leaderActionReader, readFollowerAction, type AnswerProblem } from './protocol';
import type { ActContext, Answer, FollowerAgent, FollowerObservation, LeaderAgent } from './types';

/**
 * What the seat plays now: the game's action; nothing (`pass`: the agent lets its turn run out);
 * or an answer that is none of the seat's actions (`reason` says what it answered, after the
 * agent's name), which the host refuses without the game seeing it.
 */
export type SeatMove =
  | { readonly kind: 'action'; readonly action: PlayerAction }
  | { readonly kind: 'pass' }
  | { readonly kind: 'refused'; readonly reason: string };

/** The agent's answer to an observation: one action or a plan, in the seat's vocabulary (read by the adapter). */
type AgentAnswer = Answer<unknown> | Promise<Answer<unknown>>;

/**
 * How a host has its agent asked: `act` asks it, with what the host knows of the moment. A host
 * may first wait (for the agent's reset), note that the agent is thinking, or answer for it
 * (`[]`, a pass).
 */
export type AskAgent = (act: (context?: ActContext) => AgentAnswer) => AgentAnswer;

const askNow: AskAgent = (act) => act();

export interface SeatAdapter {
  readonly role: Role;
  /** The seat's move now, in its turn: the plan's next action, or the first of a new answer when the plan needs one. */
  next(view: PlayerView, ask?: AskAgent): Promise<SeatMove>;
  /** The game refused the action last played: the rest of the plan is dropped. */
  refused(): void;
  /** The seat's turn is over (or begins): its plan is dropped, a pass is over, and a follower forgets the feedback of the turn. */
  turnEnded(): void;
  /** A notice the seat's player is sent, as a person's client is (a follower hears the leader's feedback). */
  hear(notice: Notice): void;
}

/** The follower's current instruction in `view`, or null. */
export function currentInstruction(view: PlayerView): InstructionView | null {
  return view.instructions.find((instruction) => instruction.status === 'current') ?? null;
}

/** What both roles' adapters share: the plan, and how an answer becomes a move. */
abstract class PlannedSeat implements SeatAdapter {
  abstract readonly role: Role;
  private readonly plans = new PlanPlayer<unknown>();
  /** Counts the turns ended, so that an answer that comes after its turn leaves no plan behind. */
  private turns = 0;

  async next(view: PlayerView, ask: AskAgent = askNow): Promise<SeatMove> {
    const turn = this.turns;
    // The agent's context: the host's, and the view to draw for an agent that is shown pictures.
    const entry = await this.plans.next(this.situation(view), () => ask((context) => this.act(view, { ...context, frame: () => frameView(view) })));
    if (turn !== this.turns) this.plans.turnEnded();
    return entry === null ? { kind: 'pass' } : this.move(entry, view);
  }

  refused(): void {
    this.plans.refused();
  }

  turnEnded(): void {
    this.turns += 1;
    this.plans.turnEnded();
  }

  abstract hear(notice: Notice): void;
  /** The situation a plan is made in (PlanPlayer): a plan made in another is dropped. */
  protected abstract situation(view: PlayerView): string;
  /** The agent asked, with its observation of `view`. */
  protected abstract act(view: PlayerView, context: ActContext): AgentAnswer;
  /** The game's action an answer's entry stands for, or why it stands for none. */
  protected abstract move(entry: unknown, view: PlayerView): SeatMove;
}

function refusedFor(problem: AnswerProblem): SeatMove {
  return { kind: 'refused', reason: problem.message };
}

export class LeaderSeatAdapter extends PlannedSeat {
  readonly role = 'leader';

  constructor(private readonly agent: LeaderAgent) {
    super();
  }

  /** A leader agent reads no notice: everything it may know is in its view. */
  hear(): void {}

  // Nothing changes under a leader in its own turn but by its own actions: a plan holds for the turn.
  protected situation(): string {
    return 'the leader turn';
  }

  protected act(view: PlayerView, context: ActContext): AgentAnswer {
    return this.agent.act(leaderObservationFromView(view), context);
  }

  protected move(entry: unknown, view: PlayerView): SeatMove {
    const action = leaderActionReader(view.legal.maxInstructionLength)(entry, 'action');
    return isProblem(action) ? refusedFor(action) : { kind: 'action', action: leaderPlayerAction(action) };
  }
}

export class FollowerSeatAdapter extends PlannedSeat {
  readonly role = 'follower';
  /** The leader's feedback heard in the follower's current turn. */
  private readonly feedback = new FeedbackHeard();

  /** `oracle`: the whole state's data, for an agent that asks for it, where the host has the state (a game played here). */
  constructor(
    private readonly agent: FollowerAgent,
    private readonly oracle?: () => FollowerObservation['oracle'],
  ) {
    super();
  }

  hear(notice: Notice): void {
    const feedback = feedbackOfNotice(notice);
    if (feedback) this.heard(feedback);
  }

  /** The leader's feedback, heard where no notice brings it (from an action's outcome, in a game played here). */
  heard(feedback: LeaderFeedback): void {
    this.feedback.heard(feedback);
  }

  override turnEnded(): void {
    super.turnEnded();
    this.feedback.forget();
  }

  protected situation(view: PlayerView): string {
    return followerSituation(currentInstruction(view), this.feedback.inTurn.length);
  }

  protected act(view: PlayerView, context: ActContext): AgentAnswer {
    const oracle = this.agent.wantsOracleObservation ? this.oracle?.() : undefined;
    return this.agent.act(observationFromView(view, oracle, this.feedback.inTurn), context);
  }

  protected move(entry: unknown): SeatMove {
    const action = readFollowerAction(entry, 'action');
    return isProblem(action) ? refusedFor(action) : { kind: 'action', action: followerPlayerAction(action) };
  }
}

/** The adapter for an agent in either seat. */
export function seatAdapterFor(seated: { readonly role: 'leader'; readonly agent: LeaderAgent } | { readonly role: 'follower'; readonly agent: FollowerAgent }): SeatAdapter {
  return seated.role === 'leader' ? new LeaderSeatAdapter(seated.agent) : new FollowerSeatAdapter(seated.agent);
}
