/**
 * Where a study's workers are kept: dataDir/workers.sqlite, one row per (study, participant) and
 * one per session (a worker's visit), whose token is kept only as its SHA-256.
 *
 * Unlike the game index, this file may be shared by several server processes: every change is one
 * statement or an immediate transaction that reads and writes the row it decides on, so two
 * processes (or two requests) cannot both use a worker's last quiz attempt. Nothing lives in one
 * process's memory.
 */
import Database from 'better-sqlite3';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Role } from '../../shared/engine/state';
import type { EndReason } from '../../shared/log/format';
import type { CompletionOutcome, PlatformKind, StudyFile } from '../../shared/study/studyFile';
import {
  markQuiz,
  quizAttemptsLeft,
  tutorialsNeeded,
  workerStep,
  type PlatformIds,
  type QuizMarking,
  type SessionStart,
  type WorkerGame,
  type WorkerRecord,
  type WorkerRole,
} from '../../shared/study/worker';

export const WORKERS_FILE = 'workers.sqlite';

/** The schema's version, in SQLite's user_version: each entry of MIGRATIONS brings a file one version up. */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE workers (
    study_id             TEXT NOT NULL,
    participant_id       TEXT NOT NULL,
    platform             TEXT NOT NULL,
    prolific_study_id    TEXT,
    prolific_session_id  TEXT,
    assignment_id        TEXT,
    hit_id               TEXT,
    turk_submit_to       TEXT,
    created_at           TEXT NOT NULL,  -- ISO 8601 UTC with milliseconds, as every time here
    last_seen_at         TEXT NOT NULL,
    consented_at         TEXT,
    declined_at          TEXT,
    rules_read_at        TEXT,
    leader_tutorial_at   TEXT,
    follower_tutorial_at TEXT,
    quiz_attempts        INTEGER NOT NULL DEFAULT 0,
    quiz_last_score      INTEGER,
    quiz_passed_at       TEXT,
    screened_out_at      TEXT,
    role                 TEXT NOT NULL,
    promoted_at          TEXT,
    blocked_at           TEXT,
    block_reason         TEXT,
    completion_outcome   TEXT,
    completion_code      TEXT,
    completion_at        TEXT,
    PRIMARY KEY (study_id, participant_id)
  );
  CREATE TABLE worker_sessions (
    token_hash          TEXT PRIMARY KEY,  -- SHA-256 of the token, hex; the token itself is never stored
    study_id            TEXT NOT NULL,
    participant_id      TEXT NOT NULL,
    created_at          TEXT NOT NULL,
    expires_at          TEXT NOT NULL,
    prolific_session_id TEXT,
    assignment_id       TEXT,
    hit_id              TEXT,
    FOREIGN KEY (study_id, participant_id) REFERENCES workers (study_id, participant_id)
  );
  CREATE INDEX worker_sessions_by_worker ON worker_sessions (study_id, participant_id);
  `,
  `
  ALTER TABLE workers ADD COLUMN waiting_since TEXT;       -- set by a request to play, cleared when a game starts
  ALTER TABLE workers ADD COLUMN completion_session TEXT;  -- the session key (see sessionKey) the completion code was given in
  CREATE TABLE worker_games (
    study_id        TEXT NOT NULL,
    participant_id  TEXT NOT NULL,
    game_id         TEXT NOT NULL,
    role            TEXT NOT NULL,
    session_key     TEXT NOT NULL,
    started_at      TEXT NOT NULL,
    ended_at        TEXT,
    end_reason      TEXT,
    score           INTEGER NOT NULL DEFAULT 0,
    seconds         REAL NOT NULL DEFAULT 0,
    left_game       INTEGER NOT NULL DEFAULT 0,  -- 1 when this worker's leaving ended the game
    PRIMARY KEY (study_id, participant_id, game_id),
    FOREIGN KEY (study_id, participant_id) REFERENCES workers (study_id, participant_id)
  );
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** How long a session token lasts; a worker who comes back later starts a new session from the platform's link. */
export const SESSION_TTL_MS = 24 * 60 * 60 * 1000;

/** Bytes of randomness in a session token (256 bits). */
const TOKEN_BYTES = 32;

export interface WorkerStoreOptions {
  /** Milliseconds since the epoch; Date.now by default (tests inject a clock). */
  readonly now?: () => number;
  /** Opens an existing file without writing to it (the `study workers` command). */
  readonly readonly?: boolean;
}

/** Why an action was refused; the HTTP layer turns the code into a status. */
export type WorkerErrorCode =
  | 'NOT_FOUND'
  | 'BLOCKED'
  | 'WRONG_STEP'
  | 'ALREADY_ANSWERED'
  | 'DECLINED'
  | 'ROLE_MISMATCH'
  | 'QUIZ_PASSED'
  | 'NO_ATTEMPTS_LEFT'
  | 'TOO_EARLY'
  | 'ALREADY_SEATED';

export class WorkerError extends Error {
  constructor(
    readonly code: WorkerErrorCode,
    message: string,
    /** For TOO_EARLY: when to ask again. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'WorkerError';
  }
}

export interface QuizResult extends QuizMarking {
  readonly worker: WorkerRecord;
}

interface WorkerRow {
  readonly study_id: string;
  readonly participant_id: string;
  readonly platform: PlatformKind;
  readonly prolific_study_id: string | null;
  readonly prolific_session_id: string | null;
  readonly assignment_id: string | null;
  readonly hit_id: string | null;
  readonly turk_submit_to: string | null;
  readonly created_at: string;
  readonly last_seen_at: string;
  readonly consented_at: string | null;
  readonly declined_at: string | null;
  readonly rules_read_at: string | null;
  readonly leader_tutorial_at: string | null;
  readonly follower_tutorial_at: string | null;
  readonly quiz_attempts: number;
  readonly quiz_last_score: number | null;
  readonly quiz_passed_at: string | null;
  readonly screened_out_at: string | null;
  readonly role: WorkerRole;
  readonly promoted_at: string | null;
  readonly blocked_at: string | null;
  readonly block_reason: string | null;
  readonly completion_outcome: CompletionOutcome | null;
  readonly completion_code: string | null;
  readonly completion_at: string | null;
  readonly completion_session: string | null;
  readonly waiting_since: string | null;
}

/** A worker's row with the sums of its games (the select adds them). */
interface WorkerRowWithGames extends WorkerRow {
  readonly games_played: number;
  readonly games_completed: number;
  readonly games_completed_in_session: number;
  readonly games_open: number;
  readonly points: number;
  readonly seconds: number;
  readonly follower_games_completed: number;
  readonly follower_points: number;
}

/** The columns a change may set: anything but the key. */
type Changes = Partial<Omit<WorkerRow, 'study_id' | 'participant_id'>>;

/** How a game a worker played ended, for that worker. */
export interface GameEnd {
  readonly reason: EndReason;
  readonly score: number;
  /** True when this worker's leaving (or expulsion) ended the game. */
  readonly left: boolean;
}

/** A study's games, counted once each from its workers' records. */
export interface StudyGameTotals {
  readonly games: number;
  /** Started and not ended. */
  readonly live: number;
  /** Over the ended games; null when none has ended. */
  readonly meanScore: number | null;
  readonly meanSeconds: number | null;
}

/** How much earlier than the wait's end a worker's page may ask for the noPartner code (clocks differ a little). */
export const WAIT_TOLERANCE_MS = 2000;

/**
 * The visit a completion code belongs to: Prolific's SESSION_ID or MTurk's assignmentId; '' in a
 * lab. A worker who comes back with another one (a new MTurk assignment) may play again.
 */
function sessionKey(row: Pick<WorkerRow, 'prolific_session_id' | 'assignment_id'>): string {
  return row.prolific_session_id ?? row.assignment_id ?? '';
}

/** The row's sums over its games, as extra columns. */
const WITH_GAMES = `
  SELECT w.*,
    (SELECT COUNT(*) FROM worker_games g WHERE g.study_id = w.study_id AND g.participant_id = w.participant_id AND g.ended_at IS NOT NULL) AS games_played,
    (SELECT COUNT(*) FROM worker_games g WHERE g.study_id = w.study_id AND g.participant_id = w.participant_id AND g.end_reason = 'turns-exhausted') AS games_completed,
    (SELECT COUNT(*) FROM worker_games g WHERE g.study_id = w.study_id AND g.participant_id = w.participant_id AND g.end_reason = 'turns-exhausted'
       AND g.session_key = COALESCE(w.prolific_session_id, w.assignment_id, '')) AS games_completed_in_session,
    (SELECT COUNT(*) FROM worker_games g WHERE g.study_id = w.study_id AND g.participant_id = w.participant_id AND g.ended_at IS NULL) AS games_open,
    (SELECT COALESCE(SUM(score), 0) FROM worker_games g WHERE g.study_id = w.study_id AND g.participant_id = w.participant_id AND g.ended_at IS NOT NULL) AS points,
    (SELECT COALESCE(SUM(seconds), 0) FROM worker_games g WHERE g.study_id = w.study_id AND g.participant_id = w.participant_id AND g.ended_at IS NOT NULL) AS seconds,
    (SELECT COUNT(*) FROM worker_games g WHERE g.study_id = w.study_id AND g.participant_id = w.participant_id AND g.end_reason = 'turns-exhausted' AND g.role = 'follower') AS follower_games_completed,
    (SELECT COALESCE(SUM(score), 0) FROM worker_games g WHERE g.study_id = w.study_id AND g.participant_id = w.participant_id AND g.end_reason = 'turns-exhausted' AND g.role = 'follower') AS follower_points
  FROM workers w`;

const CHANGEABLE = new Set<string>([
  'platform', 'prolific_study_id', 'prolific_session_id', 'assignment_id', 'hit_id', 'turk_submit_to', 'last_seen_at',
  'consented_at', 'declined_at', 'rules_read_at', 'leader_tutorial_at', 'follower_tutorial_at', 'quiz_attempts',
  'quiz_last_score', 'quiz_passed_at', 'screened_out_at', 'role', 'promoted_at', 'blocked_at', 'block_reason',
  'completion_outcome', 'completion_code', 'completion_at', 'completion_session', 'waiting_since',
]);

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** The role a new worker gets from the study: roles.newWorkersStartAs ('either' stays either). */
export function startingRole(study: StudyFile): WorkerRole {
  return study.roles.newWorkersStartAs;
}

export class WorkerStore {
  private readonly selectWorker;
  private readonly selectWorkers;
  private readonly selectSession;
  private readonly insertWorkerRow;
  private readonly insertSessionRow;
  private readonly insertGameRow;
  private readonly deleteExpiredSessions;
  private readonly endGameRow;
  private readonly selectGames;
  private readonly selectGameTotals;
  /** UPDATE statements by the columns they set, prepared once each. */
  private readonly updates = new Map<string, Database.Statement>();

  private constructor(
    private readonly db: Database.Database,
    /** The clock of every time the store writes (tests inject one). */
    readonly now: () => number,
  ) {
    this.selectWorker = db.prepare<[string, string], WorkerRowWithGames>(`${WITH_GAMES} WHERE w.study_id = ? AND w.participant_id = ?`);
    this.selectWorkers = db.prepare<[string], WorkerRowWithGames>(`${WITH_GAMES} WHERE w.study_id = ? ORDER BY w.created_at, w.participant_id`);
    this.insertGameRow = db.prepare<[string, string, string, Role, string, string]>(
      'INSERT OR IGNORE INTO worker_games (study_id, participant_id, game_id, role, session_key, started_at) VALUES (?, ?, ?, ?, ?, ?)',
    );
    this.endGameRow = db.prepare<{ study_id: string; participant_id: string; game_id: string; ended_at: string; end_reason: EndReason; score: number; left_game: number }>(`
      UPDATE worker_games SET ended_at = @ended_at, end_reason = @end_reason, score = @score, left_game = @left_game,
        seconds = (julianday(@ended_at) - julianday(started_at)) * 86400.0
      WHERE study_id = @study_id AND participant_id = @participant_id AND game_id = @game_id AND ended_at IS NULL`);
    this.selectGameTotals = db.prepare<[string], { games: number; live: number; mean_score: number | null; mean_seconds: number | null }>(`
      SELECT COUNT(*) AS games, COALESCE(SUM(ended_at IS NULL), 0) AS live,
        AVG(CASE WHEN ended_at IS NOT NULL THEN score END) AS mean_score, AVG(CASE WHEN ended_at IS NOT NULL THEN seconds END) AS mean_seconds
      FROM (SELECT game_id, MAX(ended_at) AS ended_at, MAX(score) AS score, MAX(seconds) AS seconds FROM worker_games WHERE study_id = ? GROUP BY game_id)`);
    this.selectGames = db.prepare<[string, string], WorkerGameRow>('SELECT * FROM worker_games WHERE study_id = ? AND participant_id = ? ORDER BY started_at, game_id');
    this.selectSession = db.prepare<[string, string, string], { participant_id: string }>(
      'SELECT participant_id FROM worker_sessions WHERE token_hash = ? AND study_id = ? AND expires_at > ?',
    );
    this.insertWorkerRow = db.prepare<WorkerRow>(`
      INSERT INTO workers (study_id, participant_id, platform, prolific_study_id, prolific_session_id, assignment_id, hit_id, turk_submit_to, created_at, last_seen_at, role)
      VALUES (@study_id, @participant_id, @platform, @prolific_study_id, @prolific_session_id, @assignment_id, @hit_id, @turk_submit_to, @created_at, @last_seen_at, @role)`);
    this.deleteExpiredSessions = db.prepare<[string]>('DELETE FROM worker_sessions WHERE expires_at <= ?');
    this.insertSessionRow = db.prepare<[string, string, string, string, string, string | null, string | null, string | null]>(
      'INSERT INTO worker_sessions (token_hash, study_id, participant_id, created_at, expires_at, prolific_session_id, assignment_id, hit_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
  }

  /** The worker file of a data directory, created (with the directory) if missing. */
  static open(dataDir: string, options: WorkerStoreOptions = {}): WorkerStore {
    const root = resolve(dataDir);
    const path = join(root, WORKERS_FILE);
    if (options.readonly) {
      if (!existsSync(path)) throw new Error(`${path} does not exist: no worker has started a session with this data directory`);
      const db = new Database(path, { readonly: true, fileMustExist: true });
      try {
        const version = db.pragma('user_version', { simple: true }) as number;
        if (version !== SCHEMA_VERSION) throw new Error(`${path} has schema version ${version}; this version of cerealbar reads ${SCHEMA_VERSION}`);
        return new WorkerStore(db, options.now ?? Date.now);
      } catch (error) {
        db.close();
        throw error;
      }
    }
    mkdirSync(root, { recursive: true });
    const db = new Database(path);
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('foreign_keys = ON');
      // Other processes may hold the write lock for a moment.
      db.pragma('busy_timeout = 5000');
      migrate(db, path);
      return new WorkerStore(db, options.now ?? Date.now);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  close(): void {
    this.db.close();
  }

  get(studyId: string, participantId: string): WorkerRecord | null {
    const row = this.selectWorker.get(studyId, participantId);
    return row ? workerRecord(row) : null;
  }

  /** A study's workers, oldest first. */
  list(studyId: string): WorkerRecord[] {
    return this.selectWorkers.all(studyId).map(workerRecord);
  }

  /**
   * Starts a visit: finds the worker (or creates it, with the study's starting role), records the
   * platform ids given, and returns a new session token. The token is returned here only.
   */
  startSession(study: StudyFile, start: SessionStart): { token: string; worker: WorkerRecord } {
    const token = randomBytes(TOKEN_BYTES).toString('base64url');
    const at = this.time();
    const ids = idColumns(start.ids);
    const expires = new Date(this.now() + SESSION_TTL_MS).toISOString();
    const run = this.db.transaction(() => {
      const existing = this.selectWorker.get(study.id, start.participantId);
      if (existing) {
        const changes: Changes = { ...definedOnly(ids), last_seen_at: at };
        const key = sessionKey(ids);
        // A new MTurk assignment (or Prolific submission) is a new session: who finished one may play another.
        if (existing.completion_outcome !== null && existing.completion_outcome !== 'screenedOut' && key !== '' && key !== existing.completion_session) {
          Object.assign(changes, { completion_outcome: null, completion_code: null, completion_at: null, completion_session: null });
        }
        this.update(study.id, start.participantId, changes);
      } else {
        this.insertWorkerRow.run({
          ...emptyRow(study.id, start.participantId, study.platform.kind, startingRole(study), at),
          ...ids,
        });
      }
      // Expired sessions go as new ones come, so the file holds only live tokens' hashes.
      this.deleteExpiredSessions.run(at);
      this.insertSessionRow.run(hashToken(token), study.id, start.participantId, at, expires, ids.prolific_session_id, ids.assignment_id, ids.hit_id);
      return this.mustGet(study.id, start.participantId);
    });
    return { token, worker: run.immediate() };
  }

  /** The worker a session token belongs to, for this study, while the token lasts; null otherwise. */
  workerForToken(studyId: string, token: string): WorkerRecord | null {
    const session = this.selectSession.get(hashToken(token), studyId, this.time());
    return session ? this.get(studyId, session.participant_id) : null;
  }

  /** Records consent (agree) or its refusal, which is final. The same answer again changes nothing. */
  answerConsent(studyId: string, participantId: string, agree: boolean): WorkerRecord {
    return this.change(studyId, participantId, (worker) => {
      refuseBlocked(worker);
      if (agree ? worker.consented_at !== null : worker.declined_at !== null) return {};
      if (worker.declined_at !== null) throw new WorkerError('DECLINED', 'consent was declined, which is final: return the study on your platform');
      if (worker.consented_at !== null) throw new WorkerError('ALREADY_ANSWERED', 'consent was already given');
      return agree ? { consented_at: this.time() } : { declined_at: this.time() };
    });
  }

  /** Records that the worker read the rules (after consent); again changes nothing. */
  readRules(studyId: string, participantId: string): WorkerRecord {
    return this.change(studyId, participantId, (worker) => {
      refuseAtEnding(worker);
      if (worker.consented_at === null) throw new WorkerError('WRONG_STEP', 'the consent form comes first');
      return worker.rules_read_at === null ? { rules_read_at: this.time() } : {};
    });
  }

  /** Records a tutorial passed, for a role the worker plays (after the rules); again changes nothing. */
  passTutorial(studyId: string, participantId: string, role: Role): WorkerRecord {
    return this.change(studyId, participantId, (worker) => {
      refuseAtEnding(worker);
      if (worker.consented_at === null || worker.rules_read_at === null) throw new WorkerError('WRONG_STEP', 'the consent form and the rules come before the tutorial');
      if (!tutorialsNeeded(worker.role).includes(role)) throw new WorkerError('ROLE_MISMATCH', `this worker plays ${worker.role}, not ${role}`);
      const column = role === 'leader' ? 'leader_tutorial_at' : 'follower_tutorial_at';
      return worker[column] === null ? { [column]: this.time() } : {};
    });
  }

  /**
   * Marks one attempt at the quiz (answers already checked against its shape). A pass records
   * quizPassedAt; failing the last attempt screens the worker out, with the screenedOut code.
   */
  submitQuiz(study: StudyFile, participantId: string, answers: readonly number[]): QuizResult {
    let marking: QuizMarking | null = null;
    const worker = this.change(study.id, participantId, (row) => {
      const current = workerRecord(row);
      refuseBlocked(row);
      if (row.quiz_passed_at !== null) throw new WorkerError('QUIZ_PASSED', 'the quiz is already passed');
      if (row.screened_out_at !== null || quizAttemptsLeft(study.quiz, current) === 0) throw new WorkerError('NO_ATTEMPTS_LEFT', 'no attempts at the quiz are left');
      refuseAtEnding(row);
      if (workerStep(current) !== 'quiz') throw new WorkerError('WRONG_STEP', `the quiz comes after the consent form, the rules and the tutorial (this worker is at ${workerStep(current)})`);
      marking = markQuiz(study.quiz, answers);
      const at = this.time();
      const attempts = row.quiz_attempts + 1;
      const changes: Changes = { quiz_attempts: attempts, quiz_last_score: marking.score };
      if (marking.passed) return { ...changes, quiz_passed_at: at };
      if (attempts >= study.quiz.attempts) return { ...changes, screened_out_at: at, ...completionChanges(study, row, 'screenedOut', at) };
      return changes;
    });
    return { ...(marking as unknown as QuizMarking), worker };
  }

  /** Blocks a worker: every later action is refused. Blocking again keeps the first time and reason. */
  block(studyId: string, participantId: string, reason: string | null): WorkerRecord {
    return this.change(studyId, participantId, (worker) => (worker.blocked_at === null ? { blocked_at: this.time(), block_reason: reason } : {}));
  }

  /** Makes a worker a leader (who then needs the leader's tutorial before playing); a leader stays as they are. */
  promote(studyId: string, participantId: string): WorkerRecord {
    return this.change(studyId, participantId, (worker) => (worker.role === 'leader' ? {} : { role: 'leader', promoted_at: this.time() }));
  }

  /** A worker at the play step asks for a game: its wait for a partner starts (again) now. */
  startWaiting(studyId: string, participantId: string): WorkerRecord {
    return this.change(studyId, participantId, (row) => {
      refuseAtEnding(row);
      const step = workerStep(workerRecord(row));
      if (step !== 'play') throw new WorkerError('WRONG_STEP', `a game comes after the consent form, the rules, the tutorial and the quiz (this worker is at ${step})`);
      return { waiting_since: this.time() };
    });
  }

  /** The worker's wait ended without a game (it left the game it waited in, or no seat was found). */
  stopWaiting(studyId: string, participantId: string): WorkerRecord {
    return this.change(studyId, participantId, (row) => (row.waiting_since === null ? {} : { waiting_since: null }));
  }

  /** A game with the worker in it started: its wait is over and the game is counted from now. */
  recordGameStart(studyId: string, participantId: string, gameId: string, role: Role): WorkerRecord {
    return this.change(studyId, participantId, (row) => {
      this.insertGameRow.run(studyId, participantId, gameId, role, sessionKey(row), this.time());
      return { waiting_since: null };
    });
  }

  /**
   * A game with the worker in it ended. A game played to its end may complete the session (after
   * gamesPerSession of them) and promote a follower (the study's rule); a game the partner left
   * gives the partnerLeft code. A game the server ended (shut down, could not save) gives no code:
   * the worker may play another, or leave with noPartner after waiting.
   */
  recordGameEnd(study: StudyFile, participantId: string, gameId: string, end: GameEnd): WorkerRecord {
    return this.change(study.id, participantId, () => {
      this.endGameRow.run({ study_id: study.id, participant_id: participantId, game_id: gameId, ended_at: this.time(), end_reason: end.reason, score: end.score, left_game: end.left ? 1 : 0 });
      const row = this.selectWorker.get(study.id, participantId)!;
      const changes: Changes = { ...promotionChanges(study, row, this.time()) };
      if (end.reason === 'turns-exhausted' && row.games_completed_in_session >= study.gamesPerSession) Object.assign(changes, completionChanges(study, row, 'completed', this.time()));
      if (end.reason === 'abandoned' && !end.left) Object.assign(changes, completionChanges(study, row, 'partnerLeft', this.time()));
      return changes;
    });
  }

  /** The noPartner code, for a worker whose wait (from its last request to play) has run out. */
  claimNoPartner(study: StudyFile, participantId: string): WorkerRecord {
    return this.change(study.id, participantId, (row) => {
      refuseAtEnding(row);
      if (row.games_open > 0) throw new WorkerError('WRONG_STEP', 'this worker is in a game');
      if (row.waiting_since === null) throw new WorkerError('WRONG_STEP', 'this worker is not waiting for a partner');
      const waitEnds = Date.parse(row.waiting_since) + study.time.waitForPartnerSeconds * 1000;
      const early = waitEnds - WAIT_TOLERANCE_MS - this.now();
      if (early > 0) throw new WorkerError('TOO_EARLY', `the wait for a partner is not over: ask again in ${Math.ceil(early / 1000)} s`, Math.ceil(early / 1000));
      return { ...completionChanges(study, row, 'noPartner', this.time()), waiting_since: null };
    });
  }

  /**
   * The study's games as its workers' records count them (each game once): how many, how many
   * are being played, and the mean final score and length of the ended ones.
   */
  gameTotals(studyId: string): StudyGameTotals {
    const row = this.selectGameTotals.get(studyId)!;
    return { games: row.games, live: row.live, meanScore: row.mean_score, meanSeconds: row.mean_seconds === null ? null : Math.round(row.mean_seconds * 10) / 10 };
  }

  /** The games a worker played (and plays), oldest first. */
  games(studyId: string, participantId: string): WorkerGame[] {
    return this.selectGames.all(studyId, participantId).map(workerGame);
  }

  private time(): string {
    return new Date(this.now()).toISOString();
  }

  private mustGet(studyId: string, participantId: string): WorkerRecord {
    const worker = this.get(studyId, participantId);
    if (!worker) throw new WorkerError('NOT_FOUND', `no worker ${JSON.stringify(participantId)} in study ${studyId}`);
    return worker;
  }

  /** Reads the row and writes what `decide` returns, in one immediate transaction. */
  private change(studyId: string, participantId: string, decide: (worker: WorkerRowWithGames) => Changes): WorkerRecord {
    const run = this.db.transaction(() => {
      const row = this.selectWorker.get(studyId, participantId);
      if (!row) throw new WorkerError('NOT_FOUND', `no worker ${JSON.stringify(participantId)} in study ${studyId}`);
      const changes = decide(row);
      if (Object.keys(changes).length > 0) this.update(studyId, participantId, changes);
      return this.mustGet(studyId, participantId);
    });
    return run.immediate();
  }

  private update(studyId: string, participantId: string, changes: Changes): void {
    const columns = Object.keys(changes);
    if (columns.length === 0) return;
    for (const column of columns) if (!CHANGEABLE.has(column)) throw new Error(`not a worker column: ${column}`);
    const key = columns.join(',');
    let statement = this.updates.get(key);
    if (!statement) {
      const set = columns.map((column) => `${column} = @${column}`).join(', ');
      statement = this.db.prepare(`UPDATE workers SET ${set} WHERE study_id = @study_id AND participant_id = @participant_id`);
      this.updates.set(key, statement);
    }
    statement.run({ ...changes, study_id: studyId, participant_id: participantId });
  }
}

function migrate(db: Database.Database, path: string): void {
  const step = db.transaction(() => {
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > SCHEMA_VERSION) throw new Error(`${path} has schema version ${version}, newer than this version of cerealbar (${SCHEMA_VERSION})`);
    for (let v = version; v < SCHEMA_VERSION; v++) db.exec(MIGRATIONS[v]);
    if (version !== SCHEMA_VERSION) db.pragma(`user_version = ${SCHEMA_VERSION}`);
  });
  step.immediate();
}

/** The code of an ending, unless the worker has one already (the first ending stands). */
function completionChanges(study: StudyFile, row: WorkerRow, outcome: CompletionOutcome, at: string): Changes {
  if (row.completion_code !== null) return {};
  return { completion_outcome: outcome, completion_code: study.completionCodes[outcome], completion_at: at, completion_session: sessionKey(row) };
}

/** A follower whom the study's rule promotes: enough completed games as follower, with a high enough mean score. */
function promotionChanges(study: StudyFile, row: WorkerRowWithGames, at: string): Changes {
  const rule = study.roles.promotion;
  if (rule === 'manual' || row.role !== 'follower' || row.blocked_at !== null) return {};
  const games = row.follower_games_completed;
  if (games < rule.afterGames || row.follower_points / games < rule.minMeanScore) return {};
  return { role: 'leader', promoted_at: at };
}

function refuseBlocked(worker: WorkerRow): void {
  if (worker.blocked_at !== null) throw new WorkerError('BLOCKED', 'this worker is blocked from the study');
}

/** Blocked, declined, screened out or done: nothing more to record. */
function refuseAtEnding(worker: WorkerRow): void {
  refuseBlocked(worker);
  if (worker.declined_at !== null) throw new WorkerError('DECLINED', 'consent was declined, which is final');
  if (worker.screened_out_at !== null) throw new WorkerError('WRONG_STEP', 'this worker was screened out by the quiz');
  if (worker.completion_code !== null) throw new WorkerError('WRONG_STEP', 'this worker has finished the study');
}

function idColumns(ids: PlatformIds) {
  return {
    prolific_study_id: ids.prolificStudyId ?? null,
    prolific_session_id: ids.prolificSessionId ?? null,
    assignment_id: ids.assignmentId ?? null,
    hit_id: ids.hitId ?? null,
    turk_submit_to: ids.turkSubmitTo ?? null,
  };
}

function definedOnly<T extends Record<string, unknown>>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== null)) as Partial<T>;
}

function emptyRow(studyId: string, participantId: string, platform: PlatformKind, role: WorkerRole, at: string): WorkerRow {
  return {
    study_id: studyId,
    participant_id: participantId,
    platform,
    prolific_study_id: null,
    prolific_session_id: null,
    assignment_id: null,
    hit_id: null,
    turk_submit_to: null,
    created_at: at,
    last_seen_at: at,
    consented_at: null,
    declined_at: null,
    rules_read_at: null,
    leader_tutorial_at: null,
    follower_tutorial_at: null,
    quiz_attempts: 0,
    quiz_last_score: null,
    quiz_passed_at: null,
    screened_out_at: null,
    role,
    promoted_at: null,
    blocked_at: null,
    block_reason: null,
    completion_outcome: null,
    completion_code: null,
    completion_at: null,
    completion_session: null,
    waiting_since: null,
  };
}

interface WorkerGameRow {
  readonly game_id: string;
  readonly role: Role;
  readonly session_key: string;
  readonly started_at: string;
  readonly ended_at: string | null;
  readonly end_reason: EndReason | null;
  readonly score: number;
  readonly seconds: number;
  readonly left_game: number;
}

function workerGame(row: WorkerGameRow): WorkerGame {
  return {
    gameId: row.game_id,
    role: row.role,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    endReason: row.end_reason,
    score: row.score,
    seconds: Math.round(row.seconds * 10) / 10,
    left: row.left_game === 1,
  };
}

function workerRecord(row: WorkerRowWithGames): WorkerRecord {
  const platformIds: PlatformIds = {
    ...(row.prolific_study_id !== null && { prolificStudyId: row.prolific_study_id }),
    ...(row.prolific_session_id !== null && { prolificSessionId: row.prolific_session_id }),
    ...(row.assignment_id !== null && { assignmentId: row.assignment_id }),
    ...(row.hit_id !== null && { hitId: row.hit_id }),
    ...(row.turk_submit_to !== null && { turkSubmitTo: row.turk_submit_to }),
  };
  return {
    studyId: row.study_id,
    participantId: row.participant_id,
    platform: row.platform,
    platformIds,
    createdAt: row.created_at,
    lastSeenAt: row.last_seen_at,
    consentedAt: row.consented_at,
    declinedAt: row.declined_at,
    rulesReadAt: row.rules_read_at,
    tutorialPassedAt: { leader: row.leader_tutorial_at, follower: row.follower_tutorial_at },
    quiz: { attempts: row.quiz_attempts, lastScore: row.quiz_last_score, passedAt: row.quiz_passed_at },
    screenedOutAt: row.screened_out_at,
    role: row.role,
    promotedAt: row.promoted_at,
    blocked: row.blocked_at === null ? null : { at: row.blocked_at, reason: row.block_reason },
    completion:
      row.completion_outcome === null || row.completion_code === null || row.completion_at === null
        ? null
        : { outcome: row.completion_outcome, code: row.completion_code, issuedAt: row.completion_at },
    waitingSince: row.waiting_since,
    games: {
      played: row.games_played,
      completed: row.games_completed,
      completedThisSession: row.games_completed_in_session,
      inProgress: row.games_open,
      points: row.points,
      seconds: Math.round(row.seconds * 10) / 10,
    },
  };
}
