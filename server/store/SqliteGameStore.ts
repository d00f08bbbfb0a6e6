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
import Database from 'better-sqlite3';
import { openSharedDatabase, schemaTransaction } from './sqliteFile';
import { OWNER_DIR_MODE, OWNER_FILE_MODE } from './ownerOnly';
import { processRuns, processStart } from './processes';
import { randomUUID } from 'node:crypto';
import * as nodeFs from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { ROLES } from '../../shared/engine/state';
import { headerSchema, type EndReason, type LogEnd, type LogHeader, type LogLine } from '../../shared/log/format';
import { serializeLine } from '../../shared/log/recorder';
import { closingOf, joinNotes, type GameClosing } from './closing';
import { checkNewGame, isoTime, isSafeGameId, listParams, normalizeTime, type ListParams } from './checks';
import type { GameFilter, GameLogWriter, GameRecord, GameStore, Recovery, SeatRecord, StartInfo } from './types';

/** A game as this store lists it: with the absolute path of its JSON Lines log. */
export interface LocalGameRecord extends GameRecord {
  readonly logPath: string;
}

/** The file operations the store uses: node:fs, or a stand-in that injects faults (tests). */
export type StoreFs = Pick<
  typeof nodeFs,
  'closeSync' | 'fstatSync' | 'fsyncSync' | 'ftruncateSync' | 'mkdirSync' | 'openSync' | 'readFileSync' | 'readdirSync' | 'statSync' | 'truncateSync' | 'unlinkSync' | 'writeSync'
>;

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

const LOGS_DIR = 'logs';
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

// ---------------------------------------------------------------------------------------------
// The index

const SCHEMA = `
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

/** How long a store's lease holds without renewal, and how often keepAlive() renews it. */
export const LEASE_MS = 10_000;
export const LEASE_RENEW_MS = 2_000;

/**
 * Added after the first release, so older indexes get it by ALTER TABLE: 1 while a game has ended
 * but its log still lacks the end line (a write failed); recover() adds the line.
 */
const LOG_UNCLOSED_COLUMN = 'log_unclosed INTEGER NOT NULL DEFAULT 0';
/** Also added later: the store that started the game (null in older indexes: recover() takes those). */
const OWNER_COLUMN = 'owner TEXT';
/**
 * And whether a store that copies games elsewhere (PgGameStore) has copied the ended game in full:
 * what is still to copy survives a restart. Unused by a store on its own.
 */
const COPIED_COLUMN = 'copied INTEGER NOT NULL DEFAULT 0';
/** And the start of the lease's process (processStart), so that a pid used again is not taken for it. */
const PID_START_COLUMN = 'pid_start TEXT';

const GAME_COLUMNS = 'game_id, pool, score, started_at, ended_at, end_reason, log_path, note, log_unclosed';

interface GameRow {
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

/** A store's hold on the data directory. */
export interface StoreLease {
  readonly storeId: string;
  readonly host: string;
  readonly pid: number;
  /** processStart(pid) when the lease was taken, where the machine tells it. */
  readonly pidStart: string | null;
  readonly renewedAt: number;
}

interface NewGame {
  /** The store that writes it (null for a log recover() indexes: it takes it at once). */
  readonly owner: string | null;
  readonly gameId: string;
  readonly pool: string;
  readonly startedAt: string;
  readonly logPath: string;
  readonly note: string | null;
}

/** The SQL side of the store: prepared once, used by the store and by its log writers. */
class GameIndex {
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

  constructor(private readonly db: Database.Database) {
    schemaTransaction(db, () => {
      db.exec(SCHEMA);
      const columns = db.prepare<[], string>("SELECT name FROM pragma_table_info('games')").pluck().all();
      if (!columns.includes('log_unclosed')) db.exec(`ALTER TABLE games ADD COLUMN ${LOG_UNCLOSED_COLUMN}`);
      if (!columns.includes('owner')) db.exec(`ALTER TABLE games ADD COLUMN ${OWNER_COLUMN}`);
      if (!columns.includes('copied')) db.exec(`ALTER TABLE games ADD COLUMN ${COPIED_COLUMN}`);
      const leaseColumns = db.prepare<[], string>("SELECT name FROM pragma_table_info('stores')").pluck().all();
      if (!leaseColumns.includes('pid_start')) db.exec(`ALTER TABLE stores ADD COLUMN ${PID_START_COLUMN}`);
    });
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
    this.selectLeases = db.prepare<[], StoreLease>('SELECT store_id AS storeId, host, pid, pid_start AS pidStart, renewed_at AS renewedAt FROM stores');
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

  /** Takes out (or renews) the lease of store `storeId`. */
  renewLease(storeId: string, now: number): void {
    this.upsertLease.run(storeId, hostname(), process.pid, OWN_PROCESS_START, now);
  }

  releaseLease(storeId: string): void {
    this.deleteLease.run(storeId);
  }

  leases(): StoreLease[] {
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

// ---------------------------------------------------------------------------------------------
// Log files

/** Writes all of `bytes` at the end of the file (write(2) may write less than asked). */
function writeAll(fs: StoreFs, fd: number, bytes: Buffer): void {
  let written = 0;
  while (written < bytes.length) written += fs.writeSync(fd, bytes, written, bytes.length - written);
}

function lineBytes(line: LogLine): Buffer {
  return Buffer.from(`${serializeLine(line)}\n`, 'utf8');
}

/** Opens a new log for appending; an existing file is never reused, so no log is ever mixed with another. */
/** Flushes a directory's entries (a new file's name) to disk. */
function syncDirectory(fs: StoreFs, path: string): void {
  const fd = fs.openSync(path, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function createLogFile(fs: StoreFs, path: string, gameId: string): number {
  try {
    return fs.openSync(path, 'ax', OWNER_FILE_MODE);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new Error(`game ${gameId}: the log file ${path} already exists`);
    throw error;
  }
}

/** Appends one line and flushes it to disk. */
function appendDurably(fs: StoreFs, path: string, line: LogLine): void {
  const fd = fs.openSync(path, 'a');
  try {
    writeAll(fs, fd, lineBytes(line));
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

const LOG_REMOVED = 'the log file was removed during the game';

type WriterState = 'open' | 'failed' | 'ended' | 'detached' | 'taken';

const TAKEN_OVER = 'the log was ended by another process, which judged this one gone';

/** A step of writing that failed, as the index's note says it. */
interface WriteFailure {
  readonly what: string;
  readonly error: Error;
}

/**
 * Appends to one game's log. Each line goes to the kernel with one synchronous write before
 * append() returns, so a process killed right after loses none of it; end() also flushes to disk.
 * A failed write or index update fails the append; end() then closes the game as far as storage lets it.
 */
class LogFileWriter implements GameLogWriter {
  private state: WriterState = 'open';
  private failure: WriteFailure | null = null;
  private score = 0;

  constructor(
    private readonly fs: StoreFs,
    private readonly gameId: string,
    private fd: number,
    /** Bytes of whole lines the game accepted: a failed write is cut back to here. */
    private size: number,
    private readonly startedAtMs: number,
    private readonly index: GameIndex,
    private readonly syncEachAction: boolean,
    private readonly onFinished: (writer: LogFileWriter, failed: boolean) => void,
  ) {}

  /** Appends an event (or an agent seat's line); an end line is handed to end(), as GameRecorder writes it like any other line. */
  append(line: LogLine): void {
    if (line.kind === 'header') throw new Error(`game ${this.gameId}: the header is written by startGame, not append`);
    if (line.kind === 'end') return this.end(line);
    this.checkOpen();
    const bytes = this.write(line);
    if (this.syncEachAction) this.attempt('the log could not be flushed', () => this.fs.fsyncSync(this.fd));
    // The index keeps the score current for lists of live games, but only touches the row when it changes.
    if (line.kind === 'event' && line.outcome.score !== this.score) {
      this.attempt('the index could not be updated', () => this.index.setScore(this.gameId, line.outcome.score));
      this.score = line.outcome.score;
    }
    this.size += bytes;
  }

  /**
   * Writes the end line, flushes the log and closes the game in the index. After a failed write
   * (or if this one fails) it closes the game as far as storage allows instead, never throwing.
   */
  end(line: LogEnd): void {
    if (this.state === 'open') {
      try {
        this.write(line);
        this.attempt('the log could not be flushed', () => this.fs.fsyncSync(this.fd));
        this.attempt('the index could not be updated', () => this.closeInIndex(line, null, false));
        this.finish('ended');
        return;
      } catch {
        // Noted in this.failure (closed below as far as storage allows), or the log was taken over.
      }
    }
    if (this.state === 'taken') return;
    if (this.state !== 'failed') this.checkOpen();
    this.closeAfterFailure(line);
  }

  /** Closes the file without ending the game (the store is closing); recover() ends it at the next start. */
  detach(): void {
    if (this.state !== 'open') return;
    try {
      this.attempt('the log could not be flushed', () => this.fs.fsyncSync(this.fd));
      this.finish('detached');
    } catch {
      this.finish('detached', true);
    }
  }

  /** Writes one line; the log's bytes past `size` are not yet part of the game. */
  private write(line: LogLine): number {
    this.checkOpen();
    const file = this.attempt('the log could not be written', () => this.fs.fstatSync(this.fd));
    // Writing to a removed file succeeds, and its lines are lost when it is closed.
    if (file.nlink === 0) this.fail(LOG_REMOVED, new Error(LOG_REMOVED));
    // Only this writer appends to the log, unless another store judged this one gone and ended it.
    if (file.size !== this.size) this.takenOver();
    const bytes = lineBytes(line);
    this.attempt('the log could not be written', () => writeAll(this.fs, this.fd, bytes));
    return bytes.length;
  }

  /** The log was ended by another store's recovery, which also closed the game in the index: nothing more is ours to write. */
  private takenOver(): never {
    this.finish('taken');
    throw this.notOpen();
  }

  private attempt<T>(what: string, work: () => T): T {
    try {
      return work();
    } catch (error) {
      return this.fail(what, error as Error);
    }
  }

  private fail(what: string, error: Error): never {
    this.failure = { what, error };
    this.state = 'failed';
    throw error;
  }

  /**
   * A write failed: the log is cut back to its last accepted line (a cut-off line mid-file could
   * never be repaired), gets `line` if the disk allows, and the index notes what failed. A log
   * left without its end line is marked so that recover() adds it.
   */
  private closeAfterFailure(line: LogEnd): void {
    const failure = this.failure!;
    let closed = false;
    if (failure.what !== LOG_REMOVED) {
      try {
        this.fs.ftruncateSync(this.fd, this.size);
        writeAll(this.fs, this.fd, lineBytes(line));
        this.fs.fsyncSync(this.fd);
        closed = true;
      } catch {
        // The disk still fails: the end line waits for the next start.
      }
    }
    // The error's code (ENOSPC, EIO, SQLITE_FULL), not its message, which may hold a path.
    const code = (failure.error as NodeJS.ErrnoException).code;
    const unclosed = !closed && failure.what !== LOG_REMOVED;
    const note = `${failure.what}${code ? ` (${code})` : ''}${unclosed ? '; the log ends at the last saved action' : ''}`;
    try {
      this.closeInIndex(line, note, unclosed);
    } catch {
      // The game stays open in the index, and recover() closes it at the next start.
    }
    this.finish('ended', true);
  }

  private closeInIndex(line: LogEnd, note: string | null, logUnclosed: boolean): void {
    this.index.close(this.gameId, { score: line.score, endedAt: isoTime(this.startedAtMs + line.t), endReason: line.reason, note, logUnclosed });
  }

  private checkOpen(): void {
    if (this.state !== 'open') throw this.notOpen();
  }

  private notOpen(): Error {
    const why: Record<Exclude<WriterState, 'open'>, string> = {
      ended: 'the game has ended',
      detached: 'the store was closed',
      taken: TAKEN_OVER,
      failed: `an earlier write failed (${this.failure?.error.message})`,
    };
    return new Error(`game ${this.gameId}: cannot write to the log: ${why[this.state as Exclude<WriterState, 'open'>]}`);
  }


  private finish(state: 'ended' | 'detached' | 'taken', failed = false): void {
    this.state = state;
    try {
      this.fs.closeSync(this.fd);
    } catch {
      // What could be flushed was flushed; a failing close loses nothing more.
    } finally {
      this.fd = -1;
      this.onFinished(this, failed);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Recovery

/** What had to be done to the end of a log before it could be read. */
interface TailRepair {
  /** The log's complete lines. */
  readonly text: string;
  /** Null when the log ended cleanly. */
  readonly note: string | null;
}

/**
 * Makes the log end with a complete line: a cut-off last line is truncated away, and a last line
 * that is complete JSON but lost its newline gets the newline back. Earlier lines are untouched.
 */
function repairTail(fs: StoreFs, path: string): TailRepair {
  const bytes = fs.readFileSync(path);
  if (bytes.length === 0 || bytes[bytes.length - 1] === 0x0a) return { text: bytes.toString('utf8'), note: null };
  const keep = bytes.lastIndexOf(0x0a) + 1;
  const tail = bytes.subarray(keep);
  if (isJsonObject(tail.toString('utf8'))) {
    appendNewline(fs, path);
    return { text: `${bytes.toString('utf8')}\n`, note: 'added the missing newline after the last line' };
  }
  fs.truncateSync(path, keep);
  return { text: bytes.subarray(0, keep).toString('utf8'), note: `removed a cut-off last line (${tail.length} bytes)` };
}

function isJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

function appendNewline(fs: StoreFs, path: string): void {
  const fd = fs.openSync(path, 'a');
  try {
    writeAll(fs, fd, Buffer.from('\n'));
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Closes the log of a game the process never ended, or whose end line could not be written:
 * repairs its last line, replays it for the score, and appends the end line with `reason`. A log
 * that cannot be replayed is left as it is, and the index keeps the last score it saw.
 */
function recoverLog(fs: StoreFs, path: string, startedAtMs: number, lastIndexedScore: number, reason: EndReason): GameClosing {
  let modified: Date;
  try {
    modified = fs.statSync(path).mtime;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    return { score: lastIndexedScore, endedAt: isoTime(startedAtMs), endReason: reason, note: `the log file is missing: ${path}` };
  }
  const repair = repairTail(fs, path);
  const { closing, end } = closingOf(repair.text, startedAtMs, lastIndexedScore, reason, modified.toISOString());
  if (end) appendDurably(fs, path, end);
  return { ...closing, note: joinNotes(repair.note, closing.note) };
}

const seatsSchema = z.array(
  z.object({
    role: z.enum(ROLES),
    playerId: z.string(),
    kind: z.enum(['human', 'bot']),
    workerId: z.string().optional(),
    assignmentId: z.string().optional(),
    hitId: z.string().optional(),
  }),
);

/** A log's header line, if its first line is a valid header of game `gameId`. */
function readHeader(fs: StoreFs, path: string, gameId: string): LogHeader | null {
  const text = fs.readFileSync(path, 'utf8');
  const newline = text.indexOf('\n');
  try {
    const header = headerSchema.parse(JSON.parse(newline < 0 ? text : text.slice(0, newline)));
    return header.gameId === gameId ? header : null;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// The store

const OWN_PROCESS_START = processStart(process.pid);

/**
 * Whether the store that holds `lease` is gone. On this machine its process decides, never the
 * lease's age: a process stalled past its lease (a long GC, swap, SIGSTOP, a paused machine) or a
 * clock stepped forward must not have its games closed under it. Another machine's store (a data
 * directory shared over the network) is judged by its lease.
 */
function leaseGone(lease: StoreLease, now: number): boolean {
  if (lease.host !== hostname()) return lease.renewedAt < now - LEASE_MS;
  if (!processRuns(lease.pid)) return true;
  // A process runs with that pid: another one, if it tells a start other than the lease's.
  const start = lease.pidStart === null ? null : processStart(lease.pid);
  return start !== null && start !== lease.pidStart;
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
    private readonly fs: StoreFs,
    /** This store's id in the index's leases and as its games' owner. */
    readonly storeId: string,
    private readonly syncEachAction: boolean,
  ) {}

  /** Opens (creating if needed) the store in `dataDir`: the index games.sqlite and the logs/ directory. */
  static open(dataDir: string, options: StoreOptions = {}): SqliteGameStore {
    const fs = options.fs ?? nodeFs;
    const root = resolve(dataDir);
    fs.mkdirSync(join(root, LOGS_DIR), { recursive: true, mode: OWNER_DIR_MODE });
    const db = openSharedDatabase(join(root, INDEX_FILE));
    try {
      const store = new SqliteGameStore(root, new GameIndex(db), fs, options.storeId ?? randomUUID(), options.syncEachAction ?? false);
      store.index.renewLease(store.storeId, Date.now());
      return store;
    } catch (error) {
      db.close();
      throw error;
    }
  }

  /** Creates the game's log with its header line and lists the game in the index. */
  startGame(header: LogHeader, info: StartInfo): GameLogWriter {
    const { gameId } = header;
    const startedAt = checkNewGame(header, info);
    if (this.index.get(gameId)) throw new Error(`game ${gameId} already exists in the index`);

    const logPath = `${LOGS_DIR}/${gameId}.jsonl`;
    const absolutePath = join(this.dataDir, logPath);
    const fd = createLogFile(this.fs, absolutePath, gameId);
    const headerBytes = lineBytes(header);
    try {
      writeAll(this.fs, fd, headerBytes);
      // The header and the file's name in its directory on disk: a game that has begun keeps its log after any crash.
      this.fs.fsyncSync(fd);
      syncDirectory(this.fs, join(this.dataDir, LOGS_DIR));
      this.index.insertGame({ owner: this.storeId, gameId, pool: info.pool, startedAt, logPath, note: null }, info.seats);
    } catch (error) {
      // The file is ours and holds nothing but the header: remove it so the id can be used again.
      try {
        this.fs.closeSync(fd);
        this.fs.unlinkSync(absolutePath);
      } catch {
        // Left behind, it is an unindexed log, which recover() indexes at the next start.
      }
      throw error;
    }
    const writer = new LogFileWriter(this.fs, gameId, fd, headerBytes.length, Date.parse(startedAt), this.index, this.syncEachAction, (_, failed) => {
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
    const gone = leases.filter((lease) => lease.storeId !== this.storeId && leaseGone(lease, now));
    // An unindexed log is left by a store stopped between creating it and indexing it: the
    // directory is read at the first recovery, when a store is found gone, and while a log was
    // left for later, not every time (it holds every game ever played).
    if (this.logsToScan || gone.length > 0) this.logsToScan = this.indexOrphans(recovery, now, leases.length - gone.length > 1);
    this.index.adoptOrphanedGames(this.storeId, gone.map((lease) => lease.storeId));
    for (const row of this.index.openGames(this.storeId)) {
      if (this.writers.has(row.game_id)) continue;
      const reason = (row.end_reason as EndReason | null) ?? 'interrupted';
      const closing = recoverLog(this.fs, this.absolute(row.log_path), Date.parse(row.started_at), row.score, reason);
      this.index.close(row.game_id, { ...closing, note: joinNotes(row.note, closing.note) });
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

  /** Indexes the logs the index lacks (see recover()); whether one was left for a later recovery. */
  private indexOrphans(recovery: Recovery, now: number, othersLive: boolean): boolean {
    let leftForLater = false;
    const logsDir = join(this.dataDir, LOGS_DIR);
    for (const file of this.fs.readdirSync(logsDir).sort()) {
      const gameId = file.endsWith('.jsonl') ? file.slice(0, -'.jsonl'.length) : '';
      if (!isSafeGameId(gameId) || this.index.get(gameId)) continue;
      // Another live store may have just created the log and be about to index it.
      if (othersLive && this.fs.statSync(join(logsDir, file)).mtimeMs > now - LEASE_MS) {
        leftForLater = true;
        continue;
      }
      this.indexOrphan(join(logsDir, file), gameId, recovery);
    }
    return leftForLater;
  }

  /** Lists a log the index lacks as a game still running, for recover() to close; an empty one is removed. */
  private indexOrphan(path: string, gameId: string, recovery: Recovery): void {
    if (this.fs.statSync(path).size === 0) {
      this.fs.unlinkSync(path);
      recovery.removed.push(gameId);
      return;
    }
    const header = readHeader(this.fs, path, gameId);
    if (!header) {
      recovery.unreadable.push(`${LOGS_DIR}/${gameId}.jsonl`);
      return;
    }
    const pool = typeof header.meta.pool === 'string' && header.meta.pool !== '' ? header.meta.pool : 'default';
    const seats = seatsSchema.safeParse(header.meta.players);
    this.index.insertGame(
      { owner: null, gameId, pool, startedAt: normalizeTime(header.startedAt, `${path}: startedAt`), logPath: `${LOGS_DIR}/${gameId}.jsonl`, note: 'the log was not in the index' },
      seats.success ? seats.data : [],
    );
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
