/**
 * A study that strangers cannot break: on a real server running a study, a client's join cannot
 * make, list or enter a game of the study (not through `__proto__`, nor any field outside the
 * join's), no body anywhere may carry prototype keys or unknown keys, and quick play does not tell
 * whether a study's worker is waiting.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { matchMaker } from '@colyseus/core';
import { Client } from '@colyseus/sdk';
import fc from 'fast-check';
import { mountApi } from '../../server/http/api';
import { startGameServer, type RunningGameServer } from '../../server/index';
import { SqliteGameStore } from '../../server/store/SqliteGameStore';
import { SqliteWorkerStore } from '../../server/store/SqliteWorkerStore';
import { loadStudyFile, type LoadedStudy } from '../../server/study/loadStudy';
import { setPath, studyFolder, validStudy, writeStudy } from '../study/fixtures';
import { callJson, join as joinGame, sleep, track, waitFor, type Player } from './harness';

jest.setTimeout(60_000);

const ADMIN = 'study-edge-test-admin-token-0001';
const STUDY = 'pilot-1';
const RIGHT_ANSWERS = [0, 1, 1];

let dir: string;
let store: SqliteGameStore;
let workers: SqliteWorkerStore;
let server: RunningGameServer | undefined;
let base: string;

async function serve(): Promise<void> {
  // The test's workers all call from the loopback: they may be partners, and as many as it takes.
  const data = setPath(validStudy(), 'admission', { sameAddressPartners: true, newWorkersPerAddressPerHour: null });
  const study: LoadedStudy = loadStudyFile(writeStudy(studyFolder(join(dir, STUDY)), data));
  server = await startGameServer({
    warn: () => undefined,
    port: 0,
    host: '127.0.0.1',
    roomSettings: { leaderTurnSeconds: 5, followerTurnSeconds: 5 },
    services: { startLog: (header, info) => store.startGame(header, info) },
    studies: [study],
    workers,
    routes: (app) => mountApi(app, { store, adminToken: ADMIN, studies: [study], workers }),
  });
  base = `http://127.0.0.1:${server.port}`;
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cerealbar-study-edge-'));
  store = SqliteGameStore.open(join(dir, 'data'));
  workers = SqliteWorkerStore.open(join(dir, 'data'));
});

afterEach(async () => {
  await server?.close();
  server = undefined;
  workers.close();
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

const call = (method: string, path: string, body?: unknown, token?: string) => callJson(base, method, path, body, token);

/** A POST to `path` exactly as written (fetch would resolve its dot segments), with `raw` as its body. */
function rawPost(path: string, raw: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(raw);
  });
}

/** A matchmaking request with `raw` as its body, exactly as written (JSON.stringify would drop an own __proto__). */
async function matchmake(method: string, raw: string, roomName = 'cerealbar'): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}/matchmake/${method}/${roomName}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: raw });
  const text = await res.text();
  return { status: res.status, body: text === '' ? null : JSON.parse(text) };
}

/** Every game room's listing: its id and what it says (pool, study, seats, workers). */
async function listings(): Promise<{ roomId: string; metadata: any }[]> {
  return (await matchMaker.query({ name: 'cerealbar' })).map((room) => ({ roomId: room.roomId, metadata: room.metadata })).sort((a, b) => a.roomId.localeCompare(b.roomId));
}

/** A Prolific worker taken through consent, rules, the follower's tutorial and the quiz: at the play step. */
async function readyWorker(pid: string): Promise<string> {
  const token = (await call('POST', `/api/studies/${STUDY}/session`, { PROLIFIC_PID: pid, STUDY_ID: 'ST', SESSION_ID: `S-${pid}` })).body.token as string;
  const post = (step: string, body: unknown) => call('POST', `/api/studies/${STUDY}/${step}`, body, token);
  expect((await post('consent', { agree: true })).status).toBe(200);
  expect((await post('rules', { read: true })).status).toBe(200);
  expect((await post('tutorial', { role: 'follower' })).status).toBe(200);
  expect((await post('quiz', { answers: RIGHT_ANSWERS })).body.worker.step).toBe('play');
  return token;
}

/** A worker at the play step promoted to leader, with the leader's tutorial passed. */
async function readyLeader(pid: string): Promise<string> {
  const token = await readyWorker(pid);
  expect((await call('POST', `/api/studies/${STUDY}/workers/${pid}/promote`, {}, ADMIN)).status).toBe(200);
  expect((await call('POST', `/api/studies/${STUDY}/tutorial`, { role: 'leader' }, token)).body.worker.step).toBe('play');
  return token;
}

/** Asks the study API for a game and takes the seat, as the study's page does. */
async function play(token: string): Promise<Player> {
  const answer = await call('POST', `/api/studies/${STUDY}/play`, {}, token);
  expect(answer.status).toBe(200);
  const player = track(await new Client(base).consumeSeatReservation(answer.body.reservation));
  await waitFor(() => player.messages.some((m) => m.type === 'seat'), 'the seat');
  return player;
}

/** The lines of the one game's log. */
const readLogLines = (): { kind: string; meta?: Record<string, unknown> }[] =>
  readFileSync(store.listGames()[0].logPath, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));

const closeCodes = (player: Player): number[] => {
  const codes: number[] = [];
  player.room.onLeave((code) => codes.push(code));
  return codes;
};

describe("P-124: a study's game is made only by the study API", () => {
  test.each([
    ['__proto__ with the study and an arm it does not have', `{"pool":"${STUDY}","__proto__":{"study":"${STUDY}","arm":{"id":"nope","draw":0}}}`],
    ['__proto__ with the study alone', `{"pool":"${STUDY}","role":"leader","__proto__":{"study":"${STUDY}"}}`],
    ['constructor.prototype with the study', `{"pool":"${STUDY}","role":"leader","constructor":{"prototype":{"study":"${STUDY}"}}}`],
  ])("P-123, P-124: a stranger's join with %s is refused at the edge; the study's workers then meet each other and play", async (_what, raw) => {
    await serve();
    const leaderToken = await readyLeader('L1');
    const followerToken = await readyWorker('F1');
    // The attack: a join that names the study only through the prototype, in the study's pool.
    const attack = await matchmake('joinOrCreate', raw);
    let stranger: Player | null = null;
    if (attack.status === 200) stranger = track(await new Client(base).consumeSeatReservation(attack.body));
    await sleep(100);
    const listedForStudy = (await listings()).filter((listing) => listing.metadata?.study === STUDY);
    // The study's workers come to play: they meet each other, never the stranger, and their game starts.
    const follower = await play(followerToken);
    const followerCloses = closeCodes(follower);
    const leader = await play(leaderToken);
    const leaderCloses = closeCodes(leader);
    await waitFor(() => (leader.phase === 'playing' && follower.phase === 'playing') || leaderCloses.length + followerCloses.length > 0, 'the game to start, or the workers to be sent away', 10_000);
    expect({ leaderCloses, followerCloses }).toEqual({ leaderCloses: [], followerCloses: [] });
    expect([leader.phase, follower.phase]).toEqual(['playing', 'playing']);
    expect(leader.room.roomId).toBe(follower.room.roomId);
    expect(stranger?.room.roomId).not.toBe(leader.room.roomId);
    expect(listedForStudy).toEqual([]);
    // The stranger's join was refused, in words, before anything was made.
    expect(attack.status).toBe(400);
    expect(attack.body.error).toMatch(/the request body has a key named "(__proto__|constructor|prototype)" \(at [\w.]+\): keys named __proto__, constructor or prototype are refused/);
    expect(stranger).toBeNull();
  });

  test('P-124: no client join can make, list or enter a study game, on any matchmaking method', async () => {
    await serve();
    const waiting = await play(await readyWorker('F1'));
    const before = await listings();
    const attempts: [string, string, string][] = [];
    for (const method of ['joinOrCreate', 'create', 'join']) {
      attempts.push([method, 'cerealbar', `{"pool":"${STUDY}","role":"leader","__proto__":{"study":"${STUDY}"}}`]);
      attempts.push([method, 'cerealbar', `{"pool":"${STUDY}","role":"leader","study":"${STUDY}"}`]);
      attempts.push([method, 'cerealbar', `{"pool":"${STUDY}","role":"leader","arm":{"id":"x","draw":0}}`]);
      attempts.push([method, 'cerealbar', `{"pool":"${STUDY}","role":"leader","addressTag":"t"}`]);
      attempts.push([method, 'cerealbar', `{"pool":"${STUDY}","role":"leader","settings":{"seed":3}}`]);
    }
    attempts.push(['joinById', waiting.room.roomId, `{"role":"leader","__proto__":{"study":"${STUDY}"}}`]);
    attempts.push(['joinById', waiting.room.roomId, `{"role":"leader","study":"${STUDY}"}`]);
    attempts.push(['reconnect', waiting.room.roomId, `{"reconnectionToken":"x","__proto__":{"study":"${STUDY}"}}`]);
    attempts.push(['reconnect', waiting.room.roomId, `{"reconnectionToken":"x","role":"leader"}`]);
    for (const [method, room, raw] of attempts) {
      const answer = await matchmake(method, raw, room);
      expect({ method, raw, status: answer.status }).toEqual({ method, raw, status: /"(study|arm|addressTag)"/.test(raw) && !raw.includes('__proto__') ? 403 : 400 });
      expect(answer.body.error).toMatch(/^(the request body has a key named "__proto__" \(at __proto__\)|unknown (join|reconnect) option "(settings|role)": a (join|reconnection) takes only |a study's games are joined from the study's pages$)/);
    }
    // A path not in its plain form, which Colyseus might read as another method than the gate: checked as the method it names, or refused.
    for (const path of [`/matchmake/./joinOrCreate/cerealbar`, `/matchmake//joinOrCreate/cerealbar`, `/matchmake/x/../joinOrCreate/cerealbar`]) {
      const answer = await rawPost(path, `{"pool":"${STUDY}","role":"leader","settings":{"seed":3}}`);
      expect({ path, status: answer.status }).toEqual({ path, status: 400 });
      expect(answer.body).toMatch(/unknown join option \\"settings\\"|the matchmaking path must be plain/);
    }
    await sleep(100);
    expect(await listings()).toEqual(before);
    expect(waiting.phase).toBe('waiting');
  });

  test("P-124: a room reads only its options' own fields: options past the edge with a prototype lend it neither a study nor an arm", async () => {
    await serve();
    // Handed to the matchmaker in the process itself, as no client's request can be: the study only through the prototype...
    const stranger = await matchMaker.createRoom('cerealbar', JSON.parse(`{"pool":"${STUDY}","__proto__":{"study":"${STUDY}"}}`));
    // ...and the study as the server sets it (an own field), with an arm only through the prototype.
    const studyGame = await matchMaker.createRoom('cerealbar', JSON.parse(`{"pool":"${STUDY}","study":"${STUDY}","__proto__":{"arm":{"id":"nope","draw":0}}}`));
    await sleep(50);
    const studies = Object.fromEntries((await listings()).map((listing) => [listing.roomId, listing.metadata.study]));
    expect(studies).toEqual({ [stranger.roomId]: '', [studyGame.roomId]: STUDY });
    // The study's workers are seated in the study's game, which starts with no arm.
    const leaderToken = await readyLeader('L1');
    const follower = await play(await readyWorker('F1'));
    const leader = await play(leaderToken);
    expect([follower.room.roomId, leader.room.roomId]).toEqual([studyGame.roomId, studyGame.roomId]);
    await waitFor(() => leader.phase === 'playing' && follower.phase === 'playing', 'the game to start');
    const [game] = store.listGames();
    expect(game.seats.map((seat) => seat.workerId).sort()).toEqual(['F1', 'L1']);
    expect(readLogLines()[0]).toMatchObject({ kind: 'header', meta: { study: STUDY } });
    expect(readLogLines()[0].meta).not.toHaveProperty('arm');
  });
});

describe('P-123: no body or message with a prototype key or a field its endpoint does not take', () => {
  test("the admin API's bodies: refused with 400 BAD_BODY naming the field; the worker is not changed", async () => {
    await serve();
    await readyWorker('F1');
    const before = workers.list(STUDY);
    const refusals: [string, string][] = [
      ['block', '{"reason":"spam","__proto__":{"reason":"x"}}'],
      ['block', '{"reason":{"constructor":{"prototype":{}}}}'],
      ['block', '{"reason":"spam","extra":1}'],
      ['promote', '{"__proto__":{"role":"leader"}}'],
      ['promote', '{"role":"leader"}'],
      ['promote', '[{"prototype":1}]'],
    ];
    for (const [action, raw] of refusals) {
      const answer = await callJson(base, 'POST', `/api/studies/${STUDY}/workers/F1/${action}`, undefined, ADMIN, raw);
      expect({ action, raw, status: answer.status, code: answer.body.error.code }).toEqual({ action, raw, status: 400, code: 'BAD_BODY' });
      expect(answer.body.error.message).toMatch(/^(the request body has a key named "(__proto__|constructor|prototype)" \(at [\w.]+\): keys named __proto__, constructor or prototype are refused|unknown field (extra|role))$/);
      expect(answer.body.error.field).toEqual(expect.any(String));
    }
    expect(workers.list(STUDY)).toEqual(before);
    expect((await callJson(base, 'POST', `/api/studies/${STUDY}/workers/F1/promote`, {}, ADMIN)).status).toBe(200);
  });

  test("a player's messages: a prototype key or an unknown field, at any depth, is BAD_MESSAGE and changes nothing", async () => {
    await serve();
    const leaderToken = await readyLeader('L1');
    const follower = await play(await readyWorker('F1'));
    const leader = await play(leaderToken);
    await waitFor(() => leader.phase === 'playing' && follower.phase === 'playing', 'the game to start');
    const view = JSON.stringify(leader.view);
    const payloads: unknown[] = [
      JSON.parse('{"type":"instruction","text":"go","__proto__":{"type":"endTurn"}}'),
      JSON.parse('{"type":"instruction","text":"go","constructor":{"prototype":{}}}'),
      { type: 'instruction', text: { prototype: 'go' } },
      { type: 'endTurn', extra: true },
    ];
    for (const payload of payloads) leader.act(payload as never);
    await waitFor(() => leader.errors().length === payloads.length, 'the refusals');
    expect(leader.errors().map((error) => error.code)).toEqual(payloads.map(() => 'BAD_MESSAGE'));
    for (const error of leader.errors()) expect(error.message).toMatch(/^bad action message: /);
    await sleep(50);
    expect(JSON.stringify(leader.view)).toBe(view);
    expect(readLogLines().filter((line) => line.kind === 'event')).toEqual([]);
  });
});

describe('P-125: quick play does not tell whether a study worker is waiting', () => {
  test("a quick-play join with a waiting study worker's id is answered as one with the id of a worker who does not wait", async () => {
    await serve();
    const waiting = await play(await readyWorker('F1'));
    await readyWorker('F2'); // at the play step, not waiting
    const answers: Record<string, number> = {};
    for (const workerId of ['F1', 'F2', 'NOBODY']) {
      const answer = await matchmake('joinOrCreate', JSON.stringify({ role: 'leader', workerId, private: true }));
      answers[workerId] = answer.status;
      // Taken and left at once: the seat is freed, no game is kept waiting with that id.
      if (answer.status === 200) await (await new Client(base).consumeSeatReservation(answer.body)).leave(true);
    }
    expect(answers).toEqual({ F1: 200, F2: 200, NOBODY: 200 });
    // Quick play still keeps one seat per worker id among its own waiting games (P-74).
    const seated = await joinGame(base, { role: 'leader', workerId: 'Q1' });
    const again = await matchmake('joinOrCreate', JSON.stringify({ role: 'leader', workerId: 'Q1' }));
    expect(again).toMatchObject({ status: 409, body: { error: 'worker Q1 already has a seat in a game waiting for a partner' } });
    expect(waiting.phase).toBe('waiting');
    expect(seated.phase).toBe('waiting');
  });

  test('a quick-play game with a worker id does not keep that worker out of its study game, nor the other way round', async () => {
    await serve();
    const quick = await joinGame(base, { role: 'leader', workerId: 'F1' });
    const waiting = await play(await readyWorker('F1'));
    expect(waiting.room.roomId).not.toBe(quick.room.roomId);
    expect([quick.phase, waiting.phase]).toEqual(['waiting', 'waiting']);
  });
});

// ---------------------------------------------------------------------------------------------
// Fuzzed bodies: prototype keys (nested too), unknown keys and odd types, against the running server

const PROTOTYPE_KEYS = ['__proto__', 'constructor', 'prototype'] as const;

/** Sets `key` as an own field (so that `__proto__` stays a key of the JSON, not a prototype). */
function own<T extends object>(target: T, key: string, value: unknown): T {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  return target;
}

/** Whether a prototype key is among the own keys of the value, at any depth (the test's own look, not the server's). */
function hasPrototypeKey(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  return Object.keys(value).some((key) => (PROTOTYPE_KEYS as readonly string[]).includes(key) || hasPrototypeKey((value as Record<string, unknown>)[key]));
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const small = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer({ min: -9, max: 9 }),
  fc.string({ maxLength: 8 }),
  fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.integer(), { maxKeys: 2 }),
);

/** A value of the wrong JSON type for a field of `kind`. */
const oddValue = (kind: FieldKind) =>
  ({
    string: fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.array(fc.string({ maxLength: 4 }), { maxLength: 2 }), fc.constant({ value: 'x' })),
    boolean: fc.oneof(fc.constant(null), fc.integer(), fc.string({ maxLength: 6 }), fc.constant([true]), fc.constant({ value: true })),
    array: fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.string({ maxLength: 6 }), fc.constant({ 0: 0 })),
  })[kind];

/** An object (or array) holding a prototype key, up to two levels down. */
const prototypeHolder = fc
  .record({ key: fc.constantFrom(...PROTOTYPE_KEYS), value: small, depth: fc.integer({ min: 0, max: 2 }), inArray: fc.boolean() })
  .map(({ key, value, depth, inArray }) => {
    let holder: unknown = own({}, key, value);
    for (let i = 0; i < depth; i++) holder = inArray ? [holder] : own({}, 'inner', holder);
    return holder;
  });

type FieldKind = 'string' | 'boolean' | 'array';
type Mutation = (body: unknown) => unknown;

/** What spoils a valid body of the fields `fields`: each mutation gives a body the endpoint must refuse. */
function mutation(fields: Record<string, FieldKind>): fc.Arbitrary<Mutation> {
  const names = Object.keys(fields);
  const onObject = (change: (body: Record<string, unknown>) => void): Mutation => (body) => {
    if (!isPlainObject(body)) return body;
    change(body);
    return body;
  };
  const kinds: fc.Arbitrary<Mutation>[] = [
    // A prototype key at the top.
    fc.tuple(fc.constantFrom(...PROTOTYPE_KEYS), small).map(([key, value]) => onObject((body) => own(body, key, value))),
    // One nested in a field's value (a field of the body's, or another).
    fc.tuple(fc.constantFrom(...names, 'extra'), prototypeHolder).map(([field, holder]) => onObject((body) => own(body, field, holder))),
    // A field the endpoint does not take: one the server's own options have, or any other.
    fc
      .tuple(fc.oneof(fc.constantFrom('study', 'arm', 'settings', 'services', 'addressTag', 'reconnectionToken', 'workerId'), fc.string({ maxLength: 12 })).filter((key) => !names.includes(key)), small)
      .map(([key, value]) => onObject((body) => own(body, key, value))),
    // Not an object at all.
    fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.string({ maxLength: 6 }), fc.array(small, { maxLength: 2 })).map((value): Mutation => () => value),
  ];
  // A field of the wrong type.
  if (names.length > 0) kinds.push(fc.constantFrom(...names).chain((field) => oddValue(fields[field]).map((value) => onObject((body) => own(body, field, value)))));
  return fc.oneof(...kinds);
}

/** A body for an endpoint that takes `fields` (valid values from `valid`), spoilt by one to three mutations. */
function spoilt(valid: () => Record<string, unknown>, fields: Record<string, FieldKind>): fc.Arbitrary<unknown> {
  return fc.array(mutation(fields), { minLength: 1, maxLength: 3 }).map((mutations) => mutations.reduce<unknown>((body, change) => change(body), valid()));
}

describe('P-123: fuzzed bodies against a running server with a study', () => {
  const STUDY_ENDPOINTS: Record<string, { fields: Record<string, FieldKind>; valid: () => Record<string, unknown> }> = {
    session: { fields: { PROLIFIC_PID: 'string', STUDY_ID: 'string', SESSION_ID: 'string' }, valid: () => ({ PROLIFIC_PID: 'NEW1', STUDY_ID: 'ST', SESSION_ID: 'S-NEW1' }) },
    consent: { fields: { agree: 'boolean' }, valid: () => ({ agree: true }) },
    rules: { fields: { read: 'boolean' }, valid: () => ({ read: true }) },
    tutorial: { fields: { role: 'string' }, valid: () => ({ role: 'follower' }) },
    quiz: { fields: { answers: 'array' }, valid: () => ({ answers: [...RIGHT_ANSWERS] }) },
    play: { fields: {}, valid: () => ({}) },
    'no-partner': { fields: {}, valid: () => ({}) },
  };
  const JOIN_FIELDS: Record<string, FieldKind> = { role: 'string', pool: 'string', code: 'string', private: 'boolean', botFollower: 'boolean', botLeader: 'boolean', workerId: 'string', assignmentId: 'string', hitId: 'string' };
  const JOINS: (() => Record<string, unknown>)[] = [() => ({}), () => ({ pool: STUDY }), () => ({ pool: STUDY, role: 'leader' }), () => ({ role: 'follower', workerId: 'W1' }), () => ({ private: true })];

  /** What no refused request may change: the worker records and the game listings. */
  const state = async () => JSON.stringify({ workers: workers.list(STUDY), listings: await listings() });

  test("P-123, P-124: the study API's bodies (session, consent, rules, tutorial, quiz, play, no-partner): each a 400 in words, nothing changed", async () => {
    await serve();
    const tokens = [await readyWorker('W1'), (await call('POST', `/api/studies/${STUDY}/session`, { PROLIFIC_PID: 'W2', STUDY_ID: 'ST', SESSION_ID: 'S-W2' })).body.token as string];
    await play(tokens[0]);
    const before = await state();
    const requests = fc.constantFrom(...Object.keys(STUDY_ENDPOINTS)).chain((endpoint) =>
      fc.record({ endpoint: fc.constant(endpoint), body: spoilt(STUDY_ENDPOINTS[endpoint].valid, STUDY_ENDPOINTS[endpoint].fields), token: fc.constantFrom(...tokens) }),
    );
    await fc.assert(
      fc.asyncProperty(requests, async ({ endpoint, body, token }) => {
        const raw = JSON.stringify(body);
        const answer = await callJson(base, 'POST', `/api/studies/${STUDY}/${endpoint}`, undefined, endpoint === 'session' ? undefined : token, raw);
        expect({ raw, status: answer.status }).toEqual({ raw, status: 400 });
        expect(['BAD_BODY', 'BAD_JSON']).toContain(answer.body.error.code);
        expect(answer.body.error.message).toMatch(/\w{3}/);
        if (hasPrototypeKey(body)) expect(answer.body.error).toMatchObject({ code: 'BAD_BODY', message: expect.stringMatching(/^the request body has a key named "(__proto__|constructor|prototype)"/) });
        expect(await state()).toBe(before);
      }),
      { numRuns: 150, seed: 123 },
    );
  });

  test('P-123, P-124: the matchmaking bodies (joinOrCreate, create, join, joinById, reconnect): each a 400 (403 for a study\'s field) in words; no room made, listed or entered', async () => {
    await serve();
    const waiting = await play(await readyWorker('W1'));
    const before = await state();
    const joins = fc.record({
      method: fc.constantFrom('joinOrCreate', 'create', 'join', 'joinById'),
      body: fc.constantFrom(...JOINS).chain((valid) => spoilt(valid, JOIN_FIELDS)),
    });
    const reconnects = fc.record({ method: fc.constant('reconnect'), body: spoilt(() => ({ reconnectionToken: 'not-a-token' }), { reconnectionToken: 'string' }) });
    await fc.assert(
      fc.asyncProperty(fc.oneof({ arbitrary: joins, weight: 4 }, { arbitrary: reconnects, weight: 1 }), async ({ method, body }) => {
        const raw = JSON.stringify(body);
        const room = method === 'joinById' || method === 'reconnect' ? waiting.room.roomId : 'cerealbar';
        const answer = await matchmake(method, raw, room);
        const studyField = method !== 'reconnect' && isPlainObject(body) && ['study', 'arm', 'addressTag'].some((key) => Object.hasOwn(body, key));
        expect({ raw, status: answer.status }).toEqual({ raw, status: !hasPrototypeKey(body) && studyField ? 403 : 400 });
        expect(answer.body.error).toMatch(/\w{3}/);
        if (hasPrototypeKey(body)) expect(answer.body.error).toMatch(/^the request body has a key named "(__proto__|constructor|prototype)"/);
        expect(await state()).toBe(before);
      }),
      { numRuns: 150, seed: 124 },
    );
    expect(waiting.phase).toBe('waiting');
  });
});
