/**
 * The study API end to end, on a real server with a temporary data directory: a worker's session,
 * consent, rules, tutorial, quiz and own state behind the session token, and the researcher's
 * workers table, block and promote behind the admin token. Every bad input gets a clear error and
 * changes nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mountApi } from '../../server/http/api';
import { BODY_LIMIT_BYTES } from '../../server/http/guard';
import { startGameServer, type RunningGameServer } from '../../server/index';
import { SqliteGameStore } from '../../server/store/SqliteGameStore';
import { SqliteWorkerStore } from '../../server/store/SqliteWorkerStore';
import { loadStudyFile, type LoadedStudy } from '../../server/study/loadStudy';
import { setPath, studyFolder, validStudy, writeStudy } from '../study/fixtures';
import { callJson } from './harness';

jest.setTimeout(30_000);

const ADMIN = 'study-api-test-admin-token-0123';
const PID = '5f0c1e2d3b4a59687766554a';
const PROLIFIC = { PROLIFIC_PID: PID, STUDY_ID: 'S1', SESSION_ID: 'SESS1' };
const HIT = { workerId: 'A1B2C3D4', assignmentId: '3ASG', hitId: '3HIT', turkSubmitTo: 'https://workersandbox.mturk.com' };

let dir: string;
let store: SqliteGameStore;
let workers: SqliteWorkerStore;
let server: RunningGameServer | undefined;
let base: string;
/** The worker store's clock: real time plus what a test adds. */
let skew = 0;

function study(id: string, changes: Record<string, unknown> = {}): LoadedStudy {
  const data = setPath(validStudy(), 'id', id);
  for (const [path, value] of Object.entries(changes)) setPath(data, path, value);
  return loadStudyFile(writeStudy(studyFolder(join(dir, id)), data));
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cerealbar-study-api-'));
  store = SqliteGameStore.open(join(dir, 'data'));
  skew = 0;
  workers = SqliteWorkerStore.open(join(dir, 'data'), { now: () => Date.now() + skew });
  const studies = [
    study('pilot-1'),
    study('turk', { platform: { kind: 'mturk' }, 'pay.currency': 'USD' }),
    study('lab', { platform: { kind: 'lab', participantIdPattern: 'P[0-9]{3}' }, 'roles.newWorkersStartAs': 'either', 'roles.promotion': 'manual' }),
  ];
  server = await startGameServer({
    port: 0,
    host: '127.0.0.1',
    services: { startLog: (header, info) => store.startGame(header, info) },
    studies,
    workers,
    routes: (app) => mountApi(app, { store, adminToken: ADMIN, studies, workers }),
  });
  base = `http://127.0.0.1:${server.port}`;
});

afterEach(async () => {
  await server?.close();
  server = undefined;
  workers.close();
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const call = (method: string, path: string, body?: unknown, token?: string, raw?: string) => callJson(base, method, path, body, token, raw);

const post = (path: string, body?: unknown, token?: string) => call('POST', path, body, token);

async function session(studyId = 'pilot-1', body: unknown = PROLIFIC): Promise<string> {
  const res = await post(`/api/studies/${studyId}/session`, body);
  expect(res.status).toBeLessThan(300);
  return res.body.token as string;
}

/** The stored record, to show that a refused request changed nothing. */
const record = (studyId = 'pilot-1', participantId = PID) => workers.get(studyId, participantId);

async function toQuiz(token: string): Promise<void> {
  expect((await post('/api/studies/pilot-1/consent', { agree: true }, token)).status).toBe(200);
  expect((await post('/api/studies/pilot-1/rules', { read: true }, token)).status).toBe(200);
  expect((await post('/api/studies/pilot-1/tutorial', { role: 'follower' }, token)).status).toBe(200);
}

describe('P-92: POST /api/studies/:id/session', () => {
  test('P-92: a new worker gets a token and its state (201); a returning one a new token and its state where it was (200)', async () => {
    const first = await post('/api/studies/pilot-1/session', PROLIFIC);
    expect(first.status).toBe(201);
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(first.body.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first.body.worker).toEqual({
      studyId: 'pilot-1',
      participantId: PID,
      step: 'consent',
      role: 'follower',
      tutorialsLeft: ['follower'],
      quiz: { attempts: 0, attemptsLeft: 2, lastScore: null, passMark: 2, passed: false },
      games: { played: 0, completed: 0, completedThisSession: 0 },
      earnings: { base: 4.5, bonus: 0, currency: 'GBP' },
      completion: null,
    });
    await post('/api/studies/pilot-1/consent', { agree: true }, first.body.token);
    // Another submission, from the page that kept the first token (P-132).
    const again = await post('/api/studies/pilot-1/session', { ...PROLIFIC, SESSION_ID: 'SESS2' }, first.body.token);
    expect(again.status).toBe(200);
    expect(again.body.token).not.toBe(first.body.token);
    expect(again.body.worker.step).toBe('rules');
    expect(record()!.platformIds).toEqual({ prolificStudyId: 'S1', prolificSessionId: 'SESS2' });
    // Both visits' tokens work.
    expect((await call('GET', '/api/studies/pilot-1/me', undefined, first.body.token)).status).toBe(200);
  });

  test.each([
    [{ STUDY_ID: 'S1', SESSION_ID: 'X' }, 'PROLIFIC_PID', 'PROLIFIC_PID is missing'],
    [{ ...PROLIFIC, PROLIFIC_PID: '' }, 'PROLIFIC_PID', 'PROLIFIC_PID must not be empty'],
    [{ ...PROLIFIC, PROLIFIC_PID: 'a/b' }, 'PROLIFIC_PID', 'PROLIFIC_PID must be letters, digits, _ and - only'],
    [{ ...PROLIFIC, SESSION_ID: 7 }, 'SESSION_ID', 'SESSION_ID must be a string'],
    [{ ...PROLIFIC, extra: 1 }, 'extra', 'unknown field extra'],
    [[PROLIFIC], 'body', 'the body must be a JSON object'],
    [HIT, 'PROLIFIC_PID', 'PROLIFIC_PID is missing'],
  ])('P-92: a bad Prolific body %j is refused with 400 BAD_BODY naming %s, and no worker is created', async (body, field, message) => {
    const res = await post('/api/studies/pilot-1/session', body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { code: 'BAD_BODY', message, field } });
    expect(workers.list('pilot-1')).toEqual([]);
  });

  test('P-92: MTurk sends its four ids; a preview (ASSIGNMENT_ID_NOT_AVAILABLE) is 400 MTURK_PREVIEW and creates nothing', async () => {
    const preview = await post('/api/studies/turk/session', { ...HIT, assignmentId: 'ASSIGNMENT_ID_NOT_AVAILABLE' });
    expect(preview.status).toBe(400);
    expect(preview.body.error).toMatchObject({ code: 'MTURK_PREVIEW', field: 'assignmentId' });
    const elsewhere = await post('/api/studies/turk/session', { ...HIT, turkSubmitTo: 'https://evil.example' });
    expect(elsewhere.body.error).toMatchObject({ code: 'BAD_BODY', field: 'turkSubmitTo' });
    expect(workers.list('turk')).toEqual([]);
    const ok = await post('/api/studies/turk/session', HIT);
    expect(ok.status).toBe(201);
    expect(record('turk', 'A1B2C3D4')!.platformIds).toEqual({ assignmentId: '3ASG', hitId: '3HIT', turkSubmitTo: 'https://workersandbox.mturk.com' });
  });

  test("P-92: a lab's typed id must match the study's pattern; 'either' stays either", async () => {
    const wrong = await post('/api/studies/lab/session', { participantId: 'P1234' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toMatchObject({ code: 'BAD_BODY', field: 'participantId', message: "participantId does not have the form this study's ids have (P[0-9]{3})" });
    const ok = await post('/api/studies/lab/session', { participantId: 'P123' });
    expect(ok.body.worker).toMatchObject({ participantId: 'P123', role: 'either', tutorialsLeft: ['leader', 'follower'] });
  });

  test('P-92: an unknown study is 404; a body that is not JSON is 400 BAD_JSON; a big one 413', async () => {
    expect((await post('/api/studies/nope/session', PROLIFIC)).body).toEqual({ error: { code: 'NOT_FOUND', message: 'no study "nope"' } });
    const notJson = await call('POST', '/api/studies/pilot-1/session', undefined, undefined, '{"PROLIFIC_PID":');
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.code).toBe('BAD_JSON');
    const big = await post('/api/studies/pilot-1/session', { ...PROLIFIC, pad: 'x'.repeat(BODY_LIMIT_BYTES) });
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(workers.list('pilot-1')).toEqual([]);
  });
});

describe('P-93: the session token', () => {
  test('P-93: the worker routes need it: none is 401 UNAUTHORIZED, an unknown one or another study\'s 401 SESSION_UNKNOWN', async () => {
    const token = await session();
    const none = await post('/api/studies/pilot-1/consent', { agree: true });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect(none.body.error.code).toBe('UNAUTHORIZED');
    for (const [path, bad] of [['/api/studies/pilot-1/consent', `${token}x`], ['/api/studies/turk/consent', token]]) {
      const res = await post(path, { agree: true }, bad);
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('SESSION_UNKNOWN');
    }
    expect(record()!.consentedAt).toBeNull();
    // The admin token is not a worker's.
    expect((await call('GET', '/api/studies/pilot-1/me', undefined, ADMIN)).status).toBe(401);
  });
});

describe('P-94: POST /api/studies/:id/consent', () => {
  test('P-94: agreeing records consent (again changes nothing); declining is final', async () => {
    const token = await session();
    const agreed = await post('/api/studies/pilot-1/consent', { agree: true }, token);
    expect(agreed.status).toBe(200);
    expect(agreed.body.worker.step).toBe('rules');
    const at = record()!.consentedAt;
    expect((await post('/api/studies/pilot-1/consent', { agree: true }, token)).status).toBe(200);
    expect(record()!.consentedAt).toBe(at);
    const change = await post('/api/studies/pilot-1/consent', { agree: false }, token);
    expect(change.status).toBe(409);
    expect(change.body.error.code).toBe('ALREADY_ANSWERED');

    const other = await session('pilot-1', { ...PROLIFIC, PROLIFIC_PID: 'other' });
    expect((await post('/api/studies/pilot-1/consent', { agree: false }, other)).body.worker.step).toBe('declined');
    expect((await post('/api/studies/pilot-1/consent', { agree: false }, other)).status).toBe(200);
    const late = await post('/api/studies/pilot-1/consent', { agree: true }, other);
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe('DECLINED');
    expect(record('pilot-1', 'other')!.consentedAt).toBeNull();
  });

  test.each([[{}], [{ agree: 'yes' }], [{ agree: true, more: 1 }]])('P-94: a bad body %j is 400 BAD_BODY and changes nothing', async (body) => {
    const token = await session();
    const before = record();
    const res = await post('/api/studies/pilot-1/consent', body, token);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'BAD_BODY', field: expect.any(String), message: expect.any(String) });
    expect(record()).toEqual(before);
  });
});

describe('P-95: POST /api/studies/:id/rules and /tutorial', () => {
  test('P-95: the rules come after consent and the tutorial after the rules, for the worker\'s own role', async () => {
    const token = await session();
    const early = await post('/api/studies/pilot-1/rules', { read: true }, token);
    expect(early.status).toBe(409);
    expect(early.body.error.code).toBe('WRONG_STEP');
    await post('/api/studies/pilot-1/consent', { agree: true }, token);
    expect((await post('/api/studies/pilot-1/tutorial', { role: 'follower' }, token)).body.error.code).toBe('WRONG_STEP');
    expect((await post('/api/studies/pilot-1/rules', { read: false }, token)).body.error).toMatchObject({ code: 'BAD_BODY', field: 'read' });
    expect((await post('/api/studies/pilot-1/rules', { read: true }, token)).body.worker.step).toBe('tutorial');
    const before = record();
    const leader = await post('/api/studies/pilot-1/tutorial', { role: 'leader' }, token);
    expect(leader.status).toBe(409);
    expect(leader.body.error.code).toBe('ROLE_MISMATCH');
    expect((await post('/api/studies/pilot-1/tutorial', { role: 'pilot' }, token)).body.error).toMatchObject({ code: 'BAD_BODY', field: 'role', message: 'role must be one of leader, follower' });
    expect(record()).toEqual(before);
    const passed = await post('/api/studies/pilot-1/tutorial', { role: 'follower' }, token);
    expect(passed.body.worker).toMatchObject({ step: 'quiz', tutorialsLeft: [] });
  });
});

describe('P-96: POST /api/studies/:id/quiz', () => {
  test('P-96: marked on the server: the score, the pass mark, attempts left and which questions were wrong, never the answers', async () => {
    const token = await session();
    await toQuiz(token);
    // A person reads the rules and plays the tutorial before the quiz (P-136).
    skew += 90_000;
    const failed = await post('/api/studies/pilot-1/quiz', { answers: [1, 0, 1] }, token);
    expect(failed.status).toBe(200);
    expect(failed.body).toMatchObject({ passed: false, score: 1, passMark: 2, attemptsLeft: 1, wrong: [0, 1] });
    expect(failed.body.worker.step).toBe('quiz');
    expect(JSON.stringify(failed.body)).not.toMatch(/answer|explanation|The leader does/);
    const passed = await post('/api/studies/pilot-1/quiz', { answers: [0, 1, 0] }, token);
    // No attempt is left: which answer was wrong would help only the next participant.
    expect(passed.body).toMatchObject({ passed: true, score: 2, attemptsLeft: 0, wrong: null });
    expect(passed.body.worker.step).toBe('play');
    const again = await post('/api/studies/pilot-1/quiz', { answers: [0, 1, 1] }, token);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('QUIZ_PASSED');
  });

  test('P-96: failing the last attempt screens the worker out with the screenedOut code; another attempt is 409', async () => {
    const token = await session();
    await toQuiz(token);
    await post('/api/studies/pilot-1/quiz', { answers: [1, 0, 0] }, token);
    const last = await post('/api/studies/pilot-1/quiz', { answers: [1, 0, 0] }, token);
    expect(last.body).toMatchObject({ passed: false, score: 0, attemptsLeft: 0 });
    expect(last.body.worker).toMatchObject({
      step: 'screenedOut',
      completion: { outcome: 'screenedOut', code: 'CSCREEN', url: 'https://app.prolific.com/submissions/complete?cc=CSCREEN' },
    });
    const before = record();
    const extra = await post('/api/studies/pilot-1/quiz', { answers: [0, 1, 1] }, token);
    expect(extra.status).toBe(409);
    expect(extra.body.error.code).toBe('NO_ATTEMPTS_LEFT');
    expect(record()).toEqual(before);
  });

  test.each([
    [{}, 'answers'],
    [{ answers: [0, 1] }, 'answers'],
    [{ answers: [0, 1, 3] }, 'answers.2'],
    [{ answers: [0, 1.5, 1] }, 'answers.1'],
    [{ answers: [0, '1', 1] }, 'answers.1'],
    [{ answers: [0, 1, 1], also: true }, 'also'],
  ])('P-96: a bad body %j is 400 BAD_BODY naming %s, and uses no attempt', async (body, field) => {
    const token = await session();
    await toQuiz(token);
    const before = record();
    const res = await post('/api/studies/pilot-1/quiz', body, token);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'BAD_BODY', field });
    expect(record()).toEqual(before);
  });

  test('P-96: the quiz before the tutorial is 409 WRONG_STEP and uses no attempt', async () => {
    const token = await session();
    const res = await post('/api/studies/pilot-1/quiz', { answers: [0, 1, 1] }, token);
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('WRONG_STEP');
    expect(record()!.quiz.attempts).toBe(0);
  });
});

describe('P-97: GET /api/studies/:id/me', () => {
  test("P-97: the worker's own state, not cached", async () => {
    const token = await session();
    const me = await call('GET', '/api/studies/pilot-1/me', undefined, token);
    expect(me.status).toBe(200);
    expect(me.headers.get('cache-control')).toBe('no-store');
    expect(me.body.worker).toMatchObject({ participantId: PID, step: 'consent', completion: null });
  });
});

describe('P-98: the researcher\'s side', () => {
  test('P-98: GET /api/studies/:id/workers lists the workers, every field and step, behind the admin token', async () => {
    await session();
    expect((await call('GET', '/api/studies/pilot-1/workers')).status).toBe(401);
    expect((await call('GET', '/api/studies/pilot-1/workers', undefined, 'not-the-admin-token')).status).toBe(403);
    const res = await call('GET', '/api/studies/pilot-1/workers', undefined, ADMIN);
    expect(res.status).toBe(200);
    expect(res.body.study).toBe('pilot-1');
    expect(res.body.workers).toEqual([{ ...record(), step: 'consent' }]);
    expect(JSON.stringify(res.body)).not.toMatch(/token/i);
    expect((await call('GET', '/api/studies/nope/workers', undefined, ADMIN)).status).toBe(404);
  });

  test('P-99: POST .../workers/:participantId/block blocks a worker, with a reason; the worker can do nothing more', async () => {
    const token = await session();
    const bad = await call('POST', `/api/studies/pilot-1/workers/${PID}/block`, { reason: 5 }, ADMIN);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'BAD_BODY', field: 'reason' });
    expect(record()!.blocked).toBeNull();
    expect((await call('POST', '/api/studies/pilot-1/workers/nobody/block', {}, ADMIN)).body.error.code).toBe('NOT_FOUND');
    const res = await call('POST', `/api/studies/pilot-1/workers/${PID}/block`, { reason: 'two accounts' }, ADMIN);
    expect(res.status).toBe(200);
    expect(res.body.worker).toMatchObject({ step: 'blocked', blocked: { reason: 'two accounts' } });
    const refused = await post('/api/studies/pilot-1/consent', { agree: true }, token);
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('BLOCKED');
    expect((await post('/api/studies/pilot-1/session', PROLIFIC)).body.worker.step).toBe('blocked');
    // Without a body too.
    expect((await call('POST', `/api/studies/pilot-1/workers/${PID}/block`, undefined, ADMIN)).status).toBe(200);
  });

  test("P-100: POST .../workers/:participantId/promote makes a worker a leader, who then passes the leader's tutorial", async () => {
    const token = await session();
    await toQuiz(token);
    await post('/api/studies/pilot-1/quiz', { answers: [0, 1, 1] }, token);
    expect((await call('POST', `/api/studies/pilot-1/workers/${PID}/promote`)).status).toBe(401);
    const res = await call('POST', `/api/studies/pilot-1/workers/${PID}/promote`, undefined, ADMIN);
    expect(res.status).toBe(200);
    expect(res.body.worker).toMatchObject({ role: 'leader', step: 'tutorial', promotedAt: expect.any(String) });
    expect((await post('/api/studies/pilot-1/tutorial', { role: 'leader' }, token)).body.worker.step).toBe('play');
    expect((await call('POST', '/api/studies/pilot-1/workers/nobody/promote', undefined, ADMIN)).status).toBe(404);
  });
});

test('a server given studies but no worker store answers the worker routes with 503', async () => {
  await server!.close();
  const studies = [study('solo')];
  server = await startGameServer({ port: 0, host: '127.0.0.1', services: { startLog: (header, info) => store.startGame(header, info) }, studies });
  const res = await fetch(`http://127.0.0.1:${server.port}/api/studies/solo/session`, { method: 'POST', body: JSON.stringify(PROLIFIC) });
  expect(res.status).toBe(503);
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe('NO_WORKER_STORE');
});

/** A request from a participant's own address, through the reverse proxy the server trusts on the loopback. */
const from = (address: string, path: string, body?: unknown, token?: string) => callJson(base, 'POST', path, body, token, undefined, { 'x-forwarded-for': address });

describe('P-132: a participant id is not a key to its worker', () => {
  test('P-132: knowing a Prolific id and inventing a SESSION_ID gets no session: the worker cannot be read, changed, screened out or have its code undone', async () => {
    const token = await session();
    await toQuiz(token);
    skew += 30_000;
    await post('/api/studies/pilot-1/quiz', { answers: [1, 0, 0] }, token);
    const before = record();
    const stranger = await post('/api/studies/pilot-1/session', { ...PROLIFIC, SESSION_ID: 'MADE-UP' });
    expect(stranger).toMatchObject({ status: 409, body: { error: { code: 'SESSION_ELSEWHERE' } } });
    expect(stranger.body.token).toBeUndefined();
    expect(stranger.body.error.message).toMatch(/link Prolific gave you/);
    // Fifty tries give nothing either, and change nothing.
    const tries = await Promise.all(Array.from({ length: 50 }, (_, i) => post('/api/studies/pilot-1/session', { ...PROLIFIC, SESSION_ID: `GUESS${i}` })));
    expect(new Set(tries.map((answer) => answer.status))).toEqual(new Set([409]));
    expect(record()).toEqual(before);
    // The worker's own link still works, and it goes on where it was.
    const own = await post('/api/studies/pilot-1/session', PROLIFIC);
    expect(own.status).toBe(200);
    expect(own.body.worker).toMatchObject({ step: 'quiz', quiz: { attempts: 1, attemptsLeft: 1 } });
  });

  test('P-132: an MTurk worker id with a made-up assignment is refused while its assignment is under way', async () => {
    const token = await session('turk', HIT);
    const stranger = await post('/api/studies/turk/session', { ...HIT, assignmentId: 'MADEUP' });
    expect(stranger).toMatchObject({ status: 409, body: { error: { code: 'SESSION_ELSEWHERE' } } });
    // The page that kept the worker's token may start a new assignment.
    expect((await post('/api/studies/turk/session', { ...HIT, assignmentId: 'NEXT' }, token)).status).toBe(200);
  });

  test("P-133: a lab's id typed again is a limited session: it cannot decline consent (403 LIMITED_SESSION), the first session can", async () => {
    const first = await session('lab', { participantId: 'P123' });
    const again = await post('/api/studies/lab/session', { participantId: 'P123' });
    expect(again.status).toBe(200);
    const declined = await post('/api/studies/lab/consent', { agree: false }, again.body.token);
    expect(declined).toMatchObject({ status: 403, body: { error: { code: 'LIMITED_SESSION' } } });
    expect(record('lab', 'P123')!.declinedAt).toBeNull();
    expect((await post('/api/studies/lab/consent', { agree: false }, first)).body.worker.step).toBe('declined');
  });
});

describe('P-134: new workers per address and per minute', () => {
  test('P-134: past the per-address limit a new worker is 429 TOO_MANY_NEW_WORKERS with Retry-After, and none is made; another address is let in', async () => {
    const made = [];
    for (let i = 0; i < 5; i++) made.push(await from('203.0.113.7', '/api/studies/pilot-1/session', { ...PROLIFIC, PROLIFIC_PID: `HOME${i}`, SESSION_ID: `S${i}` }));
    expect(made.map((answer) => answer.status)).toEqual([201, 201, 201, 201, 201]);
    const refused = await from('203.0.113.7', '/api/studies/pilot-1/session', { ...PROLIFIC, PROLIFIC_PID: 'HOME5', SESSION_ID: 'S5' });
    expect(refused).toMatchObject({ status: 429, body: { error: { code: 'TOO_MANY_NEW_WORKERS' } } });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3500);
    expect(refused.body.error.retryAfterSeconds).toBe(Number(refused.headers.get('retry-after')));
    expect(record('pilot-1', 'HOME5')).toBeNull();
    // A returning worker is not new.
    expect((await from('203.0.113.7', '/api/studies/pilot-1/session', { ...PROLIFIC, PROLIFIC_PID: 'HOME0', SESSION_ID: 'S0' })).status).toBe(200);
    expect((await from('203.0.113.8', '/api/studies/pilot-1/session', { ...PROLIFIC, PROLIFIC_PID: 'HOME5', SESSION_ID: 'S5' })).status).toBe(201);
  });

  test('P-134: the addresses of one IPv6 /64 count as one', async () => {
    for (let i = 0; i < 5; i++) expect((await from(`2001:db8:1:2::${i + 1}`, '/api/studies/pilot-1/session', { ...PROLIFIC, PROLIFIC_PID: `V6N${i}`, SESSION_ID: `S${i}` })).status).toBe(201);
    expect((await from('2001:db8:1:2:ffff::9', '/api/studies/pilot-1/session', { ...PROLIFIC, PROLIFIC_PID: 'V6N5', SESSION_ID: 'S5' })).status).toBe(429);
    expect((await from('2001:db8:1:3::1', '/api/studies/pilot-1/session', { ...PROLIFIC, PROLIFIC_PID: 'V6N5', SESSION_ID: 'S5' })).status).toBe(201);
  });
});

describe("P-136: the quiz's marks", () => {
  test('P-136: a worker at the quiz within a minute of arriving is told its score, not which answers were wrong', async () => {
    const token = await session();
    await toQuiz(token);
    const hasty = await post('/api/studies/pilot-1/quiz', { answers: [1, 0, 1] }, token);
    expect(hasty.body).toMatchObject({ passed: false, score: 1, attemptsLeft: 1, wrong: null });
  });

  test('P-136: after the last attempt no marks are given', async () => {
    const token = await session();
    await toQuiz(token);
    skew += 90_000;
    expect((await post('/api/studies/pilot-1/quiz', { answers: [1, 0, 0] }, token)).body.wrong).toEqual([0, 1, 2]);
    const last = await post('/api/studies/pilot-1/quiz', { answers: [1, 0, 0] }, token);
    expect(last.body).toMatchObject({ attemptsLeft: 0, wrong: null, worker: { step: 'screenedOut' } });
  });
});
