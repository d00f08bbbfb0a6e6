/**
 * A study's games on a real server: the study API seats a worker who has passed every step in the
 * study's pool, in the role its record allows (never a client's say), and the games' endings give
 * the workers their completion codes, bonuses and promotions. Through @colyseus/sdk clients, as
 * the study's pages use them.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { gunzipSync } from 'node:zlib';
import { extract } from 'tar-stream';
import { join } from 'node:path';
import { matchMaker } from '@colyseus/core';
import { Client } from '@colyseus/sdk';
import { mountApi } from '../../server/http/api';
import { startGameServer, type RunningGameServer } from '../../server/index';
import { GameRoom, ROLE_CHANGED_MESSAGE, STUDY_ENDED_MESSAGE, type RoomSettings } from '../../server/rooms/GameRoom';
import { SqliteGameStore } from '../../server/store/SqliteGameStore';
import { SqliteWorkerStore } from '../../server/store/SqliteWorkerStore';
import { loadStudyFile, type LoadedStudy } from '../../server/study/loadStudy';
import { replay } from '../../shared/log/replay';
import { CLOSE_ROLE_CHANGED, CLOSE_STUDY_ENDED } from '../../shared/protocol/messages';
import { setPath, studyFolder, validStudy, writeStudy } from '../study/fixtures';
import { callJson, join as joinGame, sleep, track, waitFor, type Player } from './harness';
import { pickSelfPlayGame, send } from './selfPlayGames';

jest.setTimeout(60_000);

const ADMIN = 'study-games-test-admin-token-01';
const STUDY = 'pilot-1';
const RIGHT_ANSWERS = [0, 1, 1];

let dir: string;
let store: SqliteGameStore;
let workers: SqliteWorkerStore;
let server: RunningGameServer | undefined;
let base: string;
/** The worker store's clock: real time plus what a test adds. */
let skew = 0;

function study(changes: Record<string, unknown> = {}): LoadedStudy {
  const data = validStudy();
  for (const [path, value] of Object.entries(changes)) setPath(data, path, value);
  return loadStudyFile(writeStudy(studyFolder(join(dir, String(data.id))), data));
}

/** `warn` hears what the server tells the researcher (nothing is printed by default). */
async function serve(studies: LoadedStudy[], roomSettings: RoomSettings = {}, warn: (line: string) => void = () => undefined): Promise<void> {
  server = await startGameServer({
    warn,
    port: 0,
    host: '127.0.0.1',
    roomSettings: { leaderTurnSeconds: 2, followerTurnSeconds: 2, ...roomSettings },
    services: { startLog: (header, info) => store.startGame(header, info) },
    studies,
    workers,
    routes: (app) => mountApi(app, { store, adminToken: ADMIN, studies, workers }),
  });
  base = `http://127.0.0.1:${server.port}`;
}

beforeEach(() => {
  skew = 0;
  addresses.clear();
  dir = mkdtempSync(join(tmpdir(), 'cerealbar-study-games-'));
  store = SqliteGameStore.open(join(dir, 'data'));
  workers = SqliteWorkerStore.open(join(dir, 'data'), { now: () => Date.now() + skew });
});

afterEach(async () => {
  await server?.close();
  server = undefined;
  workers.close();
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Each worker calls from an address of its own, as crowdworkers do (a study keeps workers at one
 * address apart): the test's requests come through the loopback, whose X-Forwarded-For the server trusts.
 */
const addresses = new Map<string, string>();
const addressOf = (key: string) => addresses.get(key) ?? addresses.set(key, `198.51.100.${addresses.size + 1}`).get(key)!;
const call = (method: string, path: string, body?: unknown, token?: string, from = token) =>
  callJson(base, method, path, body, token, undefined, from === undefined ? {} : { 'x-forwarded-for': addressOf(from) });

const admin = (path: string) => call('POST', `/api/studies/${STUDY}/workers/${path}`, {}, ADMIN);
const me = async (token: string) => (await call('GET', `/api/studies/${STUDY}/me`, undefined, token)).body.worker;

/** A Prolific worker's session, taken through consent, rules, its role's tutorial (the follower's unless said) and the quiz: at the play step. */
async function readyWorker(pid: string, session = `S-${pid}`, role = 'follower'): Promise<string> {
  const started = await call('POST', `/api/studies/${STUDY}/session`, { PROLIFIC_PID: pid, STUDY_ID: 'ST', SESSION_ID: session }, undefined, pid);
  const token = started.body.token as string;
  addresses.set(token, addressOf(pid));
  const post = (step: string, body: unknown) => call('POST', `/api/studies/${STUDY}/${step}`, body, token);
  expect((await post('consent', { agree: true })).status).toBe(200);
  expect((await post('rules', { read: true })).status).toBe(200);
  expect((await post('tutorial', { role })).status).toBe(200);
  const quiz = await post('quiz', { answers: RIGHT_ANSWERS });
  expect(quiz.body.worker.step).toBe('play');
  return token;
}

/** A worker at the play step promoted to leader by the researcher, with the leader's tutorial passed. */
async function readyLeader(pid: string): Promise<string> {
  const token = await readyWorker(pid);
  expect((await admin(`${pid}/promote`)).status).toBe(200);
  expect((await me(token)).step).toBe('tutorial');
  expect((await call('POST', `/api/studies/${STUDY}/tutorial`, { role: 'leader' }, token)).body.worker.step).toBe('play');
  return token;
}

/** Asks the study API for a game and takes the seat it reserved, as the study's page does. */
async function play(token: string): Promise<Player> {
  const answer = await call('POST', `/api/studies/${STUDY}/play`, {}, token);
  expect(answer).toMatchObject({ status: 200 });
  const player = track(await new Client(base).consumeSeatReservation(answer.body.reservation));
  await waitFor(() => player.messages.some((m) => m.type === 'seat'), 'the seat');
  return player;
}

/** The files of a tar archive, by name. */
async function untar(bytes: Buffer): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  const reader = extract();
  reader.on('entry', (header, stream, next) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk) => chunks.push(chunk as Buffer));
    stream.on('end', () => {
      files[header.name] = Buffer.concat(chunks).toString('utf8');
      next();
    });
  });
  const finished = new Promise<void>((resolve, reject) => reader.on('finish', () => resolve()).on('error', reject));
  reader.end(bytes);
  await finished;
  return files;
}

const seatOf = (player: Player) => player.messages.find((m) => m.type === 'seat')!.payload.role;

describe("a study's games", () => {
  test('P-101: a worker is seated only at the play step, in the role of its record, and only once', async () => {
    await serve([study()]);
    const started = await call('POST', `/api/studies/${STUDY}/session`, { PROLIFIC_PID: 'EARLY', STUDY_ID: 'ST', SESSION_ID: 'S0' });
    const early = await call('POST', `/api/studies/${STUDY}/play`, {}, started.body.token);
    expect(early).toMatchObject({ status: 409, body: { error: { code: 'WRONG_STEP' } } });
    expect((await call('POST', `/api/studies/${STUDY}/play`, {})).status).toBe(401);

    // Two requests at the same moment (two tabs): one seat, one refusal.
    const first = await readyWorker('F1');
    const both = await Promise.all([call('POST', `/api/studies/${STUDY}/play`, {}, first), call('POST', `/api/studies/${STUDY}/play`, {}, first)]);
    expect(both.map((answer) => answer.status).sort()).toEqual([200, 409]);
    expect(both.find((answer) => answer.status === 409)!.body.error.code).toBe('ALREADY_SEATED');
    const follower = track(await new Client(base).consumeSeatReservation(both.find((answer) => answer.status === 200)!.body.reservation));
    await waitFor(() => follower.messages.some((m) => m.type === 'seat'), 'the seat');
    expect(seatOf(follower)).toBe('follower');
    // A second request (another tab) while the seat is held gets no second seat.
    const token = await readyWorker('F2');
    const second = await play(token);
    expect(seatOf(second)).toBe('follower');
    const again = await call('POST', `/api/studies/${STUDY}/play`, {}, token);
    expect(again).toMatchObject({ status: 409, body: { error: { code: 'ALREADY_SEATED' } } });
    // Two followers never meet: each waits in a game of its own.
    expect(follower.room.roomId).not.toBe(second.room.roomId);
    expect(await call('POST', `/api/studies/${STUDY}/play`, { role: 'leader' }, token)).toMatchObject({ status: 400, body: { error: { code: 'BAD_BODY', field: 'role' } } });
    // The matchmaker failing (a room that cannot be made) is a clear 503, and the worker is not left waiting.
    const failing = jest.spyOn(GameRoom.prototype, 'onCreate').mockImplementationOnce(() => {
      throw new Error('the room could not be made');
    });
    const refused = await call('POST', `/api/studies/${STUDY}/play`, {}, await readyWorker('F3'));
    failing.mockRestore();
    expect(refused).toMatchObject({ status: 503, body: { error: { code: 'NO_SEAT' } } });
    expect(refused.body.error.message).toMatch(/^no seat could be found: .*the room could not be made.*; please try again in a moment$/);
    expect(workers.get(STUDY, 'F3')!.waitingSince).toBeNull();
    // The blocked never enter.
    const blocked = await readyWorker('B1');
    expect((await admin('B1/block')).status).toBe(200);
    expect(await call('POST', `/api/studies/${STUDY}/play`, {}, blocked)).toMatchObject({ status: 403, body: { error: { code: 'BLOCKED' } } });
    expect(workers.get(STUDY, 'B1')!.waitingSince).toBeNull();
  });

  test("P-101: a client cannot join a study's game itself, nor land in one from quick play in a pool of the same name", async () => {
    await serve([study()]);
    const waiting = await play(await readyWorker('F1'));
    await expect(joinGame(base, { pool: STUDY, role: 'leader', study: STUDY })).rejects.toThrow(/study's pages/);
    const stranger = await joinGame(base, { pool: STUDY, role: 'leader' });
    await sleep(300);
    expect(stranger.room.roomId).not.toBe(waiting.room.roomId);
    expect(waiting.phase).toBe('waiting');
    await expect(new Client(base).joinById(waiting.room.roomId, { role: 'leader' })).rejects.toThrow();
    expect(waiting.phase).toBe('waiting');
  });

  test("P-102, P-142: a game played to its end completes both sessions, with the bonus on its score; the log names the study, its file's SHA-256 and its workers", async () => {
    const { seed, events } = pickSelfPlayGame();
    const promoting = study({ 'roles.promotion': { afterGames: 1, minMeanScore: 1 } });
    await serve([promoting], { seed });
    const leaderToken = await readyLeader('L1');
    const followerToken = await readyWorker('F1');
    const follower = await play(followerToken);
    const leader = await play(leaderToken);
    expect([seatOf(leader), seatOf(follower)]).toEqual(['leader', 'follower']);
    await waitFor(() => leader.phase === 'playing' && follower.phase === 'playing', 'the game to start');
    expect((await me(followerToken)).step).toBe('play');
    for (const event of events) {
      await sleep(12);
      if (event.actor !== 'server') send(event.actor === 'leader' ? leader : follower, event);
      const logged = () => store.listGames()[0] && readFileSync(store.listGames()[0].logPath, 'utf8').split('\n').length - 2;
      await waitFor(() => logged() >= event.seq, `event ${event.seq}`, 10_000);
    }
    await waitFor(() => leader.phase === 'ended' && follower.phase === 'ended', 'the game to end');
    const [game] = store.listGames();
    const result = replay(readFileSync(game.logPath, 'utf8'));
    expect(result.end?.reason).toBe('turns-exhausted');
    expect(result.header.meta).toMatchObject({ study: STUDY, studyFileSha256: promoting.fileSha256, pool: STUDY });
    expect(promoting.fileSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(game.seats.map((seat) => [seat.role, seat.workerId]).sort()).toEqual([
      ['follower', 'F1'],
      ['leader', 'L1'],
    ]);
    const score = result.final.score;
    const bonus = Math.min(3, Math.round(score * 0.1 * 100) / 100);
    await waitFor(() => workers.get(STUDY, 'F1')!.completion !== null, 'the completion');
    for (const token of [leaderToken, followerToken]) {
      expect(await me(token)).toMatchObject({
        step: 'done',
        games: { played: 1, completed: 1, completedThisSession: 1 },
        earnings: { base: 4.5, bonus, currency: 'GBP' },
        completion: { outcome: 'completed', code: 'CDONE1', url: 'https://app.prolific.com/submissions/complete?cc=CDONE1', mturkSubmit: null },
      });
    }
    // The study's rule (1 completed game as follower, mean score at least 1) promotes the follower.
    expect(workers.get(STUDY, 'F1')).toMatchObject({ role: 'leader', games: { points: score } });
    expect(workers.get(STUDY, 'F1')!.promotedAt).not.toBeNull();
    expect(workers.games(STUDY, 'F1')).toEqual([expect.objectContaining({ gameId: game.gameId, role: 'follower', endReason: 'turns-exhausted', score, left: false })]);
  });

  test("P-102: a partner who leaves mid-game gives the other worker the partnerLeft code; the leaver may play again", async () => {
    await serve([study()]);
    const leaderToken = await readyLeader('L1');
    const followerToken = await readyWorker('F1');
    const follower = await play(followerToken);
    const leader = await play(leaderToken);
    await waitFor(() => leader.phase === 'playing' && follower.phase === 'playing', 'the game to start');
    await leader.room.leave(true);
    await waitFor(() => workers.get(STUDY, 'F1')!.completion !== null, 'the completion');
    expect(await me(followerToken)).toMatchObject({ step: 'done', completion: { outcome: 'partnerLeft', code: 'CLEFT' }, games: { played: 1, completed: 0 } });
    expect(await me(leaderToken)).toMatchObject({ step: 'play', completion: null, games: { played: 1, completed: 0 } });
    expect(workers.games(STUDY, 'L1')[0]).toMatchObject({ endReason: 'abandoned', left: true });
  });

  test("P-102: a study's worker store failing at a game's start or end is logged; the game goes on and ends as usual, and the records are written once the store works again", async () => {
    await serve([study()]);
    const leaderToken = await readyLeader('L1');
    const follower = await play(await readyWorker('F1'));
    const failing = jest.spyOn(workers, 'recordGameStart').mockImplementation(() => {
      throw new Error('disk I/O error');
    });
    const ending = jest.spyOn(workers, 'recordGameEnd').mockImplementation(() => {
      throw new Error('disk I/O error');
    });
    const logged = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const leader = await play(leaderToken);
      await waitFor(() => leader.phase === 'playing' && follower.phase === 'playing', 'the game to start');
      leader.act({ type: 'instruction', text: 'Go left' });
      await waitFor(() => follower.view!.instructions.length === 0 && leader.view!.instructions.length === 1, 'the instruction');
      await leader.room.leave(true);
      await waitFor(() => follower.phase === 'ended', 'the game to end');
      expect(store.listGames()[0].endReason).toBe('abandoned');
      expect(logged.mock.calls.map((call) => call.join(' ')).join('\n')).toMatch(/study pilot-1: the start of game \S+ for worker (L1|F1) could not be written \(tried again every 1 s until it is\): disk I\/O error/);
      expect(workers.get(STUDY, 'F1')!.games).toMatchObject({ played: 0, inProgress: 0 });
    } finally {
      failing.mockRestore();
      ending.mockRestore();
    }
    // The store works again: the game's start and end reach both workers' records, in order.
    try {
      await waitFor(() => workers.get(STUDY, 'F1')!.games.played === 1 && workers.get(STUDY, 'L1')!.games.played === 1, 'the records to be written', 5000);
      expect(workers.games(STUDY, 'L1')[0]).toMatchObject({ endReason: 'abandoned', left: true });
      expect(workers.get(STUDY, 'F1')!.games.inProgress).toBe(0);
      expect(logged.mock.calls.map((call) => call.join(' ')).join('\n')).toMatch(/is written now/);
    } finally {
      logged.mockRestore();
    }
  });

  test("P-106: the researcher's overview, bonus sheets and logs archive of a study, behind the admin token", async () => {
    await serve([study()]);
    const leaderToken = await readyLeader('L1');
    const follower = await play(await readyWorker('F1'));
    const leader = await play(leaderToken);
    await waitFor(() => leader.phase === 'playing' && follower.phase === 'playing', 'the game to start');
    const live = await call('GET', '/api/studies', undefined, ADMIN);
    expect(live.body.studies[0]).toMatchObject({ id: STUDY, platform: 'prolific', pool: STUDY, games: { games: 1, live: 1, meanScore: null }, waiting: [] });
    await leader.room.leave(true);
    await waitFor(() => workers.get(STUDY, 'F1')!.completion !== null, 'the completion');
    const waiting = await play(await readyWorker('F2'));
    skew = 12_000;
    const overview = (await call('GET', '/api/studies', undefined, ADMIN)).body.studies[0];
    expect(overview).toMatchObject({
      workers: { total: 3, byStep: { done: 1, play: 2, consent: 0 } },
      waiting: [{ participantId: 'F2', role: 'follower' }],
      completion: { reachedPlay: 3, completed: 0, rate: 0 },
      games: { games: 1, live: 0, meanScore: 0 },
    });
    expect(overview.waiting[0].seconds).toBeGreaterThanOrEqual(12);
    expect((await call('GET', '/api/studies')).status).toBe(401);

    const csv = await fetch(`${base}/api/studies/${STUDY}/bonuses.csv?format=mturk`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(csv.headers.get('content-disposition')).toBe('attachment; filename=pilot-1-bonuses-mturk.csv');
    expect(await csv.text()).toBe('workerId,assignmentId,bonusAmount,reason,uniqueRequestToken\n');
    expect(await call('GET', `/api/studies/${STUDY}/bonuses.csv?format=paypal`, undefined, ADMIN)).toMatchObject({ status: 400, body: { error: { code: 'BAD_QUERY', field: 'format' } } });
    expect((await call('GET', '/api/studies/nope/bonuses.csv?format=prolific', undefined, ADMIN)).status).toBe(404);

    const archive = await fetch(`${base}/api/studies/${STUDY}/logs.tar.gz`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(archive.headers.get('content-type')).toBe('application/gzip');
    const files = await untar(gunzipSync(Buffer.from(await archive.arrayBuffer())));
    const [game] = store.listGames();
    expect(Object.keys(files)).toEqual([`${game.gameId}.jsonl`]);
    expect(files[`${game.gameId}.jsonl`]).toBe(readFileSync(game.logPath, 'utf8'));
    // A worker who leaves the game it waited in is no longer waiting.
    await waiting.room.leave(true);
    await waitFor(() => workers.get(STUDY, 'F2')!.waitingSince === null, 'the wait to end');
    expect((await call('GET', '/api/studies', undefined, ADMIN)).body.studies[0].waiting).toEqual([]);
  });

  test('followers waiting with no leader able to come: the server says so at each request to play, with what to do, and so does the overview', async () => {
    const warnings: string[] = [];
    await serve([study()], {}, (line) => warnings.push(line));
    const overview = async () => (await call('GET', '/api/studies', undefined, ADMIN)).body.studies[0];
    expect(await overview()).toMatchObject({ shortages: [], rolesProblem: expect.stringMatching(/^every new participant starts as a follower .* no game starts until you promote a worker to leader on the admin page/) });
    const first = await play(await readyWorker('F1'));
    expect(warnings).toEqual([
      'study pilot-1: 1 follower waits for a partner (F1) and no leader can come: new participants start as followers and no worker who may lead can still play. Promote a worker to leader on the admin page, or set roles.newWorkersStartAs: either in the study file and restart the server.',
    ]);
    const second = await play(await readyWorker('F2'));
    expect(warnings[1]).toMatch(/^study pilot-1: 2 followers wait for a partner \(F1, F2\) and no leader can come: /);
    expect((await overview()).shortages).toEqual([{ waiting: 'follower', participants: ['F1', 'F2'], message: warnings[1].replace('study pilot-1: ', '') }]);
    // Once a worker who may lead exists (it need not be waiting), a follower waits with no word.
    await readyLeader('L1');
    const third = await play(await readyWorker('F3'));
    expect(warnings).toHaveLength(2);
    expect(await overview()).toMatchObject({ shortages: [], rolesProblem: null });
    for (const player of [first, second, third]) await player.room.leave(true);
  });

  test('P-103: the noPartner code only once the wait for a partner has run out; never to a worker in a game', async () => {
    await serve([study({ 'time.waitForPartnerSeconds': 60 })]);
    const token = await readyWorker('F1');
    const noPartner = () => call('POST', `/api/studies/${STUDY}/no-partner`, {}, token);
    expect(await noPartner()).toMatchObject({ status: 409, body: { error: { code: 'WRONG_STEP' } } });
    const waiting = await play(token);
    const early = await noPartner();
    expect(early).toMatchObject({ status: 409, body: { error: { code: 'TOO_EARLY' } } });
    expect(early.body.error.retryAfterSeconds).toBeGreaterThan(55);
    expect((await me(token)).completion).toBeNull();
    // The page asks while it still holds its seat, then leaves.
    skew = 59_000;
    const done = await noPartner();
    expect(done).toMatchObject({ status: 200, body: { worker: { step: 'done', completion: { outcome: 'noPartner', code: 'CNOPART' } } } });
    await waiting.room.leave(true);
    expect(await call('POST', `/api/studies/${STUDY}/play`, {}, token)).toMatchObject({ status: 409, body: { error: { code: 'WRONG_STEP' } } });

    const leaderToken = await readyLeader('L1');
    const other = await readyWorker('F2');
    const follower = await play(other);
    const leader = await play(leaderToken);
    await waitFor(() => leader.phase === 'playing' && follower.phase === 'playing', 'the game to start');
    skew = 120_000;
    expect(await call('POST', `/api/studies/${STUDY}/no-partner`, {}, other)).toMatchObject({ status: 409, body: { error: { code: 'WRONG_STEP' } } });
  });

  test('P-137: a seat reservation never taken ends the wait: no noPartner code for a worker who never sat down; the next worker is not kept from a partner', async () => {
    await serve([study({ 'time.waitForPartnerSeconds': 30 })]);
    const token = await readyWorker('F1');
    // The reservation is asked for and never used.
    expect((await call('POST', `/api/studies/${STUDY}/play`, {}, token)).status).toBe(200);
    expect(workers.get(STUDY, 'F1')!.waitingSince).not.toBeNull();
    await waitFor(() => workers.get(STUDY, 'F1')!.waitingSince === null, 'the wait to end as the reservation lapses', 6000);
    skew = 31_000;
    expect(await call('POST', `/api/studies/${STUDY}/no-partner`, {}, token)).toMatchObject({ status: 409, body: { error: { code: 'WRONG_STEP' } } });
    expect(workers.get(STUDY, 'F1')!.completion).toBeNull();
    // Seated and waiting, the same worker gets the code once its wait runs out.
    skew = 0;
    const waiting = await play(token);
    skew = 31_000;
    expect(await call('POST', `/api/studies/${STUDY}/no-partner`, {}, token)).toMatchObject({ status: 200, body: { worker: { completion: { outcome: 'noPartner' } } } });
    await waiting.room.leave(true);
  });

  test('P-135: two workers asking to play from one address are never partners; a worker from another address partners either', async () => {
    await serve([study()]);
    const first = await readyWorker('F1');
    const twin = await readyWorker('L1');
    addresses.set(twin, addressOf(first));
    expect((await admin('L1/promote')).status).toBe(200);
    expect((await call('POST', `/api/studies/${STUDY}/tutorial`, { role: 'leader' }, twin)).status).toBe(200);
    const follower = await play(first);
    const sameAddressLeader = await play(twin);
    await sleep(300);
    expect([follower.phase, sameAddressLeader.phase]).toEqual(['waiting', 'waiting']);
    expect(store.listGames()).toEqual([]);
    // A follower from elsewhere partners the leader who waits.
    const other = await play(await readyWorker('F2'));
    await waitFor(() => other.phase === 'playing' && sameAddressLeader.phase === 'playing', 'the game to start');
    expect(follower.phase).toBe('waiting');
    const [game] = store.listGames();
    expect(game.seats.map((seat) => seat.workerId).sort()).toEqual(['F2', 'L1']);
  });

  test('P-135: a study that allows it (a lab) pairs workers at one address', async () => {
    await serve([study({ admission: { sameAddressPartners: true } })]);
    const first = await readyWorker('F1');
    const leaderToken = await readyLeader('L1');
    addresses.set(leaderToken, addressOf(first));
    const follower = await play(first);
    const leader = await play(leaderToken);
    await waitFor(() => leader.phase === 'playing' && follower.phase === 'playing', 'the game to start');
  });

  test('P-105: a worker whose session ended while it waited is sent away when a partner comes; no game starts with it', async () => {
    await serve([study({ 'time.waitForPartnerSeconds': 30 })]);
    const token = await readyWorker('F1');
    const waiting = await play(token);
    let closed: number | null = null;
    waiting.room.onLeave((code) => (closed = code));
    skew = 30_000;
    expect((await call('POST', `/api/studies/${STUDY}/no-partner`, {}, token)).status).toBe(200);
    const leader = await play(await readyLeader('L1'));
    await waitFor(() => closed !== null, 'the finished worker to be sent away');
    expect(closed).toBe(CLOSE_STUDY_ENDED);
    await sleep(200);
    expect(leader.phase).toBe('waiting');
    expect(store.listGames()).toEqual([]);
    // A finished worker's stale reservation is refused too.
    const second = await readyWorker('F2');
    const answer = await call('POST', `/api/studies/${STUDY}/play`, {}, second);
    expect((await admin('F2/block')).status).toBe(200);
    await expect(new Client(base).consumeSeatReservation(answer.body.reservation)).rejects.toThrow(/study has ended/);
    expect(leader.phase).toBe('waiting');
  });

  test('P-114: a worker promoted while it waits is sent away at once; its wait ends, its seat is free, and it then leads', async () => {
    await serve([study({ 'time.waitForPartnerSeconds': 300 })]);
    const token = await readyWorker('F1');
    const waiting = await play(token);
    let closed: [number, string] | null = null;
    waiting.room.onLeave((code, reason) => (closed = [code, reason ?? '']));
    expect(workers.get(STUDY, 'F1')!.waitingSince).not.toBeNull();
    const promoted = await admin('F1/promote');
    expect(promoted.body.worker).toMatchObject({ role: 'leader', step: 'tutorial', waitingSince: null });
    await waitFor(() => closed !== null, 'the promoted worker to be sent away');
    expect(closed).toEqual([CLOSE_ROLE_CHANGED, ROLE_CHANGED_MESSAGE]);
    // Its seat is free and it waits no more: the researcher's overview shows nobody waiting.
    expect(await GameRoom.seatsWorker(STUDY, 'F1')).toBe(false);
    expect((await call('GET', '/api/studies', undefined, ADMIN)).body.studies[0].waiting).toEqual([]);
    // Past the leader's tutorial it asks again, is seated as leader, and meets a follower.
    expect((await call('POST', `/api/studies/${STUDY}/tutorial`, { role: 'leader' }, token)).body.worker.step).toBe('play');
    const follower = await play(await readyWorker('F2'));
    const leader = await play(token);
    await waitFor(() => leader.phase === 'playing' && follower.phase === 'playing', 'the game to start');
    expect([seatOf(leader), seatOf(follower)]).toEqual(['leader', 'follower']);
  });

  test('P-114: a waiting seat kept for a dropped page is freed by a promotion; a blocked waiting worker is sent away at once', async () => {
    await serve([study()], { reconnectSeconds: 20 });
    const token = await readyWorker('F1');
    const dropped = await play(token);
    dropped.room.reconnection.enabled = false;
    const seatToken = dropped.room.reconnectionToken;
    dropped.room.connection.close(4999, 'the page reloads');
    await waitFor(() => matchMaker.getLocalRoomById(dropped.room.roomId)?.clients.length === 0, 'the server to see the drop');
    expect(await GameRoom.seatsWorker(STUDY, 'F1')).toBe(true);
    expect((await admin('F1/promote')).status).toBe(200);
    expect(await GameRoom.seatsWorker(STUDY, 'F1')).toBe(false);
    await expect(new Client(base).reconnect(seatToken)).rejects.toThrow(/invalid or expired/);

    const blockedWorker = await play(await readyWorker('B1'));
    let closed: [number, string] | null = null;
    blockedWorker.room.onLeave((code, reason) => (closed = [code, reason ?? '']));
    expect((await admin('B1/block')).status).toBe(200);
    await waitFor(() => closed !== null, 'the blocked worker to be sent away');
    expect(closed).toEqual([CLOSE_STUDY_ENDED, STUDY_ENDED_MESSAGE]);
    await waitFor(() => workers.get(STUDY, 'B1')!.waitingSince === null, 'its wait to end');
    // The promoted worker, past the leader's tutorial, is seated as leader, and waits: nobody is left to meet.
    expect((await call('POST', `/api/studies/${STUDY}/tutorial`, { role: 'leader' }, token)).body.worker.step).toBe('play');
    const leader = await play(token);
    expect(seatOf(leader)).toBe('leader');
    await sleep(200);
    expect(leader.phase).toBe('waiting');
  });

  test('P-114: a role changed where the room was not told (another process, its store alone) sends the worker away when a partner comes', async () => {
    await serve([study()]);
    const waiting = await play(await readyWorker('F1'));
    let closed: number | null = null;
    waiting.room.onLeave((code) => (closed = code));
    // The change as another process makes it: in the shared store, without a word to this room.
    await workers.promote(STUDY, 'F1');
    await sleep(200);
    expect(closed).toBeNull();
    const leader = await play(await readyLeader('L1'));
    await waitFor(() => closed !== null, 'the promoted worker to be sent away');
    expect(closed).toBe(CLOSE_ROLE_CHANGED);
    await sleep(200);
    expect(leader.phase).toBe('waiting');
    expect(store.listGames()).toEqual([]);
    await waitFor(() => workers.get(STUDY, 'F1')!.waitingSince === null, 'its wait to end');
  });

  test("P-104: a study's turn seconds are its games' own; a new MTurk assignment after a completion is a new session", async () => {
    await serve([study({ 'time.leaderTurnSeconds': 7, 'time.followerTurnSeconds': 5 })], { leaderTurnSeconds: 2, followerTurnSeconds: 2 });
    const kept = await readyWorker('F1');
    const follower = await play(kept);
    const leader = await play(await readyLeader('L1'));
    await waitFor(() => leader.phase === 'playing' && follower.phase === 'playing', 'the game to start');
    expect(leader.view!.config.turnSeconds).toEqual({ leader: 7, follower: 5 });

    // The same worker back with another submission, from the page that kept its token (P-132):
    // the completion of the first stays in its games, not on the record.
    await leader.room.leave(true);
    await waitFor(() => workers.get(STUDY, 'F1')!.completion !== null, 'the completion');
    const second = { PROLIFIC_PID: 'F1', STUDY_ID: 'ST', SESSION_ID: 'S-second' };
    expect(await call('POST', `/api/studies/${STUDY}/session`, second, undefined, 'F1')).toMatchObject({ status: 409, body: { error: { code: 'SESSION_ELSEWHERE' } } });
    const again = await call('POST', `/api/studies/${STUDY}/session`, second, kept);
    expect(again.body.worker).toMatchObject({ step: 'play', completion: null, games: { played: 1 } });
    const same = await call('POST', `/api/studies/${STUDY}/session`, { PROLIFIC_PID: 'L1', STUDY_ID: 'ST', SESSION_ID: 'S-L1' });
    expect(same.body.worker.step).toBe('play');
  });
});

describe('a study with arms', () => {
  /** A study whose participants lead, each game's follower the heuristic agent of its one arm. */
  const armsStudy = () => study({ roles: { newWorkersStartAs: 'leader', promotion: 'manual' }, arms: [{ id: 'h', agent: 'heuristic' }] });
  const askToPlay = (token: string) => call('POST', `/api/studies/${STUDY}/play`, {}, token);

  test('P-143: a request to play starts no wait: the worker is never listed as waiting, and a seat reservation it never takes earns no noPartner code', async () => {
    await serve([armsStudy()]);
    const token = await readyWorker('L1', undefined, 'leader');
    expect((await askToPlay(token)).status).toBe(200);
    expect(workers.get(STUDY, 'L1')!.waitingSince).toBeNull();
    expect((await callJson(base, 'GET', '/api/studies', undefined, ADMIN)).body.studies[0].waiting).toEqual([]);
    // Long after its request, while the reservation holds and once it has lapsed: no code, no base pay for nothing.
    skew = 301_000;
    expect(await call('POST', `/api/studies/${STUDY}/no-partner`, {}, token)).toMatchObject({ status: 409, body: { error: { code: 'WRONG_STEP' } } });
    await sleep(3500); // the reservation lapses after 3 s
    expect(await call('POST', `/api/studies/${STUDY}/no-partner`, {}, token)).toMatchObject({ status: 409, body: { error: { code: 'WRONG_STEP' } } });
    expect(await me(token)).toMatchObject({ step: 'play', completion: null });
  });

  test('P-144: a worker who asks again keeps its draw (and arm) until a game starts with it; its next game is a new draw', async () => {
    await serve([armsStudy()]);
    const token = await readyWorker('L1', undefined, 'leader');
    expect((await askToPlay(token)).status).toBe(200);
    // The reservation is never taken: once it lapses (until then the worker holds a seat), the page asks again.
    let again = await askToPlay(token);
    for (const deadline = Date.now() + 8000; again.status === 409 && Date.now() < deadline; again = await askToPlay(token)) await sleep(200);
    expect(again.status).toBe(200);
    expect(workers.armTotals(STUDY)).toEqual([{ arm: 'h', drawn: 1, games: 0, live: 0, ended: 0, abandoned: 0 }]);
    const leader = track(await new Client(base).consumeSeatReservation(again.body.reservation));
    await waitFor(() => leader.phase === 'playing', 'the game with the arm');
    expect((replay(readFileSync(store.listGames()[0].logPath, 'utf8'), { allowOpen: true }).header.meta as { arm: unknown }).arm).toMatchObject({ id: 'h', draw: 0 });
    // The worker leaves (and may play again): its next game is the study's next draw.
    await leader.room.leave(true);
    await waitFor(() => workers.get(STUDY, 'L1')!.games.played === 1, 'the game to end on the record');
    expect((await askToPlay(token)).status).toBe(200);
    expect(workers.armTotals(STUDY)).toEqual([{ arm: 'h', drawn: 2, games: 1, live: 0, ended: 0, abandoned: 1 }]);
  });
});
