/**
 * Games kept in PostgreSQL, for server processes on several machines. Each process still writes
 * its games to a data directory of its own machine first (a SqliteGameStore: each line on disk
 * before the room answers, recovery after a crash), and ships each game's log lines and index
 * entry to the database a moment later, reading the log file on from where it last stopped. The
 * file is the record the database copies, so shipping twice, or from two processes, changes
 * nothing. Reads (the game list, a game, its log) come from the database: every process of every
 * machine sees every game, a few milliseconds behind its log file.
 *
 * Recovery: the games of a process that is gone are closed from its log file by a process of its
 * machine (the local store's recovery), then shipped. Only when no process runs on that machine
 * any more are they closed from the database's copy, by a process of another machine; lines its
 * machine had not shipped are then missing, which the game's note says. A machine judged gone
 * that was only stalled (a pause longer than the lease) takes its games back when it ships
 * again: the log file is the record, so the copy's end line gives way to the file's lines.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import pg from 'pg';
import { serializeLine } from '../../shared/log/recorder';
import { isoTime, listParams } from './checks';
import { closingOf, joinNotes, RECOVERY_NOTE } from './closing';
import { inTransaction } from './pgTransaction';
import { LEASE_MS, LEASE_RENEW_MS, leaseGone, OWN_PROCESS_START, type StoreLease } from './leases';
import { wholeLinesFrom } from './logFiles';
import { SqliteGameStore, type StoreOptions } from './SqliteGameStore';
import type { GameFilter, GameLogWriter, GameReader, GameRecord, GameStore, Recovery, SeatRecord, StartInfo } from './types';
import type { LogHeader, LogLine } from '../../shared/log/format';

/** The URL schemes that select this store. */
export const POSTGRES_URL = /^postgres(ql)?:\/\//;

/** Taken around the schema's creation, so that processes starting together do not race. */
const SCHEMA_LOCK = 7_244_018;

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS stores (
    store_id   TEXT PRIMARY KEY,
    host       TEXT NOT NULL,
    data_dir   TEXT NOT NULL,    -- the store's local data directory, on host
    pid        INTEGER NOT NULL,
    renewed_at BIGINT NOT NULL   -- epoch ms of the lease's last renewal, by the database's clock
  );
  CREATE TABLE IF NOT EXISTS games (
    game_id          TEXT PRIMARY KEY,
    pool             TEXT NOT NULL,
    score            INTEGER NOT NULL DEFAULT 0,
    started_at       TEXT NOT NULL,  -- ISO 8601 UTC with milliseconds, so text order is time order
    ended_at         TEXT,
    end_reason       TEXT,
    note             TEXT,
    seats            JSONB NOT NULL,
    owner            TEXT NOT NULL,  -- the store that writes it
    host             TEXT NOT NULL,  -- where its log file is: host and data directory
    data_dir         TEXT NOT NULL,
    lines            INTEGER NOT NULL DEFAULT 0,  -- log lines shipped
    closed_from_copy BOOLEAN NOT NULL DEFAULT FALSE
  );
  CREATE INDEX IF NOT EXISTS games_by_started_at ON games (started_at);
  CREATE INDEX IF NOT EXISTS games_by_pool ON games (pool);
  CREATE INDEX IF NOT EXISTS open_games ON games (owner) WHERE ended_at IS NULL;
  CREATE TABLE IF NOT EXISTS log_lines (
    game_id TEXT NOT NULL REFERENCES games (game_id),
    n       INTEGER NOT NULL,  -- 0 is the header
    line    TEXT NOT NULL,
    PRIMARY KEY (game_id, n)
  );
  -- Added later: the machine (its data directory's id, SqliteGameStore.machineId) of a store and
  -- of a game's log file; null in rows written before, which are known by host and data_dir.
  ALTER TABLE stores ADD COLUMN IF NOT EXISTS machine TEXT;
  ALTER TABLE games ADD COLUMN IF NOT EXISTS machine TEXT;
  -- Added later: the start of a lease's process (processStart), so that a pid used again by another
  -- process is not taken for it (leases.ts); null in leases taken before, judged by their pid alone.
  ALTER TABLE stores ADD COLUMN IF NOT EXISTS pid_start TEXT;
`;

const GAME_COLUMNS = 'game_id, pool, score, started_at, ended_at, end_reason, note, seats';

/** Now in epoch ms by the database's clock: leases are timed by one clock, whatever the machines' say. */
const DATABASE_NOW = '(extract(epoch from clock_timestamp()) * 1000)::bigint';

/** Text columns ordered by their bytes, as SQLite orders them, whatever the database's collation. */
const LIST_GAMES = `
  SELECT ${GAME_COLUMNS} FROM games
  WHERE ($1::text IS NULL OR started_at >= $1)
    AND ($2::text IS NULL OR started_at <= $2)
    AND ($3::text IS NULL OR pool = $3)
    AND ($4::float8 IS NULL OR score >= $4)
  ORDER BY started_at COLLATE "C" DESC, game_id COLLATE "C" DESC
  LIMIT $5 OFFSET $6`;

export const COPY_NOTE = "closed from the database's copy, as no process ran on its machine: lines that machine had not sent are missing (it sends them if it comes back)";

/** Games shipped in one transaction at most. */
const MAX_BATCH = 200;
/** How long to wait after the database failed before shipping again. */
const RETRY_MS = 1000;
/** How long close() waits for the last lines to be shipped. */
const CLOSE_SHIP_MS = 5000;

interface GameRow {
  readonly game_id: string;
  readonly pool: string;
  readonly score: number;
  readonly started_at: string;
  readonly ended_at: string | null;
  readonly end_reason: string | null;
  readonly note: string | null;
  readonly seats: SeatRecord[];
}

/** Where a store or a game's log file is: its machine's id, or for rows of older versions its host and data directory. */
interface Placed {
  readonly machine: string | null;
  readonly host: string;
  readonly data_dir: string;
}

const machineOf = (row: Placed) => row.machine ?? `${row.host}\n${row.data_dir}`;

/** How far a game's log file has been shipped. */
interface Shipped {
  readonly lines: number;
  readonly offset: number;
}

/** With the local store's options of those names (SqliteGameStore): its file operations are those the shipping reads with. */
export interface PgStoreOptions extends Pick<StoreOptions, 'fs' | 'syncEachAction'> {
  /** Told when shipping to the database fails (it is tried again until it works). */
  readonly onShipError?: (error: Error) => void;
}

/** A game's log writer that has each line shipped after it is on disk. */
class ShippingWriter implements GameLogWriter {
  constructor(
    private readonly inner: GameLogWriter,
    private readonly ship: () => void,
  ) {}

  append(line: LogLine): void {
    try {
      this.inner.append(line);
    } finally {
      this.ship(); // a failed append may still have closed the game as far as the disk allowed
    }
  }

  end(line: Parameters<GameLogWriter['end']>[0]): void {
    this.inner.end(line);
    this.ship();
  }
}

/**
 * The games in the database, read only: the store's own reads, and the researcher's commands
 * (`cerealbar study bonuses --store`), which must neither make tables nor hold a lease.
 */
export class PgGameReader implements GameReader {
  constructor(private readonly pool: pg.Pool) {}

  /** Opens the database at `url`, which must hold the tables `serve --store` makes. */
  static async open(url: string): Promise<PgGameReader & { close(): Promise<void> }> {
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    pool.on('error', () => undefined); // an idle client's failure; the next query reports it
    try {
      const { rows } = await pool.query<{ games: string | null }>("SELECT to_regclass('games') AS games");
      if (rows[0]!.games === null) throw new Error('the database has no games table: is it the one serve --store uses?');
    } catch (error) {
      await pool.end();
      throw error;
    }
    return Object.assign(new PgGameReader(pool), { close: () => pool.end() });
  }

  async listGames(filter: GameFilter = {}): Promise<GameRecord[]> {
    const params = listParams(filter);
    const { rows } = await this.pool.query<GameRow>(LIST_GAMES, [params.from, params.to, params.pool, params.minScore, params.limit, params.offset]);
    return rows.map(record);
  }

  async getGame(gameId: string): Promise<GameRecord | null> {
    const { rows } = await this.pool.query<GameRow>(`SELECT ${GAME_COLUMNS} FROM games WHERE game_id = $1`, [gameId]);
    return rows.length > 0 ? record(rows[0]) : null;
  }

  async readLog(gameId: string): Promise<string | null> {
    const known = await this.pool.query('SELECT 1 FROM games WHERE game_id = $1', [gameId]);
    if (known.rows.length === 0) return null;
    const { rows } = await this.pool.query<{ line: string }>('SELECT line FROM log_lines WHERE game_id = $1 ORDER BY n', [gameId]);
    return rows.map((row) => `${row.line}\n`).join('');
  }
}

export class PgGameStore implements GameStore {
  private readonly shipped = new Map<string, Shipped>();
  /** Games with lines (or an ending) not yet shipped. */
  private readonly dirty = new Set<string>();
  private pumping = false;
  /** synced() callers, told when nothing is left to ship. */
  private readonly idleWaiters: (() => void)[] = [];
  private keepAliveTimer: NodeJS.Timeout | null = null;
  private lastShipError = 0;
  private closed = false;
  /** Once the local store is closed there is nothing more to ship from it. */
  private localClosed = false;
  private readonly reader: PgGameReader;
  private readonly machine: string;
  /**
   * When this store last got through to the database after failing to (or opened): other
   * machines, which could not renew their leases while it could not, are judged by their leases
   * only a full lease after it. Timed by this process's monotonic clock.
   */
  private reachedAt = performance.now();
  private unreachable = false;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly local: SqliteGameStore,
    private readonly options: PgStoreOptions,
  ) {
    this.reader = new PgGameReader(pool);
    this.machine = local.machineId;
  }

  get storeId(): string {
    return this.local.storeId;
  }

  /** Opens the store: the database at `url` (its tables made if missing) and the local data directory `dataDir`. */
  static async open(url: string, dataDir: string, options: PgStoreOptions = {}): Promise<PgGameStore> {
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    // An idle client's error (the database restarting) would otherwise be thrown as an uncaught error.
    pool.on('error', (error) => options.onShipError?.(error));
    let local: SqliteGameStore | undefined;
    try {
      await inTransaction(pool, async (client) => {
        await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
        await client.query(SCHEMA);
      });
      local = SqliteGameStore.open(dataDir, { fs: options.fs, storeId: randomUUID(), syncEachAction: options.syncEachAction ?? false });
      const store = new PgGameStore(pool, local, options);
      await store.renewLease();
      // Games that ended while the database was away, before a restart: their copy is finished now.
      for (const gameId of local.uncopiedGames()) store.ship(gameId);
      return store;
    } catch (error) {
      local?.close();
      await pool.end();
      throw error;
    }
  }

  startGame(header: LogHeader, info: StartInfo): GameLogWriter {
    const writer = this.local.startGame(header, info);
    const ship = () => this.ship(header.gameId);
    ship();
    return new ShippingWriter(writer, ship);
  }

  /**
   * Closes the games of stores that are gone: those of this machine from their log files (the
   * local store's recovery, then shipped), those of a machine where no store runs any more from
   * the database's copy.
   */
  async recover(): Promise<Recovery> {
    const local = this.local.recover();
    for (const gameId of local.recovered) this.ship(gameId);
    const fromCopy = await this.recoverInDatabase();
    await this.synced();
    return { ...local, recovered: [...local.recovered, ...fromCopy] };
  }

  keepAlive(onRecovered: (recovery: Recovery) => void, onError: (error: Error) => void): void {
    this.local.keepAlive((recovery) => {
      for (const gameId of recovery.recovered) this.ship(gameId);
      onRecovered(recovery);
    }, onError);
    this.keepAliveTimer ??= setInterval(() => {
      this.recoverInDatabase().then(
        (recovered) => recovered.length > 0 && onRecovered({ recovered, removed: [], unreadable: [] }),
        (error: Error) => onError(error),
      );
    }, LEASE_RENEW_MS).unref();
  }

  failedGames(): readonly string[] {
    return this.local.failedGames();
  }

  gamesBeingWritten(): readonly string[] {
    return this.local.gamesBeingWritten();
  }

  listGames(filter: GameFilter = {}): Promise<GameRecord[]> {
    return this.reader.listGames(filter);
  }

  getGame(gameId: string): Promise<GameRecord | null> {
    return this.reader.getGame(gameId);
  }

  readLog(gameId: string): Promise<string | null> {
    return this.reader.readLog(gameId);
  }

  /** Resolves once nothing is left to ship (so, while games are written, only between their lines). */
  synced(): Promise<void> {
    if (!this.pumping && this.dirty.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Ships what was written (waiting a few seconds at most: what is left is shipped by the next
   * store on this machine), closes the local store (logs still being written stay open for
   * recovery) and gives up this store's lease.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.keepAliveTimer) clearInterval(this.keepAliveTimer);
    this.keepAliveTimer = null;
    try {
      // Not unref'd: the process must not exit before the local store is closed.
      let wait: NodeJS.Timeout | undefined;
      await Promise.race([this.synced(), new Promise((resolve) => (wait = setTimeout(resolve, CLOSE_SHIP_MS)))]);
      clearTimeout(wait);
      this.localClosed = true;
      this.local.close();
      // With the database away the lease stays, and other stores judge this one gone once it runs out.
      await this.pool.query('DELETE FROM stores WHERE store_id = $1', [this.storeId]).catch(() => undefined);
    } finally {
      await this.pool.end();
    }
  }

  // -------------------------------------------------------------------------------------------
  // Shipping

  /** Marks a game to be shipped, and starts shipping if it is not under way. */
  private ship(gameId: string): void {
    this.dirty.add(gameId);
    if (!this.pumping) void this.pump();
  }

  /**
   * Ships the marked games batch after batch, each batch in one transaction. A batch that fails
   * is shipped again game by game, so that one game the database refuses holds up no other; what
   * fails then is tried again a moment later.
   */
  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      // Lines written in the same turn of the event loop go in one batch.
      await new Promise((resolve) => setImmediate(resolve));
      while (this.dirty.size > 0 && !this.localClosed) {
        const batch = [...this.dirty].slice(0, MAX_BATCH);
        for (const gameId of batch) this.dirty.delete(gameId);
        let failure: Error | null = null;
        try {
          await this.shipBatch(batch);
        } catch {
          for (const gameId of batch) {
            try {
              await this.shipBatch([gameId]);
            } catch (error) {
              failure = error as Error;
              this.dirty.add(gameId);
            }
          }
        }
        if (failure) {
          this.reportShipError(failure);
          // Kept referenced, so that a process closing the store waits for it (close() bounds the wait).
          await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        }
      }
    } finally {
      this.pumping = false;
      for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  private reportShipError(error: Error): void {
    if (Date.now() - this.lastShipError < 10_000) return;
    this.lastShipError = Date.now();
    const report = this.options.onShipError ?? ((e: Error) => process.stderr.write(`cerealbar: warning: games could not be copied to the database (tried again every second): ${e.message}\n`));
    report(error);
  }

  /**
   * Copies games' index entries and the log lines the database lacks, in one transaction of a few
   * statements whatever the number of games. Their rows are locked in one order (game id), so two
   * stores shipping the same games wait for each other instead of deadlocking.
   */
  private async shipBatch(gameIds: readonly string[]): Promise<void> {
    const games = gameIds.flatMap((gameId) => this.local.gameEntry(gameId) ?? []);
    if (games.length === 0) return;
    const shippedNow = await inTransaction(this.pool, async (client) => {
      // Seats are read (and the game inserted) only the first time it is shipped.
      const unseen = games.filter((game) => !this.shipped.has(game.gameId)).map((game) => ({ ...game, seats: this.local.getGame(game.gameId)!.seats }));
      if (unseen.length > 0) {
        await client.query(
          `INSERT INTO games (game_id, pool, started_at, seats, owner, host, data_dir, machine)
           SELECT game_id, pool, started_at, seats, $5, $6, $7, $8 FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[]) AS unseen (game_id, pool, started_at, seats)
           ON CONFLICT (game_id) DO NOTHING`,
          [unseen.map((game) => game.gameId), unseen.map((game) => game.pool), unseen.map((game) => game.startedAt), unseen.map((game) => JSON.stringify(game.seats)), this.storeId, hostname(), this.local.dataDir, this.machine],
        );
      }
      const rows = (await client.query<{ game_id: string; lines: number; closed_from_copy: boolean } & Placed>(
        'SELECT game_id, lines, closed_from_copy, machine, host, data_dir FROM games WHERE game_id = ANY($1) ORDER BY game_id FOR UPDATE',
        [games.map((game) => game.gameId)],
      )).rows;
      const shippedNow = new Map<string, Shipped | null>();
      const lines = { gameIds: [] as string[], numbers: [] as number[], texts: [] as string[] };
      const updates: { gameId: string; lines: number; score: number; endedAt: string | null; endReason: string | null; note: string | null }[] = [];
      for (const row of rows) {
        // Another machine's game of that id: not ours to write.
        if (!this.onThisMachine(row)) {
          shippedNow.set(row.game_id, null);
          continue;
        }
        const game = games.find((candidate) => candidate.gameId === row.game_id)!;
        // Closed from the copy while this machine seemed gone: the end line the copy got gives way to the file's lines.
        let kept = row.lines;
        if (row.closed_from_copy) {
          const removed = await client.query(`DELETE FROM log_lines WHERE game_id = $1 AND n = $2 AND line LIKE '{"kind":"end"%'`, [row.game_id, row.lines - 1]);
          kept -= removed.rowCount ?? 0;
        }
        const fresh = this.linesAfter(game.gameId, game.logPath, kept);
        fresh.lines.forEach((text, i) => {
          lines.gameIds.push(game.gameId);
          lines.numbers.push(kept + i);
          lines.texts.push(text);
        });
        const count = kept + fresh.lines.length;
        updates.push({ gameId: game.gameId, lines: count, score: game.score, endedAt: game.endedAt, endReason: game.endReason, note: game.note ?? null });
        shippedNow.set(game.gameId, game.endedAt === null ? { lines: count, offset: fresh.offset } : null);
      }
      if (lines.texts.length > 0) {
        await client.query('INSERT INTO log_lines (game_id, n, line) SELECT * FROM unnest($1::text[], $2::int[], $3::text[])', [lines.gameIds, lines.numbers, lines.texts]);
      }
      if (updates.length > 0) {
        await client.query(
          `UPDATE games SET lines = v.lines, score = v.score, ended_at = v.ended_at, end_reason = v.end_reason, note = v.note, closed_from_copy = FALSE
           FROM unnest($1::text[], $2::int[], $3::int[], $4::text[], $5::text[], $6::text[]) AS v (game_id, lines, score, ended_at, end_reason, note)
           WHERE games.game_id = v.game_id`,
          [updates.map((u) => u.gameId), updates.map((u) => u.lines), updates.map((u) => u.score), updates.map((u) => u.endedAt), updates.map((u) => u.endReason), updates.map((u) => u.note)],
        );
      }
      return shippedNow;
    });
    // A game that ended, or is not ours to write, needs no more shipping.
    for (const [gameId, shipped] of shippedNow) {
      if (shipped) this.shipped.set(gameId, shipped);
      else {
        this.shipped.delete(gameId);
        this.local.markCopied(gameId);
      }
    }
  }

  /** The whole lines of a log file after its first `skip`, and the file offset after them. */
  private linesAfter(gameId: string, path: string, skip: number): { lines: string[]; offset: number } {
    const known = this.shipped.get(gameId);
    const start = known?.lines === skip ? known.offset : 0;
    let read: { lines: string[]; offset: number };
    try {
      read = wholeLinesFrom(this.local.fs, path, start);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { lines: [], offset: start }; // the index's note says so
      throw error;
    }
    return start === 0 ? { ...read, lines: read.lines.slice(skip) } : read;
  }

  // -------------------------------------------------------------------------------------------
  // Leases and recovery in the database

  private async renewLease(): Promise<void> {
    try {
      await this.pool.query(
        `INSERT INTO stores (store_id, host, data_dir, machine, pid, pid_start, renewed_at) VALUES ($1, $2, $3, $4, $5, $6, ${DATABASE_NOW})
         ON CONFLICT (store_id) DO UPDATE SET renewed_at = EXCLUDED.renewed_at`,
        [this.storeId, hostname(), this.local.dataDir, this.machine, process.pid, OWN_PROCESS_START],
      );
    } catch (error) {
      this.unreachable = true;
      throw error;
    }
    if (this.unreachable) {
      this.unreachable = false;
      this.reachedAt = performance.now();
    }
  }

  private onThisMachine(row: Placed): boolean {
    return row.machine === null ? row.host === hostname() && row.data_dir === this.local.dataDir : row.machine === this.machine;
  }

  /**
   * Renews this store's lease, drops the leases of stores that are gone, and deals with the open
   * games no store with a lease owns: this machine's are shipped from their log files (the local
   * store closes them), those of a machine where no store runs are closed from the copy. The ids
   * of the games closed from the copy.
   */
  private async recoverInDatabase(): Promise<string[]> {
    await this.renewLease();
    // The leases as leases.ts judges them: epoch ms as numbers (BIGINT comes back as text).
    type Lease = Placed & StoreLease & { now: number };
    const leases = (await this.pool.query<Lease>(
      `SELECT store_id AS "storeId", pid, pid_start AS "pidStart", renewed_at::float8 AS "renewedAt", ${DATABASE_NOW}::float8 AS now, machine, host, data_dir FROM stores`,
    )).rows;
    // Another machine's lease is judged only once this store has reached the database for a full
    // lease: after an outage no machine could renew its lease.
    const judgeLeases = performance.now() - this.reachedAt >= LEASE_MS;
    const isGone = (lease: Lease) => {
      const here = this.onThisMachine(lease);
      return lease.storeId !== this.storeId && (here || judgeLeases) && leaseGone(lease, here, lease.now);
    };
    const gone = new Set(leases.filter(isGone).map((lease) => lease.storeId));
    if (gone.size > 0) await this.pool.query('DELETE FROM stores WHERE store_id = ANY($1)', [[...gone]]);
    const liveMachines = new Set(leases.filter((lease) => !gone.has(lease.storeId)).map(machineOf));
    const orphans = (await this.pool.query<Placed & { game_id: string }>(
      'SELECT game_id, machine, host, data_dir FROM games WHERE ended_at IS NULL AND owner NOT IN (SELECT store_id FROM stores)',
    )).rows;
    const closed: string[] = [];
    for (const orphan of orphans) {
      const ours = this.onThisMachine(orphan);
      if (ours && this.local.getGame(orphan.game_id)) this.ship(orphan.game_id);
      else if (!ours && liveMachines.has(machineOf(orphan))) continue; // its machine's stores close it
      else if (await this.closeFromCopy(orphan.game_id)) closed.push(orphan.game_id);
    }
    return closed;
  }

  /** Closes an open game from the lines the database has, as recovery closes a log file; false if another store got to it first. */
  private closeFromCopy(gameId: string): Promise<boolean> {
    return inTransaction(this.pool, async (client) => {
      const row = (await client.query<{ started_at: string; score: number; note: string | null; lines: number }>(
        'SELECT started_at, score, note, lines FROM games WHERE game_id = $1 AND ended_at IS NULL FOR UPDATE SKIP LOCKED',
        [gameId],
      )).rows[0];
      if (!row) return false;
      const lines = (await client.query<{ line: string }>('SELECT line FROM log_lines WHERE game_id = $1 ORDER BY n', [gameId])).rows;
      const text = lines.map(({ line }) => `${line}\n`).join('');
      const { closing, end } = closingOf(text, Date.parse(row.started_at), row.score, 'interrupted', isoTime(Date.now()));
      if (end) await client.query('INSERT INTO log_lines (game_id, n, line) VALUES ($1, $2, $3)', [gameId, row.lines, serializeLine(end)]);
      await client.query(
        'UPDATE games SET score = $2, ended_at = $3, end_reason = $4, note = $5, lines = $6, closed_from_copy = TRUE WHERE game_id = $1',
        [gameId, closing.score, closing.endedAt, closing.endReason, joinNotes(row.note, closing.note === RECOVERY_NOTE ? null : closing.note, COPY_NOTE), row.lines + (end ? 1 : 0)],
      );
      return true;
    });
  }
}

function record(row: GameRow): GameRecord {
  return {
    gameId: row.game_id,
    pool: row.pool,
    seats: row.seats,
    score: row.score,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    endReason: row.end_reason as GameRecord['endReason'],
    ...(row.note !== null && { note: row.note }),
  };
}
