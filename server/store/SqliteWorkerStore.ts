/**
 * A study's workers on one machine: dataDir/workers.sqlite, one row per (study, participant) and
 * one per session (a worker's visit), whose token is kept only as its SHA-256. What each change
 * decides is in workerChanges.ts; PgWorkerStore keeps the same rows in PostgreSQL.
 *
 * Unlike the game index, this file may be shared by several server processes: every change is one
 * statement or an immediate transaction that reads and writes the row it decides on, so two
 * processes (or two requests) cannot both use a worker's last quiz attempt. Nothing lives in one
 * process's memory.
 */
import type { ArmTotals } from '../../shared/study/overview';
import Database from 'better-sqlite3';
import { migrate, schemaVersion, type Migration } from './migrations';
import { openSharedDatabase } from './sqliteFile';
import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Role } from '../../shared/engine/state';
import type { EndReason } from '../../shared/log/format';
import type { StudyFile } from '../../shared/study/studyFile';
import type { QuizMarking, SessionStart, WorkerGame, WorkerRecord } from '../../shared/study/worker';
import type { SessionProof, WorkerSession, WorkerStore } from './types';
import {
  blockChanges,
  CHANGEABLE,
  consentChanges,
  emptyRow,
  gameEndChanges,
  hashToken,
  HOUR_MS,
  MAX_SESSIONS_KEPT,
  MINUTE_MS,
  refuseNewWorker,
  idColumns,
  newToken,
  noPartnerChanges,
  promoteChanges,
  quizChanges,
  rulesChanges,
  SESSION_TTL_MS,
  sessionKey,
  startingRole,
  refuseUnlessAtPlay,
  startWaitingChanges,
  stopWaitingChanges,
  tutorialChanges,
  visitChanges,
  VOUCH_TTL_MS,
  WITH_GAMES,
  WorkerError,
  workerGame,
  workerRecord,
  type ArmDraw,
  type Changes,
  type GameEnd,
  type QuizResult,
  type RecentWorkers,
  type StudyGameTotals,
  type WorkerGameRow,
  type WorkerRow,
  type WorkerRowWithGames,
  ENDING_STANDS_OPEN,
} from './workerChanges';

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

export class SqliteWorkerStore implements WorkerStore {
  private readonly selectWorker;
  private readonly selectWorkers;
  private readonly selectSession;
  private readonly selectVouching;
  private readonly insertWorkerRow;
  private readonly insertSessionRow;
  private readonly insertGameRow;
  private readonly deleteExpiredSessions;
  private readonly endGameRow;
  private readonly selectGames;
  private readonly selectGameTotals;
  private readonly selectNextDraw;
  private readonly selectUnusedDraw;
  private readonly insertDrawRow;
  private readonly drawGameRow;
  private readonly selectArmTotals;
  private readonly selectRecentWorkers;
  private readonly trimSessions;
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
      WHERE study_id = @study_id AND participant_id = @participant_id AND game_id = @game_id AND ${ENDING_STANDS_OPEN}`);
    this.selectGameTotals = db.prepare<[string], { games: number; live: number; mean_score: number | null; mean_seconds: number | null }>(`
      SELECT COUNT(*) AS games, COALESCE(SUM(ended_at IS NULL), 0) AS live,
        AVG(CASE WHEN ended_at IS NOT NULL THEN score END) AS mean_score, AVG(CASE WHEN ended_at IS NOT NULL THEN seconds END) AS mean_seconds
      FROM (SELECT game_id, MAX(ended_at) AS ended_at, MAX(score) AS score, MAX(seconds) AS seconds FROM worker_games WHERE study_id = ? GROUP BY game_id)`);
    this.selectNextDraw = db.prepare<[string], { draw: number }>('SELECT COALESCE(MAX(draw) + 1, 0) AS draw FROM arm_draws WHERE study_id = ?');
    this.selectUnusedDraw = db.prepare<[string, string], ArmDraw>(
      'SELECT draw, arm_id AS armId FROM arm_draws WHERE study_id = ? AND participant_id = ? AND game_id IS NULL ORDER BY draw DESC LIMIT 1',
    );
    this.insertDrawRow = db.prepare<[string, number, string, string, string]>('INSERT INTO arm_draws (study_id, draw, arm_id, participant_id, drawn_at) VALUES (?, ?, ?, ?, ?)');
    this.drawGameRow = db.prepare<[string, string, number, string]>('UPDATE arm_draws SET game_id = ? WHERE study_id = ? AND draw = ? AND participant_id = ?');
    this.selectArmTotals = db.prepare<[string], ArmTotals>(`
      SELECT d.arm_id AS arm, COUNT(*) AS drawn, COUNT(g.game_id) AS games,
        COALESCE(SUM(g.game_id IS NOT NULL AND g.ended_at IS NULL), 0) AS live,
        COALESCE(SUM(g.ended_at IS NOT NULL AND g.end_reason <> 'abandoned'), 0) AS ended,
        COALESCE(SUM(g.ended_at IS NOT NULL AND g.end_reason = 'abandoned'), 0) AS abandoned
      FROM arm_draws d LEFT JOIN worker_games g ON g.study_id = d.study_id AND g.participant_id = d.participant_id AND g.game_id = d.game_id
      WHERE d.study_id = ? GROUP BY d.arm_id ORDER BY d.arm_id`);
    this.selectGames = db.prepare<[string, string], WorkerGameRow>('SELECT * FROM worker_games WHERE study_id = ? AND participant_id = ? ORDER BY started_at, game_id');
    this.selectSession = db.prepare<[string, string, string], { participant_id: string; limited: number }>(
      'SELECT participant_id, limited FROM worker_sessions WHERE token_hash = ? AND study_id = ? AND expires_at > ?',
    );
    this.selectVouching = db.prepare<[string, string, string], { participant_id: string }>(
      'SELECT participant_id FROM worker_sessions WHERE token_hash = ? AND study_id = ? AND limited = 0 AND created_at > ?',
    );
    this.insertWorkerRow = db.prepare<WorkerRow>(`
      INSERT INTO workers (study_id, participant_id, platform, prolific_study_id, prolific_session_id, assignment_id, hit_id, turk_submit_to, created_at, last_seen_at, role, created_address)
      VALUES (@study_id, @participant_id, @platform, @prolific_study_id, @prolific_session_id, @assignment_id, @hit_id, @turk_submit_to, @created_at, @last_seen_at, @role, @created_address)`);
    this.selectRecentWorkers = db.prepare<{ study_id: string; address: string | null; hour_ago: string; minute_ago: string }, RecentWorkers>(`
      SELECT COALESCE(SUM(created_address = @address), 0) AS fromAddress, MIN(CASE WHEN created_address = @address THEN created_at END) AS oldestFromAddress,
        COALESCE(SUM(created_at > @minute_ago), 0) AS lastMinute, MIN(CASE WHEN created_at > @minute_ago THEN created_at END) AS oldestLastMinute
      FROM workers WHERE study_id = @study_id AND created_at > @hour_ago`);
    this.deleteExpiredSessions = db.prepare<[string]>('DELETE FROM worker_sessions WHERE created_at <= ?');
    this.insertSessionRow = db.prepare<[string, string, string, string, string, string | null, string | null, string | null, number]>(
      'INSERT INTO worker_sessions (token_hash, study_id, participant_id, created_at, expires_at, prolific_session_id, assignment_id, hit_id, limited) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    this.trimSessions = db.prepare<{ study_id: string; participant_id: string; limited: number; keep: number }>(`
      DELETE FROM worker_sessions WHERE study_id = @study_id AND participant_id = @participant_id AND limited = @limited AND rowid NOT IN
        (SELECT rowid FROM worker_sessions WHERE study_id = @study_id AND participant_id = @participant_id AND limited = @limited ORDER BY rowid DESC LIMIT @keep)`);
  }

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
        return new SqliteWorkerStore(db, options.now ?? Date.now);
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
      return new SqliteWorkerStore(db, options.now ?? Date.now);
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
   * Starts a visit: finds the worker (or creates it, with the study's starting role, within the
   * study's admission limits), lets it in as `proof` vouches for it (visitChanges), and returns a
   * new session token. The token is returned here only.
   */
  startSession(study: StudyFile, start: SessionStart, proof: SessionProof = {}): WorkerSession & { token: string } {
    const token = newToken();
    const at = this.time();
    const ids = idColumns(start.ids);
    const expires = new Date(this.now() + SESSION_TTL_MS).toISOString();
    const vouching = proof.token === undefined ? undefined : this.selectVouching.get(hashToken(proof.token), study.id, this.time(-VOUCH_TTL_MS))?.participant_id;
    const run = this.db.transaction(() => {
      const existing = this.selectWorker.get(study.id, start.participantId);
      let limited = false;
      if (existing) {
        const visit = visitChanges(existing, ids, { heldToken: vouching === start.participantId }, at);
        this.update(study.id, start.participantId, visit.changes);
        limited = visit.limited;
      } else {
        const address = proof.addressTag ?? null;
        refuseNewWorker(study, this.selectRecentWorkers.get({ study_id: study.id, address, hour_ago: this.time(-HOUR_MS), minute_ago: this.time(-MINUTE_MS) })!, this.now());
        this.insertWorkerRow.run({ ...emptyRow(study.id, start.participantId, study.platform.kind, startingRole(study), at), ...ids, created_address: address });
      }
      // Sessions go as new ones come once they no longer vouch; a worker keeps its latest few of each kind, so that strangers' limited ones never push out its own.
      this.deleteExpiredSessions.run(this.time(-VOUCH_TTL_MS));
      this.insertSessionRow.run(hashToken(token), study.id, start.participantId, at, expires, ids.prolific_session_id, ids.assignment_id, ids.hit_id, limited ? 1 : 0);
      this.trimSessions.run({ study_id: study.id, participant_id: start.participantId, limited: limited ? 1 : 0, keep: MAX_SESSIONS_KEPT });
      return { worker: this.mustGet(study.id, start.participantId), limited };
    });
    return { token, ...run.immediate() };
  }

  /** The session a token belongs to, for this study, while the token lasts; null otherwise. */
  sessionForToken(studyId: string, token: string): WorkerSession | null {
    const session = this.selectSession.get(hashToken(token), studyId, this.time());
    const worker = session ? this.get(studyId, session.participant_id) : null;
    return worker ? { worker, limited: session!.limited === 1 } : null;
  }

  answerConsent(studyId: string, participantId: string, agree: boolean, limited = false): WorkerRecord {
    return this.change(studyId, participantId, (worker) => consentChanges(worker, agree, this.time(), limited));
  }

  readRules(studyId: string, participantId: string): WorkerRecord {
    return this.change(studyId, participantId, (worker) => rulesChanges(worker, this.time()));
  }

  passTutorial(studyId: string, participantId: string, role: Role): WorkerRecord {
    return this.change(studyId, participantId, (worker) => tutorialChanges(worker, role, this.time()));
  }

  submitQuiz(study: StudyFile, participantId: string, answers: readonly number[], limited = false): QuizResult {
    let marking: QuizMarking | null = null;
    const worker = this.change(study.id, participantId, (row) => {
      const decided = quizChanges(study, row, answers, this.time(), limited);
      marking = decided.marking;
      return decided.changes;
    });
    return { ...(marking as unknown as QuizMarking), worker };
  }

  block(studyId: string, participantId: string, reason: string | null): WorkerRecord {
    return this.change(studyId, participantId, (worker) => blockChanges(worker, reason, this.time()));
  }

  promote(studyId: string, participantId: string): WorkerRecord {
    return this.change(studyId, participantId, (worker) => promoteChanges(worker, this.time()));
  }

  startWaiting(studyId: string, participantId: string): WorkerRecord {
    return this.change(studyId, participantId, (row) => startWaitingChanges(row, this.time()));
  }

  stopWaiting(studyId: string, participantId: string, startedBy?: number): WorkerRecord {
    return this.change(studyId, participantId, (row) => stopWaitingChanges(row, startedBy));
  }

  /** A game with the worker in it started: its wait is over and the game is counted from now. */
  recordGameStart(studyId: string, participantId: string, gameId: string, role: Role, armDraw?: number): WorkerRecord {
    return this.change(studyId, participantId, (row) => {
      this.insertGameRow.run(studyId, participantId, gameId, role, sessionKey(row), this.time());
      if (armDraw !== undefined) this.drawGameRow.run(gameId, studyId, armDraw, participantId);
      return { waiting_since: null };
    });
  }

  recordGameEnd(study: StudyFile, participantId: string, gameId: string, end: GameEnd): WorkerRecord {
    return this.change(study.id, participantId, () => {
      this.endGameRow.run({ study_id: study.id, participant_id: participantId, game_id: gameId, ended_at: this.time(), end_reason: end.reason, score: end.score, left_game: end.left ? 1 : 0 });
      return gameEndChanges(study, this.selectWorker.get(study.id, participantId)!, end, this.time());
    });
  }

  claimNoPartner(study: StudyFile, participantId: string): WorkerRecord {
    return this.change(study.id, participantId, (row) => noPartnerChanges(study, row, this.now(), this.time()));
  }

  /**
   * The study's games as its workers' records count them (each game once): how many, how many
   * are being played, and the mean final score and length of the ended ones.
   */
  gameTotals(studyId: string): StudyGameTotals {
    const row = this.selectGameTotals.get(studyId)!;
    return { games: row.games, live: row.live, meanScore: row.mean_score, meanSeconds: row.mean_seconds === null ? null : Math.round(row.mean_seconds * 10) / 10 };
  }

  drawArm(studyId: string, participantId: string, armOf: (draw: number) => string): ArmDraw {
    const run = this.db.transaction(() => {
      refuseUnlessAtPlay(this.row(studyId, participantId));
      const unused = this.selectUnusedDraw.get(studyId, participantId);
      if (unused) return unused;
      const { draw } = this.selectNextDraw.get(studyId)!;
      const armId = armOf(draw);
      this.insertDrawRow.run(studyId, draw, armId, participantId, this.time());
      return { draw, armId };
    });
    return run.immediate();
  }

  armTotals(studyId: string): ArmTotals[] {
    return this.selectArmTotals.all(studyId);
  }

  /** The games a worker played (and plays), oldest first. */
  games(studyId: string, participantId: string): WorkerGame[] {
    return this.selectGames.all(studyId, participantId).map(workerGame);
  }

  /** The store's clock as ISO 8601, `offsetMs` from now. */
  private time(offsetMs = 0): string {
    return new Date(this.now() + offsetMs).toISOString();
  }

  private mustGet(studyId: string, participantId: string): WorkerRecord {
    const worker = this.get(studyId, participantId);
    if (!worker) throw new WorkerError('NOT_FOUND', `no worker ${JSON.stringify(participantId)} in study ${studyId}`);
    return worker;
  }

  /** The worker's row with the sums of its games; read within a transaction that writes what it decides. */
  private row(studyId: string, participantId: string): WorkerRowWithGames {
    const row = this.selectWorker.get(studyId, participantId);
    if (!row) throw new WorkerError('NOT_FOUND', `no worker ${JSON.stringify(participantId)} in study ${studyId}`);
    return row;
  }

  /** Reads the row and writes what `decide` returns, in one immediate transaction. */
  private change(studyId: string, participantId: string, decide: (worker: WorkerRowWithGames) => Changes): WorkerRecord {
    const run = this.db.transaction(() => {
      const changes = decide(this.row(studyId, participantId));
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
