/**
 * A pair's finished games, one JSON line each in `pair-N/games.ndjson`, appended and flushed as
 * each game's log is saved (the log first, whole, then its line): what `eval --resume` keeps. A
 * line cut short by a kill, or a line whose log is missing, is not a finished game; the game is
 * played again from its start.
 */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { PairGame } from '../../shared/eval/pairs';

export const PAIR_PROGRESS_FILE = 'games.ndjson';

/** The games `dir` (a pair's folder under `out`) holds as finished, by id (a seed played more than once has an id per game). */
export function finishedGames(out: string, dir: string): Map<string, PairGame> {
  const path = join(out, dir, PAIR_PROGRESS_FILE);
  const games = new Map<string, PairGame>();
  if (!existsSync(path)) return games;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    let game: PairGame;
    try {
      game = JSON.parse(line) as PairGame;
    } catch {
      continue; // the empty tail, or a line cut short by a kill
    }
    if (existsSync(join(out, game.log))) games.set(game.gameId, game);
  }
  return games;
}

/** Appends a finished game's line and flushes it. */
export function recordFinishedGame(out: string, dir: string, game: PairGame): void {
  const fd = openSync(join(out, dir, PAIR_PROGRESS_FILE), 'a');
  try {
    // A line cut short before it (a kill mid-write) ends here, so that this one parses on its own.
    writeSync(fd, `\n${JSON.stringify(game)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
