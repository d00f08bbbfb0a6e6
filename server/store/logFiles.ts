/**
 * A data directory's game logs (logs/<gameId>.jsonl, docs/log-format.md): each made with its
 * header on disk, then appended to by its one writer, and read; all through the store's file
 * operations (StoreFs), which tests replace to inject faults, so that every read and write of a
 * log, PgGameStore's reads as it ships them included, meets them.
 */
import type * as nodeFs from 'node:fs';
import { dirname } from 'node:path';
import type { LogEnd, LogHeader, LogLine } from '../../shared/log/format';
import { serializeLine } from '../../shared/log/recorder';
import { isoTime } from './checks';
import type { GameIndex } from './gameIndex';
import { OWNER_FILE_MODE } from './ownerOnly';
import type { GameLogWriter } from './types';

/** The file operations the store uses: node:fs, or a stand-in that injects faults (tests). */
export type StoreFs = Pick<
  typeof nodeFs,
  | 'closeSync'
  | 'fstatSync'
  | 'fsyncSync'
  | 'ftruncateSync'
  | 'mkdirSync'
  | 'openSync'
  | 'readFileSync'
  | 'readSync'
  | 'readdirSync'
  | 'statSync'
  | 'truncateSync'
  | 'unlinkSync'
  | 'writeSync'
>;

export const LOGS_DIR = 'logs';

/** Where game `gameId`'s log is, relative to the data directory (the index keeps it so, so that the directory can move). */
export function logPathOf(gameId: string): string {
  return `${LOGS_DIR}/${gameId}.jsonl`;
}

/** Writes all of `bytes` at the end of the file (write(2) may write less than asked). */
export function writeAll(fs: StoreFs, fd: number, bytes: Buffer): void {
  let written = 0;
  while (written < bytes.length) written += fs.writeSync(fd, bytes, written, bytes.length - written);
}

function lineBytes(line: LogLine): Buffer {
  return Buffer.from(`${serializeLine(line)}\n`, 'utf8');
}

/**
 * Creates the log at `path` holding `header`, both on disk (the header and the file's name in its
 * directory: a game that has begun keeps its log after any crash), then has `list` index it. An
 * existing file is never reused, so no log is ever mixed with another. On a failure the file,
 * which holds nothing but the header, is removed, so that the id can be used again. Returns the
 * file, open for appending, and its size.
 */
export function createLog(fs: StoreFs, path: string, header: LogHeader, list: () => void): { fd: number; size: number } {
  let fd: number;
  try {
    fd = fs.openSync(path, 'ax', OWNER_FILE_MODE);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new Error(`game ${header.gameId}: the log file ${path} already exists`);
    throw error;
  }
  const bytes = lineBytes(header);
  try {
    writeAll(fs, fd, bytes);
    fs.fsyncSync(fd);
    syncDirectory(fs, dirname(path));
    list();
    return { fd, size: bytes.length };
  } catch (error) {
    try {
      fs.closeSync(fd);
      fs.unlinkSync(path);
    } catch {
      // Left behind, it is an unindexed log, which recover() indexes at the next start.
    }
    throw error;
  }
}

/** Flushes a directory's entries (a new file's name) to disk. */
function syncDirectory(fs: StoreFs, path: string): void {
  const fd = fs.openSync(path, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** Appends one line and flushes it to disk. */
export function appendDurably(fs: StoreFs, path: string, line: LogLine): void {
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
export class LogFileWriter implements GameLogWriter {
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
    private readonly index: Pick<GameIndex, 'setScore' | 'close'>,
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

/** The whole lines of the log at `path` from byte `offset` on (a line still being written waits), and the offset after them. */
export function wholeLinesFrom(fs: StoreFs, path: string, offset: number): { lines: string[]; offset: number } {
  const bytes = readFrom(fs, path, offset);
  const whole = bytes.subarray(0, bytes.lastIndexOf(0x0a) + 1).toString('utf8');
  return { lines: whole === '' ? [] : whole.slice(0, -1).split('\n'), offset: offset + Buffer.byteLength(whole) };
}

/** The bytes of a file from `offset` to its end. */
function readFrom(fs: StoreFs, path: string, offset: number): Buffer {
  const fd = fs.openSync(path, 'r');
  try {
    const length = Math.max(0, fs.fstatSync(fd).size - offset);
    const bytes = Buffer.alloc(length);
    let read = 0;
    while (read < length) {
      const n = fs.readSync(fd, bytes, read, length - read, offset + read);
      if (n === 0) break;
      read += n;
    }
    return bytes.subarray(0, read);
  } finally {
    fs.closeSync(fd);
  }
}
