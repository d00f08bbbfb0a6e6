/** What the game server needs from storage: an index of games and their append-only logs. */
import type { LogEnd, LogHeader, LogLine } from '../../shared/log/format';
import type { Role } from '../../shared/engine/state';

/** One seat of a game, as recorded in the index. */
export interface SeatRecord {
  readonly role: Role;
  /** Opaque id the server gives the player (never a crowdsourcing id). */
  readonly playerId: string;
  readonly kind: 'human' | 'bot';
  /** Crowdsourcing ids exactly as given in the join options, if any. */
  readonly workerId?: string;
  readonly assignmentId?: string;
  readonly hitId?: string;
}

/** A game as the index lists it. Times are ISO 8601. */
export interface GameRecord {
  readonly gameId: string;
  readonly pool: string;
  readonly seats: readonly SeatRecord[];
  readonly score: number;
  readonly startedAt: string;
  /** Null while the game is being played. */
  readonly endedAt: string | null;
  readonly endReason: LogEnd['reason'] | null;
  /** What recovery found wrong with the log (a cut-off last line, a log that cannot be replayed); absent when nothing. */
  readonly note?: string;
}

export interface GameFilter {
  /** ISO 8601 bounds on startedAt, inclusive. */
  readonly from?: string;
  readonly to?: string;
  readonly pool?: string;
  readonly minScore?: number;
  readonly limit?: number;
  readonly offset?: number;
}

/** Appends one game's log lines; each line is in the file before append() returns. */
export interface GameLogWriter {
  append(line: LogLine): void;
  /** Writes the end line, flushes the file to disk and closes the game in the index. */
  end(line: LogEnd): void;
}

export interface StartInfo {
  readonly pool: string;
  readonly seats: SeatRecord[];
}

/** What recover() did. */
export interface Recovery {
  /** Games whose logs it closed. */
  readonly recovered: string[];
  /** Empty log files of games that never started, removed. */
  readonly removed: string[];
  /** Files in logs/ that are not logs of a game of that name, left as they are. */
  readonly unreadable: string[];
}

/** A value, or a promise of it: a store on one machine answers at once, a database store later. */
export type Awaitable<T> = T | Promise<T>;

/**
 * The store of games as the server, its API and its commands use it. Two kinds: SqliteGameStore
 * (a data directory on one machine) and PgGameStore (PostgreSQL, for several machines). Writing
 * is synchronous, as a room writes each action before it answers; reading may wait.
 */
export interface GameStore {
  /** Starts a game's log with its header line and lists the game. */
  startGame(header: LogHeader, info: StartInfo): GameLogWriter;
  /** Closes the games left open by a store that is gone (at start, and again and again by keepAlive). */
  recover(): Awaitable<Recovery>;
  /** Keeps this store's lease and runs recover() every few seconds until the store closes. */
  keepAlive(onRecovered: (recovery: Recovery) => void, onError: (error: Error) => void): void;
  /** Games whose log could not be written completely since the store opened. */
  failedGames(): readonly string[];
  /** Games newest first. */
  listGames(filter?: GameFilter): Awaitable<GameRecord[]>;
  getGame(gameId: string): Awaitable<GameRecord | null>;
  /** Resolves once every line written so far can be read through the store, by any process. */
  synced(): Promise<void>;
  /** A game's log as JSON Lines, as far as it is written; null when the store has no such game. */
  readLog(gameId: string): Awaitable<string | null>;
  /** Logs still being written stay open for the next recover(). */
  close(): Awaitable<void>;
}
