/**
 * The SQLite index of a data directory's games (dataDir/games.sqlite): to find games by time, pool
 * and score, and the leases of the stores that write into the directory. The logs are the
 * record; the index follows them (see SqliteGameStore).
 */
import Database from 'better-sqlite3';
import { hostname } from 'node:os';
import type { ListParams } from './checks';
import type { GameClosing } from './closing';
import { OWN_PROCESS_START, type StoreLease } from './leases';
import { migrate, type Migration } from './migrations';
import { openSharedDatabase } from './sqliteFile';
import type { SeatRecord } from './types';

/** The tables of the first release, and the leases, which came before user_version was kept. */
const FIRST_SCHEMA = `
  CREATE TABLE IF NOT EXISTS games (
    game_id    TEXT PRIMARY KEY,
    pool       TEXT NOT NULL,
    score      INTEGER NOT NULL DEFAULT 0,
    started_at TEXT NOT NULL,  -- ISO 8601 UTC with milliseconds, so text order is time order
    ended_at   TEXT,
    end_reason TEXT,
    log_path   TEXT NOT NULL,  -- relative to the data directory, so the directory can move
    note       TEXT            -- what went wrong with the log (a failed write, a crash), if anything
  );
  CREATE TABLE IF NOT EXISTS seats (
    game_id       TEXT NOT NULL REFERENCES games (game_id),
    role          TEXT NOT NULL,
    player_id     TEXT NOT NULL,
    kind          TEXT NOT NULL,
    worker_id     TEXT,
    assignment_id TEXT,
    hit_id        TEXT,
    PRIMARY KEY (game_id, role)
  );
  CREATE INDEX IF NOT EXISTS games_by_started_at ON games (started_at);
  CREATE INDEX IF NOT EXISTS games_by_pool ON games (pool);
  CREATE TABLE IF NOT EXISTS stores (
    store_id     TEXT PRIMARY KEY,  -- one per open GameStore
    host         TEXT NOT NULL,
    pid          INTEGER NOT NULL,
    renewed_at   INTEGER NOT NULL   -- epoch ms of the lease's last renewal
  );
`;

/** The columns releases before user_version added, by table. */
const LATER_COLUMNS: Record<string, Record<string, string>> = {
  games: {
    // 1 while a game has ended but its log still lacks the end line (a write failed); recover() adds the line.
    log_unclosed: 'INTEGER NOT NULL DEFAULT 0',
    // The store that started the game (null in older indexes: recover() takes those).
    owner: 'TEXT',
    // Whether a store that copies games elsewhere (PgGameStore) has copied the ended game in full.
    copied: 'INTEGER NOT NULL DEFAULT 0',
  },
  // The start of the lease's process (processStart), so that a pid used again is not taken for it.
  stores: { pid_start: 'TEXT' },
};

/**
 * The index's schema (migrations.ts). An index made before user_version was kept has version 0
 * and the shape of its release, whichever: the first migration makes the tables it lacks and adds
 * the columns it lacks.
 */
const MIGRATIONS: readonly Migration[] = [
  (db) => {
    db.exec(FIRST_SCHEMA);
    for (const [table, columns] of Object.entries(LATER_COLUMNS)) {
      const present = db.prepare<[string], string>('SELECT name FROM pragma_table_info(?)').pluck().all(table);
      for (const [column, type] of Object.entries(columns)) if (!present.includes(column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
    }
  },
];

const GAME_COLUMNS = 'game_id, pool, score, started_at, ended_at, end_reason, log_path, note, log_unclosed';

export interface GameRow {
  readonly game_id: string;
  readonly pool: string;
  readonly score: number;
  readonly started_at: string;
  readonly ended_at: string | null;
  readonly end_reason: string | null;
  readonly log_path: string;
  readonly note: string | null;
  readonly log_unclosed: 0 | 1;
}

interface SeatRow {
  readonly role: SeatRecord['role'];
  readonly player_id: string;
  readonly kind: SeatRecord['kind'];
  readonly worker_id: string | null;
  readonly assignment_id: string | null;
  readonly hit_id: string | null;
}

/** A lease as the index keeps it: a store of the host that holds the data directory, or of another. */
export interface IndexLease extends StoreLease {
  readonly host: string;
}

export interface NewGame {
  /** The store that writes it (null for a log recover() indexes: it takes it at once). */
  readonly owner: string | null;
  readonly gameId: string;
  readonly pool: string;
  readonly startedAt: string;
  readonly logPath: string;
  readonly note: string | null;
}

/** The SQL side of the store: prepared once, used by the store, its recovery and its log writers. */
export class GameIndex {
  private readonly insertGameRow;
  private readonly insertSeatRow;
  private readonly selectGame;
  private readonly selectSeats;
  private readonly selectOpenGames;
  private readonly selectUncopied;
  private readonly updateCopied;
  private readonly selectGames;
  private readonly updateScore;
  private readonly updateClosing;
  private readonly insertGameWithSeats;
  private readonly upsertLease;
  private readonly deleteLease;
  private readonly selectLeases;
  private readonly adopt;

  private constructor(private readonly db: Database.Database) {
    this.insertGameRow = db.prepare<[string, string, string, string, string | null, string | null]>(
      'INSERT INTO games (game_id, pool, started_at, log_path, note, owner) VALUES (?, ?, ?, ?, ?, ?)',
    );
    this.insertSeatRow = db.prepare<[string, string, string, string, string | null, string | null, string | null]>(
      'INSERT INTO seats (game_id, role, player_id, kind, worker_id, assignment_id, hit_id) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    this.selectGame = db.prepare<[string], GameRow>(`SELECT ${GAME_COLUMNS} FROM games WHERE game_id = ?`);
    this.selectSeats = db.prepare<[string], SeatRow>(
      'SELECT role, player_id, kind, worker_id, assignment_id, hit_id FROM seats WHERE game_id = ? ORDER BY rowid',
    );
    this.selectOpenGames = db.prepare<[string], GameRow>(`SELECT ${GAME_COLUMNS} FROM games WHERE (ended_at IS NULL OR log_unclosed = 1) AND owner = ? ORDER BY started_at`);
    // One statement for every filter combination: a missing filter is bound as NULL.
    this.selectGames = db.prepare<ListParams, GameRow>(`
      SELECT ${GAME_COLUMNS} FROM games
      WHERE (@from IS NULL OR started_at >= @from)
        AND (@to IS NULL OR started_at <= @to)
        AND (@pool IS NULL OR pool = @pool)
        AND (@minScore IS NULL OR score >= @minScore)
      ORDER BY started_at DESC, game_id DESC
      LIMIT @limit OFFSET @offset`);
    this.updateScore = db.prepare<[number, string]>('UPDATE games SET score = ? WHERE game_id = ?');
    this.selectUncopied = db.prepare<[], string>('SELECT game_id FROM games WHERE copied = 0 AND ended_at IS NOT NULL ORDER BY game_id').pluck();
    this.updateCopied = db.prepare<[string]>('UPDATE games SET copied = 1 WHERE game_id = ?');
    this.updateClosing = db.prepare<[number, string, string, string | null, number, string]>(
      'UPDATE games SET score = ?, ended_at = ?, end_reason = ?, note = ?, log_unclosed = ? WHERE game_id = ?',
    );
    this.upsertLease = db.prepare<[string, string, number, string | null, number]>(
      'INSERT INTO stores (store_id, host, pid, pid_start, renewed_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (store_id) DO UPDATE SET renewed_at = excluded.renewed_at',
    );
    this.deleteLease = db.prepare<[string]>('DELETE FROM stores WHERE store_id = ?');
    this.selectLeases = db.prepare<[], IndexLease>('SELECT store_id AS storeId, host, pid, pid_start AS pidStart, renewed_at AS renewedAt FROM stores');
    const adoptGames = db.prepare<[string]>(
      'UPDATE games SET owner = ? WHERE (ended_at IS NULL OR log_unclosed = 1) AND (owner IS NULL OR owner NOT IN (SELECT store_id FROM stores))',
    );
    this.adopt = db.transaction((storeId: string, gone: readonly string[]) => {
      for (const id of gone) this.deleteLease.run(id);
      adoptGames.run(storeId);
    });
    this.insertGameWithSeats = db.transaction((game: NewGame, seats: readonly SeatRecord[]) => {
      this.insertGameRow.run(game.gameId, game.pool, game.startedAt, game.logPath, game.note, game.owner);
      for (const seat of seats) {
        this.insertSeatRow.run(game.gameId, seat.role, seat.playerId, seat.kind, seat.workerId ?? null, seat.assignmentId ?? null, seat.hitId ?? null);
      }
    });
  }

  /** Opens (creating or upgrading it if needed) the index file at `path`. */
  static open(path: string): GameIndex {
    const db = openSharedDatabase(path);
    try {
      migrate(db, MIGRATIONS);
      return new GameIndex(db);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  insertGame(game: NewGame, seats: readonly SeatRecord[]): void {
    this.insertGameWithSeats(game, seats);
  }

  get(gameId: string): GameRow | undefined {
    return this.selectGame.get(gameId);
  }

  seats(gameId: string): SeatRecord[] {
    return this.selectSeats.all(gameId).map(seatRecord);
  }

  /** The open games (still played, or ended without their end line) `storeId` owns. */
  openGames(storeId: string): GameRow[] {
    return this.selectOpenGames.all(storeId);
  }

  uncopied(): string[] {
    return this.selectUncopied.all();
  }

  markCopied(gameId: string): void {
    this.updateCopied.run(gameId);
  }

  /** Takes out (or renews) the lease of store `storeId`, a store of this process. */
  renewLease(storeId: string, now: number): void {
    this.upsertLease.run(storeId, hostname(), process.pid, OWN_PROCESS_START, now);
  }

  releaseLease(storeId: string): void {
    this.deleteLease.run(storeId);
  }

  leases(): IndexLease[] {
    return this.selectLeases.all();
  }

  /**
   * In one transaction, so that two stores never close the same game: drops the leases of the
   * stores `gone`, and gives store `storeId` the open games no store with a lease owns.
   */
  adoptOrphanedGames(storeId: string, gone: readonly string[]): void {
    this.adopt.immediate(storeId, gone);
  }

  list(params: ListParams): GameRow[] {
    return this.selectGames.all(params);
  }

  setScore(gameId: string, score: number): void {
    this.updateScore.run(score, gameId);
  }

  close(gameId: string, closing: GameClosing): void {
    this.updateClosing.run(closing.score, closing.endedAt, closing.endReason, closing.note, closing.logUnclosed ? 1 : 0, gameId);
  }

  shutdown(): void {
    this.db.close();
  }
}

function seatRecord(row: SeatRow): SeatRecord {
  return {
    role: row.role,
    playerId: row.player_id,
    kind: row.kind,
    ...(row.worker_id !== null && { workerId: row.worker_id }),
    ...(row.assignment_id !== null && { assignmentId: row.assignment_id }),
    ...(row.hit_id !== null && { hitId: row.hit_id }),
  };
}
