/**
 * Data directories of earlier releases open with their games: their index (games.sqlite) has no
 * user_version, and the shape of the release that made it, which the index's first migration
 * brings to the current one.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteGameStore } from '../../server/store/SqliteGameStore';
import { replay } from '../../shared/log/replay';
import { selfPlayLines, toText } from './storeContract';

/** What each release did to the index, oldest first, as its code did it. */
const RELEASES: readonly (readonly string[])[] = [
  [
    'CREATE TABLE games (game_id TEXT PRIMARY KEY, pool TEXT NOT NULL, score INTEGER NOT NULL DEFAULT 0, started_at TEXT NOT NULL, ended_at TEXT, end_reason TEXT, log_path TEXT NOT NULL, note TEXT)',
    'CREATE TABLE seats (game_id TEXT NOT NULL REFERENCES games (game_id), role TEXT NOT NULL, player_id TEXT NOT NULL, kind TEXT NOT NULL, worker_id TEXT, assignment_id TEXT, hit_id TEXT, PRIMARY KEY (game_id, role))',
    'CREATE INDEX games_by_started_at ON games (started_at)',
    'CREATE INDEX games_by_pool ON games (pool)',
  ],
  ['ALTER TABLE games ADD COLUMN log_unclosed INTEGER NOT NULL DEFAULT 0'],
  ['CREATE TABLE stores (store_id TEXT PRIMARY KEY, host TEXT NOT NULL, pid INTEGER NOT NULL, renewed_at INTEGER NOT NULL)', 'ALTER TABLE games ADD COLUMN owner TEXT'],
  ['ALTER TABLE stores ADD COLUMN pid_start TEXT'],
  ['ALTER TABLE games ADD COLUMN copied INTEGER NOT NULL DEFAULT 0'],
];

/** The game every old index holds, ended, and the one it holds still open, with its log (its process was killed). */
const ENDED = { game_id: 'old-ended', pool: 'lab', score: 7, started_at: '2026-01-01T00:00:00.000Z', ended_at: '2026-01-01T00:10:00.000Z', end_reason: 'turns-exhausted', log_path: 'logs/old-ended.jsonl', note: null };
const OPEN = { game_id: 'old-open', pool: 'lab', score: 0, started_at: '2026-01-02T00:00:00.000Z', ended_at: null, end_reason: null, log_path: 'logs/old-open.jsonl', note: null };

const dirs: string[] = [];

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A data directory whose index was made by the first `releases` releases, with their games. */
function oldDataDirectory(releases: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'cerealbar-old-index-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'logs'));
  const db = new Database(join(dir, 'games.sqlite'));
  for (const statement of RELEASES.slice(0, releases).flat()) db.exec(statement);
  const insertGame = db.prepare('INSERT INTO games (game_id, pool, score, started_at, ended_at, end_reason, log_path, note) VALUES (@game_id, @pool, @score, @started_at, @ended_at, @end_reason, @log_path, @note)');
  for (const game of [ENDED, OPEN]) insertGame.run(game);
  db.prepare("INSERT INTO seats (game_id, role, player_id, kind, worker_id) VALUES ('old-ended', 'leader', 'p-1', 'human', 'W1'), ('old-ended', 'follower', 'p-2', 'bot', NULL)").run();
  db.close();
  writeFileSync(join(dir, 'logs', 'old-open.jsonl'), toText(selfPlayLines(1).slice(0, 20)));
  return dir;
}

/** The index's tables, column by column, and its user_version. */
function shape(dir: string): { version: number; columns: unknown[] } {
  const db = new Database(join(dir, 'games.sqlite'), { readonly: true });
  try {
    const columns = ['games', 'seats', 'stores'].map((table) => [table, db.prepare('SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?)').all(table)]);
    return { version: db.pragma('user_version', { simple: true }) as number, columns };
  } finally {
    db.close();
  }
}

function freshShape(): ReturnType<typeof shape> {
  const dir = mkdtempSync(join(tmpdir(), 'cerealbar-new-index-'));
  dirs.push(dir);
  SqliteGameStore.open(dir).close();
  return shape(dir);
}

describe.each(RELEASES.map((_, i) => i + 1))("an index made by the first %i release(s), before user_version", (releases) => {
  test('opens with its games and their seats, and gets the shape and version of a new index', () => {
    const dir = oldDataDirectory(releases);
    const store = SqliteGameStore.open(dir);
    try {
      expect(store.listGames().map((game) => [game.gameId, game.endReason, game.score])).toEqual([
        ['old-open', null, 0],
        ['old-ended', 'turns-exhausted', 7],
      ]);
      expect(store.getGame('old-ended')!.seats).toEqual([
        { role: 'leader', playerId: 'p-1', kind: 'human', workerId: 'W1' },
        { role: 'follower', playerId: 'p-2', kind: 'bot' },
      ]);
      // Its open game (which has no owner, or one without a lease) is closed as any left by a killed process.
      expect(store.recover().recovered).toEqual(['old-open']);
      expect(replay(store.readLog('old-open')!).end).toMatchObject({ reason: 'interrupted' });
    } finally {
      store.close();
    }
    expect(shape(dir)).toEqual(freshShape());
  });
});

test('an index of a newer version of cerealbar is refused, and left as it is', () => {
  const dir = oldDataDirectory(RELEASES.length);
  SqliteGameStore.open(dir).close();
  const db = new Database(join(dir, 'games.sqlite'));
  db.pragma('user_version = 99');
  db.close();
  expect(() => SqliteGameStore.open(dir)).toThrow(/games\.sqlite has schema version 99, newer than this version of cerealbar \(1\)/);
  expect(shape(dir).version).toBe(99);
});

test('a new index has version 1', () => {
  expect(freshShape().version).toBe(1);
});
