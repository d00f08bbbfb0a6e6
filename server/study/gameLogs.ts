/**
 * Game logs read for a study's accounts (the bonus sheets, the admin page's download): each log's
 * header and end, with the logs that cannot be read named rather than skipped in silence.
 */
import { readFileSync } from 'node:fs';
import { headerSchema } from '../../shared/log/format';
import { LogError, parseLog } from '../../shared/log/replay';
import type { LoggedGame } from '../../shared/study/bonusSheet';
import { MAX_LIST_LIMIT } from '../store/checks';
import type { Awaitable, GameReader } from '../store/types';

/** A log to read: its name in messages (a file's path, a game's id) and how to read it. */
export interface LogSource {
  readonly name: string;
  /** The log's text; null when it is gone. */
  read(): Awaitable<string | null>;
}

/** A logged game, with its log's text. */
export interface LogFile extends LoggedGame {
  readonly name: string;
  readonly text: string;
}

export interface ReadLogs {
  readonly games: LogFile[];
  /** "<name>: <why>", one per log that could not be read or parsed. */
  readonly unreadable: string[];
}

/** The log files at `paths`. */
export function logFiles(paths: readonly string[]): LogSource[] {
  return paths.map((path) => ({ name: path, read: () => readFileSync(path, 'utf8') }));
}

export async function readGameLogs(sources: readonly LogSource[]): Promise<ReadLogs> {
  const games: LogFile[] = [];
  const unreadable: string[] = [];
  for (const source of sources) {
    let text: string | null;
    try {
      text = await source.read();
    } catch (error) {
      unreadable.push(`${source.name}: cannot read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
      continue;
    }
    if (text === null) {
      unreadable.push(`${source.name}: cannot read: the log is gone`);
      continue;
    }
    try {
      const parsed = parseLog(text);
      games.push({ header: parsed.header, end: parsed.end?.end ?? null, name: source.name, text });
    } catch (error) {
      if (!(error instanceof LogError)) throw error;
      unreadable.push(`${source.name}: ${error.message}`);
    }
  }
  return { games, unreadable };
}

/** The logs of the games in a pool (a study's own are those whose header names the study). */
export async function poolLogs(reader: GameReader, pool: string): Promise<ReadLogs> {
  const sources: LogSource[] = [];
  for (let offset = 0; ; offset += MAX_LIST_LIMIT) {
    const page = await reader.listGames({ pool, limit: MAX_LIST_LIMIT, offset });
    sources.push(...page.map((game) => ({ name: game.gameId, read: () => reader.readLog(game.gameId) })));
    if (page.length < MAX_LIST_LIMIT) return readGameLogs(sources);
  }
}

/**
 * The study a game belongs to, as its log's header says (`meta.study`; null for a game of no
 * study): only the study API's own games have one (P-124). A header never changes, so each
 * game's is read once; a log that cannot be read yet is read again next time.
 */
export class StudyOfGame {
  private readonly known = new Map<string, string | null>();

  constructor(private readonly reader: GameReader) {}

  async of(gameId: string): Promise<string | null> {
    const known = this.known.get(gameId);
    if (known !== undefined) return known;
    let text: string | null;
    try {
      text = await this.reader.readLog(gameId);
    } catch {
      return null;
    }
    const end = text?.indexOf('\n') ?? -1;
    if (text === null || end < 0) return null;
    let line: unknown;
    try {
      line = JSON.parse(text.slice(0, end));
    } catch {
      return null;
    }
    const header = headerSchema.safeParse(line);
    const study = header.success ? header.data.meta.study : undefined;
    const found = typeof study === 'string' ? study : null;
    this.known.set(gameId, found);
    return found;
  }
}
