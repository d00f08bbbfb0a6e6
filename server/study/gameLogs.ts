/**
 * Game logs read for a study's accounts (the bonus sheets, the admin page's download): each log's
 * header and end, with the logs that cannot be read named rather than skipped in silence.
 */
import { readFileSync } from 'node:fs';
import { LogError, parseLog } from '../../shared/log/replay';
import type { LoggedGame } from '../../shared/study/bonusSheet';

/** A logged game, with where its log is. */
export interface LogFile extends LoggedGame {
  readonly path: string;
}

export interface ReadLogs {
  readonly games: LogFile[];
  /** "<path>: <why>", one per log that could not be read or parsed. */
  readonly unreadable: string[];
}

export function readGameLogs(paths: readonly string[]): ReadLogs {
  const games: LogFile[] = [];
  const unreadable: string[] = [];
  for (const path of paths) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      unreadable.push(`${path}: cannot read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
      continue;
    }
    try {
      const parsed = parseLog(text);
      games.push({ header: parsed.header, end: parsed.end?.end ?? null, path });
    } catch (error) {
      if (!(error instanceof LogError)) throw error;
      unreadable.push(`${path}: ${error.message}`);
    }
  }
  return { games, unreadable };
}
