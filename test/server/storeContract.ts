/**
 * What every kind of game store does, as the server and its API see it through the GameStore
 * interface: the same tests run on SqliteGameStore (test/server/store.test.ts) and on
 * PgGameStore (test/scale/pgStore.test.ts).
 */
import { RECOVERY_NOTE } from '../../server/store/closing';
import type { GameLogWriter, GameStore, SeatRecord } from '../../server/store/types';
import type { LogEnd, LogEvent, LogHeader, LogLine } from '../../shared/log/format';
import { spawnSync } from 'node:child_process';
import { serializeLine } from '../../shared/log/recorder';
import { replay } from '../../shared/log/replay';
import { generateMap } from '../../shared/maps/generate';
import { playSelfPlayGame } from '../../shared/selfplay/game';

export const SEATS: SeatRecord[] = [
  { role: 'leader', playerId: 'p-leader', kind: 'human', workerId: 'W1', assignmentId: 'A1', hitId: 'H1' },
  { role: 'follower', playerId: 'p-follower', kind: 'bot' },
];

const selfPlayGames = new Map<number, LogLine[]>();

/** The lines of the self-play game for `seed` (played once per seed). */
export function selfPlayLines(seed: number): LogLine[] {
  let lines = selfPlayGames.get(seed);
  if (!lines) {
    const played: LogLine[] = [];
    playSelfPlayGame({ seed, map: generateMap(seed) }, (line) => played.push(line));
    lines = played;
    selfPlayGames.set(seed, lines);
  }
  return lines;
}

export const eventsOf = (lines: readonly LogLine[]) => lines.filter((line): line is LogEvent => line.kind === 'event');
export const toText = (lines: readonly LogLine[]) => lines.map((line) => `${serializeLine(line)}\n`).join('');

export interface RecordOptions {
  readonly gameId: string;
  readonly seed?: number;
  readonly startedAt?: string;
  readonly pool?: string;
  /** Stop after this many events, without an end line (the process "crashed"). */
  readonly crashAfter?: number;
}

/** Writes a self-play game through the store, line by line, as a game room would. */
export function recordGame(store: GameStore, options: RecordOptions): { writer: GameLogWriter; written: LogLine[] } {
  const [header, ...rest] = selfPlayLines(options.seed ?? 1);
  const ownHeader: LogHeader = { ...(header as LogHeader), gameId: options.gameId, startedAt: options.startedAt ?? '2026-01-01T00:00:00.000Z' };
  const writer = store.startGame(ownHeader, { pool: options.pool ?? 'default', seats: SEATS });
  const written: LogLine[] = [ownHeader];
  for (const line of rest) {
    if (line.kind === 'event' && options.crashAfter !== undefined && line.seq > options.crashAfter) break;
    if (line.kind === 'end') writer.end(line);
    else writer.append(line);
    written.push(line);
  }
  return { writer, written };
}

/** A store with its id in the leases. */
export type OpenStore = GameStore & { readonly storeId: string };

/** Where stores keep games (a data directory, a database), and the stores of processes on it. */
export interface StorePlace {
  /** A new store on the place, as another process of the same machine opens it. */
  open(): Promise<OpenStore>;
  /** Makes a store look gone, as if its process had been killed: its lease names a process that has ended. */
  makeGone(storeId: string): Promise<void>;
  remove(): Promise<void>;
}

/** What a record says, without where a store keeps the log. */
function withoutPath(record: object | null): object | null {
  if (record === null) return null;
  const { logPath: _path, ...rest } = record as { logPath?: string };
  return rest;
}

export function describeGameStore(kind: string, newPlace: () => Promise<StorePlace>): void {
  describe(kind, () => {
    let place: StorePlace;
    let store: OpenStore;
    /** Stores a test opened besides `store`, closed after it. */
    let others: OpenStore[];

    beforeEach(async () => {
      place = await newPlace();
      store = await place.open();
      others = [];
    });

    afterEach(async () => {
      for (const other of others) await other.close();
      await store.close();
      await place.remove();
    });

    const reopen = async () => {
      await store.close();
      store = await place.open();
    };
    const game = async (gameId: string) => {
      await store.synced();
      return withoutPath(await store.getGame(gameId)) as Awaited<ReturnType<GameStore['getGame']>>;
    };

    describe('writing games', () => {
      test('the games being written are those started and not yet ended (what a stopping server checks)', async () => {
        const { writer, written } = recordGame(store, { gameId: 'open', crashAfter: 5 });
        recordGame(store, { gameId: 'done', seed: 2 });
        expect(store.gamesBeingWritten()).toEqual(['open']);
        writer.end({ kind: 'end', t: eventsOf(written).at(-1)!.t, reason: 'abandoned', score: 0 });
        expect(store.gamesBeingWritten()).toEqual([]);
      });

      test('a game written line by line and ended is listed, and its log replays', async () => {
        const { written } = recordGame(store, { gameId: 'game-1', seed: 3, startedAt: '2026-03-01T10:00:00Z' });
        const end = written[written.length - 1] as LogEnd;
        expect(await game('game-1')).toEqual({
          gameId: 'game-1',
          pool: 'default',
          seats: SEATS,
          score: end.score,
          startedAt: '2026-03-01T10:00:00.000Z',
          endedAt: new Date(Date.parse('2026-03-01T10:00:00Z') + end.t).toISOString(),
          endReason: 'turns-exhausted',
        });
        const text = (await store.readLog('game-1'))!;
        expect(text).toBe(toText(written));
        expect(replay(text).end).toEqual(end);
        expect(await store.readLog('no-such-game')).toBeNull();
        expect(await store.getGame('no-such-game')).toBeNull();
      });

      test('the list follows the score of a game in play, and a game that is not over has no end', async () => {
        const firstSet = eventsOf(selfPlayLines(1)).find((event) => event.outcome.score === 1)!;
        const { written } = recordGame(store, { gameId: 'live', crashAfter: firstSet.seq });
        expect(await game('live')).toMatchObject({ score: 1, endedAt: null, endReason: null });
        expect(await store.readLog('live')).toBe(toText(written));
      });

      test('nothing can be written after the end line; the header comes only from startGame', () => {
        const { writer, written } = recordGame(store, { gameId: 'done' });
        const end = written[written.length - 1] as LogEnd;
        expect(() => writer.append(eventsOf(written)[0])).toThrow('game done: cannot write to the log: the game has ended');
        expect(() => writer.end(end)).toThrow(/the game has ended/);
        const open = recordGame(store, { gameId: 'open', crashAfter: 2 });
        expect(() => open.writer.append(written[0])).toThrow('game open: the header is written by startGame, not append');
      });

      test('an end line handed to append ends the game, as GameRecorder writes it like any other line', async () => {
        const { writer, written } = recordGame(store, { gameId: 'abandoned', crashAfter: 5 });
        const lastT = eventsOf(written)[4].t;
        writer.append({ kind: 'end', t: lastT + 500, reason: 'abandoned', score: 0 });
        expect(await game('abandoned')).toMatchObject({ endReason: 'abandoned', endedAt: new Date(Date.parse('2026-01-01T00:00:00Z') + lastT + 500).toISOString() });
        expect(replay((await store.readLog('abandoned'))!).end?.reason).toBe('abandoned');
      });

      test('refuses unsafe game ids, an empty pool and a game id it has', () => {
        const header = selfPlayLines(1)[0] as LogHeader;
        for (const gameId of ['../escape', 'a/b', 'a b', 'dot.ted', 'é', '', 'x'.repeat(101)]) {
          expect(() => store.startGame({ ...header, gameId }, { pool: 'default', seats: [] })).toThrow(/^unsafe game id .*: use only letters, digits, _ and -, at most 100 characters$/);
        }
        expect(() => store.startGame({ ...header, gameId: 'x'.repeat(100) }, { pool: 'default', seats: [] })).not.toThrow();
        expect(() => store.startGame({ ...header, gameId: 'no-pool' }, { pool: '', seats: [] })).toThrow('game no-pool: the pool must not be empty');
        recordGame(store, { gameId: 'taken' });
        expect(() => store.startGame({ ...header, gameId: 'taken' }, { pool: 'default', seats: [] })).toThrow('game taken already exists in the index');
      });
    });

    describe('listing games', () => {
      /** Seeds 1..5, started on 1..5 March, in pools a, b, a, b, a. */
      async function recordFive(): Promise<void> {
        for (let i = 1; i <= 5; i++) {
          recordGame(store, { gameId: `g${i}`, seed: i, startedAt: `2026-03-0${i}T12:00:00.000Z`, pool: i % 2 === 1 ? 'a' : 'b' });
        }
        await store.synced();
      }
      const ids = async (filter: Parameters<GameStore['listGames']>[0]) => (await store.listGames(filter)).map((listed) => listed.gameId);
      const scoreOf = (seed: number) => (selfPlayLines(seed).at(-1) as LogEnd).score;

      test('newest first, with seats and scores', async () => {
        await recordFive();
        const games = await store.listGames({});
        expect(games.map((listed) => listed.gameId)).toEqual(['g5', 'g4', 'g3', 'g2', 'g1']);
        expect(games.map((listed) => listed.score)).toEqual([5, 4, 3, 2, 1].map(scoreOf));
        expect(games[0].seats).toEqual(SEATS);
      });

      test('by start time, inclusive bounds, in any ISO 8601 form', async () => {
        await recordFive();
        expect(await ids({ from: '2026-03-02T12:00:00.000Z', to: '2026-03-04T12:00:00Z' })).toEqual(['g4', 'g3', 'g2']);
        expect(await ids({ from: '2026-03-03T14:00:00+02:00' })).toEqual(['g5', 'g4', 'g3']);
        expect(await ids({ to: '2026-03-01T11:59:59.999Z' })).toEqual([]);
        await expect(async () => store.listGames({ from: 'yesterday' })).rejects.toThrow('filter.from is not an ISO 8601 time: "yesterday"');
      });

      test('by pool and minimum score', async () => {
        await recordFive();
        expect(await ids({ pool: 'b' })).toEqual(['g4', 'g2']);
        expect(await ids({ pool: 'none' })).toEqual([]);
        const threshold = scoreOf(3);
        const expected = ['g5', 'g4', 'g3', 'g2', 'g1'].filter((_, i) => scoreOf(5 - i) >= threshold);
        expect(expected.length).toBeGreaterThan(0);
        expect(expected.length).toBeLessThan(5);
        expect(await ids({ minScore: threshold })).toEqual(expected);
        expect(await ids({ pool: 'a', minScore: threshold })).toEqual(expected.filter((id) => ['g1', 'g3', 'g5'].includes(id)));
      });

      test('by page: limit (default 100, at most 1000) and offset', async () => {
        await recordFive();
        expect(await ids({ limit: 2 })).toEqual(['g5', 'g4']);
        expect(await ids({ limit: 2, offset: 2 })).toEqual(['g3', 'g2']);
        expect(await ids({ offset: 4 })).toEqual(['g1']);
        expect(await ids({ offset: 5 })).toEqual([]);
        await expect(async () => store.listGames({ limit: 1001 })).rejects.toThrow('filter.limit must be an integer from 1 to 1000, got 1001');
        await expect(async () => store.listGames({ limit: 0 })).rejects.toThrow(/filter.limit/);
        await expect(async () => store.listGames({ offset: -1 })).rejects.toThrow(/filter.offset/);
      });

      test('the default page is 100 games; games started in the same millisecond in the order of their ids', async () => {
        const header = selfPlayLines(1)[0] as LogHeader;
        for (let i = 0; i < 101; i++) {
          const startedAt = new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString();
          store.startGame({ ...header, gameId: `many-${i}`, startedAt }, { pool: 'default', seats: [] });
        }
        for (const gameId of ['same-B', 'same-a', 'same-C']) store.startGame({ ...header, gameId, startedAt: '2025-01-01T00:00:00.000Z' }, { pool: 'same', seats: [] });
        await store.synced();
        const page = await store.listGames({});
        expect(page).toHaveLength(100);
        expect(page[0].gameId).toBe('many-100');
        // By their bytes, whatever the database's collation: lower case after upper case.
        expect(await ids({ pool: 'same' })).toEqual(['same-a', 'same-C', 'same-B']);
      });
    });

    describe('recovery', () => {
      test('a game whose writer never ended is closed as interrupted by the next store, with the score from replay', async () => {
        const { written } = recordGame(store, { gameId: 'crashed', crashAfter: 60 });
        const lastEvent = eventsOf(written).at(-1)!;
        expect((await store.recover()).recovered).toEqual([]); // this store is still writing it
        await reopen();
        expect(await store.recover()).toEqual({ recovered: ['crashed'], removed: [], unreadable: [] });
        const end: LogEnd = { kind: 'end', t: lastEvent.t, reason: 'interrupted', score: lastEvent.outcome.score };
        const text = (await store.readLog('crashed'))!;
        expect(text).toBe(toText([...written, end]));
        expect(replay(text).final.score).toBe(end.score);
        const record = await game('crashed');
        expect(record).toMatchObject({ score: end.score, endReason: 'interrupted', endedAt: new Date(Date.parse('2026-01-01T00:00:00Z') + lastEvent.t).toISOString() });
        expect(record!.note).toBe(RECOVERY_NOTE);
        expect((await store.recover()).recovered).toEqual([]);
      });

      test('a game whose turns ran out before the crash ends as turns-exhausted', async () => {
        const lines = selfPlayLines(2);
        recordGame(store, { gameId: 'finished', seed: 2, crashAfter: eventsOf(lines).length });
        await reopen();
        await store.recover();
        expect(await game('finished')).toMatchObject({ endReason: 'turns-exhausted', score: (lines.at(-1) as LogEnd).score });
        expect(replay((await store.readLog('finished'))!).end?.reason).toBe('turns-exhausted');
      });

      test('a reopened store has every game, seat and note; a store closed mid-game leaves it to recovery', async () => {
        recordGame(store, { gameId: 'ended', seed: 2, pool: 'p' });
        const { writer } = recordGame(store, { gameId: 'playing', crashAfter: 3 });
        await store.synced();
        const before = (await store.listGames({})).map(withoutPath);
        await store.close();
        expect(() => writer.append(eventsOf(selfPlayLines(1))[3])).toThrow('game playing: cannot write to the log: the store was closed');
        store = await place.open();
        expect((await store.listGames({})).map(withoutPath)).toEqual(before);
        expect((await store.recover()).recovered).toEqual(['playing']);
        await reopen();
        expect(await game('playing')).toMatchObject({ endReason: 'interrupted' });
        expect(await game('ended')).toEqual(before.find((listed) => (listed as { gameId: string }).gameId === 'ended'));
        expect((await store.recover()).recovered).toEqual([]);
      });
    });

    describe('several stores (P-112)', () => {
      test('a live store keeps its games: another store closes them only once it has closed', async () => {
        const other = await place.open();
        recordGame(other, { gameId: 'others', crashAfter: 5 });
        recordGame(store, { gameId: 'mine-ended', seed: 2 });
        await other.synced();
        expect((await store.recover()).recovered).toEqual([]);
        expect(await game('others')).toMatchObject({ endedAt: null });
        await other.close();
        expect((await store.recover()).recovered).toEqual(['others']);
        expect(await game('others')).toMatchObject({ endReason: 'interrupted' });
      });

      test('a store whose process has ended is gone: its games are closed, once, by one other store', async () => {
        const stale = await place.open();
        others.push(stale);
        recordGame(stale, { gameId: 'stale', crashAfter: 5 });
        await stale.synced();
        const third = await place.open();
        others.push(third);
        expect((await store.recover()).recovered).toEqual([]);
        await place.makeGone(stale.storeId);
        expect((await store.recover()).recovered).toEqual(['stale']);
        expect((await third.recover()).recovered).toEqual([]);
        expect((await store.readLog('stale'))!.match(/"kind":"end"/g)).toHaveLength(1);
      });
    });
  });
}

/** The pid of a process of this machine that has ended. */
export function endedPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid;
}
