/**
 * A study's games, seen from the study: a worker at the play step asks for a game and is seated
 * by the server in the study's pool, in the role its record allows (the client never names its
 * study, pool or role); when a game starts and ends, the workers' records learn of it, and the
 * endings give their completion codes (WorkerStore.recordGameEnd).
 */
import { logger, matchMaker, ServerError } from '@colyseus/core';
import { SeatReservationError } from '@colyseus/core/errors/SeatReservationError';
import type { Role } from '../../shared/engine/state';
import type { LogHeader } from '../../shared/log/format';
import { ROOM_NAME, type JoinOptions } from '../../shared/protocol/messages';
import { partnerShortages } from '../../shared/study/roles';
import { studyGameConfig, type Study } from '../../shared/study/studyFile';
import { seatVerdict, workerStep, type SeatVerdict, type WorkerRecord } from '../../shared/study/worker';
import { armMeta, armSeat, type Arm, type ArmMeta } from '../../shared/study/arms';
import type { SeatedAgent } from '../rooms/botSeat';
import { ADDRESS_OPTION, ARM_OPTION, GameRoom, STUDY_OPTION, type DrawnArm, type StudyGameHooks, type StudyHeaderMeta } from '../rooms/GameRoom';
import type { GameRules } from '../rooms/roomOptions';
import { COPY_NOTE } from '../store/PgGameStore';
import type { GameRecord, SeatRecord } from '../store/types';
import type { WorkerStore } from '../store/types';
import { WorkerError } from '../store/workerChanges';
import { startArmAgent } from './armAgents';
import { admitArmWorker } from './armWorkers';
import { armOfDraw } from './arms';
import type { LoadedStudy } from './loadStudy';
import { StudyRecords } from './studyRecords';

type SeatReservation = Awaited<ReturnType<typeof matchMaker.joinOrCreate>>;

/** The matchmaker found or made no room for the worker (a room that could not be made, a server shutting down). */
/**
 * How long a game another machine closed from the database's copy (its machine looked gone) stays
 * open in its workers' records: a machine that had only stalled takes its games back, and their
 * workers must not be given another game meanwhile (P-156).
 */
export const TAKEOVER_GRACE_MS = 120_000;

/** A worker whose last game is still open in its record, though no process lists it: its server may be stalled (P-156). */
export class GamePausedError extends Error {
  constructor() {
    super("your last game is not over: its server is not answering for the moment; your page will look for a game again in a few seconds");
    this.name = 'GamePausedError';
  }
}

export class NoSeatError extends Error {
  /** The matchmaker answered 503: no process takes a new game now (all busy or restarting), and a later request may find one. */
  readonly noProcessTakesGames: boolean;

  constructor(cause: unknown) {
    super(`no seat could be found: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'NoSeatError';
    this.noProcessTakesGames = cause instanceof ServerError && cause.code === 503;
  }
}

/** How long a request to play holds its worker's lock at most (the lock is released when it is answered). */
const SEATING_LOCK_SECONDS = 30;

export class StudyGames implements StudyGameHooks {
  /** Games' starts and ends, written to the workers' records in order, again until the store takes them. */
  private readonly records: StudyRecords;

  constructor(
    private readonly studies: ReadonlyMap<string, LoadedStudy>,
    private readonly workers: WorkerStore,
    /** Where the researcher is told what needs doing (`serve` prints it). */
    private readonly warn: (line: string) => void,
    /** Where the LLM arms' call records go, one file per game (docs/llm.md). */
    private readonly armRecordDir = '.',
    retryMs?: number,
    private readonly takeoverGraceMs = TAKEOVER_GRACE_MS,
  ) {
    this.records = new StudyRecords((line) => logger.error(line), retryMs);
  }

  /** Waits at most `ms` for the games' records to be written (at shutdown); those still waiting then. */
  recordsSettled(ms: number): Promise<string[]> {
    return this.records.settled(ms);
  }

  turnSeconds(studyId: string): { leader?: number; follower?: number } {
    const time = this.studies.get(studyId)?.time;
    return { leader: time?.leaderTurnSeconds, follower: time?.followerTurnSeconds };
  }

  gameRules(studyId: string): GameRules | null {
    const game = this.studies.get(studyId)?.game;
    return game ? { profile: game.rules, config: studyGameConfig(game) } : null;
  }

  async stoppedWaiting(studyId: string, workerId: string): Promise<void> {
    await this.workers.stopWaiting(studyId, workerId);
  }

  async reservationLapsed(studyId: string, workerId: string, reservedAt: number): Promise<void> {
    // A worker whose page asked again meanwhile waits in the game it was seated in then, or for the seat it was given since.
    if (!(await GameRoom.seatsWorker(studyId, workerId))) await this.workers.stopWaiting(studyId, workerId, reservedAt);
  }

  /**
   * The noPartner code, for a worker seated in one of the study's games who has waited there long
   * enough (WorkerStore.claimNoPartner): a worker who never took the seat it was given waits for nothing.
   */
  async claimNoPartner(study: Study, participantId: string): Promise<WorkerRecord> {
    if (study.arms) throw new WorkerError('WRONG_STEP', "in a study with arms nobody waits for a partner: a game starts as its participant takes its seat");
    if (!(await GameRoom.seatsWorker(study.id, participantId))) throw new WorkerError('WRONG_STEP', 'this worker is not waiting in a game: ask to play, and wait in the game for a partner');
    return this.workers.claimNoPartner(study, participantId);
  }

  async seatVerdict(studyId: string, workerId: string, role: Role): Promise<SeatVerdict> {
    const worker = await this.workers.get(studyId, workerId);
    return worker === null ? 'ended' : seatVerdict(workerStep(worker), worker.role, role);
  }

  /**
   * A seat for the worker in one of the study's games (waiting for a partner, or a new one; in a
   * study with arms, a game of its own with an arm's agent). The worker must be at the play step
   * and hold no seat already; in a study without arms its wait for a partner starts now.
   */
  async seat(study: Study, worker: WorkerRecord, address?: string): Promise<SeatReservation> {
    // A second request at the same time (another tab) is refused, whichever process it reaches:
    // the lock is in Colyseus's presence, which several processes share through Redis.
    const key = `cerealbar:seating:${JSON.stringify([study.id, worker.participantId])}`;
    if ((await matchMaker.presence.incr(key)) > 1) throw alreadySeated();
    try {
      await matchMaker.presence.expire(key, SEATING_LOCK_SECONDS);
      return await this.reserve(study, worker, address);
    } finally {
      await matchMaker.presence.del(key);
    }
  }

  /** `address`: the tag of the address the worker asked from, which keeps it apart from workers at the same (unless the study allows them). */
  private async reserve(study: Study, worker: WorkerRecord, address?: string): Promise<SeatReservation> {
    if (await GameRoom.seatsWorker(study.id, worker.participantId)) throw alreadySeated();
    // No process lists its game, yet its record says it goes on: a stalled machine's, taken over.
    if (worker.games.inProgress > 0) throw new GamePausedError();
    if (study.arms) return this.reserveArmGame(study, study.arms, worker, address);
    await this.workers.startWaiting(study.id, worker.participantId);
    await this.warnIfNoPartnerCanCome(study, worker);
    const apart = !study.admission.sameAddressPartners && address !== undefined ? address : undefined;
    const options = { ...studyJoinOptions(study, worker), ...(apart !== undefined && { [ADDRESS_OPTION]: apart }) };
    try {
      // No auth context: the options come from this server, not from a client (GameRoom.onAuth).
      return apart !== undefined ? await joinOrCreateApart(study.id, options, apart) : await matchMaker.joinOrCreate(ROOM_NAME, options);
    } catch (error) {
      // The worker waits for nothing: its wait starts again with its next request.
      await this.workers.stopWaiting(study.id, worker.participantId);
      throw new NoSeatError(error);
    }
  }

  /**
   * A game of its own for the worker, with the agent of its draw's arm in the other seat. It starts
   * as the worker takes its seat, so nobody waits for a partner (no wait starts, and no noPartner
   * code can be earned); a reservation never taken leaves the draw the worker's for its next request.
   * Only so many workers from one `address` start playing with the arms an hour (armWorkers.ts).
   */
  private async reserveArmGame(study: Study, arms: readonly Arm[], worker: WorkerRecord, address: string | undefined): Promise<SeatReservation> {
    const seat = armSeat(study);
    if (worker.role === seat) throw new WorkerError('ROLE_MISMATCH', `this study's participants play the ${worker.role === 'leader' ? 'follower' : 'leader'}; its agents play the ${worker.role}`);
    await admitArmWorker(study, worker.participantId, address);
    const { draw, armId } = await this.workers.drawArm(study.id, worker.participantId, (n) => armOfDraw(study.id, arms, n).id);
    const asked = seat === 'follower' ? { botFollower: true } : { botLeader: true };
    try {
      return await matchMaker.create(ROOM_NAME, { ...studyJoinOptions(study, worker), ...asked, [ARM_OPTION]: { id: armId, draw } });
    } catch (error) {
      throw new NoSeatError(error);
    }
  }

  /** Says so when the worker, now waiting, cannot get a partner: nobody who may play the other role can come. */
  private async warnIfNoPartnerCanCome(study: Study, worker: WorkerRecord): Promise<void> {
    try {
      const shortage = partnerShortages(study, await this.workers.list(study.id)).find((found) => found.participants.includes(worker.participantId));
      if (shortage) this.warn(`study ${study.id}: ${shortage.message}`);
    } catch (error) {
      // The worker is seated all the same; only the check is lost.
      this.warn(`study ${study.id}: could not check whether a partner can come: ${(error as Error).message}`);
    }
  }

  async gameStarted(studyId: string, gameId: string, seats: readonly SeatRecord[], arm: DrawnArm | null): Promise<void> {
    // Queued at once, in order: a game's end is never written before its start.
    await Promise.all(
      workerSeats(seats).map((seat) =>
        this.records.add(`study ${studyId}: the start of game ${gameId} for worker ${seat.workerId}`, () => this.workers.recordGameStart(studyId, seat.workerId, gameId, seat.role, arm?.draw)),
      ),
    );
  }

  startArmAgent(studyId: string, drawn: DrawnArm, role: Role): Promise<SeatedAgent> {
    return startArmAgent(this.arm(studyId, drawn), role, this.armRecordDir);
  }

  headerMeta(studyId: string, drawn: DrawnArm | null): StudyHeaderMeta {
    return { studyFileSha256: this.study(studyId).fileSha256, ...(drawn && { arm: armMeta(this.arm(studyId, drawn), drawn.draw) }) };
  }

  /** A study this server runs (its games are made only for those). */
  private study(studyId: string): LoadedStudy {
    const study = this.studies.get(studyId);
    if (!study) throw new Error(`this server runs no study ${studyId}`);
    return study;
  }

  /** The study's arm a game was made for (the study file names it: the draw was made from it). */
  private arm(studyId: string, drawn: DrawnArm): Arm {
    const arm = this.study(studyId).arms?.find((candidate) => candidate.id === drawn.id);
    if (!arm) throw new Error(`study ${studyId} has no arm ${JSON.stringify(drawn.id)}`);
    return arm;
  }

  async gameEnded(studyId: string, gameId: string, seats: readonly SeatRecord[], end: Parameters<StudyGameHooks['gameEnded']>[3]): Promise<void> {
    const study = this.studies.get(studyId);
    if (!study) return logger.error(`study ${studyId}: a game ended for a study this server does not run`);
    await Promise.all(
      workerSeats(seats).map((seat) => {
        const ending = { reason: end.reason, score: end.score, left: end.leaver === seat.role };
        return this.records.add(`study ${studyId}: the end of game ${gameId} for worker ${seat.workerId}`, () => this.workers.recordGameEnd(study, seat.workerId, gameId, ending));
      }),
    );
  }

  /**
   * Games recovery closed because their process was gone: each still open for a worker of the
   * study whose pool it was played in ends for that worker as any game does (otherwise the worker
   * would be in a game for ever: never given the noPartner code, counted as playing).
   */
  /**
   * Games recovery closed. One closed from the database's copy by another machine (its own looked
   * gone) is ended in its workers' records only after TAKEOVER_GRACE_MS, as `reread` then finds it:
   * a machine that only stalled takes it back and ends it for real meanwhile (P-156).
   */
  async gamesRecovered(games: readonly GameRecord[], reread: (gameId: string) => Promise<GameRecord | null> = async () => null): Promise<void> {
    const noHeader = async () => null;
    const takenOver = (game: GameRecord) => game.note?.includes(COPY_NOTE) ?? false;
    for (const game of games.filter(takenOver)) {
      setTimeout(() => {
        void reread(game.gameId)
          .then((now) => now && this.reconcile([now], noHeader))
          .catch((error: Error) => this.warn(`the workers of game ${game.gameId} could not be told of its end: ${error.message}`));
      }, this.takeoverGraceMs).unref();
    }
    await this.reconcile(games.filter((game) => !takenOver(game)), noHeader);
  }

  /**
   * Brings the workers' records up to the games (P-155): a start or an end that the worker store
   * never took (a process killed while the database was away loses the records it still held) is
   * written from the game's own record, its seats, and the arm's draw in its log's header
   * (`header`). Who left an abandoned game is not in its log: neither worker is then given the
   * partner-left ending. Answers how many records were written.
   */
  async reconcile(games: readonly GameRecord[], header: (gameId: string) => Promise<LogHeader | null>): Promise<number> {
    let written = 0;
    for (const game of games) {
      const study = [...this.studies.values()].find((candidate) => candidate.pool === game.pool);
      if (!study) continue;
      for (const seat of workerSeats(game.seats)) {
        if ((await this.workers.get(study.id, seat.workerId)) === null) continue;
        const played = (await this.workers.games(study.id, seat.workerId)).find((candidate) => candidate.gameId === game.gameId);
        if (!played) {
          const meta = (await header(game.gameId))?.meta as { arm?: ArmMeta } | undefined;
          await this.workers.recordGameStart(study.id, seat.workerId, game.gameId, seat.role, meta?.arm?.draw);
          written++;
        }
        if (played?.endedAt || game.endReason === null) continue;
        await this.workers.recordGameEnd(study, seat.workerId, game.gameId, { reason: game.endReason, score: game.score, left: game.endReason === 'abandoned' });
        written++;
      }
    }
    return written;
  }
}

/** How many times a worker kept apart looks again for a game after losing a seat to another at the same moment. */
const APART_ATTEMPTS = 5;

/**
 * joinOrCreate for a worker kept apart from workers at its address: Colyseus's matchmaker finds
 * rooms by equal fields only, so the study's waiting games without that address are listed here
 * and joined by id, and a new game is made when none takes the worker (server/index.ts makes it
 * under the pool's lock, and sends the request back when a game it may join was listed meanwhile).
 */
async function joinOrCreateApart(studyId: string, options: Partial<JoinOptions>, address: string): Promise<SeatReservation> {
  for (let attempt = 1; ; attempt++) {
    for (const roomId of await GameRoom.studyRoomsApartFrom(studyId, options.role ?? 'any', address)) {
      try {
        return await matchMaker.joinById(roomId, options);
      } catch (error) {
        // Taken, locked or gone meanwhile: the next one.
        if (!(error instanceof SeatReservationError || error instanceof ServerError)) throw error;
      }
    }
    try {
      return await matchMaker.create(ROOM_NAME, options);
    } catch (error) {
      if (!(error instanceof SeatReservationError) || attempt >= APART_ATTEMPTS) throw error;
    }
  }
}

/** The join a study's worker is seated with: the study's pool and the role its record allows (never a client's say). */
function studyJoinOptions(study: Study, worker: WorkerRecord): Partial<JoinOptions> & { [STUDY_OPTION]: string } {
  return {
    pool: study.pool,
    role: worker.role === 'either' ? 'any' : worker.role,
    workerId: worker.participantId,
    ...(worker.platformIds.assignmentId && { assignmentId: worker.platformIds.assignmentId }),
    ...(worker.platformIds.hitId && { hitId: worker.platformIds.hitId }),
    [STUDY_OPTION]: study.id,
  };
}

function alreadySeated(): WorkerError {
  return new WorkerError('ALREADY_SEATED', 'this worker already has a seat in a game: go back to it (reload the page)');
}

function workerSeats(seats: readonly SeatRecord[]): (SeatRecord & { workerId: string })[] {
  return seats.filter((seat): seat is SeatRecord & { workerId: string } => seat.kind === 'human' && seat.workerId !== undefined);
}
