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
import { LEASE_MS, LEASE_RENEW_MS, leaseGone } from './leases';
import { OWNER_DIR_MODE, OWNER_FILE_MODE } from './ownerOnly';
import { randomUUID } from 'node:crypto';
import * as nodeFs from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { ROLES } from '../../shared/engine/state';
import { headerSchema, type EndReason, type LogEnd, type LogHeader, type LogLine } from '../../shared/log/format';
import { serializeLine } from '../../shared/log/recorder';
import { closingOf, joinNotes, type GameClosing } from './closing';
import { checkNewGame, isoTime, isSafeGameId, listParams, normalizeTime } from './checks';
import type { GameFilter, GameLogWriter, GameRecord, GameStore, Recovery, StartInfo } from './types';

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
    const gone = leases.filter((lease) => lease.storeId !== this.storeId && leaseGone(lease, lease.host === hostname(), now));
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
