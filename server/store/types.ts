/** What the game server needs from storage: an index of games and their append-only logs. */
import type { LogEnd, LogHeader, LogLine } from '../../shared/log/format';
import type { Role } from '../../shared/engine/state';
import type { StudyFile } from '../../shared/study/studyFile';
import type { SessionStart, WorkerGame, WorkerRecord } from '../../shared/study/worker';
import type { ArmTotals } from '../../shared/study/overview';
import type { ArmDraw, GameEnd, QuizResult, StudyGameTotals } from './workerChanges';

/** One seat of a game, as recorded in the index. */
export interface SeatRecord {
  readonly role: Role;
  /** Opaque id the server gives the player (never a crowdsourcing id). */
  readonly playerId: string;
  readonly kind: 'human' | 'bot';
  /** Crowdsourcing ids exactly as given in the join options, if any. */
  readonly workerId?: string;
  readonly assignmentId?: string;
  readonly hitId?: string;
}

/** A game as the index lists it. Times are ISO 8601. */
export interface GameRecord {
  readonly gameId: string;
  readonly pool: string;
  readonly seats: readonly SeatRecord[];
  readonly score: number;
  readonly startedAt: string;
  /** Null while the game is being played. */
  readonly endedAt: string | null;
  readonly endReason: LogEnd['reason'] | null;
  /** What recovery found wrong with the log (a cut-off last line, a log that cannot be replayed); absent when nothing. */
  readonly note?: string;
}

export interface GameFilter {
  /** ISO 8601 bounds on startedAt, inclusive. */
  readonly from?: string;
  readonly to?: string;
  readonly pool?: string;
  readonly minScore?: number;
  readonly limit?: number;
  readonly offset?: number;
}

/** Appends one game's log lines; each line is in the file before append() returns. */
export interface GameLogWriter {
  append(line: LogLine): void;
  /** Writes the end line, flushes the file to disk and closes the game in the index. */
  end(line: LogEnd): void;
}

export interface StartInfo {
  readonly pool: string;
  readonly seats: SeatRecord[];
}

/** What recover() did. */
export interface Recovery {
  /** Games whose logs it closed. */
  readonly recovered: string[];
  /** Empty log files of games that never started, removed. */
  readonly removed: string[];
  /** Files in logs/ that are not logs of a game of that name, left as they are. */
  readonly unreadable: string[];
}

/** A value, or a promise of it: a store on one machine answers at once, a database store later. */
export type Awaitable<T> = T | Promise<T>;

/**
 * The store of games as the server, its API and its commands use it. Two kinds: SqliteGameStore
 * (a data directory on one machine) and PgGameStore (PostgreSQL, for several machines). Writing
 * is synchronous, as a room writes each action before it answers; reading may wait.
 */
export interface GameStore {
  /** Starts a game's log with its header line and lists the game. */
  startGame(header: LogHeader, info: StartInfo): GameLogWriter;
  /** Closes the games left open by a store that is gone (at start, and again and again by keepAlive). */
  recover(): Awaitable<Recovery>;
  /** Keeps this store's lease and runs recover() every few seconds until the store closes. */
  keepAlive(onRecovered: (recovery: Recovery) => void, onError: (error: Error) => void): void;
  /** Games whose log could not be written completely since the store opened. */
  failedGames(): readonly string[];
  /** Games whose log this store is writing now: close() leaves them open, for the next recover(). */
  gamesBeingWritten(): readonly string[];
  /** Games newest first. */
  listGames(filter?: GameFilter): Awaitable<GameRecord[]>;
  getGame(gameId: string): Awaitable<GameRecord | null>;
  /** Resolves once every line written so far can be read through the store, by any process. */
  synced(): Promise<void>;
  /** A game's log as JSON Lines, as far as it is written; null when the store has no such game. */
  readLog(gameId: string): Awaitable<string | null>;
  /** Logs still being written stay open for the next recover(). */
  close(): Awaitable<void>;
}

/** What reading the games needs: the API's study downloads and the researcher's commands. */
export type GameReader = Pick<GameStore, 'listGames' | 'getGame' | 'readLog'>;

/** What a visit brings besides the platform's ids (WorkerStore.startSession). */
export interface SessionProof {
  /** A session token the request carried (the page keeps its last one), if any: it vouches when it is the same worker's and live. */
  readonly token?: string;
  /** A keyed hash of the requester's address (server/http/clientAddress.ts), for the admission limits; never the address. */
  readonly addressTag?: string;
}

/** A worker's session: the worker, and whether no platform id vouched for it (visitChanges). */
export interface WorkerSession {
  readonly worker: WorkerRecord;
  readonly limited: boolean;
}

/**
 * A study's workers' records as the study API, the study's games and the researcher's pages use
 * them. Two kinds: SqliteWorkerStore (a data directory) and PgWorkerStore (PostgreSQL). Each
 * change is one transaction on the worker's row; what it decides is in workerChanges.ts.
 */
export interface WorkerStore {
  /** The clock of every time the store writes (tests inject one). */
  readonly now: () => number;
  get(studyId: string, participantId: string): Awaitable<WorkerRecord | null>;
  /** A study's workers, oldest first. */
  list(studyId: string): Awaitable<WorkerRecord[]>;
  /**
   * Finds or creates the worker and starts a visit, as `proof` vouches for it (visitChanges); a
   * new worker within the study's admission limits (refuseNewWorker). The token is returned here only.
   */
  startSession(study: StudyFile, start: SessionStart, proof?: SessionProof): Awaitable<WorkerSession & { token: string }>;
  /** The session a token belongs to, for this study, while the token lasts; null otherwise. */
  sessionForToken(studyId: string, token: string): Awaitable<WorkerSession | null>;
  /** `limited`: the session's (sessionForToken); a limited session cannot decline. */
  answerConsent(studyId: string, participantId: string, agree: boolean, limited?: boolean): Awaitable<WorkerRecord>;
  readRules(studyId: string, participantId: string): Awaitable<WorkerRecord>;
  passTutorial(studyId: string, participantId: string, role: Role): Awaitable<WorkerRecord>;
  /** `limited`: the session's (sessionForToken); a limited session cannot use the last attempt. */
  submitQuiz(study: StudyFile, participantId: string, answers: readonly number[], limited?: boolean): Awaitable<QuizResult>;
  block(studyId: string, participantId: string, reason: string | null): Awaitable<WorkerRecord>;
  promote(studyId: string, participantId: string): Awaitable<WorkerRecord>;
  startWaiting(studyId: string, participantId: string): Awaitable<WorkerRecord>;
  /** `startedBy`: only a wait that started by then (epoch ms) ends (stopWaitingChanges). */
  stopWaiting(studyId: string, participantId: string, startedBy?: number): Awaitable<WorkerRecord>;
  /** `armDraw`: the study's arm draw the game was made for (drawArm), which learns its game. */
  recordGameStart(studyId: string, participantId: string, gameId: string, role: Role, armDraw?: number): Awaitable<WorkerRecord>;
  recordGameEnd(study: StudyFile, participantId: string, gameId: string, end: GameEnd): Awaitable<WorkerRecord>;
  claimNoPartner(study: StudyFile, participantId: string): Awaitable<WorkerRecord>;
  /** The study's games as its workers' records count them (each game once). */
  gameTotals(studyId: string): Awaitable<StudyGameTotals>;
  /**
   * The arm draw for the next game of a worker at the play step, in one transaction: the last draw
   * the worker was given while no game has started with it (asking again keeps the worker's arm,
   * and uses no draw), else the study's next draw: its number (0, 1, ...; each once, whichever
   * process asks) and the arm `armOf` gives that number.
   */
  drawArm(studyId: string, participantId: string, armOf: (draw: number) => string): Awaitable<ArmDraw>;
  /** Each drawn arm's draws and games, by arm id. */
  armTotals(studyId: string): Awaitable<ArmTotals[]>;
  /** The games a worker played (and plays), oldest first. */
  games(studyId: string, participantId: string): Awaitable<WorkerGame[]>;
  close(): Awaitable<void>;
}
