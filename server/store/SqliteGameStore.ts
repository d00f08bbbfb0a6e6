/**
 * Games kept on one machine: one append-only JSON Lines log per game (dataDir/logs/<gameId>.jsonl, see
 * docs/log-format.md) and a SQLite index (dataDir/games.sqlite) to find games by time, pool and
 * score. The log is the record; the index follows it, and recover() repairs both after a crash.
 *
 * Several processes (on one machine) may share a data directory: each store holds a lease in the
 * index, renewed by keepAlive(), and every game is owned by the store that started it. recover()
 * closes only the games of stores that are gone: closed, their process no longer running, or
 * their lease run out.
 */
import { GameIndex, type GameRow } from './gameIndex';
import { LEASE_RENEW_MS, leaseGone } from './leases';
import { createLog, LogFileWriter, LOGS_DIR, logPathOf, type StoreFs } from './logFiles';
import { closeGame, indexOrphanLogs } from './recovery';
import { OWNER_DIR_MODE, OWNER_FILE_MODE } from './ownerOnly';
import { randomUUID } from 'node:crypto';
import * as nodeFs from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import type { LogHeader } from '../../shared/log/format';
import { checkNewGame, listParams } from './checks';
import type { GameFilter, GameLogWriter, GameRecord, GameStore, Recovery, StartInfo } from './types';

/** A game as this store lists it: with the absolute path of its JSON Lines log. */
export interface LocalGameRecord extends GameRecord {
  readonly logPath: string;
}

export interface StoreOptions {
  readonly fs?: StoreFs;
  /** The store's id in the leases (a fresh one by default). */
  readonly storeId?: string;
  /**
   * Flushes each action to disk before append() returns, so that a crash of the operating system
   * or a power cut loses no action anyone saw; by default an action reaches the kernel (which a
   * killed process cannot lose) and the disk with the game's end (docs/log-format.md).
   */
  readonly syncEachAction?: boolean;
}

const INDEX_FILE = 'games.sqlite';
const ID_FILE = 'data-directory-id';

/** The id in the data directory's file of that name, which the first store to need it makes. */
function dataDirectoryId(dataDir: string): string {
  const path = join(dataDir, ID_FILE);
  if (!nodeFs.existsSync(path)) {
    // Written whole under another name, then linked: a store reading it never sees half an id.
    const draft = `${path}.${randomUUID()}`;
    nodeFs.writeFileSync(draft, `${randomUUID()}\n`, { mode: OWNER_FILE_MODE });
    try {
      nodeFs.linkSync(draft, path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      nodeFs.unlinkSync(draft);
    }
  }
  return nodeFs.readFileSync(path, 'utf8').trim();
}

export class SqliteGameStore implements GameStore {
  private readonly writers = new Map<string, LogFileWriter>();
  private readonly failed: string[] = [];
  private keepAliveTimer: NodeJS.Timeout | null = null;
  /** Whether recover() is to read the logs directory for unindexed logs (see there). */
  private logsToScan = true;

  private constructor(
    /** Absolute. */
    readonly dataDir: string,
    private readonly index: GameIndex,
    /** The file operations on its logs (PgGameStore reads them through it too). */
    readonly fs: StoreFs,
    /** This store's id in the index's leases and as its games' owner. */
    readonly storeId: string,
    private readonly syncEachAction: boolean,
  ) {}

  /** Opens (creating if needed) the store in `dataDir`: the index games.sqlite and the logs/ directory. */
  static open(dataDir: string, options: StoreOptions = {}): SqliteGameStore {
    const fs = options.fs ?? nodeFs;
    const root = resolve(dataDir);
    fs.mkdirSync(join(root, LOGS_DIR), { recursive: true, mode: OWNER_DIR_MODE });
    const index = GameIndex.open(join(root, INDEX_FILE));
    try {
      const store = new SqliteGameStore(root, index, fs, options.storeId ?? randomUUID(), options.syncEachAction ?? false);
      index.renewLease(store.storeId, Date.now());
      return store;
    } catch (error) {
      index.shutdown();
      throw error;
    }
  }

  /** Creates the game's log with its header line and lists the game in the index. */
  startGame(header: LogHeader, info: StartInfo): GameLogWriter {
    const { gameId } = header;
    const startedAt = checkNewGame(header, info);
    if (this.index.get(gameId)) throw new Error(`game ${gameId} already exists in the index`);

    const logPath = logPathOf(gameId);
    const log = createLog(this.fs, join(this.dataDir, logPath), header, () =>
      this.index.insertGame({ owner: this.storeId, gameId, pool: info.pool, startedAt, logPath, note: null }, info.seats),
    );
    const writer = new LogFileWriter(this.fs, gameId, log.fd, log.size, Date.parse(startedAt), this.index, this.syncEachAction, (_, failed) => {
      this.writers.delete(gameId);
      if (failed) this.failed.push(gameId);
    });
    this.writers.set(gameId, writer);
    return writer;
  }

  /**
   * Call at server start (and keepAlive() calls it again and again). Indexes the logs the index
   * lacks (a process stopped between creating a log and indexing it), then closes every log
   * without its end line of a store that is gone (or of this one, but not those it is writing):
   * games the index shows as running get the end line 'interrupted', games that ended when their
   * end line could not be written get it now. Scores come from replay.
   */
  recover(): Recovery {
    const recovery: Recovery = { recovered: [], removed: [], unreadable: [] };
    const now = Date.now();
    const leases = this.index.leases();
    const gone = leases.filter((lease) => lease.storeId !== this.storeId && leaseGone(lease, lease.host === hostname(), now));
    // An unindexed log is left by a store stopped between creating it and indexing it: the
    // directory is read at the first recovery, when a store is found gone, and while a log was
    // left for later, not every time (it holds every game ever played).
    if (this.logsToScan || gone.length > 0) this.logsToScan = indexOrphanLogs(this.fs, this.index, this.dataDir, recovery, now, leases.length - gone.length > 1);
    this.index.adoptOrphanedGames(this.storeId, gone.map((lease) => lease.storeId));
    for (const row of this.index.openGames(this.storeId)) {
      if (this.writers.has(row.game_id)) continue;
      closeGame(this.fs, this.index, row, this.absolute(row.log_path));
      recovery.recovered.push(row.game_id);
    }
    return recovery;
  }

  /**
   * Renews this store's lease every LEASE_RENEW_MS and closes the games of stores that are gone
   * (recover()), telling `onRecovered` what it closed; a failure is told to `onError` and tried
   * again at the next turn. Stops when the store closes.
   */
  keepAlive(onRecovered: (recovery: Recovery) => void, onError: (error: Error) => void): void {
    this.keepAliveTimer ??= setInterval(() => {
      try {
        this.index.renewLease(this.storeId, Date.now());
        const recovery = this.recover();
        if (recovery.recovered.length + recovery.removed.length > 0) onRecovered(recovery);
      } catch (error) {
        onError(error as Error);
      }
    }, LEASE_RENEW_MS).unref();
  }

  gamesBeingWritten(): readonly string[] {
    return [...this.writers.keys()];
  }

  /** Games whose log or index could not be written since the store opened: each ended there, as 'storage-failed' if it was being played. */
  failedGames(): readonly string[] {
    return this.failed;
  }

  /** Games newest first. */
  listGames(filter: GameFilter = {}): LocalGameRecord[] {
    const rows = this.index.list(listParams(filter));
    return rows.map((row) => this.record(row));
  }

  getGame(gameId: string): LocalGameRecord | null {
    const row = this.index.get(gameId);
    return row ? this.record(row) : null;
  }

  /**
   * The id made once for this data directory: a database shared by several machines knows a
   * machine's stores and games by it (hostnames are often the same on every machine of a cloud).
   */
  get machineId(): string {
    return dataDirectoryId(this.dataDir);
  }

  /** The ended games not yet marked as copied in full (markCopied), for a store that copies them elsewhere. */
  uncopiedGames(): string[] {
    return this.index.uncopied();
  }

  /** Notes that an ended game is copied in full where markCopied's caller keeps its copy. */
  markCopied(gameId: string): void {
    this.index.markCopied(gameId);
  }

  /** A game as getGame gives it, but without its seats, which never change (one query fewer). */
  gameEntry(gameId: string): Omit<LocalGameRecord, 'seats'> | null {
    const row = this.index.get(gameId);
    return row ? this.entry(row) : null;
  }

  /** Every line is readable once written. */
  synced(): Promise<void> {
    return Promise.resolve();
  }

  /** The log as far as it is written; a listed game whose file is gone throws ENOENT. */
  readLog(gameId: string): string | null {
    const row = this.index.get(gameId);
    return row ? this.fs.readFileSync(this.absolute(row.log_path), 'utf8') : null;
  }

  /**
   * Closes the index. Logs still being written are flushed and closed; their games stay open for
   * recover(). A log that cannot be flushed is listed in failedGames().
   */
  close(): void {
    if (this.keepAliveTimer) clearInterval(this.keepAliveTimer);
    this.keepAliveTimer = null;
    for (const writer of [...this.writers.values()]) writer.detach();
    try {
      // Its games, left open, are then the next recover()'s of whichever store runs it.
      this.index.releaseLease(this.storeId);
    } finally {
      this.index.shutdown();
    }
  }

  private record(row: GameRow): LocalGameRecord {
    return { ...this.entry(row), seats: this.index.seats(row.game_id) };
  }

  private entry(row: GameRow): Omit<LocalGameRecord, 'seats'> {
    return {
      gameId: row.game_id,
      pool: row.pool,
      score: row.score,
      startedAt: row.started_at,
      endedAt: row.ended_at,
      endReason: row.end_reason as GameRecord['endReason'],
      logPath: this.absolute(row.log_path),
      ...(row.note !== null && { note: row.note }),
    };
  }

  private absolute(logPath: string): string {
    return resolve(this.dataDir, logPath);
  }
}
