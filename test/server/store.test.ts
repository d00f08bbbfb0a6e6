/** The game store: logs written line by line, the SQLite index, and recovery after a crash. */
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { GameStore, LEASE_MS } from '../../server/store/GameStore';
import type { GameLogWriter, SeatRecord } from '../../server/store/types';
import type { LogEnd, LogEvent, LogHeader, LogLine } from '../../shared/log/format';
import { serializeLine } from '../../shared/log/recorder';
import { replay } from '../../shared/log/replay';
import { generateMap } from '../../shared/maps/generate';
import { playSelfPlayGame } from '../../shared/selfplay/game';

const REPO = join(__dirname, '..', '..');

const SEATS: SeatRecord[] = [
  { role: 'leader', playerId: 'p-leader', kind: 'human', workerId: 'W1', assignmentId: 'A1', hitId: 'H1' },
  { role: 'follower', playerId: 'p-follower', kind: 'bot' },
];

const selfPlayGames = new Map<number, LogLine[]>();

/** The lines of the self-play game for `seed` (played once per seed). */
function selfPlayLines(seed: number): LogLine[] {
  let lines = selfPlayGames.get(seed);
  if (!lines) {
    const played: LogLine[] = [];
    playSelfPlayGame({ seed, map: generateMap(seed) }, (line) => played.push(line));
    lines = played;
    selfPlayGames.set(seed, lines);
  }
  return lines;
}

const eventsOf = (lines: readonly LogLine[]) => lines.filter((line): line is LogEvent => line.kind === 'event');
const toText = (lines: readonly LogLine[]) => lines.map((line) => `${serializeLine(line)}\n`).join('');

interface RecordOptions {
  readonly gameId: string;
  readonly seed?: number;
  readonly startedAt?: string;
  readonly pool?: string;
  /** Stop after this many events, without an end line (the process "crashed"). */
  readonly crashAfter?: number;
}

/** Writes a self-play game through the store, line by line, as a game room would. */
function recordGame(store: GameStore, options: RecordOptions): { writer: GameLogWriter; written: LogLine[] } {
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

let dir: string;
let store: GameStore;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cerealbar-store-'));
  store = GameStore.open(dir);
});

afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('writing games', () => {
  test('a game written line by line and ended is in the index, and its log replays', () => {
    const { written } = recordGame(store, { gameId: 'game-1', seed: 3, startedAt: '2026-03-01T10:00:00Z' });
    const end = written[written.length - 1] as LogEnd;
    const record = store.getGame('game-1')!;
    expect(record).toEqual({
      gameId: 'game-1',
      pool: 'default',
      seats: SEATS,
      score: end.score,
      startedAt: '2026-03-01T10:00:00.000Z',
      endedAt: new Date(Date.parse('2026-03-01T10:00:00Z') + end.t).toISOString(),
      endReason: 'turns-exhausted',
      logPath: join(dir, 'logs', 'game-1.jsonl'),
    });
    const text = readFileSync(record.logPath, 'utf8');
    expect(text).toBe(toText(written));
    const replayed = replay(text);
    expect(replayed.final.score).toBe(record.score);
    expect(replayed.end).toEqual(end);
    expect(existsSync(join(dir, 'games.sqlite'))).toBe(true);
  });

  test('the index follows the score of a game in play, and a game that is not over has no end', () => {
    const firstSet = eventsOf(selfPlayLines(1)).find((event) => event.outcome.score === 1)!;
    recordGame(store, { gameId: 'live', crashAfter: firstSet.seq });
    expect(store.getGame('live')).toMatchObject({ score: 1, endedAt: null, endReason: null });
  });

  test('nothing can be written after the end line; the header comes only from startGame', () => {
    const { writer, written } = recordGame(store, { gameId: 'done' });
    const end = written[written.length - 1] as LogEnd;
    expect(() => writer.append(eventsOf(written)[0])).toThrow('game done: cannot write to the log: the game has ended');
    expect(() => writer.end(end)).toThrow(/the game has ended/);

    const open = recordGame(store, { gameId: 'open', crashAfter: 2 });
    expect(() => open.writer.append(written[0])).toThrow('game open: the header is written by startGame, not append');
  });

  test('an end line handed to append ends the game, as GameRecorder writes it like any other line', () => {
    const { writer, written } = recordGame(store, { gameId: 'abandoned', crashAfter: 5 });
    const lastT = eventsOf(written)[4].t;
    writer.append({ kind: 'end', t: lastT + 500, reason: 'abandoned', score: 0 });
    expect(store.getGame('abandoned')).toMatchObject({ endReason: 'abandoned', endedAt: new Date(Date.parse('2026-01-01T00:00:00Z') + lastT + 500).toISOString() });
    expect(replay(readFileSync(store.getGame('abandoned')!.logPath, 'utf8')).end?.reason).toBe('abandoned');
  });

  test('refuses unsafe game ids and never reuses a log', () => {
    const header = selfPlayLines(1)[0] as LogHeader;
    for (const gameId of ['../escape', 'a/b', 'a b', 'dot.ted', 'é', '', 'x'.repeat(101)]) {
      expect(() => store.startGame({ ...header, gameId }, { pool: 'default', seats: [] })).toThrow(/^unsafe game id .*: use only letters, digits, _ and -, at most 100 characters$/);
    }
    expect(() => store.startGame({ ...header, gameId: 'x'.repeat(100) }, { pool: 'default', seats: [] })).not.toThrow();

    recordGame(store, { gameId: 'taken' });
    expect(() => store.startGame({ ...header, gameId: 'taken' }, { pool: 'default', seats: [] })).toThrow('game taken already exists in the index');
    writeFileSync(join(dir, 'logs', 'stray.jsonl'), 'not ours\n');
    expect(() => store.startGame({ ...header, gameId: 'stray' }, { pool: 'default', seats: [] })).toThrow(/game stray: the log file .*stray\.jsonl already exists/);
    expect(readFileSync(join(dir, 'logs', 'stray.jsonl'), 'utf8')).toBe('not ours\n');
    expect(store.getGame('stray')).toBeNull();
    expect(readdirSync(join(dir, 'logs')).sort()).toEqual(['stray.jsonl', 'taken.jsonl', `${'x'.repeat(100)}.jsonl`]);
  });
});

describe('listing games', () => {
  /** Seeds 1..5 (scores 6, 10, 11, 15, 14), started on 1..5 March, in pools a, b, a, b, a. */
  function recordFive(): void {
    for (let i = 1; i <= 5; i++) {
      recordGame(store, { gameId: `g${i}`, seed: i, startedAt: `2026-03-0${i}T12:00:00.000Z`, pool: i % 2 === 1 ? 'a' : 'b' });
    }
  }
  const ids = (filter: Parameters<GameStore['listGames']>[0]) => store.listGames(filter).map((game) => game.gameId);
  const scoreOf = (seed: number) => (selfPlayLines(seed).at(-1) as LogEnd).score;

  test('newest first, with seats and scores', () => {
    recordFive();
    const games = store.listGames({});
    expect(games.map((game) => game.gameId)).toEqual(['g5', 'g4', 'g3', 'g2', 'g1']);
    expect(games.map((game) => game.score)).toEqual([5, 4, 3, 2, 1].map(scoreOf));
    expect(games[0].seats).toEqual(SEATS);
  });

  test('by start time, inclusive bounds, in any ISO 8601 form', () => {
    recordFive();
    expect(ids({ from: '2026-03-02T12:00:00.000Z', to: '2026-03-04T12:00:00Z' })).toEqual(['g4', 'g3', 'g2']);
    expect(ids({ from: '2026-03-03T14:00:00+02:00' })).toEqual(['g5', 'g4', 'g3']);
    expect(ids({ to: '2026-03-01T11:59:59.999Z' })).toEqual([]);
    expect(() => store.listGames({ from: 'yesterday' })).toThrow('filter.from is not an ISO 8601 time: "yesterday"');
  });

  test('by pool and minimum score', () => {
    recordFive();
    expect(ids({ pool: 'b' })).toEqual(['g4', 'g2']);
    expect(ids({ pool: 'none' })).toEqual([]);
    const threshold = scoreOf(3);
    const expected = ['g5', 'g4', 'g3', 'g2', 'g1'].filter((_, i) => scoreOf(5 - i) >= threshold);
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(5);
    expect(ids({ minScore: threshold })).toEqual(expected);
    expect(ids({ pool: 'a', minScore: threshold })).toEqual(expected.filter((id) => ['g1', 'g3', 'g5'].includes(id)));
  });

  test('by page: limit (default 100, at most 1000) and offset', () => {
    recordFive();
    expect(ids({ limit: 2 })).toEqual(['g5', 'g4']);
    expect(ids({ limit: 2, offset: 2 })).toEqual(['g3', 'g2']);
    expect(ids({ offset: 4 })).toEqual(['g1']);
    expect(ids({ offset: 5 })).toEqual([]);
    expect(() => store.listGames({ limit: 1001 })).toThrow('filter.limit must be an integer from 1 to 1000, got 1001');
    expect(() => store.listGames({ limit: 0 })).toThrow(/filter.limit/);
    expect(() => store.listGames({ offset: -1 })).toThrow(/filter.offset/);
  });

  test('the default page is 100 games', () => {
    const header = selfPlayLines(1)[0] as LogHeader;
    for (let i = 0; i < 101; i++) {
      const startedAt = new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString();
      store.startGame({ ...header, gameId: `many-${i}`, startedAt }, { pool: 'default', seats: [] });
    }
    const page = store.listGames({});
    expect(page).toHaveLength(100);
    expect(page[0].gameId).toBe('many-100');
  });
});

describe('recovery', () => {
  test('a game whose writer never ended is closed as interrupted with the score from replay', () => {
    const { written } = recordGame(store, { gameId: 'crashed', crashAfter: 60 });
    const lastEvent = eventsOf(written).at(-1)!;
    expect(store.recover().recovered).toEqual([]); // this store is still writing it
    store.close();

    store = GameStore.open(dir);
    expect(store.recover()).toEqual({ recovered: ['crashed'], removed: [], unreadable: [] });
    const record = store.getGame('crashed')!;
    const text = readFileSync(record.logPath, 'utf8');
    const end: LogEnd = { kind: 'end', t: lastEvent.t, reason: 'interrupted', score: lastEvent.outcome.score };
    expect(text).toBe(toText([...written, end]));
    expect(replay(text).final.score).toBe(end.score);
    expect(record).toMatchObject({ score: end.score, endReason: 'interrupted', endedAt: new Date(Date.parse('2026-01-01T00:00:00Z') + lastEvent.t).toISOString() });
    expect(record.note).toBeUndefined();
    expect(store.recover().recovered).toEqual([]);
  });

  test('a cut-off last line is removed, and only it', () => {
    const { written } = recordGame(store, { gameId: 'torn', crashAfter: 40 });
    const next = serializeLine(eventsOf(selfPlayLines(1))[40]);
    store.close();
    appendFileSync(join(dir, 'logs', 'torn.jsonl'), next.slice(0, Math.floor(next.length / 2)));

    store = GameStore.open(dir);
    expect(store.recover().recovered).toEqual(['torn']);
    const record = store.getGame('torn')!;
    const text = readFileSync(record.logPath, 'utf8');
    expect(text.startsWith(toText(written))).toBe(true);
    expect(text.split('\n')).toHaveLength(written.length + 2); // the end line, and the empty string after the last newline
    expect(replay(text).events).toBe(40);
    expect(record.endReason).toBe('interrupted');
    expect(record.note).toMatch(/^removed a cut-off last line \(\d+ bytes\)$/);
  });

  test('a last line that lost only its newline is kept', () => {
    const { written } = recordGame(store, { gameId: 'no-newline', crashAfter: 10 });
    store.close();
    const next = eventsOf(selfPlayLines(1))[10];
    appendFileSync(join(dir, 'logs', 'no-newline.jsonl'), serializeLine(next));

    store = GameStore.open(dir);
    store.recover();
    const text = readFileSync(store.getGame('no-newline')!.logPath, 'utf8');
    expect(text.startsWith(toText([...written, next]))).toBe(true);
    expect(replay(text).events).toBe(11);
    expect(store.getGame('no-newline')!.note).toBe('added the missing newline after the last line');
  });

  test('a game whose turns ran out before the crash ends as turns-exhausted', () => {
    const lines = selfPlayLines(2);
    const events = eventsOf(lines);
    recordGame(store, { gameId: 'finished', seed: 2, crashAfter: events.length });
    store.close();

    store = GameStore.open(dir);
    store.recover();
    const record = store.getGame('finished')!;
    expect(record).toMatchObject({ endReason: 'turns-exhausted', score: (lines.at(-1) as LogEnd).score });
    expect(replay(readFileSync(record.logPath, 'utf8')).end?.reason).toBe('turns-exhausted');
  });

  test('a log that has its end line but an index that missed it: the index follows the log', () => {
    recordGame(store, { gameId: 'half-closed', crashAfter: 20 });
    store.close();
    const t = eventsOf(selfPlayLines(1))[19].t + 100;
    const score = eventsOf(selfPlayLines(1))[19].outcome.score;
    const path = join(dir, 'logs', 'half-closed.jsonl');
    appendFileSync(path, `${serializeLine({ kind: 'end', t, reason: 'server-shutdown', score })}\n`);
    const before = readFileSync(path, 'utf8');

    store = GameStore.open(dir);
    expect(store.recover().recovered).toEqual(['half-closed']);
    expect(readFileSync(path, 'utf8')).toBe(before);
    expect(store.getGame('half-closed')).toMatchObject({ endReason: 'server-shutdown', score, note: 'the log already had its end line' });
  });

  test('a corrupt log is closed with a note, left as it is, and does not stop the others', () => {
    recordGame(store, { gameId: 'corrupt', crashAfter: 30 });
    recordGame(store, { gameId: 'fine', seed: 4, crashAfter: 30 });
    recordGame(store, { gameId: 'lost', seed: 5, crashAfter: 30 });
    const scoreBefore = store.getGame('corrupt')!.score;
    store.close();
    const path = join(dir, 'logs', 'corrupt.jsonl');
    const lines = readFileSync(path, 'utf8').split('\n');
    lines[5] = lines[5].replace('"seq":5', '"seq":7');
    writeFileSync(path, lines.join('\n'));
    const corrupted = readFileSync(path, 'utf8');
    unlinkSync(join(dir, 'logs', 'lost.jsonl'));

    store = GameStore.open(dir);
    expect(store.recover().recovered.sort()).toEqual(['corrupt', 'fine', 'lost']);
    expect(readFileSync(path, 'utf8')).toBe(corrupted);
    expect(store.getGame('corrupt')).toMatchObject({
      endReason: 'interrupted',
      score: scoreBefore,
      note: 'the log cannot be replayed: line 6: event seq is 7, expected 5',
    });
    expect(store.getGame('corrupt')!.endedAt).not.toBeNull();
    expect(store.getGame('fine')).toMatchObject({ endReason: 'interrupted' });
    expect(store.getGame('fine')!.note).toBeUndefined();
    expect(store.getGame('lost')).toMatchObject({ endReason: 'interrupted', note: expect.stringMatching(/^the log file is missing: .*lost\.jsonl$/) });
  });

  test('a log cut off inside its header is left empty and noted', () => {
    const header = selfPlayLines(1)[0] as LogHeader;
    store.startGame({ ...header, gameId: 'headless' }, { pool: 'default', seats: [] });
    store.close();
    const path = join(dir, 'logs', 'headless.jsonl');
    writeFileSync(path, serializeLine(header).slice(0, 50));

    store = GameStore.open(dir);
    expect(() => store.recover()).not.toThrow();
    expect(readFileSync(path, 'utf8')).toBe('');
    expect(store.getGame('headless')!.note).toBe('removed a cut-off last line (50 bytes); the log cannot be replayed: the log is empty');
  });
});

describe('reopening', () => {
  test('a reopened store has every game, seat and note; a store closed mid-game leaves it to recovery', () => {
    recordGame(store, { gameId: 'ended', seed: 2, pool: 'p' });
    const { writer } = recordGame(store, { gameId: 'playing', crashAfter: 3 });
    const before = store.listGames({});
    store.close();
    expect(() => writer.append(eventsOf(selfPlayLines(1))[3])).toThrow('game playing: cannot write to the log: the store was closed');

    store = GameStore.open(dir);
    expect(store.listGames({})).toEqual(before);
    expect(store.recover().recovered).toEqual(['playing']);
    store.close();

    store = GameStore.open(dir);
    expect(store.getGame('playing')).toMatchObject({ endReason: 'interrupted' });
    expect(store.getGame('ended')).toEqual(before.find((game) => game.gameId === 'ended'));
    expect(store.recover().recovered).toEqual([]);
  });
});

/** Runs a script that appends a self-play game line by line, and kills it with SIGKILL after `killAfter` lines. */
function appendUntilKilled(dataDir: string, killAfter: number): Promise<number[]> {
  const script = join(dataDir, 'crash-writer.js');
  const module = (path: string) => JSON.stringify(join(REPO, path));
  writeFileSync(
    script,
    `
    const { GameStore } = require(${module('server/store/GameStore.ts')});
    const { playSelfPlayGame } = require(${module('shared/selfplay/game.ts')});
    const { generateMap } = require(${module('shared/maps/generate.ts')});
    const lines = [];
    playSelfPlayGame({ seed: 7, map: generateMap(7), gameId: 'crash' }, (line) => lines.push(line));
    const writer = GameStore.open(process.argv[2]).startGame(lines[0], { pool: 'crash', seats: [] });
    const events = lines.filter((line) => line.kind === 'event');
    let next = 0;
    // Paced so that the kill comes mid-game; once out of events it waits to be killed.
    setInterval(() => {
      if (next === events.length) return;
      writer.append(events[next]);
      process.stdout.write('appended ' + events[next].seq + '\\n');
      next++;
    }, 2);
    `,
  );
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--require', require.resolve('tsx/cjs'), script, dataDir], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    const appended: number[] = [];
    let pending = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      pending += chunk;
      const complete = pending.split('\n');
      pending = complete.pop()!;
      for (const line of complete) {
        const match = /^appended (\d+)$/.exec(line);
        if (match) appended.push(Number(match[1]));
        if (appended.length === killAfter) child.kill('SIGKILL');
      }
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(appended);
      else reject(new Error(`the writer exited with code ${code} before it was killed: ${stderr}`));
    });
  });
}

describe('a real crash', () => {
  test('every line a process killed with SIGKILL reported as appended is in the log, which then replays', async () => {
    store.close();
    const appended = await appendUntilKilled(dir, 40);
    expect(appended.length).toBeGreaterThanOrEqual(40);
    const path = join(dir, 'logs', 'crash.jsonl');
    const seqsIn = (text: string) => new Set(eventsOf(text.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line))).map((event) => event.seq));
    const beforeRecovery = seqsIn(readFileSync(path, 'utf8'));
    expect(appended.filter((seq) => !beforeRecovery.has(seq))).toEqual([]);

    store = GameStore.open(dir);
    expect(store.recover().recovered).toEqual(['crash']);
    const text = readFileSync(path, 'utf8');
    const afterRecovery = seqsIn(text);
    expect(appended.filter((seq) => !afterRecovery.has(seq))).toEqual([]);
    const replayed = replay(text);
    expect(replayed.final.gameOver).toBe(false); // killed mid-game, not after the last line
    expect(replayed.end).toMatchObject({ reason: 'interrupted', score: replayed.final.score });
    expect(store.getGame('crash')).toMatchObject({ endReason: 'interrupted', score: replayed.final.score, pool: 'crash' });
  }, 30_000);
});

describe('P-112: several stores on one data directory', () => {
  test('a live store keeps its games: another store closes them only once it has closed', () => {
    const other = GameStore.open(dir);
    try {
      recordGame(other, { gameId: 'others', crashAfter: 5 });
      recordGame(store, { gameId: 'mine-ended', seed: 2 });
      expect(store.recover().recovered).toEqual([]);
      expect(store.getGame('others')).toMatchObject({ endedAt: null });
    } finally {
      other.close();
    }
    expect(store.recover().recovered).toEqual(['others']);
    expect(store.getGame('others')).toMatchObject({ endReason: 'interrupted' });
  });

  test("a store whose lease ran out is gone: its games are closed, once, by one other store", () => {
    const stale = GameStore.open(dir);
    recordGame(stale, { gameId: 'stale', crashAfter: 5 });
    const third = GameStore.open(dir);
    try {
      expect(store.recover().recovered).toEqual([]);
      const db = new Database(join(dir, 'games.sqlite'));
      db.prepare('UPDATE stores SET renewed_at = ? WHERE store_id = ?').run(Date.now() - LEASE_MS - 1, stale.storeId);
      db.close();
      expect(store.recover().recovered).toEqual(['stale']);
      expect(third.recover().recovered).toEqual([]);
      expect(readFileSync(join(dir, 'logs', 'stale.jsonl'), 'utf8').match(/"kind":"end"/g)).toHaveLength(1);
    } finally {
      third.close();
      stale.close();
    }
  });

  test('four processes write games into one data directory at once: every game is indexed, owned and replays', async () => {
    store.close();
    const script = join(dir, 'writer.js');
    const module = (path: string) => JSON.stringify(join(REPO, path));
    writeFileSync(
      script,
      `
      const { GameStore } = require(${module('server/store/GameStore.ts')});
      const { playSelfPlayGame } = require(${module('shared/selfplay/game.ts')});
      const { generateMap } = require(${module('shared/maps/generate.ts')});
      const [dataDir, name] = process.argv.slice(2);
      const store = GameStore.open(dataDir);
      store.recover();
      for (let game = 0; game < 5; game++) {
        const lines = [];
        playSelfPlayGame({ seed: game + 1, map: generateMap(game + 1), gameId: name + '-' + game }, (line) => lines.push(line));
        const writer = store.startGame(lines[0], { pool: name, seats: [] });
        for (const line of lines.slice(1)) line.kind === 'end' ? writer.end(line) : writer.append(line);
      }
      store.close();
      `,
    );
    const run = (name: string) =>
      new Promise<void>((resolve, reject) => {
        const child = spawn(process.execPath, ['--require', require.resolve('tsx/cjs'), script, dir, name], { cwd: REPO, stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
        child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`writer ${name} exited with ${code}: ${stderr}`))));
      });
    await Promise.all(['p1', 'p2', 'p3', 'p4'].map(run));
    store = GameStore.open(dir);
    expect(store.recover().recovered).toEqual([]);
    const games = store.listGames({ limit: 1000 });
    expect(games).toHaveLength(20);
    for (const game of games) {
      expect(game.endReason).not.toBe('interrupted');
      expect(replay(readFileSync(game.logPath, 'utf8')).end?.score).toBe(game.score);
    }
  }, 60_000);
});
