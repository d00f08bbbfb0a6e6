/**
 * What a database gives RowWorkerStore: the rows of a study's workers, read and written in a
 * transaction (WorkerRows), and the transactions (WorkerDatabase). It decides nothing.
 *
 * SQLite answers at once and PostgreSQL later, and a SQLite transaction cannot wait for anything,
 * so the store's work on the rows is written once as steps (a generator) that yield each answer
 * of the database and get its value back: at once (stepsAtOnce) or awaited (stepsLater).
 */
import type { Role } from '../../shared/engine/state';
import type { ArmTotals } from '../../shared/study/overview';
import type { Awaitable } from './types';
import type { ArmDraw, Changes, GameEnd, RecentWorkers, WorkerGameRow, WorkerRow, WorkerRowWithGames } from './workerChanges';

/** A session's row; its token is kept only as its hash. */
export interface SessionRow {
  readonly token_hash: string;
  readonly study_id: string;
  readonly participant_id: string;
  readonly created_at: string;
  readonly expires_at: string;
  readonly prolific_session_id: string | null;
  readonly assignment_id: string | null;
  readonly hit_id: string | null;
  /** 1: no platform id vouched for the session (visitChanges). */
  readonly limited: 0 | 1;
}

/** A study's games, each counted once, as the database sums them (means over the ended ones). */
export interface GameTotalsRow {
  readonly games: number;
  readonly live: number;
  readonly mean_score: number | null;
  readonly mean_seconds: number | null;
}

/** The rows of a worker database, as one transaction (or one read outside any) sees them. Times are ISO 8601. */
export interface WorkerRows {
  /**
   * Locks the worker's row until the transaction ends, if it exists, so that what is decided from
   * it holds; where the transaction holds the whole database (SQLite) it does nothing.
   */
  lockWorker(studyId: string, participantId: string): Awaitable<void>;
  /** Likewise for study-wide work that no row guards: admitting new workers, drawing arms. */
  lockStudy(studyId: string, work: 'new workers' | 'arm draws'): Awaitable<void>;
  /** The worker's row with the sums of its games. */
  worker(studyId: string, participantId: string): Awaitable<WorkerRowWithGames | null>;
  /** A study's workers, oldest first. */
  workers(studyId: string): Awaitable<WorkerRowWithGames[]>;
  insertWorker(row: WorkerRow): Awaitable<void>;
  /** Sets the columns of `changes`, which RowWorkerStore has checked (CHANGEABLE). */
  updateWorker(studyId: string, participantId: string, changes: Changes): Awaitable<void>;
  /** The study's new workers lately (refuseNewWorker): from `address` since `hourAgo`, from anywhere since `minuteAgo`. */
  recentWorkers(studyId: string, address: string | null, hourAgo: string, minuteAgo: string): Awaitable<RecentWorkers>;

  /** The session of a token's hash while it lasts (expires after `at`). */
  session(tokenHash: string, studyId: string, at: string): Awaitable<Pick<SessionRow, 'participant_id' | 'limited'> | null>;
  /** The worker a token's hash vouches for: of a session that was not limited, made after `since`. */
  vouchedParticipant(tokenHash: string, studyId: string, since: string): Awaitable<string | null>;
  insertSession(session: SessionRow): Awaitable<void>;
  /** Drops every session made by `before`. */
  dropSessions(before: string): Awaitable<void>;
  /** Keeps the newest `keep` sessions of `newest`'s worker and kind (limited or not), `newest` among them. */
  trimSessions(newest: SessionRow, keep: number): Awaitable<void>;

  /** The games a worker played (and plays), oldest first. */
  games(studyId: string, participantId: string): Awaitable<WorkerGameRow[]>;
  /** Adds the worker's game, unless it has it. */
  insertGame(studyId: string, participantId: string, gameId: string, role: Role, sessionKey: string, at: string): Awaitable<void>;
  /** Ends the worker's game at `at`, if its end may still be recorded (ENDING_STANDS_OPEN). */
  endGame(studyId: string, participantId: string, gameId: string, end: GameEnd, at: string): Awaitable<void>;
  gameTotals(studyId: string): Awaitable<GameTotalsRow>;

  /** The worker's last draw no game has started with. */
  unusedDraw(studyId: string, participantId: string): Awaitable<ArmDraw | null>;
  /** The number of the study's next draw. */
  nextDraw(studyId: string): Awaitable<number>;
  insertDraw(studyId: string, participantId: string, draw: ArmDraw, at: string): Awaitable<void>;
  /** Notes the game that started with the worker's draw. */
  drawStarted(studyId: string, participantId: string, draw: number, gameId: string): Awaitable<void>;
  armTotals(studyId: string): Awaitable<ArmTotals[]>;
}

/** A database's answer: the value itself (`Later` false: SQLite), or its promise (PostgreSQL). */
export type Answer<Later extends boolean, T> = Later extends true ? Promise<T> : T;

/**
 * Work on the rows, as steps: each yields an answer of the database, and goes on with its value.
 * The value is typed by `answer`, which yields it; steps themselves take any value back, as
 * TypeScript gives a generator passed to a generic function (transaction<T>) no other type.
 */
export type Steps<T> = Generator<unknown, T, any>;

/** In steps, the value of a database's answer: `const row = yield* answer(rows.worker(...))`. */
export function* answer<T>(value: Awaitable<T>): Generator<Awaitable<T>, T, T> {
  return yield value;
}

export interface WorkerDatabase<Later extends boolean> {
  /** Runs `steps` in one transaction, which holds the rows it reads (lockWorker, lockStudy) until it ends. */
  transaction<T>(steps: (rows: WorkerRows) => Steps<T>): Answer<Later, T>;
  /** Runs `steps`, which only read, outside any transaction. */
  read<T>(steps: (rows: WorkerRows) => Steps<T>): Answer<Later, T>;
  close(): Answer<Later, void>;
}

/** Runs steps on answers that are values. */
export function stepsAtOnce<T>(steps: Steps<T>): T {
  let step = steps.next();
  while (!step.done) step = steps.next(step.value);
  return step.value;
}

/** Runs steps on answers that may be promises. */
export async function stepsLater<T>(steps: Steps<T>): Promise<T> {
  let step = steps.next();
  while (!step.done) step = steps.next(await step.value);
  return step.value;
}
