/**
 * An agent's seat in a live game: an agent (built in, or a program) plays the leader or the
 * follower from the server. It sees exactly what a human in that seat is sent (the seat's
 * playerView, with the seat's memory), and its actions go through the same checks as a person's.
 *
 * The agent is asked asynchronously and the room never waits for it: an answer (one action or a
 * plan) is played one action every `stepMs`, so that the partner can follow, and the agent is asked
 * again when the plan ends, when the moment it was made for has passed (the follower's current
 * instruction changed, the leader's feedback came) or when the game refused an action. An agent
 * that throws, does not answer before its turn ends, or keeps answering actions the game refuses
 * fails: the server's log says why, and the game's log records it (P-147). A leader agent that
 * fails loses only its turn: the seat passes and the turn runs out, as a human's would. A follower
 * agent is asked again, and after failing twice in a row on one instruction its seat marks that
 * instruction done, through the same checks as any action (recorded in the game's log too), so
 * that no game waits on an agent that cannot follow an instruction.
 */
import type { Clock, Delayed } from '@colyseus/core';
import { currentInstruction, seatAdapterFor, type SeatAdapter, type SeatMove } from '../../shared/agents/seatAdapter';
import { AgentRunStopped, type AgentIdentity } from '../../shared/agents/types';
import type { StartedAgent } from '../../shared/agents/node/registry';
import type { PlayerAction } from '../../shared/engine/actions';
import type { ActionError } from '../../shared/engine/errors';
import type { PlayerView } from '../../shared/engine/playerView';
import type { Role } from '../../shared/engine/state';
import type { AgentSeatFact, AgentSeatFailure } from '../../shared/log/format';
import type { Notice } from '../../shared/protocol/messages';

/** An agent ready to take a seat, with who it is for the log header. */
export type SeatedAgent = StartedAgent;

/** What the seat needs from its room. */
export interface SeatHost {
  readonly clock: Clock;
  /** Milliseconds between the agent's actions. */
  readonly stepMs: number;
  /** The seat's view now, as a human in the seat is sent it; null once the game is over. */
  view(): PlayerView | null;
  /** Events logged so far: the index the next action's event will have. */
  events(): number;
  /** Plays an action through a person's checks: the refusal, or null when it was applied. */
  play(action: PlayerAction): ActionError | null;
  /** Tells the partner why the agent did what it did (the heuristic follower giving up, an agent that stopped). */
  tellPartner(notice: Notice): void;
  /** A line in the server's log. */
  log(line: string): void;
  /** A line in the game's log: what the seat did about its agent, for the researcher (P-147). */
  record(fact: AgentSeatFact): void;
}

/** Refusals in a row after which the seat passes the rest of its turn: an agent that keeps answering what the game refuses must not spin. */
export const MAX_REFUSALS_IN_A_ROW = 10;

/** Failures in a row (a throw, a turn ended unanswered, refusals in a row) on one instruction after which a follower agent's seat marks it done. */
export const MAX_FAILURES_ON_AN_INSTRUCTION = 2;

/** What the leader is told when the follower's seat marks an instruction done for its failing agent. */
export function failedInstructionNote(text: string): string {
  return `I could not carry out "${text}": something went wrong on my side, so I marked it done.`;
}

/**
 * What the partner is told when the seat's agent stops for the rest of the game (it threw
 * AgentRunStopped: the server's LLM budget is spent, its endpoint stopped answering, P-150).
 */
export function agentStoppedNote(role: Role): string {
  const without = role === 'follower' ? 'each of your instructions is marked done for it' : 'its turns pass';
  return `The agent ${role} has stopped playing for the rest of this game: the server cannot run it any more. The game goes on without it (${without}); you may leave the game.`;
}

/** What the agent wants the partner told about its last answer: why the heuristic follower gave up on an instruction. */
function noteOf(seated: SeatedAgent): string | null {
  if (seated.role !== 'follower') return null;
  const gaveUp = (seated.agent as { gaveUp?: unknown }).gaveUp;
  return typeof gaveUp === 'string' ? gaveUp : null;
}

/** How an action names itself in the server's log. */
function shown(action: PlayerAction): string {
  const text = JSON.stringify(action);
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

export class AgentSeat {
  readonly role: Role;
  readonly identity: AgentIdentity;
  /** The agent in its seat: its observations, its plans, its answers made the game's actions. */
  private readonly adapter: SeatAdapter;

  /** The agent's reset: over before it is first asked (a program answers in order). */
  private ready: Promise<boolean> = Promise.resolve(false);
  private timer: Delayed | null = null;
  /** Counts the seat's turns, so that an answer that comes after its turn is known as late. */
  private turn = 0;
  /** The turn whose answer is awaited, or null: an agent is never asked twice at once. */
  private awaited: number | null = null;
  /** The seat passes the rest of this turn (a failure, too many refusals; an empty plan is the PlanPlayer's). */
  private passing = false;
  /** This turn waits for an answer asked in an earlier one, to play from once it comes. */
  private waitsForLate = false;
  /** What to tell the partner when the last answer's DONE is played. */
  private note: string | null = null;
  private refusals = 0;
  /** The agent's failures in a row on the follower's instruction `instruction` (none yet: null). */
  private failures: { readonly instruction: number; readonly count: number } | null = null;
  private stopped = false;
  /** The partner was told that the agent stopped for the rest of the game. */
  private toldStopped = false;

  constructor(
    private readonly seated: SeatedAgent,
    private readonly host: SeatHost,
  ) {
    this.role = seated.role;
    this.identity = seated.identity;
    this.adapter = seatAdapterFor(seated);
  }

  /** The log header's `meta.agents`, as self-play's: who plays the agent's seat. */
  headerMeta(): { agents: Partial<Record<Role, AgentIdentity>> } {
    return { agents: { [this.role]: this.identity } };
  }

  private get name(): string {
    return `the ${this.role} agent ${JSON.stringify(this.identity.spec)}`;
  }

  /** A new game: the agent is reset, and learns the world from its observations as a human does. */
  start(episodeId: string): void {
    const host = this.host;
    this.ready = Promise.resolve()
      .then(() => this.seated.agent.reset({ episodeId }))
      .then(
        () => true,
        (error: Error) => {
          host.log(`${this.name} could not be reset: ${error.message}; its seat passes every turn`);
          this.recordFailure('error');
          return false;
        },
      );
  }

  /** A notice the room gives the seat's player, as a person's client is sent it: the leader's feedback is heard. */
  hear(notice: Notice): void {
    this.adapter.hear(notice);
  }

  /** Its turn begins: it plays from the next step on, until the turn is over. */
  takeTurn(): void {
    this.turn += 1;
    this.adapter.turnEnded();
    this.passing = false;
    this.refusals = 0;
    this.waitsForLate = this.awaited !== null;
    if (!this.waitsForLate) return this.schedule(this.host.stepMs);
    const why = `has not answered yet since its turn ${this.awaited}`;
    // A turn that ended unanswered is a failure: the instruction is marked done after too many.
    this.recordFailure('late');
    if (this.countFailure() === 'give up') this.giveUp(why);
    else this.host.log(`${this.name} ${why}; its turn ${this.turn} waits for that answer`);
  }

  /** The game is over: no more steps, and the agent is closed (its process ends). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.timer?.clear();
    this.timer = null;
    try {
      await this.seated.agent.close?.();
    } catch (error) {
      this.host.log(`${this.name} did not close cleanly: ${(error as Error).message}`);
    }
  }

  private schedule(ms: number): void {
    this.timer?.clear();
    this.timer = this.stopped ? null : this.host.clock.setTimeout(() => this.step(), ms);
  }

  /** The seat's view while its turn `turn` goes on, or null. */
  private ownTurn(turn: number): PlayerView | null {
    const view = this.host.view();
    return !this.stopped && turn === this.turn && view !== null && !view.gameOver && view.turn.role === this.role ? view : null;
  }

  /** One step: the plan's next action, or the agent asked for a new plan (asynchronously; the room goes on meanwhile). */
  private step(): void {
    this.timer = null;
    const view = this.ownTurn(this.turn);
    if (!view || this.passing || this.awaited !== null) return;
    const turn = this.turn;
    const host = this.host;
    this.adapter
      .next(view, async (act) => {
        this.awaited = turn;
        const answer = (await this.ready) ? await act({ event: host.events() }) : [];
        this.note = noteOf(this.seated);
        return answer;
      })
      .then(
        (move) => this.chosen(turn, move),
        (error: Error) => this.failed(turn, error),
      );
  }

  /** The seat's move for turn `turn` (a pass plays nothing), played through the room's clock as every step is. */
  private chosen(turn: number, move: SeatMove): void {
    if (this.settle(turn)) return void (this.stopped || this.host.log(`${this.name} answered after its turn ${turn} had ended; the answer is dropped`));
    if (move.kind === 'pass') return;
    this.timer?.clear();
    this.timer = this.host.clock.setTimeout(() => this.play(turn, move), 0);
  }

  /**
   * An answer, or a failure, came for turn `turn`. True when it is too late for it: the game is
   * over, or its turn ended (the turn that waited for it goes on from the next step).
   */
  private settle(turn: number): boolean {
    this.awaited = null;
    if (this.stopped) return true;
    if (turn === this.turn) return false;
    if (this.waitsForLate) {
      this.waitsForLate = false;
      this.schedule(this.host.stepMs);
    }
    return true;
  }

  private failed(turn: number, error: Error): void {
    // An agent that stopped its run fails at every ask from now on: the partner learns it once.
    if (error instanceof AgentRunStopped && !this.toldStopped) {
      this.toldStopped = true;
      this.host.tellPartner({ kind: 'agentStopped', message: agentStoppedNote(this.role) });
    }
    // A failure after its turn was recorded as late when its next turn began.
    if (this.settle(turn)) return void (this.stopped || this.host.log(`${this.name} failed after its turn ${turn} had ended: ${error.message}`));
    this.failure('error', `failed: ${error.message}`);
  }

  private recordFailure(reason: AgentSeatFailure): void {
    this.host.record({ role: this.role, type: 'failed', reason });
  }

  /**
   * The agent failed in its turn (`reason` in the game's log, `why` in the server's): a leader's
   * seat passes the rest of the turn; a follower's seat asks again at the next step, or marks the
   * instruction done after MAX_FAILURES_ON_AN_INSTRUCTION failures in a row on it.
   */
  private failure(reason: AgentSeatFailure, why: string): void {
    this.recordFailure(reason);
    const verdict = this.countFailure();
    if (verdict === 'give up') return this.giveUp(why);
    if (verdict === 'pass') {
      this.host.log(`${this.name} ${why}; its seat passes this turn`);
      this.passing = true;
      return;
    }
    this.host.log(`${this.name} ${why}; it is asked again`);
    this.adapter.refused();
    this.refusals = 0;
    this.schedule(this.host.stepMs);
  }

  /** Counts a failure on the follower's current instruction: what the seat does about it. */
  private countFailure(): 'pass' | 'ask again' | 'give up' {
    const view = this.ownTurn(this.turn);
    const instruction = view && this.role === 'follower' ? currentInstruction(view) : null;
    if (!instruction) return 'pass';
    const count = this.failures?.instruction === instruction.id ? this.failures.count + 1 : 1;
    this.failures = { instruction: instruction.id, count };
    return count >= MAX_FAILURES_ON_AN_INSTRUCTION ? 'give up' : 'ask again';
  }

  /**
   * The follower agent failed on its current instruction too many times in a row: at the next
   * step the seat marks it done, as a person's DONE (the same checks), says why in the server's
   * log and tells the leader; then it goes on, asking the agent about the next instruction.
   */
  private giveUp(why: string): void {
    const instruction = this.failures!.instruction;
    const count = this.failures!.count;
    this.failures = null;
    const turn = this.turn;
    this.timer?.clear();
    this.timer = this.stopped
      ? null
      : this.host.clock.setTimeout(() => {
          this.timer = null;
          const view = this.ownTurn(turn);
          const current = view && currentInstruction(view);
          if (!current || current.id !== instruction) return;
          const refusal = this.host.play({ type: 'done' });
          const marked = refusal ? `could not mark it done: ${refusal.code}: ${refusal.message}` : 'marks it done';
          this.host.log(`${this.name} ${why}; after ${count} failures in a row on the instruction ${JSON.stringify(current.text)} its seat ${marked}`);
          if (refusal) return void (this.passing = true);
          this.host.record({ role: this.role, type: 'markedDone', instruction });
          this.host.tellPartner({ kind: 'followerGaveUp', message: failedInstructionNote(current.text) });
          if (turn === this.turn) this.schedule(this.host.stepMs);
        }, this.host.stepMs);
  }

  private play(turn: number, move: Exclude<SeatMove, { kind: 'pass' }>): void {
    this.timer = null;
    if (!this.ownTurn(turn)) return;
    if (move.kind === 'refused') return this.refused(move.reason);
    const action = move.action;
    const refusal = this.host.play(action);
    // Its own action may have begun its next turn (a leader whose follower's turn was skipped).
    if (turn !== this.turn) return;
    // A move into an obstacle is everyone's mistake (a person's too); other refusals are said in the log.
    if (refusal) return this.refused(refusal.code === 'MOVE_BLOCKED' ? null : `was refused ${shown(action)}: ${refusal.code}: ${refusal.message}`);
    this.refusals = 0;
    this.failures = null;
    if (action.type === 'done' && this.note !== null) this.host.tellPartner({ kind: 'followerGaveUp', message: this.note });
    this.schedule(this.host.stepMs);
  }

  /** The game refused the agent's answer: it is asked again at the next step, unless it keeps doing so. */
  private refused(why: string | null): void {
    this.adapter.refused();
    this.refusals += 1;
    if (this.refusals >= MAX_REFUSALS_IN_A_ROW) return this.failure('refused', `${why ?? 'kept moving into obstacles'}; after ${this.refusals} refusals in a row`);
    if (why !== null) this.host.log(`${this.name} ${why}`);
    this.schedule(this.host.stepMs);
  }
}
