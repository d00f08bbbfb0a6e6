/**
 * A study's side of its game's seats: only the study's workers, seated by the study API, play,
 * and only while their record says they may (at the play step, in their seat's role). The study
 * is told when a worker stops waiting and when the game starts and ends; a researcher's change
 * to a waiting worker's record has the worker's seat checked again (recheck).
 */
import { CloseCode, logger, ServerError } from '@colyseus/core';
import type { Role } from '../../shared/engine/state';
import type { EndReason } from '../../shared/log/format';
import { CLOSE_ROLE_CHANGED, CLOSE_STUDY_ENDED } from '../../shared/protocol/messages';
import type { ArmMeta } from '../../shared/study/arms';
import type { SeatVerdict } from '../../shared/study/worker';
import type { Awaitable, SeatRecord } from '../store/types';
import type { SeatedAgent } from './botSeat';
import { ownOption, type GameRules } from './roomOptions';
import type { SeatAgentStarter } from './seatAgents';
import type { Seat, Seats } from './seats';

/** Said to a study's worker whose session ended while it waited (or before it joined). */
export const STUDY_ENDED_MESSAGE = 'your part of the study has ended: no new game starts for you';
/** Said to a study's worker whose role changed while it waited (or before it joined): its page shows its next step. */
export const ROLE_CHANGED_MESSAGE = 'your role in the study has changed: your page shows what comes next';

/**
 * The option a study's game is made with when its partner is an arm's agent: the arm drawn for it
 * (server/study/studyGames.ts). Set by the study API only, as the study itself (STUDY_OPTION):
 * a client's join never names a study, and outside a study this option means nothing.
 */
export const ARM_OPTION = 'arm';

/** A game's arm: the arm's id, and which of the study's draws chose it. */
export interface DrawnArm {
  readonly id: string;
  readonly draw: number;
}

/** The game's arm, from its creation options' own fields only (P-124). */
export function armOf(options: unknown): DrawnArm | null {
  const arm = ownOption(options, ARM_OPTION);
  const id = ownOption(arm, 'id');
  const draw = ownOption(arm, 'draw');
  return typeof id === 'string' && Number.isInteger(draw) ? { id, draw: draw as number } : null;
}

/**
 * The option a study's seat is reserved with when the study keeps workers at one address apart
 * (`admission.sameAddressPartners: false`): the keyed hash of the address the worker asked to
 * play from (server/http/clientAddress.ts). Set by the study API only, as the study itself.
 */
export const ADDRESS_OPTION = 'addressTag';

export function addressOptionOf(options: unknown): string | undefined {
  const tag = ownOption(options, ADDRESS_OPTION);
  return typeof tag === 'string' ? tag : undefined;
}

/** What a study's game's log header records of its study besides the study's id. */
export interface StudyHeaderMeta {
  /** The SHA-256 of the study file the server loaded: which version of the study the game was played under. */
  readonly studyFileSha256: string;
  /** The game's arm, in a game made for one. */
  readonly arm?: ArmMeta;
}

/** What a study's game tells the study, and asks of it. A hook that throws is logged; the game goes on. */
export interface StudyGameHooks {
  /** The turn seconds the study sets (time.leaderTurnSeconds, followerTurnSeconds), if any. */
  turnSeconds(studyId: string): { leader?: number; follower?: number };
  /** The rules of the study's games (its `game`), or null if it leaves them to the server. */
  gameRules(studyId: string): GameRules | null;
  /** Whether the worker may still take its seat of `role`: at the play step (not done, blocked or screened out), in that role. */
  seatVerdict(studyId: string, workerId: string, role: Role): Awaitable<SeatVerdict>;
  /** The worker left the game it waited in, before it started. */
  stoppedWaiting(studyId: string, workerId: string): Awaitable<void>;
  /**
   * The worker's seat reservation here, made at `reservedAt` (epoch ms), ran out unused: it waits no
   * more, unless it holds a seat elsewhere or asked to play again since.
   */
  reservationLapsed(studyId: string, workerId: string, reservedAt: number): Awaitable<void>;
  /** `arm`: the game's arm, when its partner is an arm's agent. */
  gameStarted(studyId: string, gameId: string, seats: readonly SeatRecord[], arm: DrawnArm | null): Awaitable<void>;
  /** Starts the agent of the game's arm in its seat of `role`. */
  startArmAgent(studyId: string, arm: DrawnArm, role: Role): Promise<SeatedAgent>;
  /** What the game's log header records of the study (`meta.studyFileSha256`) and of its arm, if any (`meta.arm`). */
  headerMeta(studyId: string, arm: DrawnArm | null): StudyHeaderMeta;
  /** `leaver` is the role whose leaving ended the game ('abandoned'), or null. */
  gameEnded(studyId: string, gameId: string, seats: readonly SeatRecord[], end: { reason: EndReason; score: number; leaver: Role | null }): Awaitable<void>;
}

export class StudySeats {
  /** `studyId` is '' for a game of no study: then every worker plays, and nothing is told. */
  constructor(
    readonly studyId: string,
    private readonly hooks: StudyGameHooks | undefined,
    private readonly seats: Seats,
    private readonly roomId: string,
    /** The arm drawn for this game (its partner is the arm's agent), or null. */
    private readonly arm: DrawnArm | null,
  ) {}

  /** The agents this game's joins may ask for: the arm's, in a game made for an arm; else the server's. */
  seatAgents(server: SeatAgentStarter | undefined): SeatAgentStarter | undefined {
    const { hooks, arm, studyId } = this;
    return studyId && hooks && arm ? (role) => hooks.startArmAgent(studyId, arm, role) : server;
  }

  /** Whether this game was made for an arm: its participant must not learn which agent it plays with. */
  get armGame(): boolean {
    return this.arm !== null;
  }

  /** The log header's record of the study (`meta.study`, `meta.studyFileSha256`) and of the game's arm (`meta.arm`): nothing outside a study. */
  headerMeta(): { study?: string } & Partial<StudyHeaderMeta> {
    return this.studyId ? { study: this.studyId, ...this.hooks?.headerMeta(this.studyId, this.arm) } : {};
  }

  /** The turn seconds the study sets, if this is a study's game. */
  turnSeconds(): { leader?: number; follower?: number } | undefined {
    return this.studyId ? this.hooks?.turnSeconds(this.studyId) : undefined;
  }

  /** The rules the study's games are played by, if this is a study's game that sets them. */
  gameRules(): GameRules | null {
    return this.studyId ? (this.hooks?.gameRules(this.studyId) ?? null) : null;
  }

  /**
   * For a join to seat `role`: the joining worker's verdict and those of the workers waiting here
   * (each plays only while at the play step, in its seat's role), or null outside a study.
   */
  async verdictsOnJoin(workerId: string | undefined, role: Role): Promise<{ joining: SeatVerdict; waiting: [Seat, SeatVerdict][] } | null> {
    if (!this.studyId) return null;
    const waiting = [...this.seats.values()].filter((seat) => seat.record.workerId !== undefined);
    const [joining, ...others] = await Promise.all([this.verdict(workerId, role), ...waiting.map((seat) => this.verdict(seat.record.workerId, seat.role))]);
    return { joining, waiting: waiting.map((seat, i) => [seat, others[i]]) };
  }

  /**
   * The study's record of a worker waiting here changed (the researcher promoted or blocked it):
   * its seat is checked again at once, and the worker sent away if it may no longer take it while
   * the game still waits. Answers whether it was.
   */
  async recheck(workerId: string, waiting: () => boolean): Promise<boolean> {
    const seat = this.seats.heldBy(workerId);
    if (!seat || !waiting()) return false;
    const verdict = await this.verdict(workerId, seat.role);
    if (!waiting() || verdict === 'plays') return false;
    this.sendAway([[seat, verdict]]);
    return true;
  }

  /**
   * Workers who waited here but may no longer take their seat leave before a game could start
   * with them: one whose session has ended (it took the noPartner code, or was blocked), and one
   * whose role changed (it was promoted). The seat is free at once (a dropped player's window to
   * come back closes), the wait ends, and the pages, told why, show the worker's step.
   */
  sendAway(verdicts: readonly (readonly [Seat, SeatVerdict])[]): void {
    for (const [seat, verdict] of verdicts) {
      if (verdict === 'plays' || this.seats.get(seat.role) !== seat) continue; // gone meanwhile
      this.seats.vacate(seat);
      seat.reconnection?.reject(new ServerError(CloseCode.NORMAL_CLOSURE, verdict));
      if (seat.connected && verdict === 'ended') seat.client?.leave(CLOSE_STUDY_ENDED, STUDY_ENDED_MESSAGE);
      else if (seat.connected) seat.client?.leave(CLOSE_ROLE_CHANGED, ROLE_CHANGED_MESSAGE);
      this.stoppedWaiting(seat);
    }
  }

  /** The worker in `seat` (if any) left the game before it started. */
  stoppedWaiting(seat: Seat): void {
    const workerId = seat.record.workerId;
    if (workerId !== undefined) this.tell((hooks) => hooks.stoppedWaiting(this.studyId, workerId));
  }

  /** The reservation a worker (if any) was given for a seat here at `reservedAt` ran out before it came. */
  reservationLapsed(workerId: string | undefined, reservedAt: number): void {
    if (workerId !== undefined) this.tell((hooks) => hooks.reservationLapsed(this.studyId, workerId, reservedAt));
  }

  gameStarted(gameId: string, seats: readonly SeatRecord[]): void {
    this.tell((hooks) => hooks.gameStarted(this.studyId, gameId, seats, this.studyId ? this.arm : null));
  }

  gameEnded(gameId: string, seats: readonly SeatRecord[], end: { reason: EndReason; score: number; leaver: Role | null }): void {
    this.tell((hooks) => hooks.gameEnded(this.studyId, gameId, seats, end));
  }

  /** Whether a study's worker may take its seat of `role` (at the play step, in that role); anyone may, outside a study. */
  private async verdict(workerId: string | undefined, role: Role): Promise<SeatVerdict> {
    const hooks = this.hooks;
    if (!this.studyId || !hooks || workerId === undefined) return 'plays';
    try {
      return await hooks.seatVerdict(this.studyId, workerId, role);
    } catch (error) {
      logger.error(`game room ${this.roomId}: study ${this.studyId} could not look up worker ${workerId}:`, error);
      return 'ended';
    }
  }

  /** A study's game tells its study; the study's store failing is logged and the game goes on. */
  private tell(tell: (hooks: StudyGameHooks) => Awaitable<void>): void {
    const hooks = this.hooks;
    if (!this.studyId || !hooks) return;
    const failed = (error: unknown) => logger.error(`game room ${this.roomId}: study ${this.studyId} could not record the game:`, error);
    try {
      // Called at once (a store on this machine records it before the room goes on); a database's answer is not waited for.
      void Promise.resolve(tell(hooks)).catch(failed);
    } catch (error) {
      failed(error);
    }
  }
}
