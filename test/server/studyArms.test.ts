/**
 * A study with arms on a real server: scripted human leaders go through the study API, and each
 * game's follower is the agent of the arm drawn for it (the heuristic follower, or the LLM
 * follower on a stub endpoint). The games are split between the arms as the weights say, across a
 * restart; the log headers name the arm and the study file's SHA-256; nothing a participant
 * receives names either; and `study
 * report` gives what a recomputation from the raw log lines and call records gives, with each
 * arm's draws from the worker store.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@colyseus/sdk';
import { mountApi } from '../../server/http/api';
import { startGameServer, type RunningGameServer } from '../../server/index';
import { SEAT_RESERVATION_SECONDS } from '../../server/rooms/GameRoom';
import { SqliteGameStore } from '../../server/store/SqliteGameStore';
import { SqliteWorkerStore } from '../../server/store/SqliteWorkerStore';
import { armOfDraw } from '../../server/study/arms';
import { loadStudyFile, type LoadedStudy } from '../../server/study/loadStudy';
import { makeConfig } from '../../shared/engine/config';
import { bootstrapInterval, DEFAULT_BOOTSTRAP } from '../../shared/eval/bootstrap';
import { replay } from '../../shared/log/replay';
import { startStubLlm, STUB_MODEL, type StubLlm } from '../helpers/stubLlm';
import { setPath, studyFolder, validStudy, writeStudy } from '../study/fixtures';
import { cerealbar } from '../cli/run';
import { callJson, sleep, track, waitFor, type Player } from './harness';

jest.setTimeout(120_000);

const ADMIN = 'study-arms-test-admin-token-0001';
const STUDY = 'pilot-1';
const RIGHT_ANSWERS = [0, 1, 1];
/** Ids no game message would hold by chance. */
const HEURISTIC_ARM = 'baseline-h7';
const LLM_ARM = 'model-q3';

let dir: string;
let stub: StubLlm;
let study: LoadedStudy;
let studyFile: string;
/** A second study: followers as participants, the scripted leader as its one arm. */
let followers: LoadedStudy;
const FOLLOWERS = 'pilot-2';
/** A third: two workers from one address an hour may start playing with its arm. */
let limited: LoadedStudy;
const LIMITED = 'pilot-3';
let store: SqliteGameStore;
let workers: SqliteWorkerStore;
let server: RunningGameServer | undefined;
let base: string;
/** Everything the participants received: HTTP answers and room messages. */
const received: unknown[] = [];

async function serve(): Promise<void> {
  store = SqliteGameStore.open(join(dir, 'data'));
  workers = SqliteWorkerStore.open(join(dir, 'data'));
  server = await startGameServer({
    warn: () => undefined,
    port: 0,
    host: '127.0.0.1',
    // A loaded test machine's late event loop must not turn the workers away as busy (P-153).
    admission: { maxEventLoopDelayMs: 0 },
    // Short games (two turns each) with CB2's feedback and cancel, and an agent quick enough for the test.
    roomSettings: { leaderTurnSeconds: 3, followerTurnSeconds: 1, botStepMs: 60, config: makeConfig({ turnsPerPlayer: 2, extraTurns: [], liveFeedback: true, cancelInstructions: true }) },
    services: { startLog: (header, info) => store.startGame(header, info) },
    studies: [study, followers, limited],
    workers,
    armRecords: join(dir, 'data', 'llm'),
    routes: (app) => mountApi(app, { store, adminToken: ADMIN, studies: [study, followers, limited], workers }),
  });
  base = `http://127.0.0.1:${server.port}`;
}

async function stop(): Promise<void> {
  await server?.close();
  server = undefined;
  workers.close();
  store.close();
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cerealbar-study-arms-'));
  // Every third call fails (400 is not retried): the report counts the LLM arm's failures.
  stub = await startStubLlm({ respond: (_body, n) => (n % 3 === 2 ? { status: 400, body: '{"error": {"message": "bad request"}}' } : '{"actions": ["MF", "RR", "DONE"]}') });
  const data = setPath(validStudy(), 'roles', { newWorkersStartAs: 'leader', promotion: 'manual' });
  data.gamesPerSession = 3;
  data.arms = [
    { id: HEURISTIC_ARM, agent: 'heuristic', weight: 2 },
    { id: LLM_ARM, agent: 'llm', weight: 1, llm: { model: STUB_MODEL, 'base-url': stub.url, 'api-key-env': 'CEREALBAR_TEST_NO_SUCH_KEY', 'timeout-s': 2, 'max-retries': 0 } },
  ];
  studyFile = writeStudy(studyFolder(join(dir, 'study')), data);
  study = loadStudyFile(studyFile);
  const second = setPath(validStudy(), 'roles', { newWorkersStartAs: 'follower', promotion: 'manual' });
  second.id = FOLLOWERS;
  second.arms = [{ id: 'scripted-leader', agent: 'scripted' }];
  followers = loadStudyFile(writeStudy(studyFolder(join(dir, 'followers')), second));
  const third = setPath(validStudy(), 'roles', { newWorkersStartAs: 'leader', promotion: 'manual' });
  third.id = LIMITED;
  third.arms = [{ id: 'limited-heuristic', agent: 'heuristic' }];
  third.admission = { armWorkersPerAddressPerHour: 2 };
  limited = loadStudyFile(writeStudy(studyFolder(join(dir, 'limited')), third));
  await serve();
});

afterAll(async () => {
  await stop();
  await stub.close();
  rmSync(dir, { recursive: true, force: true });
});

const call = async (method: string, path: string, body?: unknown, token?: string) => {
  const answer = await callJson(base, method, path, body, token);
  received.push(answer.body);
  return answer;
};

/** A Prolific worker taken through consent, rules, its role's tutorial and the quiz: at the play step. */
async function readyLeader(pid: string, studyId = STUDY, role = 'leader'): Promise<string> {
  const token = (await call('POST', `/api/studies/${studyId}/session`, { PROLIFIC_PID: pid, STUDY_ID: 'ST', SESSION_ID: `S-${pid}` })).body.token as string;
  const post = (step: string, body: unknown) => call('POST', `/api/studies/${studyId}/${step}`, body, token);
  await post('consent', { agree: true });
  await post('rules', { read: true });
  expect((await post('tutorial', { role })).status).toBe(200);
  expect((await post('quiz', { answers: RIGHT_ANSWERS })).body.worker.step).toBe('play');
  return token;
}

/** Asks the study API for a game and takes the seat, as the study's page does: the game starts at once, with the arm's agent. */
async function play(token: string, studyId = STUDY): Promise<Player> {
  const answer = await call('POST', `/api/studies/${studyId}/play`, {}, token);
  expect(answer.status).toBe(200);
  const player = track(await new Client(base).consumeSeatReservation(answer.body.reservation));
  await waitFor(() => player.phase === 'playing', 'the game to start with the agent');
  return player;
}

/**
 * A scripted leader: in its turn one instruction and End Turn (every other one unreadable); in the follower's turn a positive
 * signal in the first round and a negative one in the second, and, when `cancels`, a cancel.
 */
async function lead(leader: Player, cancels: boolean): Promise<void> {
  let acted = '';
  const act = () => {
    const view = leader.view;
    if (!view || view.phase !== 'playing') return;
    const moment = `${view.turn.role}:${view.turnsLeft}`;
    if (moment === acted) return;
    if (view.turn.role === 'leader' && view.legal.instruction) {
      acted = moment;
      // Every other round an instruction the heuristic follower cannot read: it gives up on it, and
      // would tell a quick-play leader why (which an LLM follower never does).
      leader.act({ type: 'instruction', text: view.turnsLeft % 2 ? 'dance a little jig' : 'get the card with 1 red star, 3 hexes ahead' });
      leader.act({ type: 'endTurn' });
    } else if (view.turn.role === 'follower' && view.legal.feedback) {
      acted = moment;
      leader.act({ type: 'feedback', signal: view.turnsLeft === 2 ? 'positive' : 'negative' });
      if (cancels && view.turnsLeft === 1) leader.act({ type: 'cancel' });
    }
  };
  leader.onView(act);
  act();
  await waitFor(() => leader.phase === 'ended', 'the game to end', 30_000);
}

const headers = () =>
  store
    .listGames({ pool: STUDY })
    .map((game) => replay(readFileSync(game.logPath, 'utf8'), { allowOpen: true }).header)
    .sort((a, b) => (a.meta as any).arm.draw - (b.meta as any).arm.draw);

describe("a study's arms", () => {
  test("P-142: games are split between the arms as the weights say, across a restart; the headers name the arm, the study file's SHA-256 and the agent's version; the participants are never told them", async () => {
    const players: Player[] = [];
    // Two workers, three games each (gamesPerSession 3): a worker meets whichever arms are drawn.
    for (const pid of ['W1', 'W2']) {
      const token = await readyLeader(pid);
      for (let game = 0; game < 3; game++) {
        const leader = await play(token);
        players.push(leader);
        await lead(leader, game === 1);
      }
      expect((await call('GET', `/api/studies/${STUDY}/me`, undefined, token)).body.worker).toMatchObject({ step: 'done', games: { played: 3, completed: 3 } });
    }
    // Draws 0 to 5, two blocks of three: exactly 2 to 1.
    const six = headers();
    expect(six.map((header) => (header.meta as any).arm.draw)).toEqual([0, 1, 2, 3, 4, 5]);
    const armsOf = (list: typeof six) => list.map((header) => (header.meta as any).arm.id);
    expect(armsOf(six).filter((id) => id === HEURISTIC_ARM)).toHaveLength(4);
    expect(armsOf(six).filter((id) => id === LLM_ARM)).toHaveLength(2);
    expect(armsOf(six)).toEqual([0, 1, 2, 3, 4, 5].map((draw) => armOfDraw(STUDY, study.arms!, draw).id));
    // W1 played draws 0 to 2, one block: it met both arms.
    expect(six.slice(0, 3).map((header) => (header.meta as any).players.find((p: any) => p.role === 'leader').workerId)).toEqual(['W1', 'W1', 'W1']);
    expect(new Set(armsOf(six.slice(0, 3)))).toEqual(new Set([HEURISTIC_ARM, LLM_ARM]));

    // After a restart the draws go on where they were; a worker who leaves counts in its game's arm.
    await stop();
    await serve();
    const leaver = await play(await readyLeader('W3'));
    players.push(leaver);
    await leaver.room.leave(true);
    await waitFor(() => store.listGames().length === 7 && store.listGames().every((game) => game.endReason !== null), 'the abandoned game to end');
    const all = headers();
    const seventh = all[6].meta as any;
    expect(seventh.arm).toMatchObject({ id: armOfDraw(STUDY, study.arms!, 6).id, draw: 6 });
    const ends = new Map(store.listGames().map((game) => [game.gameId, game.endReason]));
    expect(ends.get(all[6].gameId)).toBe('abandoned');
    await waitFor(() => workers.armTotals(STUDY).reduce((sum, arm) => sum + arm.ended + arm.abandoned, 0) === 7, 'the workers store to record every end');
    const heuristicGames = armsOf(all).filter((id) => id === HEURISTIC_ARM).length;
    expect(workers.armTotals(STUDY)).toEqual([
      { arm: HEURISTIC_ARM, drawn: heuristicGames, games: heuristicGames, live: 0, ended: seventh.arm.id === HEURISTIC_ARM ? 4 : heuristicGames, abandoned: seventh.arm.id === HEURISTIC_ARM ? 1 : 0 },
      { arm: LLM_ARM, drawn: 7 - heuristicGames, games: 7 - heuristicGames, live: 0, ended: 2, abandoned: seventh.arm.id === LLM_ARM ? 1 : 0 },
    ].sort((a, b) => a.arm.localeCompare(b.arm)));

    // The admin page's overview has the same counts, by arm, in the study file's order.
    const overview = (await callJson(base, 'GET', '/api/studies', undefined, ADMIN)).body.studies[0];
    expect(overview.arms).toEqual(
      workers.armTotals(STUDY).map(({ arm, ...counts }) => ({ id: arm, agent: arm === LLM_ARM ? 'llm' : 'heuristic', weight: arm === LLM_ARM ? 1 : 2, share: arm === LLM_ARM ? 1 / 3 : 2 / 3, ...counts })),
    );

    // Each header names the study file it was played under, its arm (with its spec and settings:
    // never a key) and the agent that played, with the version it gave (an LLM agent's names its prompt).
    const fileSha256 = createHash('sha256').update(readFileSync(studyFile)).digest('hex');
    for (const header of all) {
      const meta = header.meta as any;
      expect(meta).toMatchObject({ study: STUDY, studyFileSha256: fileSha256 });
      const arm = study.arms!.find((candidate) => candidate.id === meta.arm.id)!;
      expect(meta.arm).toEqual({ id: arm.id, agent: arm.agent, weight: arm.weight, draw: meta.arm.draw, ...(arm.llm && { llm: arm.llm }) });
      expect(meta.agents.follower).toEqual(
        arm.agent === 'llm' ? { name: 'llm', version: expect.stringMatching(/^prompt [0-9a-f]{12}$/), spec: `llm ${STUB_MODEL} at ${stub.url}` } : { name: 'heuristic', spec: 'heuristic' },
      );
      expect(meta.players.find((p: any) => p.role === 'leader').workerId).toMatch(/^W[123]$/);
      expect(meta.players.find((p: any) => p.role === 'follower').kind).toBe('bot');
    }
    // The LLM arm's games have their call records, one file per game.
    const llmGames = all.filter((header) => (header.meta as any).arm.id === LLM_ARM).map((header) => `${header.gameId}.follower.llm.ndjson`);
    expect(readdirSync(join(dir, 'data', 'llm')).sort()).toEqual(llmGames.sort());
    expect(stub.chatRequests().length).toBeGreaterThan(0);

    // Nothing the participants received names an arm, an agent, the model or the study file's
    // hash: not the HTTP answers (the study's public parts and the seat reservation included), not one room message.
    await call('GET', `/api/studies/${STUDY}/public`);
    const seen = JSON.stringify([received, players.map((player) => player.messages)]);
    expect(players.every((player) => player.messages.some((m) => m.type === 'view'))).toBe(true);
    for (const secret of [HEURISTIC_ARM, LLM_ARM, 'heuristic', '"llm', STUB_MODEL, stub.url, '"arm"', 'weight', 'followerGaveUp', 'agentSeat', fileSha256, 'Sha256']) expect(seen).not.toContain(secret);
  });

  test('study report computes from the logs what a recomputation from their lines gives', async () => {
    // The games of the first test: six played to the end, one abandoned.
    const out = join(dir, 'report');
    const run = await cerealbar('study', 'report', '--study', studyFile, '--data', join(dir, 'data'), '--out', out, '--bootstrap', '2000');
    expect(run).toMatchObject({ status: 0, stderr: '' });
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));

    // The recomputation: each log's raw lines, and each LLM game's call records, counted by arm.
    type SeatFailures = { error: number; refused: number; late: number; markedDone: number };
    const expected = new Map<string, { scores: number[]; games: number; toEnd: number; abandoned: number; instructions: number; done: number; cancelled: number; positive: number; negative: number; records: number; failures: number; fallbacks: number; seat: SeatFailures }>();
    for (const file of readdirSync(join(dir, 'data', 'logs'))) {
      const lines = readFileSync(join(dir, 'data', 'logs', file), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
      const arm = lines[0].meta.arm.id as string;
      const figures = expected.get(arm) ?? { scores: [], games: 0, toEnd: 0, abandoned: 0, instructions: 0, done: 0, cancelled: 0, positive: 0, negative: 0, records: 0, failures: 0, fallbacks: 0, seat: { error: 0, refused: 0, late: 0, markedDone: 0 } };
      expected.set(arm, figures);
      const end = lines.find((line) => line.kind === 'end');
      const events = lines.filter((line) => line.kind === 'event');
      figures.games++;
      figures.scores.push(end.score);
      if (end.reason === 'turns-exhausted') figures.toEnd++;
      if (end.reason === 'abandoned') figures.abandoned++;
      figures.instructions += events.filter((event) => event.type === 'instruction').length;
      figures.done += events.filter((event) => event.type === 'done').length;
      figures.cancelled += events.reduce((sum, event) => sum + (event.outcome.cancelled?.length ?? 0), 0);
      figures.positive += events.filter((event) => event.type === 'feedback' && event.payload.signal === 'positive').length;
      figures.negative += events.filter((event) => event.type === 'feedback' && event.payload.signal === 'negative').length;
      for (const line of lines.filter((candidate) => candidate.kind === 'agentSeat' && candidate.role === 'follower')) figures.seat[line.type === 'markedDone' ? 'markedDone' : (line.reason as keyof SeatFailures)]++;
      const records = join(dir, 'data', 'llm', `${lines[0].gameId}.follower.llm.ndjson`);
      if (arm === LLM_ARM) {
        const calls = readFileSync(records, 'utf8').trim().split('\n').map((line) => JSON.parse(line)).filter((line) => line.kind === 'llm-call');
        figures.records += calls.length;
        figures.failures += calls.filter((call) => call.status !== 'ok').length;
        figures.fallbacks += calls.filter((call) => call.fallback !== null).length;
      } else {
        expect(existsSync(records)).toBe(false);
      }
    }
    // The scripted leaders gave feedback and cancelled, and the stub failed some calls: the figures are not all zero.
    const sum = (figure: 'positive' | 'negative' | 'cancelled' | 'failures' | 'instructions') => [...expected.values()].reduce((total, arm) => total + arm[figure], 0);
    for (const figure of ['positive', 'negative', 'cancelled', 'failures', 'instructions'] as const) expect(sum(figure)).toBeGreaterThan(0);

    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    expect(report.arms.map((arm: any) => arm.id)).toEqual([HEURISTIC_ARM, LLM_ARM]);
    expect(report.drawSource).toBe('worker store');
    for (const arm of report.arms) {
      const want = expected.get(arm.id)!;
      expect(arm).toMatchObject({
        games: want.games,
        ended: want.games,
        playedToEnd: want.toEnd,
        abandoned: want.abandoned,
        notEnded: 0,
        instructionsPerGame: want.instructions / want.games,
        followedShare: want.done / want.instructions,
        cancellationRate: want.cancelled / want.instructions,
        feedback: { positive: want.positive, negative: want.negative, negativePerPositive: want.positive === 0 ? null : want.negative / want.positive },
        agentFailures: want.seat,
        draws: workers.armTotals(STUDY).find((totals) => totals.arm === arm.id)!.drawn,
      });
      expect([...arm.scores].sort()).toEqual([...want.scores].sort());
      expect(arm.meanScore).toBeCloseTo(mean(want.scores), 10);
      expect(arm.scoreInterval).toEqual(bootstrapInterval(arm.scores, { ...DEFAULT_BOOTSTRAP, resamples: 2000 }));
      if (arm.id === LLM_ARM) {
        expect(arm.llm).toMatchObject({ records: want.records, failureRate: want.failures / want.records, fallbacks: want.fallbacks, gamesWithoutRecords: [] });
        expect(Object.values(arm.llm.failures).reduce((a: number, b) => a + (b as number), 0)).toBe(want.failures);
      } else {
        expect(arm.llm).toBeNull();
      }
    }
    const [first, second] = report.arms;
    expect(report.differences).toEqual([{ arm: LLM_ARM, minus: HEURISTIC_ARM, meanDifference: expect.any(Number), interval: { low: expect.any(Number), high: expect.any(Number) } }]);
    const difference = report.differences[0];
    expect(difference.meanDifference).toBeCloseTo(mean(expected.get(LLM_ARM)!.scores) - mean(expected.get(HEURISTIC_ARM)!.scores), 10);
    expect(difference.interval.low).toBeLessThanOrEqual(difference.meanDifference + 1e-9);
    expect(difference.interval.high).toBeGreaterThanOrEqual(difference.meanDifference - 1e-9);
    expect(difference.interval.high - difference.interval.low).toBeLessThanOrEqual(Math.max(...first.scores, ...second.scores) - Math.min(...first.scores, ...second.scores) + 1e-9);

    // The CSV holds the same figures; the page is whole and loads nothing.
    const csv = readFileSync(join(out, 'arms.csv'), 'utf8').trim().split('\n');
    expect(csv[0].split(',').slice(0, 4)).toEqual(['arm', 'agent', 'weight', 'games']);
    expect(csv.slice(1).map((line) => line.split(',').slice(0, 4))).toEqual(report.arms.map((arm: any) => [arm.id, arm.agent, String(arm.weight), String(arm.games)]));
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toContain('<svg');
    expect(html).not.toMatch(/<script|src=|href="http/);
    expect(run.stdout).toMatch(new RegExp(`${LLM_ARM} - ${HEURISTIC_ARM}: [+-]\\d`));
  });

  test("P-148: study report takes each arm's draws from the worker store: a draw after the last logged one, whose seat was never taken, never started in its arm", async () => {
    // W4 asks to play and never takes its seat: draw 7 has no game, and no log comes after it.
    const token = await readyLeader('W4');
    expect((await call('POST', `/api/studies/${STUDY}/play`, {}, token)).status).toBe(200);
    const totals = workers.armTotals(STUDY);
    expect(totals.reduce((sum, arm) => sum + arm.drawn, 0)).toBe(8);
    const out = join(dir, 'report-draws');
    expect(await cerealbar('study', 'report', '--study', studyFile, '--data', join(dir, 'data'), '--out', out, '--bootstrap', '200')).toMatchObject({ status: 0, stderr: '' });
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
    expect(report.drawSource).toBe('worker store');
    const lastArm = armOfDraw(STUDY, study.arms!, 7).id;
    for (const arm of report.arms) {
      expect(arm.draws).toBe(totals.find((candidate) => candidate.arm === arm.id)!.drawn);
      expect(arm.neverStarted).toEqual(arm.id === lastArm ? [7] : []);
      expect(arm.draws).toBe(arm.games + arm.neverStarted.length);
    }
  });

  test('study report refuses a study without arms', async () => {
    const plain = writeStudy(studyFolder(join(dir, 'plain')), validStudy());
    expect(await cerealbar('study', 'report', '--study', plain, '--data', join(dir, 'data'), '--out', join(dir, 'plain-report'))).toMatchObject({ status: 2, stderr: expect.stringMatching(/the study has no arms/) });
  });

  test("followers play with a leader arm at once; a follower is not promoted into the arms' role", async () => {
    const follower = await play(await readyLeader('F1', FOLLOWERS, 'follower'), FOLLOWERS);
    expect(follower.messages.find((m) => m.type === 'seat')!.payload.role).toBe('follower');
    await follower.room.leave(true);
    await waitFor(() => store.listGames({ pool: FOLLOWERS }).some((game) => game.endReason === 'abandoned'), 'the game to end');
    const [game] = store.listGames({ pool: FOLLOWERS });
    const meta = replay(readFileSync(game.logPath, 'utf8')).header.meta as any;
    expect(meta.arm).toEqual({ id: 'scripted-leader', agent: 'scripted', weight: 1, draw: 0 });
    // The header's study and arm never reach the follower participant's client.
    expect(meta.studyFileSha256).toBe(followers.fileSha256);
    expect(JSON.stringify(follower.messages)).not.toMatch(new RegExp(`${followers.fileSha256}|Sha256|scripted-leader|"arm"`));
    expect(meta.agents.leader).toMatchObject({ name: expect.any(String), spec: 'scripted' });

    // The researcher's promotion is refused: a leader would have no game in this study. Nothing changes.
    const waiting = await readyLeader('F2', FOLLOWERS, 'follower');
    const promotion = await callJson(base, 'POST', `/api/studies/${FOLLOWERS}/workers/F2/promote`, {}, ADMIN);
    expect(promotion).toMatchObject({ status: 409, body: { error: { code: 'ROLE_MISMATCH' } } });
    expect(promotion.body.error.message).toMatch(/agents play the leader/);
    expect((await call('GET', `/api/studies/${FOLLOWERS}/me`, undefined, waiting)).body.worker).toMatchObject({ role: 'follower', step: 'play' });
    const second = await play(waiting, FOLLOWERS);
    expect(second.messages.find((m) => m.type === 'seat')!.payload.role).toBe('follower');
    expect(workers.armTotals(FOLLOWERS)).toMatchObject([{ arm: 'scripted-leader', drawn: 2, games: 2 }]);
  });


  test("P-151: only admission.armWorkersPerAddressPerHour workers from one address start playing with the arms in an hour: the next is refused 429 in words on the play path, with no draw; those let in play on", async () => {
    const [first, second, third] = [await readyLeader('A1', LIMITED), await readyLeader('A2', LIMITED), await readyLeader('A3', LIMITED)];
    // Two ask to play and never take their seats.
    expect((await call('POST', `/api/studies/${LIMITED}/play`, {}, first)).status).toBe(200);
    expect((await call('POST', `/api/studies/${LIMITED}/play`, {}, second)).status).toBe(200);
    const refused = await callJson(base, 'POST', `/api/studies/${LIMITED}/play`, {}, third);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toEqual({
      code: 'TOO_MANY_NEW_WORKERS',
      message: 'too many new participants from this network started playing in this study in the past hour: try again in 60 min',
      retryAfterSeconds: expect.any(Number),
    });
    expect(refused.body.error.retryAfterSeconds).toBeGreaterThan(3590);
    expect(refused.headers.get('retry-after')).toBe(String(refused.body.error.retryAfterSeconds));
    expect(workers.armTotals(LIMITED)).toMatchObject([{ arm: 'limited-heuristic', drawn: 2 }]);
    // A worker let in asks again once its unused reservation has lapsed, and plays.
    await sleep((SEAT_RESERVATION_SECONDS + 1) * 1000);
    const player = await play(first, LIMITED);
    await player.room.leave(true);
    // Another address has its own count.
    expect((await callJson(base, 'POST', `/api/studies/${LIMITED}/play`, {}, third, undefined, { 'x-forwarded-for': '203.0.113.50' })).status).toBe(200);
    expect(workers.armTotals(LIMITED)).toMatchObject([{ arm: 'limited-heuristic', drawn: 3 }]);
  });
});
