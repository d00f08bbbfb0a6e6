/**
 * What recovery does to a data directory's logs after a crash (SqliteGameStore.recover() decides
 * whose games are to recover, leases.ts): it indexes the logs the index lacks (a process stopped
 * between creating a log and indexing it), and closes the logs of games that never ended, or
 * whose end line could not be written: a cut-off last line is repaired, and the end line added.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { ROLES } from '../../shared/engine/state';
import { headerSchema, type EndReason, type LogHeader } from '../../shared/log/format';
import { isoTime, isSafeGameId, normalizeTime } from './checks';
import { closingOf, joinNotes, type GameClosing } from './closing';
import type { GameIndex, GameRow } from './gameIndex';
import { LEASE_MS } from './leases';
import { appendDurably, LOGS_DIR, logPathOf, writeAll, type StoreFs } from './logFiles';
import type { Recovery } from './types';

/**
 * Indexes the logs of `dataDir` the index lacks, each as a game still running (for closeGame),
 * into `recovery`; an empty one is removed. With `othersLive` (other stores write into the
 * directory) a log made within a lease is left for later: its store may be about to index it.
 * Whether one was left.
 */
export function indexOrphanLogs(fs: StoreFs, index: GameIndex, dataDir: string, recovery: Recovery, now: number, othersLive: boolean): boolean {
  let leftForLater = false;
  const logsDir = join(dataDir, LOGS_DIR);
  for (const file of fs.readdirSync(logsDir).sort()) {
    const gameId = file.endsWith('.jsonl') ? file.slice(0, -'.jsonl'.length) : '';
    if (!isSafeGameId(gameId) || index.get(gameId)) continue;
    if (othersLive && fs.statSync(join(logsDir, file)).mtimeMs > now - LEASE_MS) {
      leftForLater = true;
      continue;
    }
    indexOrphanLog(fs, index, join(logsDir, file), gameId, recovery);
  }
  return leftForLater;
}

function indexOrphanLog(fs: StoreFs, index: GameIndex, path: string, gameId: string, recovery: Recovery): void {
  if (fs.statSync(path).size === 0) {
    fs.unlinkSync(path);
    recovery.removed.push(gameId);
    return;
  }
  const header = readHeader(fs, path, gameId);
  if (!header) {
    recovery.unreadable.push(logPathOf(gameId));
    return;
  }
  const pool = typeof header.meta.pool === 'string' && header.meta.pool !== '' ? header.meta.pool : 'default';
  const seats = seatsSchema.safeParse(header.meta.players);
  index.insertGame(
    { owner: null, gameId, pool, startedAt: normalizeTime(header.startedAt, `${path}: startedAt`), logPath: logPathOf(gameId), note: 'the log was not in the index' },
    seats.success ? seats.data : [],
  );
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

/**
 * Closes an open game of the index (one the process never ended, or whose end line could not be
 * written) and its log at `path`: the log's last line repaired, replayed for the score, and the
 * end line appended ('interrupted' unless the game had ended). A log that cannot be replayed is
 * left as it is, and the index keeps the last score it saw.
 */
export function closeGame(fs: StoreFs, index: GameIndex, row: GameRow, path: string): void {
  const reason = (row.end_reason as EndReason | null) ?? 'interrupted';
  const closing = closeLog(fs, path, Date.parse(row.started_at), row.score, reason);
  index.close(row.game_id, { ...closing, note: joinNotes(row.note, closing.note) });
}

function closeLog(fs: StoreFs, path: string, startedAtMs: number, lastIndexedScore: number, reason: EndReason): GameClosing {
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
