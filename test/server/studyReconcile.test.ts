/**
 * A study's game whose records never reached the worker store (its process stopped while the
 * database was away) is written to the workers' records from the game at the next start (P-155);
 * a game another machine took over stays open in them for a while, as its machine may come back (P-156).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@colyseus/sdk';
import { mountApi } from '../../server/http/api';
import { startGameServer, type RunningGameServer } from '../../server/index';
import { SqliteGameStore } from '../../server/store/SqliteGameStore';
import { SqliteWorkerStore } from '../../server/store/SqliteWorkerStore';
import { COPY_NOTE } from '../../server/store/PgGameStore';
import type { GameRecord, WorkerStore } from '../../server/store/types';
import { StudyGames } from '../../server/study/studyGames';
import { loadStudyFile, type LoadedStudy } from '../../server/study/loadStudy';
import { api, preparedWorker } from '../browser/studyWorkers';
import { setPath, studyFolder, validStudy, writeStudy } from '../study/fixtures';
import { sleep, track, waitFor, type Player } from './harness';

jest.setTimeout(60_000);

const ADMIN = 'study-reconcile-test-admin-token-01';
let dir: string;
let store: SqliteGameStore;
let workers: SqliteWorkerStore;
let study: LoadedStudy;
const servers: RunningGameServer[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cerealbar-study-reconcile-'));
  store = SqliteGameStore.open(join(dir, 'data'));
  workers = SqliteWorkerStore.open(join(dir, 'data'));
  const data = setPath(validStudy(), 'roles', { newWorkersStartAs: 'either', promotion: 'manual' });
  study = loadStudyFile(writeStudy(studyFolder(join(dir, 'study')), data));
});

afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
  workers.close();
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

async function serve(workerStore: WorkerStore): Promise<{ server: RunningGameServer; url: string }> {
  const server = await startGameServer({
    port: 0,
    host: '127.0.0.1',
    services: { startLog: (header, info) => store.startGame(header, info) },
    studies: [study],
    workers: workerStore,
    routes: (app) => mountApi(app, { store, adminToken: ADMIN, studies: [study], workers: workerStore }),
  });
  servers.push(server);
  return { server, url: `http://127.0.0.1:${server.port}` };
}

test("P-155: a game's start and end that the worker store never took are written at the next start; again, nothing more", async () => {
  // The database is away for the games' records: every write of one fails, as a connection refused.
  const away = new Proxy(workers, {
    get(target, name, receiver) {
      if (name === 'recordGameStart' || name === 'recordGameEnd') return () => Promise.reject(new Error('connect ECONNREFUSED'));
      const value = Reflect.get(target, name, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  jest.spyOn(console, 'error').mockImplementation(() => undefined); // the server says the records could not be written
  const { server, url } = await serve(away);
  const ids = (pid: string) => ({ PROLIFIC_PID: pid, STUDY_ID: 'ST', SESSION_ID: `S-${pid}` });
  const both = { tutorials: ['leader', 'follower'] as const };
  const tokens = [await preparedWorker(url, study.id, ids('W1'), both), await preparedWorker(url, study.id, ids('W2'), both)];
  const players: Player[] = [];
  for (const token of tokens) {
    const { reservation } = await api(url, `studies/${study.id}/play`, {}, token);
    players.push(track(await new Client(url).consumeSeatReservation(reservation)));
  }
  await waitFor(() => players.every((player) => player.phase === 'playing'), 'the game to start');
  await players[0].room.leave(true);
  await waitFor(() => players[1].phase === 'ended', 'the game to end');
  await players[1].room.leave(true);
  await server.close();
  expect(await server.unwrittenStudyRecords()).toHaveLength(4);
  expect(workers.games(study.id, 'W1')).toEqual([]);

  const { server: next } = await serve(workers);
  expect(await next.reconcileStudyRecords(store)).toBe(4);
  const [game] = store.listGames({ pool: study.pool });
  for (const pid of ['W1', 'W2']) {
    expect(workers.games(study.id, pid)).toMatchObject([{ gameId: game!.gameId, endReason: 'abandoned' }]);
    // Who left is not in the log: neither is given the partner-left ending.
    expect(workers.get(study.id, pid)!.completion).toBeNull();
  }
  expect(await next.reconcileStudyRecords(store)).toBe(0);
});

test('P-156: a worker whose record still has a game open that no process lists is told to wait, and plays once the game has ended', async () => {
  const { url } = await serve(workers);
  const token = await preparedWorker(url, study.id, { PROLIFIC_PID: 'W3', STUDY_ID: 'ST', SESSION_ID: 'S-W3' }, { tutorials: ['leader', 'follower'] });
  workers.recordGameStart(study.id, 'W3', 'g-stalled', 'follower');
  const refused = await fetch(`${url}/api/studies/${study.id}/play`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
  expect([refused.status, refused.headers.get('retry-after'), (await refused.json()).error.code]).toEqual([409, '5', 'GAME_PAUSED']);
  expect(workers.get(study.id, 'W3')!.waitingSince).toBeNull();
  workers.recordGameEnd(study, 'W3', 'g-stalled', { reason: 'interrupted', score: 0, left: false });
  expect((await api(url, `studies/${study.id}/play`, {}, token)).reservation).toBeDefined();
});

test("P-156: a game another machine closed from the database's copy ends in its workers' records only after the grace, as the store then has it", async () => {
  const { url } = await serve(workers);
  for (const pid of ['W4', 'W5']) {
    await preparedWorker(url, study.id, { PROLIFIC_PID: pid, STUDY_ID: 'ST', SESSION_ID: `S-${pid}` }, { tutorials: ['leader', 'follower'] });
  }
  const seat = (role: 'leader' | 'follower', workerId: string) => ({ role, playerId: `p-${workerId}`, kind: 'human' as const, workerId });
  const game = (gameId: string, workerId: string, ended: boolean): GameRecord => ({
    gameId,
    pool: study.pool,
    seats: [seat('follower', workerId)],
    score: 2,
    startedAt: new Date().toISOString(),
    endedAt: ended ? new Date().toISOString() : null,
    endReason: ended ? 'interrupted' : null,
    note: COPY_NOTE,
  });
  workers.recordGameStart(study.id, 'W4', 'g-gone', 'follower');
  workers.recordGameStart(study.id, 'W5', 'g-back', 'follower');
  const games = new StudyGames(new Map([[study.id, study]]), workers, () => undefined, dir, 5, 300);
  // g-gone's machine never comes back; g-back's takes its game back meanwhile (open again in the store).
  const store = new Map([
    ['g-gone', game('g-gone', 'W4', true)],
    ['g-back', game('g-back', 'W5', false)],
  ]);
  await games.gamesRecovered([game('g-gone', 'W4', true), game('g-back', 'W5', true)], async (gameId) => store.get(gameId) ?? null);
  expect(workers.games(study.id, 'W4')[0]!.endedAt).toBeNull();
  expect(workers.games(study.id, 'W5')[0]!.endedAt).toBeNull();
  await sleep(600);
  expect(workers.games(study.id, 'W4')[0]).toMatchObject({ endReason: 'interrupted', score: 2 });
  expect(workers.games(study.id, 'W5')[0]!.endedAt).toBeNull();
});
