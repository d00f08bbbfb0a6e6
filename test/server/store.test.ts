/**
 * The SQLite game store: the tests every store passes (storeContract.ts), then what is its own:
 * log files on disk, their repair after a crash, a process killed mid-write, several processes
 * writing into one data directory.
 */
import { spawn } from 'node:child_process';
import * as nodeFs from 'node:fs';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { RECOVERY_NOTE } from '../../server/store/closing';
import { SqliteGameStore } from '../../server/store/SqliteGameStore';
import type { LogEnd, LogHeader } from '../../shared/log/format';
import { serializeLine } from '../../shared/log/recorder';
import { replay } from '../../shared/log/replay';
import { describeGameStore, endedPid, eventsOf, recordGame, selfPlayLines, toText } from './storeContract';

const REPO = join(__dirname, '..', '..');

describeGameStore('every store, on SQLite', async () => {
  const place = mkdtempSync(join(tmpdir(), 'cerealbar-store-'));
  return {
    open: async () => SqliteGameStore.open(place),
    makeGone: async (storeId) => setLease(place, storeId, { pid: endedPid() }),
    remove: async () => rmSync(place, { recursive: true, force: true }),
  };
});

/** Changes a store's lease in the index of the data directory `dataDir`. */
function setLease(dataDir: string, storeId: string, lease: { pid?: number; pid_start?: string; renewed_at?: number }): void {
  const db = new Database(join(dataDir, 'games.sqlite'));
  for (const [column, value] of Object.entries(lease)) db.prepare(`UPDATE stores SET ${column} = ? WHERE store_id = ?`).run(value, storeId);
  db.close();
}

let dir: string;
let store: SqliteGameStore;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cerealbar-store-'));
  store = SqliteGameStore.open(dir);
});

afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('writing games', () => {
  test('a game is a log file logs/<gameId>.jsonl, which is what readLog reads, and a row of games.sqlite', () => {
    const { written } = recordGame(store, { gameId: 'game-1', seed: 3 });
    const record = store.getGame('game-1')!;
    expect(record.logPath).toBe(join(dir, 'logs', 'game-1.jsonl'));
    expect(readFileSync(record.logPath, 'utf8')).toBe(toText(written));
    expect(store.readLog('game-1')).toBe(toText(written));
    expect(existsSync(join(dir, 'games.sqlite'))).toBe(true);
    unlinkSync(record.logPath);
    expect(() => store.readLog('game-1')).toThrow(/ENOENT/);
  });

  test('never reuses a log file', () => {
    const header = selfPlayLines(1)[0] as LogHeader;
    recordGame(store, { gameId: 'taken' });
    writeFileSync(join(dir, 'logs', 'stray.jsonl'), 'not ours\n');
    expect(() => store.startGame({ ...header, gameId: 'stray' }, { pool: 'default', seats: [] })).toThrow(/game stray: the log file .*stray\.jsonl already exists/);
    expect(readFileSync(join(dir, 'logs', 'stray.jsonl'), 'utf8')).toBe('not ours\n');
    expect(store.getGame('stray')).toBeNull();
    expect(readdirSync(join(dir, 'logs')).sort()).toEqual(['stray.jsonl', 'taken.jsonl']);
  });
});

describe('what reaches the disk when (docs/log-format.md)', () => {
  /** node:fs counting fsync calls by what they flush: the logs directory or a log. */
  function countingFs() {
    const paths = new Map<number, string>();
    const flushes: string[] = [];
    const fs = {
      ...nodeFs,
      openSync: ((path: string, flags: string) => {
        const fd = nodeFs.openSync(path, flags);
        paths.set(fd, String(path));
        return fd;
      }) as typeof nodeFs.openSync,
      fsyncSync: (fd: number) => {
        flushes.push(paths.get(fd)!.endsWith('logs') ? 'directory' : 'log');
        nodeFs.fsyncSync(fd);
      },
    };
    return { fs, flushes };
  }

  test("by default a new log's header and its directory entry, then the end: each action reaches the kernel, not the disk", () => {
    store.close();
    const { fs, flushes } = countingFs();
    store = SqliteGameStore.open(dir, { fs });
    const { writer, written } = recordGame(store, { gameId: 'default', crashAfter: 20 });
    expect(flushes).toEqual(['log', 'directory']);
    writer.end({ kind: 'end', t: eventsOf(written).at(-1)!.t, reason: 'abandoned', score: 0 });
    expect(flushes).toEqual(['log', 'directory', 'log']);
  });

  test('with syncEachAction, every action is on disk before append returns', () => {
    store.close();
    const { fs, flushes } = countingFs();
    store = SqliteGameStore.open(dir, { fs, syncEachAction: true });
    const { written } = recordGame(store, { gameId: 'synced', crashAfter: 20 });
    expect(flushes).toEqual(['log', 'directory', ...eventsOf(written).map(() => 'log')]);
  });
});

describe('recovery', () => {
  test('a cut-off last line is removed, and only it', () => {
    const { written } = recordGame(store, { gameId: 'torn', crashAfter: 40 });
    const next = serializeLine(eventsOf(selfPlayLines(1))[40]);
    store.close();
    appendFileSync(join(dir, 'logs', 'torn.jsonl'), next.slice(0, Math.floor(next.length / 2)));

    store = SqliteGameStore.open(dir);
    expect(store.recover().recovered).toEqual(['torn']);
    const record = store.getGame('torn')!;
    const text = readFileSync(record.logPath, 'utf8');
    expect(text.startsWith(toText(written))).toBe(true);
    expect(text.split('\n')).toHaveLength(written.length + 2); // the end line, and the empty string after the last newline
    expect(replay(text).events).toBe(40);
    expect(record.endReason).toBe('interrupted');
    expect(record.note).toMatch(new RegExp(`^removed a cut-off last line \\(\\d+ bytes\\); ${RECOVERY_NOTE}$`));
  });

  test('a last line that lost only its newline is kept', () => {
    const { written } = recordGame(store, { gameId: 'no-newline', crashAfter: 10 });
    store.close();
    const next = eventsOf(selfPlayLines(1))[10];
    appendFileSync(join(dir, 'logs', 'no-newline.jsonl'), serializeLine(next));

    store = SqliteGameStore.open(dir);
    store.recover();
    const text = readFileSync(store.getGame('no-newline')!.logPath, 'utf8');
    expect(text.startsWith(toText([...written, next]))).toBe(true);
    expect(replay(text).events).toBe(11);
    expect(store.getGame('no-newline')!.note).toBe(`added the missing newline after the last line; ${RECOVERY_NOTE}`);
  });

  test('a log that has its end line but an index that missed it: the index follows the log', () => {
    recordGame(store, { gameId: 'half-closed', crashAfter: 20 });
    store.close();
    const t = eventsOf(selfPlayLines(1))[19].t + 100;
    const score = eventsOf(selfPlayLines(1))[19].outcome.score;
    const path = join(dir, 'logs', 'half-closed.jsonl');
    appendFileSync(path, `${serializeLine({ kind: 'end', t, reason: 'server-shutdown', score })}\n`);
    const before = readFileSync(path, 'utf8');

    store = SqliteGameStore.open(dir);
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

    store = SqliteGameStore.open(dir);
    expect(store.recover().recovered.sort()).toEqual(['corrupt', 'fine', 'lost']);
    expect(readFileSync(path, 'utf8')).toBe(corrupted);
    expect(store.getGame('corrupt')).toMatchObject({
      endReason: 'interrupted',
      score: scoreBefore,
      note: 'the log cannot be replayed: line 6: event seq is 7, expected 5',
    });
    expect(store.getGame('corrupt')!.endedAt).not.toBeNull();
    expect(store.getGame('fine')).toMatchObject({ endReason: 'interrupted' });
    expect(store.getGame('fine')!.note).toBe(RECOVERY_NOTE);
    expect(store.getGame('lost')).toMatchObject({ endReason: 'interrupted', note: expect.stringMatching(/^the log file is missing: .*lost\.jsonl$/) });
  });

  test('a log cut off inside its header is left empty and noted', () => {
    const header = selfPlayLines(1)[0] as LogHeader;
    store.startGame({ ...header, gameId: 'headless' }, { pool: 'default', seats: [] });
    store.close();
    const path = join(dir, 'logs', 'headless.jsonl');
    writeFileSync(path, serializeLine(header).slice(0, 50));

    store = SqliteGameStore.open(dir);
    expect(() => store.recover()).not.toThrow();
    expect(readFileSync(path, 'utf8')).toBe('');
    expect(store.getGame('headless')!.note).toBe('removed a cut-off last line (50 bytes); the log cannot be replayed: the log is empty');
  });
});

/** Runs a script that appends a self-play game line by line, and kills it with SIGKILL after `killAfter` lines. */
function appendUntilKilled(dataDir: string, killAfter: number): Promise<number[]> {
  const script = join(dataDir, 'crash-writer.js');
  const module = (path: string) => JSON.stringify(join(REPO, path));
  writeFileSync(
    script,
    `
    const { SqliteGameStore } = require(${module('server/store/SqliteGameStore.ts')});
    const { playSelfPlayGame } = require(${module('shared/selfplay/game.ts')});
    const { generateMap } = require(${module('shared/maps/generate.ts')});
    const lines = [];
    playSelfPlayGame({ seed: 7, map: generateMap(7), gameId: 'crash' }, (line) => lines.push(line));
    const writer = SqliteGameStore.open(process.argv[2]).startGame(lines[0], { pool: 'crash', seats: [] });
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

    store = SqliteGameStore.open(dir);
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
  test('a live process stalled past its lease keeps its games: on one machine the process decides, not the lease', () => {
    const stalled = SqliteGameStore.open(dir);
    try {
      recordGame(stalled, { gameId: 'stalled', crashAfter: 5 });
      // Its lease not renewed for a minute (a long GC, SIGSTOP, a clock stepped forward), its process running.
      setLease(dir, stalled.storeId, { renewed_at: Date.now() - 60_000 });
      expect(store.recover().recovered).toEqual([]);
      expect(store.getGame('stalled')).toMatchObject({ endedAt: null });
      setLease(dir, stalled.storeId, { pid: endedPid() });
      expect(store.recover().recovered).toEqual(['stalled']);
    } finally {
      stalled.close();
    }
  });

  test("a lease whose pid now belongs to another process is gone (the process's start tells them apart)", () => {
    const other = SqliteGameStore.open(dir);
    try {
      recordGame(other, { gameId: 'reused', crashAfter: 5 });
      expect(store.recover().recovered).toEqual([]);
      // The pid runs (it is this process's), but started at another time than the lease's process.
      setLease(dir, other.storeId, { pid_start: 'another start' });
      expect(store.recover().recovered).toEqual(['reused']);
    } finally {
      other.close();
    }
  });

  test('a writer whose game another store closed learns it at its next write, and the log keeps one end line', () => {
    const taken = SqliteGameStore.open(dir);
    try {
      const { writer } = recordGame(taken, { gameId: 'taken', crashAfter: 5 });
      setLease(dir, taken.storeId, { pid: endedPid() });
      expect(store.recover().recovered).toEqual(['taken']);
      const next = eventsOf(selfPlayLines(1))[5]!;
      const takenOver = 'game taken: cannot write to the log: the log was ended by another process, which judged this one gone';
      expect(() => writer.append(next)).toThrow(takenOver);
      expect(() => writer.append(next)).toThrow(takenOver);
      expect(() => writer.end(selfPlayLines(1).at(-1) as LogEnd)).not.toThrow();
      const log = store.readLog('taken')!;
      expect(log.match(/"kind":"end"/g)).toHaveLength(1);
      expect(replay(log).end).toMatchObject({ reason: 'interrupted' });
      expect(store.getGame('taken')).toMatchObject({ endReason: 'interrupted' });
    } finally {
      taken.close();
    }
  });

  test('recovery reads the logs directory at its first run and when a store is found gone, not at every renewal', () => {
    store.close();
    let reads = 0;
    const counting = { ...nodeFs, readdirSync: ((path: string) => (reads++, nodeFs.readdirSync(path))) as typeof nodeFs.readdirSync };
    store = SqliteGameStore.open(dir, { fs: counting });
    store.recover();
    store.recover();
    store.recover();
    expect(reads).toBe(1);
    const gone = SqliteGameStore.open(dir);
    recordGame(gone, { gameId: 'of-the-gone', crashAfter: 3 });
    setLease(dir, gone.storeId, { pid: endedPid() });
    // A log its store never indexed, as a process killed between the two leaves it.
    writeFileSync(join(dir, 'logs', 'unindexed.jsonl'), '');
    expect(store.recover()).toMatchObject({ recovered: ['of-the-gone'], removed: ['unindexed'] });
    expect(reads).toBe(2);
    gone.close();
  });

  test('four processes write games into one data directory at once: every game is indexed, owned and replays', async () => {
    store.close();
    const script = join(dir, 'writer.js');
    const module = (path: string) => JSON.stringify(join(REPO, path));
    writeFileSync(
      script,
      `
      const { SqliteGameStore } = require(${module('server/store/SqliteGameStore.ts')});
      const { playSelfPlayGame } = require(${module('shared/selfplay/game.ts')});
      const { generateMap } = require(${module('shared/maps/generate.ts')});
      const [dataDir, name] = process.argv.slice(2);
      const store = SqliteGameStore.open(dataDir);
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
    store = SqliteGameStore.open(dir);
    expect(store.recover().recovered).toEqual([]);
    const games = store.listGames({ limit: 1000 });
    expect(games).toHaveLength(20);
    for (const game of games) {
      expect(game.endReason).not.toBe('interrupted');
      expect(replay(readFileSync(game.logPath, 'utf8')).end?.score).toBe(game.score);
    }
  }, 60_000);

  test('six processes opening the game and worker stores of new data directories at the same moment all open them', async () => {
    const place = mkdtempSync(join(tmpdir(), 'cerealbar-open-at-once-'));
    const script = join(place, 'opener.js');
    const module = (path: string) => JSON.stringify(join(REPO, path));
    // Each round opens both stores of a new data directory at one moment agreed by all processes.
    writeFileSync(
      script,
      `
      const { SqliteGameStore } = require(${module('server/store/SqliteGameStore.ts')});
      const { SqliteWorkerStore } = require(${module('server/store/SqliteWorkerStore.ts')});
      const [place, start, rounds] = process.argv.slice(2);
      const failures = [];
      for (let round = 0; round < Number(rounds); round++) {
        while (Date.now() < Number(start) + round * 150);
        const dataDir = place + '/round-' + round;
        try { SqliteGameStore.open(dataDir).close(); } catch (error) { failures.push('games, round ' + round + ': ' + error.message); }
        try { SqliteWorkerStore.open(dataDir).close(); } catch (error) { failures.push('workers, round ' + round + ': ' + error.message); }
      }
      process.stdout.write(JSON.stringify(failures));
      `,
    );
    // Time enough for every process to load before the first round.
    const start = Date.now() + 6000;
    const run = () =>
      new Promise<string[]>((resolve, reject) => {
        const child = spawn(process.execPath, ['--require', require.resolve('tsx/cjs'), script, place, String(start), '30'], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
        child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
        child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(stdout) as string[]) : reject(new Error(`an opener exited with ${code}: ${stderr}`))));
      });
    try {
      const failures = (await Promise.all([run(), run(), run(), run(), run(), run()])).flat();
      expect(failures).toEqual([]);
    } finally {
      rmSync(place, { recursive: true, force: true });
    }
  }, 60_000);
});
