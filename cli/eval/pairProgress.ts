/**
 * A pair's finished games, one JSON line each in `pair-N/games.ndjson`, appended and flushed as
 * each game's log is saved (the log first, whole, then its line): what `eval --resume` keeps. A
 * line cut short by a kill, or a line whose log is missing, is not a finished game; the game is
 * played again from its start.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { PairGame } from '../../shared/eval/pairs';
import { appendJsonLine, readJsonLines } from '../durableFiles';

export const PAIR_PROGRESS_FILE = 'games.ndjson';

/** The games `dir` (a pair's folder under `out`) holds as finished, by id (a seed played more than once has an id per game). */
export function finishedGames(out: string, dir: string): Map<string, PairGame> {
  const games = readJsonLines<PairGame>(join(out, dir, PAIR_PROGRESS_FILE)).filter((game) => existsSync(join(out, game.log)));
  return new Map(games.map((game) => [game.gameId, game]));
}

/** Appends a finished game's line and flushes it. */
export function recordFinishedGame(out: string, dir: string, game: PairGame): void {
  appendJsonLine(join(out, dir, PAIR_PROGRESS_FILE), game);
}
