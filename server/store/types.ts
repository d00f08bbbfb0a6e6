/** What the game server needs from storage: an index of games and their append-only logs. */
import type { LogEnd, LogLine } from '../../shared/log/format';
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
  /** Absolute path of the game's JSON Lines log. */
  readonly logPath: string;
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
