/** The HTTP API on a real express server: health, the admin token, the game index and log downloads. */
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { ADMIN_TOKEN_FILE, resolveAdminToken } from '../../server/adminToken';
import { mountApi } from '../../server/http/api';
import { SqliteGameStore } from '../../server/store/SqliteGameStore';
import type { SeatRecord } from '../../server/store/types';
import type { LogEnd, LogHeader, LogLine } from '../../shared/log/format';
import { replay } from '../../shared/log/replay';
import { sampleLog } from '../log/sample';

const TOKEN = 'test-admin-token-0123456789';

const SEATS: SeatRecord[] = [
  { role: 'leader', playerId: 'p1', kind: 'human', workerId: 'W1', assignmentId: 'A1', hitId: 'H1' },
  { role: 'follower', playerId: 'p2', kind: 'human' },
];

/**
 * The sample game (test/log/sample.ts) under another id, start time and pool: whole (score 1) or
 * stopped after its sixth event, before the set (score 0), and ended as abandoned.
 */
function recordSample(store: SqliteGameStore, gameId: string, startedAt: string, pool: string, whole: boolean): void {
  const [header, ...rest] = sampleLog().lines;
  const writer = store.startGame({ ...(header as LogHeader), gameId, startedAt }, { pool, seats: SEATS });
  const kept: LogLine[] = whole ? rest : rest.filter((line) => line.kind === 'event' && line.seq <= 6);
  for (const line of kept) writer.append(line);
  if (!whole) {
    const last = kept[kept.length - 1] as Extract<LogLine, { kind: 'event' }>;
    const end: LogEnd = { kind: 'end', t: last.t, reason: 'abandoned', score: last.outcome.score };
    writer.end(end);
  }
}

/** Serves `app` on an ephemeral port; returns its base URL and a way to stop it. */
async function serve(app: express.Application): Promise<{ base: string; server: Server }> {
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, () => resolve(listening));
  });
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

let dir: string;
let store: SqliteGameStore;
let base: string;
let server: Server;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cerealbar-api-'));
  store = SqliteGameStore.open(dir);
  recordSample(store, 'jan01', '2026-01-01T09:00:00.000Z', 'pilot', true);
  recordSample(store, 'jan02', '2026-01-02T09:00:00.000Z', 'pilot', false);
  recordSample(store, 'jan03', '2026-01-03T09:00:00.000Z', 'main', true);
  recordSample(store, 'jan03b', '2026-01-03T23:30:00.000Z', 'main', false);
  recordSample(store, 'gone', '2025-12-01T00:00:00.000Z', 'main', true);
  unlinkSync(store.getGame('gone')!.logPath);
  const app = express();
  mountApi(app, { store, adminToken: TOKEN });
  ({ base, server } = await serve(app));
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

function get(path: string, token: string | null = TOKEN, baseUrl = base): Promise<Response> {
  return fetch(`${baseUrl}${path}`, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });
}

async function listIds(query: string): Promise<string[]> {
  const res = await get(`/api/games?${query}`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { games: { gameId: string }[] }).games.map((game) => game.gameId);
}

async function expectError(res: Response, status: number, code: string): Promise<{ code: string; message: string; parameter?: string }> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = (await res.json()) as { error: { code: string; message: string; parameter?: string } };
  expect(body.error.code).toBe(code);
  expect(JSON.stringify(body)).not.toMatch(/\bat .*\.ts:\d+/); // no stack trace
  return body.error;
}

describe('P-66: health', () => {
  test('GET /healthz needs no token', async () => {
    const res = await get('/healthz', null);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, uptimeSeconds: expect.any(Number) });
  });
});

describe('P-64: the admin token', () => {
  test('no token: 401 with WWW-Authenticate: Bearer', async () => {
    const res = await get('/api/games', null);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
    await expectError(res, 401, 'UNAUTHORIZED');
  });

  test('another scheme counts as no token', async () => {
    const res = await fetch(`${base}/api/games`, { headers: { authorization: `Basic ${Buffer.from(`admin:${TOKEN}`).toString('base64')}` } });
    await expectError(res, 401, 'UNAUTHORIZED');
  });

  test('a wrong token, of the same length or not: 403', async () => {
    await expectError(await get('/api/games', TOKEN.replace(/.$/, 'X')), 403, 'FORBIDDEN');
    await expectError(await get('/api/games', 'short'), 403, 'FORBIDDEN');
    await expectError(await get('/api/games', `${TOKEN}X`), 403, 'FORBIDDEN');
  });

  test('the right token: 200, never cached', async () => {
    const res = await get('/api/games');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const lower = await fetch(`${base}/api/games`, { headers: { authorization: `bearer ${TOKEN}` } });
    expect(lower.status).toBe(200);
  });

  test('every /api path needs it, unknown ones too', async () => {
    await expectError(await get('/api/games/jan01', null), 401, 'UNAUTHORIZED');
    await expectError(await get('/api/games/jan01/log', null), 401, 'UNAUTHORIZED');
    await expectError(await get('/api/nothing', null), 401, 'UNAUTHORIZED');
  });
});

describe('P-67: GET /api/games', () => {
  test('lists games newest first, each with its log URL and no server path', async () => {
    const res = await get('/api/games');
    const body = (await res.json()) as { games: Record<string, unknown>[]; limit: number; offset: number };
    expect(body.games.map((game) => game.gameId)).toEqual(['jan03b', 'jan03', 'jan02', 'jan01', 'gone']);
    expect(body).toMatchObject({ limit: 100, offset: 0 });
    expect(body.games[1]).toEqual({
      gameId: 'jan03',
      pool: 'main',
      seats: SEATS,
      score: 1,
      startedAt: '2026-01-03T09:00:00.000Z',
      endedAt: '2026-01-03T09:01:40.000Z',
      endReason: 'abandoned',
      logUrl: '/api/games/jan03/log',
    });
  });

  test('from and to: a date covers its whole day (UTC); a time with a zone is exact', async () => {
    expect(await listIds('from=2026-01-02&to=2026-01-03')).toEqual(['jan03b', 'jan03', 'jan02']);
    expect(await listIds('to=2026-01-02')).toEqual(['jan02', 'jan01', 'gone']);
    expect(await listIds('from=2026-01-03T09:00:00Z')).toEqual(['jan03b', 'jan03']);
    expect(await listIds('from=2026-01-03T10:00:00%2B01:00&to=2026-01-03T09:00:00.000Z')).toEqual(['jan03']);
  });

  test('pool, minScore, limit and offset', async () => {
    expect(await listIds('pool=pilot')).toEqual(['jan02', 'jan01']);
    expect(await listIds('minScore=1')).toEqual(['jan03', 'jan01', 'gone']);
    expect(await listIds('minScore=2')).toEqual([]);
    expect(await listIds('pool=main&minScore=1')).toEqual(['jan03', 'gone']);
    expect(await listIds('limit=2')).toEqual(['jan03b', 'jan03']);
    expect(await listIds('limit=2&offset=2')).toEqual(['jan02', 'jan01']);
    expect(await listIds('offset=10')).toEqual([]);
  });

  test.each([
    ['minScore=abc', 'minScore', /^minScore must be a non-negative integer$/],
    ['minScore=-1', 'minScore', /minScore/],
    ['from=notadate', 'from', /^from must be an ISO 8601 date/],
    ['to=2026-02-30', 'to', /^to must be an ISO 8601 date/],
    ['from=2026-01-03T09:00:00', 'from', /with a zone/],
    ['limit=5000', 'limit', /^limit must be at most 1000$/],
    ['limit=0', 'limit', /^limit must be at least 1$/],
    ['limit=1.5', 'limit', /^limit must be a non-negative integer$/],
    ['offset=x', 'offset', /^offset/],
    ['pool=a&pool=b', 'pool', /^pool must be given once$/],
    ['pool=', 'pool', /^pool must not be empty$/],
    ['from=2026-01-03&to=2026-01-02', 'from', /^from must not be later than to$/],
    ['min_score=1', 'min_score', /^unknown parameter min_score$/],
  ])('?%s is a bad query naming %s', async (query, parameter, message) => {
    const error = await expectError(await get(`/api/games?${query}`), 400, 'BAD_QUERY');
    expect(error.parameter).toBe(parameter);
    expect(error.message).toMatch(message);
  });
});

describe('P-68: GET /api/games/:id', () => {
  test('one game', async () => {
    const res = await get('/api/games/jan02');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ gameId: 'jan02', pool: 'pilot', score: 0, endReason: 'abandoned', seats: SEATS });
  });

  test('P-65: 404 for an unknown or impossible id, and for unknown paths', async () => {
    expect((await expectError(await get('/api/games/nope'), 404, 'NOT_FOUND')).message).toBe('no game "nope"');
    await expectError(await get('/api/games/..%2F..%2Fetc'), 404, 'NOT_FOUND');
    await expectError(await get('/api/nothing'), 404, 'NOT_FOUND');
    await expectError(await get('/api/games/jan01/log/more'), 404, 'NOT_FOUND');
  });

  test('P-130: a path that cannot be decoded is 400 BAD_PATH, not a crash, with the API mounted alone too', async () => {
    expect((await expectError(await get('/api/games/%E0%A4%A'), 400, 'BAD_PATH')).message).toBe('the request path has a bad %-escape');
  });
});

describe('P-69: GET /api/games/:id/log', () => {
  test('streams the JSON Lines file as a download, which replays', async () => {
    const res = await get('/api/games/jan03/log');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename=jan03.jsonl');
    const text = await res.text();
    expect(text).toBe(readFileSync(store.getGame('jan03')!.logPath, 'utf8'));
    expect(replay(text)).toMatchObject({ events: 16, end: { reason: 'abandoned', score: 1 } });
  });

  test('404 for an unknown game, and in JSON for a game whose file is missing', async () => {
    await expectError(await get('/api/games/nope/log'), 404, 'NOT_FOUND');
    const res = await get('/api/games/gone/log');
    expect(res.headers.get('content-disposition')).toBeNull();
    expect((await expectError(res, 404, 'NOT_FOUND')).message).toBe('the log of game gone is missing');
  });
});

describe('internal errors', () => {
  test('P-65: a failure answers 500 without details and goes to stderr', async () => {
    const failing = { listGames: () => { throw new Error('the disk is on fire'); } } as unknown as SqliteGameStore;
    const app = express();
    mountApi(app, { store: failing, adminToken: TOKEN });
    const other = await serve(app);
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const res = await get('/api/games', TOKEN, other.base);
      const error = await expectError(res, 500, 'INTERNAL');
      expect(error).toEqual({ code: 'INTERNAL', message: 'internal error' });
      expect(stderr).toHaveBeenCalledWith(expect.stringMatching(/^api: GET \/api\/games failed: Error: the disk is on fire/));
    } finally {
      stderr.mockRestore();
      await new Promise((resolve) => other.server.close(resolve));
    }
  });
});

describe('P-63: resolveAdminToken', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = join(mkdtempSync(join(tmpdir(), 'cerealbar-token-')), 'data');
  });

  test('ADMIN_TOKEN when it is set, with no file made', () => {
    expect(resolveAdminToken({ ADMIN_TOKEN: 'sixteen-chars-ok' }, dataDir)).toEqual({ token: 'sixteen-chars-ok', source: 'env' });
    expect(existsSync(join(dataDir, ADMIN_TOKEN_FILE))).toBe(false);
  });

  test('otherwise a random 32-byte base64url token, made once in the data directory (mode 600) and the same at every later start', () => {
    const first = resolveAdminToken({}, dataDir);
    const file = join(dataDir, ADMIN_TOKEN_FILE);
    expect(first).toEqual({ token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), source: 'made', file });
    expect(Buffer.from(first.token, 'base64url')).toHaveLength(32);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).toBe(`${first.token}\n`);
    expect(resolveAdminToken({}, dataDir)).toEqual({ token: first.token, source: 'file', file });
    // Nothing but the token's file is left behind.
    expect(readdirSync(dataDir)).toEqual([ADMIN_TOKEN_FILE]);
    // Another data directory has a token of its own.
    expect(resolveAdminToken({}, `${dataDir}-other`).token).not.toBe(first.token);
  });

  test('refuses a kept token others can read, or one that is too short', () => {
    const file = join(dataDir, ADMIN_TOKEN_FILE);
    resolveAdminToken({}, dataDir);
    chmodSync(file, 0o644);
    expect(() => resolveAdminToken({}, dataDir)).toThrow(`${file} can be read by others (mode 644): make it its owner's only (chmod 600 ${file}), or set ADMIN_TOKEN`);
    chmodSync(file, 0o600);
    writeFileSync(file, 'short\n');
    expect(() => resolveAdminToken({}, dataDir)).toThrow(`the admin token in ${file} must be at least 16 characters long (it has 5); delete the file to have a new one made`);
  });

  test('refuses a short ADMIN_TOKEN or one that cannot be sent in a header', () => {
    expect(() => resolveAdminToken({ ADMIN_TOKEN: 'fifteen-chars-x' }, dataDir)).toThrow(
      'ADMIN_TOKEN must be at least 16 characters long (it has 15); unset it to have one kept in the data directory',
    );
    expect(() => resolveAdminToken({ ADMIN_TOKEN: '' }, dataDir)).toThrow(/at least 16 characters/);
    expect(() => resolveAdminToken({ ADMIN_TOKEN: 'has a space in the middle' }, dataDir)).toThrow('ADMIN_TOKEN must consist of visible ASCII characters only (no spaces)');
  });
});
