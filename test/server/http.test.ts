/**
 * The server's HTTP edge as a stranger meets it: matchmaking bodies checked and capped, CORS only
 * for allowed origins, and a Content-Security-Policy with the allowed framing sites on every page.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { matchMaker } from '@colyseus/core';
import { mountApi } from '../../server/http/api';
import { mountClient } from '../../server/http/client';
import { BODY_LIMIT_BYTES, checkCorsOrigins, checkFrameAncestors, contentSecurityPolicy, withMturk, type HttpPolicy } from '../../server/http/guard';
import { startGameServer, type RunningGameServer } from '../../server/index';
import { SqliteGameStore } from '../../server/store/SqliteGameStore';
import { loadStudyFile } from '../../server/study/loadStudy';
import { DEFAULT_CONFIG, makeConfig } from '../../shared/engine/config';
import { publicStudy } from '../../shared/study/studyFile';
import { setPath, studyFolder, validStudy, writeStudy } from '../study/fixtures';
import { join } from './harness';

jest.setTimeout(30_000);

const TOKEN = 'http-test-admin-token-0123';
let dir: string;
let store: SqliteGameStore;
let server: RunningGameServer;
let base: string;

async function start(policy: HttpPolicy = {}): Promise<void> {
  server = await startGameServer({
    port: 0,
    host: '127.0.0.1',
    http: policy,
    services: { startLog: (header, info) => store.startGame(header, info) },
    routes: (app) => {
      mountApi(app, { store, adminToken: TOKEN });
      mountClient(app, joinPath(dir, 'dist'));
    },
  });
  base = `http://127.0.0.1:${server.port}`;
}

beforeEach(() => {
  dir = mkdtempSync(joinPath(tmpdir(), 'cerealbar-http-'));
  mkdirSync(joinPath(dir, 'dist', 'replay'), { recursive: true });
  writeFileSync(joinPath(dir, 'dist', 'index.html'), '<div id="app"></div>');
  writeFileSync(joinPath(dir, 'dist', 'replay', 'index.html'), '<div id="replay"></div>');
  store = SqliteGameStore.open(joinPath(dir, 'data'));
});

afterEach(async () => {
  await server?.close();
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const rooms = async () => (await matchMaker.query({ name: 'cerealbar' })).length;

function matchmake(method: string, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }, roomName = 'cerealbar'): Promise<Response> {
  return fetch(`${base}/matchmake/${method}/${roomName}`, { method: 'POST', headers, body });
}

describe('matchmaking bodies', () => {
  test.each([
    ['{"pool":5}', /^bad join option pool: /],
    ['{"role":"captain"}', /^bad join option role: /],
    ['{"code":"has spaces"}', /^bad join option code: codes use letters, digits, _ and -$/],
    ['{"botFollower":"yes"}', /^bad join option botFollower: /],
    ['[1,2]', /^bad join option : /],
    ['{not json', /^the request body is not a JSON object$/],
    ['"a string"', /^the request body is not a JSON object$/],
  ])('P-11: %s is a 400 with the reason, on every method, and makes no game', async (body, message) => {
    await start();
    for (const method of ['joinOrCreate', 'create', 'join']) {
      const res = await matchmake(method, body);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(message);
    }
    expect(await rooms()).toBe(0);
  });

  test(`P-11, P-86: a body over ${BODY_LIMIT_BYTES} bytes is refused (413) before it is read, with or without a length`, async () => {
    await start();
    const big = JSON.stringify({ role: 'leader', workerId: 'w'.repeat(BODY_LIMIT_BYTES) });
    const res = await matchmake('joinOrCreate', big);
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ code: 413, error: `the request body is over ${BODY_LIMIT_BYTES} bytes` });
    // Chunked, so that no Content-Length announces it: cut off once it passes the limit.
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(`${base}/matchmake/joinOrCreate/cerealbar`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (answer) => resolve(answer.statusCode!));
      req.on('error', reject);
      for (let i = 0; i < 64; i++) req.write('x'.repeat(1024));
      req.end();
    });
    expect(status).toBe(413);
    expect(await rooms()).toBe(0);
  });

  test('P-86: the admin API caps bodies too', async () => {
    await start();
    const res = await fetch(`${base}/api/games`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: 'x'.repeat(BODY_LIMIT_BYTES + 1) });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: { code: 'PAYLOAD_TOO_LARGE', message: `the request body is over ${BODY_LIMIT_BYTES} bytes` } });
  });
});

describe('P-87: CORS', () => {
  const preflight = (origin: string) =>
    fetch(`${base}/matchmake/joinOrCreate/cerealbar`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } });

  test('by default no other origin may read an answer: the server\'s own pages need no CORS', async () => {
    await start();
    for (const res of [await preflight('https://evil.example'), await matchmake('joinOrCreate', '{}', { 'content-type': 'application/json', origin: 'https://evil.example' }), await fetch(`${base}/healthz`, { headers: { origin: 'https://evil.example' } })]) {
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    }
  });

  test('an allowed origin may, with credentials (the SDK sends them); others still may not', async () => {
    await start({ corsOrigins: ['https://study.example.org'] });
    const allowed = await preflight('https://study.example.org');
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://study.example.org');
    expect(allowed.headers.get('access-control-allow-credentials')).toBe('true');
    expect((await preflight('https://study.example.org.evil.example')).headers.get('access-control-allow-origin')).toBeNull();
  });

  test('origins must be exactly scheme://host[:port]', () => {
    expect(checkCorsOrigins(['https://a.example', 'http://localhost:5173'])).toBeNull();
    expect(checkCorsOrigins(['*'])).toMatch(/"\*" is not an origin/);
    expect(checkCorsOrigins(['https://a.example/path'])).toMatch(/is not an origin/);
  });
});

describe('P-88: Content-Security-Policy', () => {
  const policy = async (path: string) => {
    const res = await fetch(`${base}${path}`);
    expect(res.status).toBe(200);
    return res.headers.get('content-security-policy')!;
  };

  test("every page has one; by default only the server's own pages may frame them", async () => {
    await start();
    for (const path of ['/', '/replay/', '/healthz']) {
      const csp = await policy(path);
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toMatch(/frame-ancestors 'self'$/);
    }
  });

  test('the framing sites an operator allows (a crowdsourcing site) replace that', async () => {
    await start({ frameAncestors: ["'self'", 'https://app.prolific.com', 'https://*.mturk.com'] });
    expect(await policy('/')).toMatch(/frame-ancestors 'self' https:\/\/app\.prolific\.com https:\/\/\*\.mturk\.com$/);
  });

  test('P-88: a server running an MTurk study lets MTurk frame its pages and take its form, and nothing else', () => {
    const policy = withMturk({ frameAncestors: ['https://lab.example'] });
    expect(contentSecurityPolicy(policy.frameAncestors!, policy.formActions)).toMatch(/form-action 'self' https:\/\/\*\.mturk\.com; frame-ancestors https:\/\/lab\.example https:\/\/\*\.mturk\.com$/);
    const plain = withMturk({});
    expect(contentSecurityPolicy(plain.frameAncestors!, plain.formActions)).toMatch(/frame-ancestors 'self' https:\/\/\*\.mturk\.com$/);
    expect(contentSecurityPolicy([])).toContain("form-action 'self';");
  });

  test('a framing source that could break out of the header is refused', async () => {
    expect(checkFrameAncestors(["'self'", 'https://*.mturk.com', 'https://worker.example:8443'])).toBeNull();
    expect(checkFrameAncestors(["https://a.example; script-src *"])).toMatch(/is not a frame source/);
    expect(checkFrameAncestors(['*'])).toMatch(/is not a frame source/);
    await expect(startGameServer({ port: 0, http: { frameAncestors: ['*'] }, services: { startLog: () => ({ append: () => {}, end: () => {} }) } })).rejects.toThrow(/is not a frame source/);
  });
});

test('a game still starts through the guarded edge', async () => {
  await start();
  const leader = await join(base, { role: 'leader' });
  const follower = await join(base, { role: 'follower' });
  expect(follower.room.roomId).toBe(leader.room.roomId);
});

describe('a study\'s public parts', () => {
  let studyDir: string;
  beforeEach(() => {
    studyDir = studyFolder();
  });
  afterEach(() => rmSync(studyDir, { recursive: true, force: true }));

  test('P-91: anyone may read them, without the admin token: no quiz answers, explanations or completion codes', async () => {
    const study = loadStudyFile(writeStudy(studyDir, validStudy()));
    server = await startGameServer({
      port: 0,
      host: '127.0.0.1',
      services: { startLog: (header, info) => store.startGame(header, info) },
      studies: [study],
      routes: (app) => mountApi(app, { store, adminToken: TOKEN }),
    });
    base = `http://127.0.0.1:${server.port}`;
    expect(server.studies.get('pilot-1')).toBe(study);

    const res = await fetch(`${base}/api/studies/pilot-1/public`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toEqual(publicStudy(study, DEFAULT_CONFIG));
    expect(body.game).toEqual({ partnerIsPerson: true, liveFeedback: false, cancelInstructions: false });
    expect(body).toMatchObject({ id: 'pilot-1', title: 'A game', consent: study.consentText, rules: 'Be kind.\n', pay: { base: 4.5, bonusPerPoint: 0.1, maxBonus: 3, currency: 'GBP' } });
    expect((body.quiz as { questions: unknown[] }).questions[1]).toEqual({ prompt: 'How many cards make a set?', choices: ['2', '3', '4'] });
    const text = JSON.stringify(body);
    for (const secret of ['answer', 'explanation', 'The leader does.', 'CDONE1', 'CSCREEN', 'completionCodes']) expect(text).not.toContain(secret);

    const unknown = await fetch(`${base}/api/studies/nope/public`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'no study "nope"' } });
    // The rest of the API still asks for the token.
    expect((await fetch(`${base}/api/games`)).status).toBe(401);
    expect((await fetch(`${base}/api/studies/pilot-1`)).status).toBe(401);
  });

  test("a study's public parts say the rules its games are played by: its own game's, else quick play's", async () => {
    const own = loadStudyFile(writeStudy(studyDir, setPath(setPath(validStudy(), 'id', 'own-rules'), 'game', { rules: 'cb2', cancelInstructions: false })));
    const quick = loadStudyFile(writeStudy(studyFolder(joinPath(studyDir, 'quick')), setPath(validStudy(), 'id', 'quick-rules')));
    server = await startGameServer({
      port: 0,
      host: '127.0.0.1',
      services: { startLog: (header, info) => store.startGame(header, info) },
      studies: [own, quick],
      roomSettings: { config: makeConfig({ cancelInstructions: true }) },
    });
    base = `http://127.0.0.1:${server.port}`;
    const game = async (id: string) => ((await (await fetch(`${base}/api/studies/${id}/public`)).json()) as { game: unknown }).game;
    expect(await game('own-rules')).toEqual({ partnerIsPerson: true, liveFeedback: true, cancelInstructions: false });
    expect(await game('quick-rules')).toEqual({ partnerIsPerson: true, liveFeedback: false, cancelInstructions: true });
  });

  test('a server without studies knows none; two studies with one id are refused', async () => {
    await start();
    expect((await fetch(`${base}/api/studies/pilot-1/public`)).status).toBe(404);
    const study = loadStudyFile(writeStudy(studyDir, validStudy()));
    await expect(startGameServer({ port: 0, studies: [study, study], services: { startLog: () => ({ append: () => {}, end: () => {} }) } })).rejects.toThrow('two studies have the id "pilot-1"');
  });
});
