/**
 * At start, the study workers' records are brought up to the games of the studies' pools (P-155):
 * the records of a game's start and end are written by the process that runs it, again until the
 * worker store takes them, so a process killed while its database was away loses those it held.
 */
import { headerSchema, type LogHeader } from '../../shared/log/format';
import { MAX_LIST_LIMIT } from '../store/checks';
import type { GameReader } from '../store/types';
import type { LoadedStudy } from './loadStudy';
import type { StudyGames } from './studyGames';

/** Reconciles every game of each study's pool, a page of the index at a time; answers the records written. */
export async function reconcileStudyRecords(games: StudyGames, studies: ReadonlyMap<string, LoadedStudy>, reader: GameReader): Promise<number> {
  const header = async (gameId: string): Promise<LogHeader | null> => {
    const log = await reader.readLog(gameId);
    if (log === null) return null;
    try {
      const parsed = headerSchema.safeParse(JSON.parse(log.slice(0, log.indexOf('\n'))));
      return parsed.success ? parsed.data : null;
    } catch {
      return null; // recovery notes such a log; its seats in the index are reconciled all the same
    }
  };
  let written = 0;
  for (const study of studies.values()) {
    for (let offset = 0; ; offset += MAX_LIST_LIMIT) {
      const page = await reader.listGames({ pool: study.pool, limit: MAX_LIST_LIMIT, offset });
      written += await games.reconcile(page, header);
      if (page.length < MAX_LIST_LIMIT) break;
    }
  }
  return written;
}
