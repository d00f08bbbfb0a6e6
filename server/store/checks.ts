/** What every kind of game store checks of what it is given: game ids, times, list filters, new games. */
import type { LogHeader } from '../../shared/log/format';
import type { GameFilter, StartInfo } from './types';

export const MAX_GAME_ID_LENGTH = 100;
const SAFE_GAME_ID = new RegExp(`^[A-Za-z0-9_-]{1,${MAX_GAME_ID_LENGTH}}$`);

export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 1000;

/** Game ids become file names, so only letters, digits, `_` and `-` are allowed. */
export function isSafeGameId(gameId: string): boolean {
  return SAFE_GAME_ID.test(gameId);
}

export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

/** An ISO 8601 time in the one form the stores keep (UTC, milliseconds), so text order is time order. */
export function normalizeTime(value: string, what: string): string {
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) throw new RangeError(`${what} is not an ISO 8601 time: ${JSON.stringify(value)}`);
  return isoTime(ms);
}

/** A list filter checked and completed: a missing bound is null. */
export interface ListParams {
  readonly from: string | null;
  readonly to: string | null;
  readonly pool: string | null;
  readonly minScore: number | null;
  readonly limit: number;
  readonly offset: number;
}

export function listParams(filter: GameFilter): ListParams {
  return {
    from: filter.from === undefined ? null : normalizeTime(filter.from, 'filter.from'),
    to: filter.to === undefined ? null : normalizeTime(filter.to, 'filter.to'),
    pool: filter.pool ?? null,
    minScore: filter.minScore === undefined ? null : checkFinite(filter.minScore, 'filter.minScore'),
    limit: checkInteger(filter.limit ?? DEFAULT_LIST_LIMIT, 'filter.limit', 1, MAX_LIST_LIMIT),
    offset: checkInteger(filter.offset ?? 0, 'filter.offset', 0, Number.MAX_SAFE_INTEGER),
  };
}

/** Checks a game about to start; its normalized start time. */
export function checkNewGame(header: LogHeader, info: StartInfo): string {
  const { gameId } = header;
  if (!isSafeGameId(gameId)) {
    throw new Error(`unsafe game id ${JSON.stringify(gameId)}: use only letters, digits, _ and -, at most ${MAX_GAME_ID_LENGTH} characters`);
  }
  if (info.pool === '') throw new Error(`game ${gameId}: the pool must not be empty`);
  return normalizeTime(header.startedAt, `game ${gameId}: header.startedAt`);
}

function checkFinite(value: number, what: string): number {
  if (!Number.isFinite(value)) throw new RangeError(`${what} must be a finite number, got ${value}`);
  return value;
}

function checkInteger(value: number, what: string, min: number, max: number): number {
  if (!Number.isSafeInteger(value) || value < min || value > max) throw new RangeError(`${what} must be an integer from ${min} to ${max}, got ${value}`);
  return value;
}
