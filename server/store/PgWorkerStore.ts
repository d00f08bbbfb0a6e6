/**
 * A study's workers in PostgreSQL, for server processes on several machines (`serve --store
 * postgres://... --study FILE`): the rows of SqliteWorkerStore, in the same database as the games.
 * Every change is one transaction that locks the worker's row (SELECT ... FOR UPDATE), reads it
 * with the sums of its games, and writes what workerChanges.ts decides; so two processes (or two
 * requests) cannot both use a worker's last quiz attempt.
 */
import type { ArmTotals } from '../../shared/study/overview';
import pg from 'pg';
import type { Role } from '../../shared/engine/state';
import type { StudyFile } from '../../shared/study/studyFile';
import type { QuizMarking, SessionStart, WorkerGame, WorkerRecord } from '../../shared/study/worker';
import { inTransaction } from './pgTransaction';
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
  type WorkerRowWithGames,
  ENDING_STANDS_OPEN,
} from './workerChanges';

/** Taken around the schema's creation, so that processes starting together do not race. */
const SCHEMA_LOCK = 7_244_019;

/** SqliteWorkerStore's schema (all of its migrations), in PostgreSQL's types. */
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS workers (
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
    waiting_since        TEXT,
    completion_session   TEXT,
    PRIMARY KEY (study_id, participant_id)
  );
  CREATE TABLE IF NOT EXISTS worker_sessions (
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
  CREATE INDEX IF NOT EXISTS worker_sessions_by_worker ON worker_sessions (study_id, participant_id);
  CREATE TABLE IF NOT EXISTS worker_games (
    study_id        TEXT NOT NULL,
    participant_id  TEXT NOT NULL,
    game_id         TEXT NOT NULL,
    role            TEXT NOT NULL,
    session_key     TEXT NOT NULL,
    started_at      TEXT NOT NULL,
    ended_at        TEXT,
    end_reason      TEXT,
    score           INTEGER NOT NULL DEFAULT 0,
    seconds         DOUBLE PRECISION NOT NULL DEFAULT 0,
    left_game       INTEGER NOT NULL DEFAULT 0,  -- 1 when this worker's leaving ended the game
    PRIMARY KEY (study_id, participant_id, game_id),
    FOREIGN KEY (study_id, participant_id) REFERENCES workers (study_id, participant_id)
  );
  CREATE TABLE IF NOT EXISTS arm_draws (
    study_id        TEXT NOT NULL,
    draw            INTEGER NOT NULL,  -- 0, 1, ... in the order drawn: the arm is a function of it (server/study/arms.ts)
    arm_id          TEXT NOT NULL,
    participant_id  TEXT NOT NULL,
    drawn_at        TEXT NOT NULL,
    game_id         TEXT,              -- set when the game made for the draw starts
    PRIMARY KEY (study_id, draw),
    FOREIGN KEY (study_id, participant_id) REFERENCES workers (study_id, participant_id)
  );
  ALTER TABLE workers ADD COLUMN IF NOT EXISTS created_address TEXT;  -- a keyed hash of the address the worker was first seen from, never the address
  CREATE INDEX IF NOT EXISTS workers_by_creation ON workers (study_id, created_at);
  ALTER TABLE worker_sessions ADD COLUMN IF NOT EXISTS limited INTEGER NOT NULL DEFAULT 0;  -- 1: no platform id vouched for the session (visitChanges)
`;

/** RecentWorkers for a study (refuseNewWorker): $1 study, $2 address tag, $3 an hour ago, $4 a minute ago. */
const RECENT_WORKERS = `
  SELECT CAST(COUNT(*) FILTER (WHERE created_address = $2) AS INTEGER) AS "fromAddress", MIN(created_at) FILTER (WHERE created_address = $2) AS "oldestFromAddress",
    CAST(COUNT(*) FILTER (WHERE created_at > $4) AS INTEGER) AS "lastMinute", MIN(created_at) FILTER (WHERE created_at > $4) AS "oldestLastMinute"
  FROM workers WHERE study_id = $1 AND created_at > $3`;

const INSERT_WORKER = `
  INSERT INTO workers (study_id, participant_id, platform, prolific_study_id, prolific_session_id, assignment_id, hit_id, turk_submit_to, created_at, last_seen_at, role, created_address)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`;

/** The study's games, each once (both its workers' rows name it). */
const GAME_TOTALS = `
  SELECT CAST(COUNT(*) AS INTEGER) AS games, CAST(COUNT(*) FILTER (WHERE ended_at IS NULL) AS INTEGER) AS live,
    CAST(AVG(score) FILTER (WHERE ended_at IS NOT NULL) AS DOUBLE PRECISION) AS mean_score,
    CAST(AVG(seconds) FILTER (WHERE ended_at IS NOT NULL) AS DOUBLE PRECISION) AS mean_seconds
  FROM (SELECT game_id, MAX(ended_at) AS ended_at, MAX(score) AS score, MAX(seconds) AS seconds FROM worker_games WHERE study_id = $1 GROUP BY game_id) AS each_game`;

/** Each arm's draws and games in a study (each game once: a draw has one worker). */
const ARM_TOTALS = `
  SELECT d.arm_id AS arm, CAST(COUNT(*) AS INTEGER) AS drawn, CAST(COUNT(g.game_id) AS INTEGER) AS games,
    CAST(COUNT(*) FILTER (WHERE g.game_id IS NOT NULL AND g.ended_at IS NULL) AS INTEGER) AS live,
    CAST(COUNT(*) FILTER (WHERE g.ended_at IS NOT NULL AND g.end_reason <> 'abandoned') AS INTEGER) AS ended,
    CAST(COUNT(*) FILTER (WHERE g.ended_at IS NOT NULL AND g.end_reason = 'abandoned') AS INTEGER) AS abandoned
  FROM arm_draws d LEFT JOIN worker_games g ON g.study_id = d.study_id AND g.participant_id = d.participant_id AND g.game_id = d.game_id
  WHERE d.study_id = $1 GROUP BY d.arm_id ORDER BY d.arm_id COLLATE "C"`;

/** Taken (with the study id's hash) around a study's arm draw, so that two processes never hand out one number. */
const ARM_DRAW_LOCK = 7_244_020;

/** Taken (with the study id's hash) around a session's start, so that a study's admission limits count every new worker. */
const NEW_WORKER_LOCK = 7_244_021;

export interface PgWorkerStoreOptions {
  /** Milliseconds since the epoch; Date.now by default (tests inject a clock). */
  readonly now?: () => number;
  /** To read only (the researcher's commands): no table is made, and a database without them is refused. */
  readonly readonly?: boolean;
}

type Query = Pick<pg.PoolClient, 'query'>;

export class PgWorkerStore implements WorkerStore {
  private constructor(
    private readonly pool: pg.Pool,
    readonly now: () => number,
  ) {}

  /** The store on the database at `url`, its tables made if missing (unless `readonly`). */
  static async open(url: string, options: PgWorkerStoreOptions = {}): Promise<PgWorkerStore> {
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    // An idle client's error (the database restarting) would otherwise be thrown as an uncaught error.
    pool.on('error', (error) => process.stderr.write(`cerealbar: warning: the worker store's database connection failed: ${error.message}\n`));
    try {
      const store = new PgWorkerStore(pool, options.now ?? Date.now);
      if (options.readonly) {
        const { rows } = await pool.query<{ workers: string | null }>("SELECT to_regclass('workers') AS workers");
        if (rows[0]!.workers === null) throw new Error('the database has no workers table: is it the one serve --store --study uses?');
        return store;
      }
      await store.transaction(async (tx) => {
        await tx.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
        await tx.query(SCHEMA);
      });
      return store;
    } catch (error) {
      await pool.end();
      throw error;
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  async get(studyId: string, participantId: string): Promise<WorkerRecord | null> {
    const row = await this.row(this.pool, studyId, participantId);
    return row ? workerRecord(row) : null;
  }

  async list(studyId: string): Promise<WorkerRecord[]> {
    const { rows } = await this.pool.query<WorkerRowWithGames>(`${WITH_GAMES} WHERE w.study_id = $1 ORDER BY w.created_at, w.participant_id COLLATE "C"`, [studyId]);
    return rows.map(workerRecord);
  }

  async startSession(study: StudyFile, start: SessionStart, proof: SessionProof = {}): Promise<WorkerSession & { token: string }> {
    const token = newToken();
    const at = this.time();
    const ids = idColumns(start.ids);
    const expires = new Date(this.now() + SESSION_TTL_MS).toISOString();
    const vouching =
      proof.token === undefined
        ? undefined
        : (
            await this.pool.query<{ participant_id: string }>('SELECT participant_id FROM worker_sessions WHERE token_hash = $1 AND study_id = $2 AND limited = 0 AND created_at > $3', [
              hashToken(proof.token),
              study.id,
              this.time(-VOUCH_TTL_MS),
            ])
          ).rows[0]?.participant_id;
    const session = await this.transaction(async (tx) => {
      // New workers of a study are admitted one at a time, so that its limits count every one.
      await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [NEW_WORKER_LOCK, study.id]);
      const found = await tx.query('SELECT 1 FROM workers WHERE study_id = $1 AND participant_id = $2 FOR UPDATE', [study.id, start.participantId]);
      const existing = found.rowCount === 0 ? null : await this.row(tx, study.id, start.participantId);
      let limited = false;
      if (existing) {
        const visit = visitChanges(existing, ids, { heldToken: vouching === start.participantId }, at);
        await this.update(tx, study.id, start.participantId, visit.changes);
        limited = visit.limited;
      } else {
        const address = proof.addressTag ?? null;
        const { rows } = await tx.query<RecentWorkers>(RECENT_WORKERS, [study.id, address, this.time(-HOUR_MS), this.time(-MINUTE_MS)]);
        refuseNewWorker(study, rows[0]!, this.now());
        const fresh = { ...emptyRow(study.id, start.participantId, study.platform.kind, startingRole(study), at), ...ids, created_address: address };
        await tx.query(INSERT_WORKER, [
          ...[fresh.study_id, fresh.participant_id, fresh.platform, fresh.prolific_study_id, fresh.prolific_session_id],
          ...[fresh.assignment_id, fresh.hit_id, fresh.turk_submit_to, fresh.created_at, fresh.last_seen_at, fresh.role, fresh.created_address],
        ]);
      }
      // Sessions go as new ones come once they no longer vouch; a worker keeps its latest few of each kind, so that strangers' limited ones never push out its own.
      await tx.query('DELETE FROM worker_sessions WHERE created_at <= $1', [this.time(-VOUCH_TTL_MS)]);
      await tx.query(
        'INSERT INTO worker_sessions (token_hash, study_id, participant_id, created_at, expires_at, prolific_session_id, assignment_id, hit_id, limited) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)',
        [hashToken(token), study.id, start.participantId, at, expires, ids.prolific_session_id, ids.assignment_id, ids.hit_id, limited ? 1 : 0],
      );
      await tx.query(
        `DELETE FROM worker_sessions WHERE study_id = $1 AND participant_id = $2 AND limited = $5 AND token_hash NOT IN
          (SELECT token_hash FROM worker_sessions WHERE study_id = $1 AND participant_id = $2 AND limited = $5 ORDER BY created_at DESC, token_hash = $3 DESC LIMIT $4)`,
        [study.id, start.participantId, hashToken(token), MAX_SESSIONS_KEPT, limited ? 1 : 0],
      );
      return { worker: workerRecord((await this.row(tx, study.id, start.participantId))!), limited };
    });
    return { token, ...session };
  }

  async sessionForToken(studyId: string, token: string): Promise<WorkerSession | null> {
    const { rows } = await this.pool.query<{ participant_id: string; limited: number }>(
      'SELECT participant_id, limited FROM worker_sessions WHERE token_hash = $1 AND study_id = $2 AND expires_at > $3',
      [hashToken(token), studyId, this.time()],
    );
    const worker = rows.length > 0 ? await this.get(studyId, rows[0].participant_id) : null;
    return worker ? { worker, limited: rows[0].limited === 1 } : null;
  }

  answerConsent(studyId: string, participantId: string, agree: boolean, limited = false): Promise<WorkerRecord> {
    return this.change(studyId, participantId, (worker) => consentChanges(worker, agree, this.time(), limited));
  }

  readRules(studyId: string, participantId: string): Promise<WorkerRecord> {
    return this.change(studyId, participantId, (worker) => rulesChanges(worker, this.time()));
  }

  passTutorial(studyId: string, participantId: string, role: Role): Promise<WorkerRecord> {
    return this.change(studyId, participantId, (worker) => tutorialChanges(worker, role, this.time()));
  }

  async submitQuiz(study: StudyFile, participantId: string, answers: readonly number[], limited = false): Promise<QuizResult> {
    let marking: QuizMarking | null = null;
    const worker = await this.change(study.id, participantId, (row) => {
      const decided = quizChanges(study, row, answers, this.time(), limited);
      marking = decided.marking;
      return decided.changes;
    });
    return { ...(marking as unknown as QuizMarking), worker };
  }

  block(studyId: string, participantId: string, reason: string | null): Promise<WorkerRecord> {
    return this.change(studyId, participantId, (worker) => blockChanges(worker, reason, this.time()));
  }

  promote(studyId: string, participantId: string): Promise<WorkerRecord> {
    return this.change(studyId, participantId, (worker) => promoteChanges(worker, this.time()));
  }

  startWaiting(studyId: string, participantId: string): Promise<WorkerRecord> {
    return this.change(studyId, participantId, (row) => startWaitingChanges(row, this.time()));
  }

  stopWaiting(studyId: string, participantId: string, startedBy?: number): Promise<WorkerRecord> {
    return this.change(studyId, participantId, (row) => stopWaitingChanges(row, startedBy));
  }

  recordGameStart(studyId: string, participantId: string, gameId: string, role: Role, armDraw?: number): Promise<WorkerRecord> {
    return this.change(studyId, participantId, async (row, tx) => {
      await tx.query(
        'INSERT INTO worker_games (study_id, participant_id, game_id, role, session_key, started_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING',
        [studyId, participantId, gameId, role, sessionKey(row), this.time()],
      );
      if (armDraw !== undefined) await tx.query('UPDATE arm_draws SET game_id = $1 WHERE study_id = $2 AND draw = $3 AND participant_id = $4', [gameId, studyId, armDraw, participantId]);
      return { waiting_since: null };
    });
  }

  recordGameEnd(study: StudyFile, participantId: string, gameId: string, end: GameEnd): Promise<WorkerRecord> {
    return this.change(study.id, participantId, async (_, tx) => {
      const at = this.time();
      await tx.query(
        `UPDATE worker_games SET ended_at = $4::text, end_reason = $5, score = $6, left_game = $7,
           seconds = EXTRACT(EPOCH FROM (CAST($4::text AS timestamptz) - CAST(started_at AS timestamptz)))
         WHERE study_id = $1 AND participant_id = $2 AND game_id = $3 AND ${ENDING_STANDS_OPEN}`,
        [study.id, participantId, gameId, at, end.reason, end.score, end.left ? 1 : 0],
      );
      return gameEndChanges(study, (await this.row(tx, study.id, participantId))!, end, at);
    });
  }

  claimNoPartner(study: StudyFile, participantId: string): Promise<WorkerRecord> {
    return this.change(study.id, participantId, (row) => noPartnerChanges(study, row, this.now(), this.time()));
  }

  async gameTotals(studyId: string): Promise<StudyGameTotals> {
    const row = (await this.pool.query<{ games: number; live: number; mean_score: number | null; mean_seconds: number | null }>(GAME_TOTALS, [studyId])).rows[0];
    return { games: row.games, live: row.live, meanScore: row.mean_score, meanSeconds: row.mean_seconds === null ? null : Math.round(row.mean_seconds * 10) / 10 };
  }

  drawArm(studyId: string, participantId: string, armOf: (draw: number) => string): Promise<ArmDraw> {
    return this.transaction(async (tx) => {
      refuseUnlessAtPlay(await this.lockedRow(tx, studyId, participantId));
      await tx.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [ARM_DRAW_LOCK, studyId]);
      const unused = await tx.query<ArmDraw>(
        'SELECT draw, arm_id AS "armId" FROM arm_draws WHERE study_id = $1 AND participant_id = $2 AND game_id IS NULL ORDER BY draw DESC LIMIT 1',
        [studyId, participantId],
      );
      if (unused.rows.length > 0) return unused.rows[0];
      const { rows } = await tx.query<{ draw: number }>('SELECT CAST(COALESCE(MAX(draw) + 1, 0) AS INTEGER) AS draw FROM arm_draws WHERE study_id = $1', [studyId]);
      const draw = rows[0].draw;
      const armId = armOf(draw);
      await tx.query('INSERT INTO arm_draws (study_id, draw, arm_id, participant_id, drawn_at) VALUES ($1, $2, $3, $4, $5)', [studyId, draw, armId, participantId, this.time()]);
      return { draw, armId };
    });
  }

  async armTotals(studyId: string): Promise<ArmTotals[]> {
    return (await this.pool.query<ArmTotals>(ARM_TOTALS, [studyId])).rows;
  }

  async games(studyId: string, participantId: string): Promise<WorkerGame[]> {
    const { rows } = await this.pool.query<WorkerGameRow>(
      'SELECT * FROM worker_games WHERE study_id = $1 AND participant_id = $2 ORDER BY started_at, game_id COLLATE "C"',
      [studyId, participantId],
    );
    return rows.map(workerGame);
  }

  /** The store's clock as ISO 8601, `offsetMs` from now. */
  private time(offsetMs = 0): string {
    return new Date(this.now() + offsetMs).toISOString();
  }

  private async row(query: Query, studyId: string, participantId: string): Promise<WorkerRowWithGames | null> {
    const { rows } = await query.query<WorkerRowWithGames>(`${WITH_GAMES} WHERE w.study_id = $1 AND w.participant_id = $2`, [studyId, participantId]);
    return rows[0] ?? null;
  }

  /** The worker's row, locked until the transaction ends. */
  private async lockedRow(tx: Query, studyId: string, participantId: string): Promise<WorkerRowWithGames> {
    const locked = await tx.query('SELECT 1 FROM workers WHERE study_id = $1 AND participant_id = $2 FOR UPDATE', [studyId, participantId]);
    if (locked.rowCount === 0) throw new WorkerError('NOT_FOUND', `no worker ${JSON.stringify(participantId)} in study ${studyId}`);
    return (await this.row(tx, studyId, participantId))!;
  }

  /** Locks and reads the row, and writes what `decide` returns, in one transaction. */
  private change(studyId: string, participantId: string, decide: (worker: WorkerRowWithGames, tx: Query) => Changes | Promise<Changes>): Promise<WorkerRecord> {
    return this.transaction(async (tx) => {
      const changes = await decide(await this.lockedRow(tx, studyId, participantId), tx);
      await this.update(tx, studyId, participantId, changes);
      return workerRecord((await this.row(tx, studyId, participantId))!);
    });
  }

  private async update(tx: Query, studyId: string, participantId: string, changes: Changes): Promise<void> {
    const columns = Object.keys(changes);
    if (columns.length === 0) return;
    for (const column of columns) if (!CHANGEABLE.has(column)) throw new Error(`not a worker column: ${column}`);
    const set = columns.map((column, i) => `${column} = $${i + 3}`).join(', ');
    await tx.query(`UPDATE workers SET ${set} WHERE study_id = $1 AND participant_id = $2`, [studyId, participantId, ...columns.map((column) => changes[column as keyof Changes])]);
  }

  private transaction<T>(work: (tx: Query) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, work);
  }
}
