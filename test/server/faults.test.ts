/**
 * Storage faults through the real store: a write that fails (ENOSPC, EIO) or a log file that
 * vanishes ends only the game it hits, on the action path and on the timer path; a log that
 * cannot be created refuses the game cleanly. Faults are injected into the store's file operations.
 */
import * as fs from 'node:fs';
import { mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { Client } from '@colyseus/sdk';
import { matchMaker } from '@colyseus/core';
import { startGameServer, type RunningGameServer } from '../../server/index';
import { NOT_SAVED_MESSAGE, NOT_STARTED_MESSAGE, type RoomSettings } from '../../server/rooms/GameRoom';
import { RECOVERY_NOTE } from '../../server/store/closing';
import type { StoreFs } from '../../server/store/logFiles';
import { SqliteGameStore } from '../../server/store/SqliteGameStore';
import { replay } from '../../shared/log/replay';
import { join, startGame, waitFor, type Player } from './harness';

jest.setTimeout(30_000);

interface Fault {
  readonly op: 'openSync' | 'writeSync' | 'fsyncSync';
  readonly code: string;
  /** Only for files whose path holds this. */
  readonly path: string;
  /** Only for writes of text that holds this. */
  readonly text?: string;
  /** The first failing write writes half of its bytes, as a full disk does. */
  partial?: boolean;
}

/** node:fs for the store, failing the operations a test asks for as the system would. */
function faultyFs(): { fs: StoreFs; fail(fault: Fault): void; heal(): void; failures: () => number } {
  const paths = new Map<number, string>();
  let faults: Fault[] = [];
  let failures = 0;
  const check = (op: Fault['op'], path: string, text = ''): Fault | undefined => {
    const fault = faults.find((f) => f.op === op && path.includes(f.path) && (f.text === undefined || text.includes(f.text)));
    if (fault && !fault.partial) {
      failures += 1;
      throw Object.assign(new Error(`${fault.code}: injected fault, ${op} '${path}'`), { code: fault.code, syscall: op, path });
    }
    return fault;
  };
  const faulty = {
    ...fs,
    openSync: (path: fs.PathLike, flags: fs.OpenMode, mode?: fs.Mode) => {
      check('openSync', String(path));
      const fd = fs.openSync(path, flags, mode);
      paths.set(fd, String(path));
      return fd;
    },
    writeSync: (fd: number, buffer: Buffer, offset: number, length: number) => {
      const fault = check('writeSync', paths.get(fd) ?? '', buffer.subarray(offset, offset + length).toString('utf8'));
      if (fault?.partial) {
        fault.partial = false;
        return fs.writeSync(fd, buffer, offset, Math.floor(length / 2));
      }
      return fs.writeSync(fd, buffer, offset, length);
    },
    fsyncSync: (fd: number) => {
      check('fsyncSync', paths.get(fd) ?? '');
      fs.fsyncSync(fd);
    },
  };
  return {
    fs: faulty as unknown as StoreFs,
    fail: (fault) => void faults.push(fault),
    heal: () => void (faults = []),
    failures: () => failures,
  };
}

let dir: string;
let faults: ReturnType<typeof faultyFs>;
let store: SqliteGameStore;
let server: RunningGameServer;
let url: string;

async function serve(settings: RoomSettings = {}): Promise<void> {
  server = await startGameServer({
    port: 0,
    host: '127.0.0.1',
    roomSettings: { patchRateMs: 10, ...settings },
    services: { startLog: (header, info) => store.startGame(header, info) },
  });
  url = `http://127.0.0.1:${server.port}`;
}

beforeEach(() => {
  dir = mkdtempSync(joinPath(tmpdir(), 'cerealbar-faults-'));
  faults = faultyFs();
  store = SqliteGameStore.open(dir, { fs: faults.fs });
  jest.spyOn(console, 'error').mockImplementation(() => undefined);
});

afterEach(async () => {
  await server.close();
  store.close();
  rmSync(dir, { recursive: true, force: true });
  jest.restoreAllMocks();
});

const gameIdOf = (player: Player) => store.listGames({ limit: 1000 }).find((game) => game.gameId.endsWith(`-${player.room.roomId}`))!.gameId;
const logOf = (gameId: string) => joinPath(dir, 'logs', `${gameId}.jsonl`);
const views = (player: Player) => player.messages.filter((m) => m.type === 'view').length;
const gameOver = (player: Player) => player.messages.find((m) => m.type === 'notice' && m.payload.kind === 'gameOver')?.payload;

/** Has the leader act and waits until the action is acknowledged (its view changes). */
async function instruct(leader: Player, text: string): Promise<void> {
  const before = views(leader);
  leader.act({ type: 'instruction', text });
  await waitFor(() => views(leader) > before, `"${text}" to be acknowledged`);
}

/** Every log of the data directory replays, after a restart's recovery on a healthy disk. */
function restartAndReplayAll(): { recovered: string[]; replayed: ReturnType<typeof replay>[] } {
  store.close();
  store = SqliteGameStore.open(dir);
  const { recovered } = store.recover();
  const replayed = readdirSync(joinPath(dir, 'logs')).map((file) => replay(readFileSync(joinPath(dir, 'logs', file), 'utf8')));
  return { recovered, replayed };
}

/** The failed game: both players told, the index marked without paths, every other game going on. */
async function expectOnlyThisGameEnded(hit: { leader: Player; follower: Player }, others: { leader: Player; follower: Player }[], note: RegExp): Promise<string> {
  for (const player of [hit.leader, hit.follower]) {
    await waitFor(() => gameOver(player) !== undefined && player.phase === 'ended', 'both players to be told the game is over');
    expect(gameOver(player)).toEqual({ kind: 'gameOver', reason: 'storage-failed', score: 0, message: NOT_SAVED_MESSAGE });
    expect(player.view!.endReason).toBe('storage-failed');
    expect(JSON.stringify(player.messages)).not.toContain(dir);
  }
  const gameId = gameIdOf(hit.leader);
  const record = store.getGame(gameId)!;
  expect(record).toMatchObject({ endReason: 'storage-failed', score: 0 });
  expect(record.endedAt).not.toBeNull();
  expect(record.note).toMatch(note);
  expect(record.note).not.toContain(dir);
  // Every other game goes on, each action logged.
  for (const [i, other] of others.entries()) await instruct(other.leader, `still here ${i}`);
  for (const other of others) {
    expect(other.leader.phase).toBe('playing');
    expect(readFileSync(logOf(gameIdOf(other.leader)), 'utf8')).toContain('still here');
  }
  return gameId;
}

describe('P-81: a failure while writing an action', () => {
  test.each([
    ['a full disk (ENOSPC, half a line written)', { op: 'writeSync', code: 'ENOSPC', partial: true }, /^the log could not be written \(ENOSPC\); the log ends at the last saved action$/],
    ['an I/O error (EIO)', { op: 'writeSync', code: 'EIO' }, /^the log could not be written \(EIO\); the log ends at the last saved action$/],
  ] as const)('%s ends only that game; the next start closes its log', async (_, fault, note) => {
    await serve();
    const games = [];
    for (let i = 0; i < 4; i++) games.push(await startGame(url, { pool: `p${i}` }));
    const [hit, ...others] = games;
    await instruct(hit.leader, 'saved');
    const gameId = gameIdOf(hit.leader);
    faults.fail({ ...fault, path: gameId });
    hit.leader.act({ type: 'instruction', text: 'never saved' });
    await expectOnlyThisGameEnded(hit, others, note);
    expect(hit.leader.view!.instructions.map((i) => i.text)).toEqual(['saved']);
    // The failed line was cut off: the log is whole lines up to the last saved action.
    expect(readFileSync(logOf(gameId), 'utf8').endsWith('\n')).toBe(true);

    // Space returns: a new game starts and is saved.
    faults.heal();
    const next = await startGame(url, { pool: 'after' });
    await instruct(next.leader, 'saved again');
    for (const player of [...others, next].flatMap((g) => [g.leader, g.follower])) await player.room.leave();
    await waitFor(() => store.listGames().every((g) => g.endedAt !== null), 'every game to end');
    await server.close();

    const { recovered, replayed } = restartAndReplayAll();
    expect(recovered).toEqual([gameId]);
    expect(replayed).toHaveLength(5);
    const hitLog = replayed.find((r) => r.header.gameId === gameId)!;
    expect(hitLog.events).toBe(1);
    expect(hitLog.end).toMatchObject({ reason: 'storage-failed', score: 0 });
    expect(store.getGame(gameId)!.note).toMatch(new RegExp(`; the log ends at the last saved action; ${RECOVERY_NOTE}$`));
  });

  test('a failure that clears at once still closes the log with its end line', async () => {
    await serve();
    const hit = await startGame(url);
    const gameId = gameIdOf(hit.leader);
    faults.fail({ op: 'writeSync', code: 'EIO', path: gameId, text: 'never saved' });
    hit.leader.act({ type: 'instruction', text: 'never saved' });
    await waitFor(() => gameOver(hit.follower) !== undefined, 'the game to end');
    expect(store.getGame(gameId)).toMatchObject({ endReason: 'storage-failed', note: 'the log could not be written (EIO)' });
    expect(replay(readFileSync(logOf(gameId), 'utf8'))).toMatchObject({ events: 0, end: { reason: 'storage-failed' } });
    expect(store.recover().recovered).toEqual([]);
  });

  test('a log file removed during the game ends it; other games go on', async () => {
    await serve();
    const games = [];
    for (let i = 0; i < 3; i++) games.push(await startGame(url, { pool: `p${i}` }));
    const [hit, ...others] = games;
    const gameId = gameIdOf(hit.leader);
    unlinkSync(logOf(gameId));
    hit.leader.act({ type: 'instruction', text: 'into the void' });
    await expectOnlyThisGameEnded(hit, others, /^the log file was removed during the game$/);
    expect(store.recover().recovered).toEqual([]);
  });
});

describe('P-81: a failure on the timer path', () => {
  test('a turn timeout that cannot be written ends only that game', async () => {
    await serve({ leaderTurnSeconds: 1.5, followerTurnSeconds: 600 });
    const others = [await startGame(url, { pool: 'a' }), await startGame(url, { pool: 'b' })];
    const hit = await startGame(url, { pool: 'c' });
    faults.fail({ op: 'writeSync', code: 'ENOSPC', path: gameIdOf(hit.leader) });
    await expectOnlyThisGameEnded(hit, others, /^the log could not be written \(ENOSPC\)/);
    // The others' timeouts, which came first, were written: their leaders timed out with nothing queued, so the turn came back.
    for (const other of others) {
      expect(other.leader.messages.some((m) => m.type === 'notice' && m.payload.kind === 'timeout')).toBe(true);
      expect(other.leader.view!.turnsLeft).toBeLessThan(6);
    }
  });

  test("the scripted follower's move that cannot be written ends only that game", async () => {
    await serve({ botStepMs: 20 });
    const other = await startGame(url, { pool: 'humans' });
    const leader = await join(url, { role: 'leader', botFollower: true });
    await waitFor(() => leader.phase === 'playing', 'the game with the scripted follower to start');
    faults.fail({ op: 'writeSync', code: 'EIO', path: gameIdOf(leader), text: '"actor":"follower"' });
    await instruct(leader, 'go');
    leader.act({ type: 'endTurn' });
    await waitFor(() => gameOver(leader) !== undefined, 'the leader to be told the game is over');
    expect(gameOver(leader)).toEqual({ kind: 'gameOver', reason: 'storage-failed', score: 0, message: NOT_SAVED_MESSAGE });
    expect(store.getGame(gameIdOf(leader))).toMatchObject({ endReason: 'storage-failed' });
    await instruct(other.leader, 'unaffected');
  });
});

describe('P-82: a log that cannot be created', () => {
  test.each([
    ['creating the file', { op: 'openSync', code: 'ENOSPC' }],
    ['writing the header', { op: 'writeSync', code: 'EIO' }],
  ] as const)('fails at %s: the game does not start, nobody waits, and the next game starts once the disk works', async (_, fault) => {
    await serve();
    faults.fail({ ...fault, path: joinPath(dir, 'logs') });
    const waiting = await join(url, { role: 'leader' });
    const left = new Promise<{ code: number; reason?: string }>((resolve) => waiting.room.onLeave((code, reason) => resolve({ code, reason })));
    const refused = await new Client(url).joinOrCreate('cerealbar', { role: 'follower' }).then(
      () => null,
      (error: Error & { code?: number }) => error,
    );
    expect(refused).toMatchObject({ code: 503, message: NOT_STARTED_MESSAGE });
    expect(await left).toEqual({ code: 4002, reason: NOT_STARTED_MESSAGE });
    const alone = await join(url, { role: 'leader', botFollower: true }).then(
      () => null,
      (error: Error) => error,
    );
    expect(alone?.message).toBe(NOT_STARTED_MESSAGE);
    const rooms = async () => (await matchMaker.query({ name: 'cerealbar' })).length;
    await waitFor(() => faults.failures() >= 2, 'both attempts to fail');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await rooms()).toBe(0);
    expect(readdirSync(joinPath(dir, 'logs'))).toEqual([]);
    expect(store.listGames()).toEqual([]);

    faults.heal();
    const next = await startGame(url);
    await instruct(next.leader, 'the disk works again');
    expect(store.listGames()).toHaveLength(1);
  });
});
