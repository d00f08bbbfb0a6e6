/**
 * A study's workers on one machine: dataDir/workers.sqlite, one row per (study, participant) and
 * one per session (a worker's visit), whose token is kept only as its SHA-256. The store is
 * RowWorkerStore on these rows; PgWorkerStore keeps the same rows in PostgreSQL.
 *
 * Unlike the game index, this file may be shared by several server processes: every change is an
 * immediate transaction (the write lock from its start) that reads and writes the row it decides
 * on, so two processes (or two requests) cannot both use a worker's last quiz attempt. Nothing
 * lives in one process's memory.
 */
import Database from 'better-sqlite3';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Role } from '../../shared/engine/state';
import type { ArmTotals } from '../../shared/study/overview';
import { migrate, schemaVersion, type Migration } from './migrations';
import { RowWorkerStore } from './RowWorkerStore';
import { openSharedDatabase } from './sqliteFile';
import { ENDING_STANDS_OPEN, WITH_GAMES, type ArmDraw, type Changes, type GameEnd, type RecentWorkers, type WorkerGameRow, type WorkerRow, type WorkerRowWithGames } from './workerChanges';
import { stepsAtOnce, type GameTotalsRow, type SessionRow, type Steps, type WorkerDatabase, type WorkerRows } from './workerRows';

export const WORKERS_FILE = 'workers.sqlite';

export interface WorkerStoreOptions {
  /** Milliseconds since the epoch; Date.now by default (tests inject a clock). */
  readonly now?: () => number;
  /** Opens an existing file without writing to it (the `study workers` command). */
  readonly readonly?: boolean;
}

/** The schema (migrations.ts): each entry brings a file one version up. */
const MIGRATIONS: readonly Migration[] = [
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
  `
  CREATE TABLE arm_draws (
    study_id        TEXT NOT NULL,
    draw            INTEGER NOT NULL,  -- 0, 1, ... in the order drawn: the arm is a function of it (server/study/arms.ts)
    arm_id          TEXT NOT NULL,
    participant_id  TEXT NOT NULL,
    drawn_at        TEXT NOT NULL,
    game_id         TEXT,              -- set when the game made for the draw starts
    PRIMARY KEY (study_id, draw),
    FOREIGN KEY (study_id, participant_id) REFERENCES workers (study_id, participant_id)
  );
  `,
  `
  ALTER TABLE workers ADD COLUMN created_address TEXT;  -- a keyed hash of the address the worker was first seen from, never the address
  CREATE INDEX workers_by_creation ON workers (study_id, created_at);
  ALTER TABLE worker_sessions ADD COLUMN limited INTEGER NOT NULL DEFAULT 0;  -- 1: no platform id vouched for the session (visitChanges)
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

export class SqliteWorkerStore extends RowWorkerStore<false> {
  /** The worker file of a data directory, created (with the directory) if missing. */
  static open(dataDir: string, options: WorkerStoreOptions = {}): SqliteWorkerStore {
    const root = resolve(dataDir);
    const path = join(root, WORKERS_FILE);
    if (options.readonly) {
      if (!existsSync(path)) throw new Error(`${path} does not exist: no worker has started a session with this data directory`);
      const db = new Database(path, { readonly: true, fileMustExist: true });
      try {
        const version = schemaVersion(db);
        if (version !== SCHEMA_VERSION) throw new Error(`${path} has schema version ${version}; this version of cerealbar reads ${SCHEMA_VERSION}`);
        return new SqliteWorkerStore(new SqliteWorkerRows(db), options.now ?? Date.now);
      } catch (error) {
        db.close();
        throw error;
      }
    }
    mkdirSync(root, { recursive: true });
    const db = openSharedDatabase(path);
    try {
      // Other processes may hold the write lock for a moment.
      db.pragma('busy_timeout = 5000');
      migrate(db, MIGRATIONS);
      return new SqliteWorkerStore(new SqliteWorkerRows(db), options.now ?? Date.now);
    } catch (error) {
      db.close();
      throw error;
    }
  }
}

/** The rows, in statements prepared once; a transaction holds the whole file, so the locks are no-ops. */
class SqliteWorkerRows implements WorkerDatabase<false>, WorkerRows {
  private readonly selectWorker;
  private readonly selectWorkers;
  private readonly insertWorkerRow;
  private readonly selectRecentWorkers;
  private readonly selectSession;
  private readonly selectVouching;
  private readonly insertSessionRow;
  private readonly deleteSessions;
  private readonly trimSessionRows;
  private readonly selectGames;
  private readonly insertGameRow;
  private readonly endGameRow;
  private readonly selectGameTotals;
  private readonly selectUnusedDraw;
  private readonly selectNextDraw;
  private readonly insertDrawRow;
  private readonly drawGameRow;
  private readonly selectArmTotals;
  /** UPDATE statements by the columns they set, prepared once each. */
  private readonly updates = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {
    this.selectWorker = db.prepare<[string, string], WorkerRowWithGames>(`${WITH_GAMES} WHERE w.study_id = ? AND w.participant_id = ?`);
    this.selectWorkers = db.prepare<[string], WorkerRowWithGames>(`${WITH_GAMES} WHERE w.study_id = ? ORDER BY w.created_at, w.participant_id`);
    this.insertWorkerRow = db.prepare<WorkerRow>(`
      INSERT INTO workers (study_id, participant_id, platform, prolific_study_id, prolific_session_id, assignment_id, hit_id, turk_submit_to, created_at, last_seen_at, role, created_address)
      VALUES (@study_id, @participant_id, @platform, @prolific_study_id, @prolific_session_id, @assignment_id, @hit_id, @turk_submit_to, @created_at, @last_seen_at, @role, @created_address)`);
    this.selectRecentWorkers = db.prepare<{ study_id: string; address: string | null; hour_ago: string; minute_ago: string }, RecentWorkers>(`
      SELECT COALESCE(SUM(created_address = @address), 0) AS fromAddress, MIN(CASE WHEN created_address = @address THEN created_at END) AS oldestFromAddress,
        COALESCE(SUM(created_at > @minute_ago), 0) AS lastMinute, MIN(CASE WHEN created_at > @minute_ago THEN created_at END) AS oldestLastMinute
      FROM workers WHERE study_id = @study_id AND created_at > @hour_ago`);
    this.selectSession = db.prepare<[string, string, string], Pick<SessionRow, 'participant_id' | 'limited'>>(
      'SELECT participant_id, limited FROM worker_sessions WHERE token_hash = ? AND study_id = ? AND expires_at > ?',
    );
    this.selectVouching = db
      .prepare<[string, string, string], string>('SELECT participant_id FROM worker_sessions WHERE token_hash = ? AND study_id = ? AND limited = 0 AND created_at > ?')
      .pluck();
    this.insertSessionRow = db.prepare<SessionRow>(`
      INSERT INTO worker_sessions (token_hash, study_id, participant_id, created_at, expires_at, prolific_session_id, assignment_id, hit_id, limited)
      VALUES (@token_hash, @study_id, @participant_id, @created_at, @expires_at, @prolific_session_id, @assignment_id, @hit_id, @limited)`);
    this.deleteSessions = db.prepare<[string]>('DELETE FROM worker_sessions WHERE created_at <= ?');
    this.trimSessionRows = db.prepare<{ study_id: string; participant_id: string; limited: number; keep: number }>(`
      DELETE FROM worker_sessions WHERE study_id = @study_id AND participant_id = @participant_id AND limited = @limited AND rowid NOT IN
        (SELECT rowid FROM worker_sessions WHERE study_id = @study_id AND participant_id = @participant_id AND limited = @limited ORDER BY rowid DESC LIMIT @keep)`);
    this.selectGames = db.prepare<[string, string], WorkerGameRow>('SELECT * FROM worker_games WHERE study_id = ? AND participant_id = ? ORDER BY started_at, game_id');
    this.insertGameRow = db.prepare<[string, string, string, Role, string, string]>(
      'INSERT OR IGNORE INTO worker_games (study_id, participant_id, game_id, role, session_key, started_at) VALUES (?, ?, ?, ?, ?, ?)',
    );
    this.endGameRow = db.prepare<{ study_id: string; participant_id: string; game_id: string; ended_at: string; end_reason: GameEnd['reason']; score: number; left_game: number }>(`
      UPDATE worker_games SET ended_at = @ended_at, end_reason = @end_reason, score = @score, left_game = @left_game,
        seconds = (julianday(@ended_at) - julianday(started_at)) * 86400.0
      WHERE study_id = @study_id AND participant_id = @participant_id AND game_id = @game_id AND ${ENDING_STANDS_OPEN}`);
    this.selectGameTotals = db.prepare<[string], GameTotalsRow>(`
      SELECT COUNT(*) AS games, COALESCE(SUM(ended_at IS NULL), 0) AS live,
        AVG(CASE WHEN ended_at IS NOT NULL THEN score END) AS mean_score, AVG(CASE WHEN ended_at IS NOT NULL THEN seconds END) AS mean_seconds
      FROM (SELECT game_id, MAX(ended_at) AS ended_at, MAX(score) AS score, MAX(seconds) AS seconds FROM worker_games WHERE study_id = ? GROUP BY game_id)`);
    this.selectUnusedDraw = db.prepare<[string, string], ArmDraw>(
      'SELECT draw, arm_id AS armId FROM arm_draws WHERE study_id = ? AND participant_id = ? AND game_id IS NULL ORDER BY draw DESC LIMIT 1',
    );
    this.selectNextDraw = db.prepare<[string], number>('SELECT COALESCE(MAX(draw) + 1, 0) FROM arm_draws WHERE study_id = ?').pluck();
    this.insertDrawRow = db.prepare<[string, number, string, string, string]>('INSERT INTO arm_draws (study_id, draw, arm_id, participant_id, drawn_at) VALUES (?, ?, ?, ?, ?)');
    this.drawGameRow = db.prepare<[string, string, number, string]>('UPDATE arm_draws SET game_id = ? WHERE study_id = ? AND draw = ? AND participant_id = ?');
    this.selectArmTotals = db.prepare<[string], ArmTotals>(`
      SELECT d.arm_id AS arm, COUNT(*) AS drawn, COUNT(g.game_id) AS games,
        COALESCE(SUM(g.game_id IS NOT NULL AND g.ended_at IS NULL), 0) AS live,
        COALESCE(SUM(g.ended_at IS NOT NULL AND g.end_reason <> 'abandoned'), 0) AS ended,
        COALESCE(SUM(g.ended_at IS NOT NULL AND g.end_reason = 'abandoned'), 0) AS abandoned
      FROM arm_draws d LEFT JOIN worker_games g ON g.study_id = d.study_id AND g.participant_id = d.participant_id AND g.game_id = d.game_id
      WHERE d.study_id = ? GROUP BY d.arm_id ORDER BY d.arm_id`);
  }

  /** Immediate: the write lock from the start, so that what the steps read stays as read. */
  transaction<T>(steps: (rows: WorkerRows) => Steps<T>): T {
    return this.db.transaction(() => stepsAtOnce(steps(this))).immediate();
  }

  read<T>(steps: (rows: WorkerRows) => Steps<T>): T {
    return stepsAtOnce(steps(this));
  }

  close(): void {
    this.db.close();
  }

  lockWorker(): void {}

  lockStudy(): void {}

  worker(studyId: string, participantId: string): WorkerRowWithGames | null {
    return this.selectWorker.get(studyId, participantId) ?? null;
  }

  workers(studyId: string): WorkerRowWithGames[] {
    return this.selectWorkers.all(studyId);
  }

  insertWorker(row: WorkerRow): void {
    this.insertWorkerRow.run(row);
  }

  updateWorker(studyId: string, participantId: string, changes: Changes): void {
    const columns = Object.keys(changes);
    const key = columns.join(',');
    let statement = this.updates.get(key);
    if (!statement) {
      const set = columns.map((column) => `${column} = @${column}`).join(', ');
      statement = this.db.prepare(`UPDATE workers SET ${set} WHERE study_id = @study_id AND participant_id = @participant_id`);
      this.updates.set(key, statement);
    }
    statement.run({ ...changes, study_id: studyId, participant_id: participantId });
  }

  recentWorkers(studyId: string, address: string | null, hourAgo: string, minuteAgo: string): RecentWorkers {
    return this.selectRecentWorkers.get({ study_id: studyId, address, hour_ago: hourAgo, minute_ago: minuteAgo })!;
  }

  session(tokenHash: string, studyId: string, at: string): Pick<SessionRow, 'participant_id' | 'limited'> | null {
    return this.selectSession.get(tokenHash, studyId, at) ?? null;
  }

  vouchedParticipant(tokenHash: string, studyId: string, since: string): string | null {
    return this.selectVouching.get(tokenHash, studyId, since) ?? null;
  }

  insertSession(session: SessionRow): void {
    this.insertSessionRow.run(session);
  }

  dropSessions(before: string): void {
    this.deleteSessions.run(before);
  }

  /** The newest by rowid, which `newest`, just inserted, has. */
  trimSessions(newest: SessionRow, keep: number): void {
    this.trimSessionRows.run({ study_id: newest.study_id, participant_id: newest.participant_id, limited: newest.limited, keep });
  }

  games(studyId: string, participantId: string): WorkerGameRow[] {
    return this.selectGames.all(studyId, participantId);
  }

  insertGame(studyId: string, participantId: string, gameId: string, role: Role, sessionKey: string, at: string): void {
    this.insertGameRow.run(studyId, participantId, gameId, role, sessionKey, at);
  }

  endGame(studyId: string, participantId: string, gameId: string, end: GameEnd, at: string): void {
    this.endGameRow.run({ study_id: studyId, participant_id: participantId, game_id: gameId, ended_at: at, end_reason: end.reason, score: end.score, left_game: end.left ? 1 : 0 });
  }

  gameTotals(studyId: string): GameTotalsRow {
    return this.selectGameTotals.get(studyId)!;
  }

  unusedDraw(studyId: string, participantId: string): ArmDraw | null {
    return this.selectUnusedDraw.get(studyId, participantId) ?? null;
  }

  nextDraw(studyId: string): number {
    return this.selectNextDraw.get(studyId)!;
  }

  insertDraw(studyId: string, participantId: string, draw: ArmDraw, at: string): void {
    this.insertDrawRow.run(studyId, draw.draw, draw.armId, participantId, at);
  }

  drawStarted(studyId: string, participantId: string, draw: number, gameId: string): void {
    this.drawGameRow.run(gameId, studyId, draw, participantId);
  }

  armTotals(studyId: string): ArmTotals[] {
    return this.selectArmTotals.all(studyId);
  }
}
