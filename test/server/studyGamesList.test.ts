/**
 * The admin page's list of a study's games: the study's own (the games whose log header names the
 * study, made by the server for it), never another game of its pool, whoever that game names as
 * its players.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { mountApi } from '../../server/http/api';
import { SqliteGameStore } from '../../server/store/SqliteGameStore';
import type { SeatRecord } from '../../server/store/types';
import { loadStudyFile } from '../../server/study/loadStudy';
import type { LogHeader, LogLine } from '../../shared/log/format';
import { sampleLog } from '../log/sample';
import { studyFolder, validStudy, writeStudy } from '../study/fixtures';

const TOKEN = 'study-games-admin-token-0123';

let dir: string;
let store: SqliteGameStore;
let server: Server;
let base: string;

/** The sample game as `gameId`, in `pool`, its header's meta `meta`, its seats naming `workers` (leader, follower). */
function record(gameId: string, startedAt: string, pool: string, meta: Record<string, unknown>, workers: [string, string], ended = true): void {
  const [header, ...rest] = sampleLog().lines;
  const seats: SeatRecord[] = [
    { role: 'leader', playerId: `${gameId}-l`, kind: 'human', workerId: workers[0] },
    { role: 'follower', playerId: `${gameId}-f`, kind: 'human', workerId: workers[1] },
  ];
  const writer = store.startGame({ ...(header as LogHeader), gameId, startedAt, meta }, { pool, seats });
  for (const line of ended ? rest : rest.slice(0, 3)) writer.append(line as LogLine);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cerealbar-study-games-'));
  const study = loadStudyFile(writeStudy(studyFolder(join(dir, 'study')), validStudy()));
  store = SqliteGameStore.open(join(dir, 'data'));
  // The study's games, as the room writes them: the header names the study.
  record('g-study-1', '2026-01-01T09:00:00.000Z', 'pilot-1', { source: 'server', pool: 'pilot-1', study: 'pilot-1' }, ['W1', 'W2']);
  record('g-study-2', '2026-01-01T10:00:00.000Z', 'pilot-1', { source: 'server', pool: 'pilot-1', study: 'pilot-1' }, ['W3', 'W1'], false);
  // Quick play in the study's pool, its joins naming real workers: not the study's.
  record('g-spoof', '2026-01-01T11:00:00.000Z', 'pilot-1', { source: 'server', pool: 'pilot-1' }, ['W1', 'W2']);
  // Another study sharing the pool, and the study's id in a meta that is not a string.
  record('g-other', '2026-01-01T12:00:00.000Z', 'pilot-1', { source: 'server', pool: 'pilot-1', study: 'pilot-other' }, ['W1', 'W2']);
  record('g-odd', '2026-01-01T13:00:00.000Z', 'pilot-1', { source: 'server', pool: 'pilot-1', study: ['pilot-1'] }, ['W1', 'W2']);
  // The study's id on a game of another pool is no game of the study's pool.
  record('g-quick', '2026-01-01T14:00:00.000Z', 'default', { source: 'server', pool: 'default' }, ['W1', 'W2']);
  const app = express();
  mountApi(app, { store, adminToken: TOKEN, studies: [study] });
  server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const get = (path: string, token: string | null = TOKEN) => fetch(`${base}${path}`, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });

test("P-127: GET /api/studies/:id/games lists the study's own games, newest first, not the pool's other games that name its workers", async () => {
  const res = await get('/api/studies/pilot-1/games');
  expect(res.status).toBe(200);
  expect(res.headers.get('cache-control')).toBe('no-store');
  const body = (await res.json()) as { study: string; limit: number; games: { gameId: string; endedAt: string | null; seats: { workerId?: string }[]; logUrl: string }[] };
  expect(body.study).toBe('pilot-1');
  expect(body.limit).toBe(1000);
  expect(body.games.map((game) => game.gameId)).toEqual(['g-study-2', 'g-study-1']);
  // As the index has them: seats, whether being played, the log's URL (never a path on the server).
  expect(body.games[0]).toMatchObject({ endedAt: null, seats: [{ workerId: 'W3' }, { workerId: 'W1' }], logUrl: '/api/games/g-study-2/log' });
  expect(JSON.stringify(body)).not.toContain('logPath');
  // Asked again (the page refreshes every few seconds): the same.
  expect(((await (await get('/api/studies/pilot-1/games')).json()) as typeof body).games.map((game) => game.gameId)).toEqual(['g-study-2', 'g-study-1']);
  expect(((await (await get('/api/studies/pilot-1/games?limit=1')).json()) as typeof body).games.map((game) => game.gameId)).toEqual(['g-study-2']);
});

test('P-127: the list needs the admin token; an unknown study is 404, a bad query 400', async () => {
  expect((await get('/api/studies/pilot-1/games', null)).status).toBe(401);
  expect((await get('/api/studies/pilot-1/games', `${TOKEN}x`)).status).toBe(403);
  const unknown = await get('/api/studies/nope/games');
  expect(unknown.status).toBe(404);
  expect(await unknown.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'no study "nope"' } });
  for (const [query, message] of [
    ['limit=0', 'limit must be at least 1'],
    ['limit=1001', 'limit must be at most 1000'],
    ['pool=pilot-1', 'unknown parameter pool'],
  ]) {
    const res = await get(`/api/studies/pilot-1/games?${query}`);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: 'BAD_QUERY', message });
  }
});
