/** What the soak's checks read of the database: every game with its log (bench/soak.ts, tools/test-container.ts). */
import { MAX_LIST_LIMIT } from '../server/store/checks';
import { PgGameReader } from '../server/store/PgGameStore';
import type { GameRecord } from '../server/store/types';
import type { SoakInput } from './soak-checks';

/** Every game in the database at `url`, with its log. */
export async function databaseGames(url: string): Promise<SoakInput['database']> {
  const reader = await PgGameReader.open(url);
  const games = new Map<string, { record: GameRecord; log: string }>();
  try {
    for (let offset = 0; ; offset += MAX_LIST_LIMIT) {
      const page = await reader.listGames({ limit: MAX_LIST_LIMIT, offset, from: '1970-01-01T00:00:00.000Z' });
      for (const record of page) games.set(record.gameId, { record, log: (await reader.readLog(record.gameId)) ?? '' });
      if (page.length < MAX_LIST_LIMIT) break;
    }
  } finally {
    await reader.close();
  }
  return games;
}
