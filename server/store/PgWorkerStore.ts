/**
 * A study's workers in PostgreSQL, for server processes on several machines (`serve --store
 * postgres://... --study FILE`): the rows of SqliteWorkerStore, in the same database as the games,
 * and RowWorkerStore on them. A transaction locks the worker's row it decides on (SELECT ... FOR
 * UPDATE), so two processes (or two requests) cannot both use a worker's last quiz attempt.
 */
import pg from 'pg';
import type { Role } from '../../shared/engine/state';
import type { ArmTotals } from '../../shared/study/overview';
import { inTransaction } from './pgTransaction';
import { RowWorkerStore } from './RowWorkerStore';
import { ENDING_STANDS_OPEN, WITH_GAMES, type ArmDraw, type Changes, type GameEnd, type RecentWorkers, type WorkerGameRow, type WorkerRow, type WorkerRowWithGames } from './workerChanges';
import { stepsLater, type GameTotalsRow, type SessionRow, type Steps, type WorkerDatabase, type WorkerRows } from './workerRows';

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

export class PgWorkerStore extends RowWorkerStore<true> {
  /** The store on the database at `url`, its tables made if missing (unless `readonly`). */
  static async open(url: string, options: PgWorkerStoreOptions = {}): Promise<PgWorkerStore> {
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    // An idle client's error (the database restarting) would otherwise be thrown as an uncaught error.
    pool.on('error', (error) => process.stderr.write(`cerealbar: warning: the worker store's database connection failed: ${error.message}\n`));
    try {
      if (options.readonly) {
        const { rows } = await pool.query<{ workers: string | null }>("SELECT to_regclass('workers') AS workers");
        if (rows[0]!.workers === null) throw new Error('the database has no workers table: is it the one serve --store --study uses?');
      } else {
        await inTransaction(pool, async (client) => {
          await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
          await client.query(SCHEMA);
        });
      }
      return new PgWorkerStore(new PgWorkerDatabase(pool), options.now ?? Date.now);
    } catch (error) {
      await pool.end();
      throw error;
    }
  }
}

class PgWorkerDatabase implements WorkerDatabase<true> {
  constructor(private readonly pool: pg.Pool) {}

  transaction<T>(steps: (rows: WorkerRows) => Steps<T>): Promise<T> {
    return inTransaction(this.pool, (client) => stepsLater(steps(new PgWorkerRows(client))));
  }

  read<T>(steps: (rows: WorkerRows) => Steps<T>): Promise<T> {
    return stepsLater(steps(new PgWorkerRows(this.pool)));
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}

/** The rows through one client (a transaction's) or the pool (reads). Text is ordered by its bytes, as SQLite orders it. */
class PgWorkerRows implements WorkerRows {
  constructor(private readonly db: Query) {}

  async lockWorker(studyId: string, participantId: string): Promise<void> {
    await this.db.query('SELECT 1 FROM workers WHERE study_id = $1 AND participant_id = $2 FOR UPDATE', [studyId, participantId]);
  }

  async lockStudy(studyId: string, work: 'new workers' | 'arm draws'): Promise<void> {
    await this.db.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [work === 'new workers' ? NEW_WORKER_LOCK : ARM_DRAW_LOCK, studyId]);
  }

  async worker(studyId: string, participantId: string): Promise<WorkerRowWithGames | null> {
    return (await this.db.query<WorkerRowWithGames>(`${WITH_GAMES} WHERE w.study_id = $1 AND w.participant_id = $2`, [studyId, participantId])).rows[0] ?? null;
  }

  async workers(studyId: string): Promise<WorkerRowWithGames[]> {
    return (await this.db.query<WorkerRowWithGames>(`${WITH_GAMES} WHERE w.study_id = $1 ORDER BY w.created_at, w.participant_id COLLATE "C"`, [studyId])).rows;
  }

  async insertWorker(row: WorkerRow): Promise<void> {
    await this.db.query(INSERT_WORKER, [
      ...[row.study_id, row.participant_id, row.platform, row.prolific_study_id, row.prolific_session_id],
      ...[row.assignment_id, row.hit_id, row.turk_submit_to, row.created_at, row.last_seen_at, row.role, row.created_address],
    ]);
  }

  async updateWorker(studyId: string, participantId: string, changes: Changes): Promise<void> {
    const columns = Object.keys(changes);
    const set = columns.map((column, i) => `${column} = $${i + 3}`).join(', ');
    await this.db.query(`UPDATE workers SET ${set} WHERE study_id = $1 AND participant_id = $2`, [studyId, participantId, ...columns.map((column) => changes[column as keyof Changes])]);
  }

  async recentWorkers(studyId: string, address: string | null, hourAgo: string, minuteAgo: string): Promise<RecentWorkers> {
    return (await this.db.query<RecentWorkers>(RECENT_WORKERS, [studyId, address, hourAgo, minuteAgo])).rows[0]!;
  }

  async session(tokenHash: string, studyId: string, at: string): Promise<Pick<SessionRow, 'participant_id' | 'limited'> | null> {
    const { rows } = await this.db.query<Pick<SessionRow, 'participant_id' | 'limited'>>(
      'SELECT participant_id, limited FROM worker_sessions WHERE token_hash = $1 AND study_id = $2 AND expires_at > $3',
      [tokenHash, studyId, at],
    );
    return rows[0] ?? null;
  }

  async vouchedParticipant(tokenHash: string, studyId: string, since: string): Promise<string | null> {
    const { rows } = await this.db.query<{ participant_id: string }>(
      'SELECT participant_id FROM worker_sessions WHERE token_hash = $1 AND study_id = $2 AND limited = 0 AND created_at > $3',
      [tokenHash, studyId, since],
    );
    return rows[0]?.participant_id ?? null;
  }

  async insertSession(session: SessionRow): Promise<void> {
    await this.db.query(
      'INSERT INTO worker_sessions (token_hash, study_id, participant_id, created_at, expires_at, prolific_session_id, assignment_id, hit_id, limited) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)',
      [session.token_hash, session.study_id, session.participant_id, session.created_at, session.expires_at, session.prolific_session_id, session.assignment_id, session.hit_id, session.limited],
    );
  }

  async dropSessions(before: string): Promise<void> {
    await this.db.query('DELETE FROM worker_sessions WHERE created_at <= $1', [before]);
  }

  /** The newest by creation time, `newest` first among those made in its millisecond. */
  async trimSessions(newest: SessionRow, keep: number): Promise<void> {
    await this.db.query(
      `DELETE FROM worker_sessions WHERE study_id = $1 AND participant_id = $2 AND limited = $5 AND token_hash NOT IN
        (SELECT token_hash FROM worker_sessions WHERE study_id = $1 AND participant_id = $2 AND limited = $5 ORDER BY created_at DESC, token_hash = $3 DESC LIMIT $4)`,
      [newest.study_id, newest.participant_id, newest.token_hash, keep, newest.limited],
    );
  }

  async games(studyId: string, participantId: string): Promise<WorkerGameRow[]> {
    const { rows } = await this.db.query<WorkerGameRow>(
      'SELECT * FROM worker_games WHERE study_id = $1 AND participant_id = $2 ORDER BY started_at, game_id COLLATE "C"',
      [studyId, participantId],
    );
    return rows;
  }

  async insertGame(studyId: string, participantId: string, gameId: string, role: Role, sessionKey: string, at: string): Promise<void> {
    await this.db.query(
      'INSERT INTO worker_games (study_id, participant_id, game_id, role, session_key, started_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING',
      [studyId, participantId, gameId, role, sessionKey, at],
    );
  }

  async endGame(studyId: string, participantId: string, gameId: string, end: GameEnd, at: string): Promise<void> {
    await this.db.query(
      `UPDATE worker_games SET ended_at = $4::text, end_reason = $5, score = $6, left_game = $7,
         seconds = EXTRACT(EPOCH FROM (CAST($4::text AS timestamptz) - CAST(started_at AS timestamptz)))
       WHERE study_id = $1 AND participant_id = $2 AND game_id = $3 AND ${ENDING_STANDS_OPEN}`,
      [studyId, participantId, gameId, at, end.reason, end.score, end.left ? 1 : 0],
    );
  }

  async gameTotals(studyId: string): Promise<GameTotalsRow> {
    return (await this.db.query<GameTotalsRow>(GAME_TOTALS, [studyId])).rows[0]!;
  }

  async unusedDraw(studyId: string, participantId: string): Promise<ArmDraw | null> {
    const { rows } = await this.db.query<ArmDraw>(
      'SELECT draw, arm_id AS "armId" FROM arm_draws WHERE study_id = $1 AND participant_id = $2 AND game_id IS NULL ORDER BY draw DESC LIMIT 1',
      [studyId, participantId],
    );
    return rows[0] ?? null;
  }

  async nextDraw(studyId: string): Promise<number> {
    return (await this.db.query<{ draw: number }>('SELECT CAST(COALESCE(MAX(draw) + 1, 0) AS INTEGER) AS draw FROM arm_draws WHERE study_id = $1', [studyId])).rows[0]!.draw;
  }

  async insertDraw(studyId: string, participantId: string, draw: ArmDraw, at: string): Promise<void> {
    await this.db.query('INSERT INTO arm_draws (study_id, draw, arm_id, participant_id, drawn_at) VALUES ($1, $2, $3, $4, $5)', [studyId, draw.draw, draw.armId, participantId, at]);
  }

  async drawStarted(studyId: string, participantId: string, draw: number, gameId: string): Promise<void> {
    await this.db.query('UPDATE arm_draws SET game_id = $1 WHERE study_id = $2 AND draw = $3 AND participant_id = $4', [gameId, studyId, draw, participantId]);
  }

  async armTotals(studyId: string): Promise<ArmTotals[]> {
    return (await this.db.query<ArmTotals>(ARM_TOTALS, [studyId])).rows;
  }
}
