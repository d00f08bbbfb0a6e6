/**
 * A request path whose %-escapes do not decode is answered 400 BAD_PATH on every route (the API,
 * the study API, the pages, matchmaking), before any route sees it: never an error about a body,
 * and never a page with a stack trace.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { mountApi } from '../../server/http/api';
import { mountClient } from '../../server/http/client';
import { startGameServer, type RunningGameServer } from '../../server/index';
import { SqliteGameStore } from '../../server/store/SqliteGameStore';
import { loadStudyFile } from '../../server/study/loadStudy';
import { studyFolder, validStudy, writeStudy } from '../study/fixtures';

jest.setTimeout(30_000);

const TOKEN = 'bad-path-admin-token-0123';
const BAD_PATH = { error: { code: 'BAD_PATH', message: 'the request path has a bad %-escape' } };

let dir: string;
let store: SqliteGameStore;
let server: RunningGameServer;
let base: string;

/** The server with its routes, and a client build (`built`) or none. */
async function start(built: boolean): Promise<void> {
  dir = mkdtempSync(join(tmpdir(), 'cerealbar-bad-path-'));
  const dist = join(dir, 'dist');
  if (built) {
    mkdirSync(join(dist, 'study'), { recursive: true });
    mkdirSync(join(dist, 'assets'), { recursive: true });
    writeFileSync(join(dist, 'index.html'), '<div id="app"></div>');
    writeFileSync(join(dist, 'study', 'index.html'), '<div id="study"></div>');
  }
  store = SqliteGameStore.open(join(dir, 'data'));
  const study = loadStudyFile(writeStudy(studyFolder(join(dir, 'study')), validStudy()));
  server = await startGameServer({
    port: 0,
    host: '127.0.0.1',
    services: { startLog: (header, info) => store.startGame(header, info) },
    studies: [study],
    routes: (app: express.Application) => {
      mountApi(app, { store, adminToken: TOKEN, studies: [study] });
      mountClient(app, dist);
    },
  });
  base = `http://127.0.0.1:${server.port}`;
}

afterEach(async () => {
  await server?.close();
  store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const call = (path: string, init: RequestInit = {}) => fetch(`${base}${path}`, init);
const json = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' };
const admin = { headers: { authorization: `Bearer ${TOKEN}` } };

async function expectBadPath(res: Response): Promise<void> {
  expect(res.status).toBe(400);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.headers.get('content-security-policy')).toMatch(/frame-ancestors/);
  expect(await res.json()).toEqual(BAD_PATH);
}

test.each([true, false])('P-130: a bad %%-escape in the path is 400 BAD_PATH on every route (client built: %s)', async (built) => {
  await start(built);
  // The study API, read and written: not "the request body is not JSON".
  await expectBadPath(await call('/api/studies/%ff/public'));
  await expectBadPath(await call('/api/studies/%ff/session', json));
  await expectBadPath(await call('/api/studies/pilot-1/%E0%A4%A', json));
  // The API, with the token and without.
  await expectBadPath(await call('/api/games/%E0%A4%A', admin));
  await expectBadPath(await call('/api/studies/%ff/workers', admin));
  await expectBadPath(await call('/api/games/%ff'));
  // The pages: a study's page (never a stack trace), the others, the bundles.
  await expectBadPath(await call('/study/%ff'));
  await expectBadPath(await call('/replay/%ff'));
  await expectBadPath(await call('/assets/%ff.js'));
  await expectBadPath(await call('/%'));
  // Matchmaking.
  await expectBadPath(await call('/matchmake/joinOrCreate/%ff', json));
  // Good escapes and a query's bad one are no concern of the path's.
  expect((await call('/api/studies/pilot%2D1/public')).status).toBe(200);
  expect((await call('/api/studies/pilot-1/public?x=%ff')).status).toBe(200);
  expect((await call('/healthz')).status).toBe(200);
});
