/**
 * The rules each game is played by, on `cerealbar serve` as a real process: quick play by serve's
 * --rules and its options, a study's games by its study file's `game`; over WebSockets the leader
 * gives live feedback and cancels, and each log's header records the config its game was played by
 * and names its rules profile, which `dataset export` and `eval` label the game with.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@colyseus/sdk';
import { makeConfig, profileConfig, type GameConfig } from '../../shared/engine/config';
import { parseLog, replay } from '../../shared/log/replay';
import { setPath, studyFolder, validStudy, writeStudy } from '../study/fixtures';
import { api, preparedWorker } from '../browser/studyWorkers';
import { cerealbar } from '../cli/run';
import { SERVE_ADMIN_TOKEN, startGame, startServeProcess, track, waitFor, type Player, type ServeProcess } from './harness';

jest.setTimeout(60_000);

let dataDir: string;
let serve: ServeProcess | undefined;

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'cerealbar-rules-per-game-'));
});

afterEach(async () => {
  if (serve && serve.child.exitCode === null) {
    const exited = new Promise((resolve) => serve!.child.once('exit', resolve));
    serve.child.kill('SIGKILL');
    await exited;
  }
  serve = undefined;
  rmSync(dataDir, { recursive: true, force: true });
});

/** Starts serve with `options` and waits until it has said everything it says at start (the admin token comes last). */
async function startServe(options: string[]): Promise<ServeProcess> {
  serve = await startServeProcess(dataDir, options);
  await waitFor(() => serve!.output().includes('Admin token'), 'the lines serve prints at start');
  return serve;
}

/** Stops serve with SIGTERM (no draining): every game ends and its log is closed. */
async function stopServe(): Promise<void> {
  const exited = new Promise((resolve) => serve!.child.once('exit', resolve));
  serve!.child.kill('SIGTERM');
  expect(await exited).toBe(0);
}

/**
 * The leader writes two instructions and ends its turn; the follower takes a step; the leader
 * sends negative feedback and cancels. Both options must be on: the follower's turn ends with
 * both instructions cancelled.
 */
async function feedbackAndCancel(leader: Player, follower: Player): Promise<void> {
  leader.act({ type: 'instruction', text: 'go to the red star' });
  leader.act({ type: 'instruction', text: 'then the blue heart' });
  leader.act({ type: 'endTurn' });
  await waitFor(() => follower.view?.turn.role === 'follower', "the follower's turn");
  expect(leader.view!.legal).toMatchObject({ feedback: true, cancel: true });
  follower.act({ type: 'move', move: 'RL' });
  await waitFor(() => follower.view?.turn.stepsLeft === follower.view!.config.followerSteps - 1, "the follower's step");
  leader.act({ type: 'feedback', signal: 'negative' });
  leader.act({ type: 'cancel' });
  // Each player's view comes in its own message: the follower's may arrive after the leader's.
  await waitFor(() => leader.view?.turn.role === 'leader' && follower.view?.turn.role === 'leader', "the leader's turn after the cancel, in both views");
  expect(leader.view!.instructions.map((instruction) => instruction.status)).toEqual(['cancelled', 'cancelled']);
  expect(follower.view!.instructions.map((instruction) => instruction.status)).toEqual(['cancelled']);
  expect([...leader.errors(), ...follower.errors()]).toEqual([]);
}

/** Two workers of the study pilot-1, taken through its steps, in a game of the study: its leader and its follower. */
async function playStudyGame(): Promise<[Player, Player]> {
  const prolific = (pid: string) => ({ PROLIFIC_PID: pid, STUDY_ID: 'ST', SESSION_ID: `S-${pid}` });
  const tokens = [
    await preparedWorker(serve!.url, 'pilot-1', prolific('L1'), { promote: true, adminToken: SERVE_ADMIN_TOKEN }),
    await preparedWorker(serve!.url, 'pilot-1', prolific('F1')),
  ];
  const seated = await Promise.all(tokens.map(async (token) => track(await new Client(serve!.url).consumeSeatReservation((await api(serve!.url, 'studies/pilot-1/play', {}, token)).reservation))));
  await waitFor(() => seated.every((player) => player.phase === 'playing'), 'the study game to start');
  return seated[0].view!.role === 'leader' ? [seated[0], seated[1]] : [seated[1], seated[0]];
}

interface PlayedLog {
  readonly profile: unknown;
  readonly config: GameConfig;
  readonly events: string[];
  readonly study: unknown;
}

/** The log of each game, by the pool its index gives it: its header's rules profile and config, and its events' types. */
function logsByPool(): Map<string, PlayedLog> {
  const logs = new Map<string, PlayedLog>();
  for (const file of readdirSync(join(dataDir, 'logs'))) {
    const text = readFileSync(join(dataDir, 'logs', file), 'utf8');
    const { header } = replay(text); // the log replays: its header is all replay needs
    const events = parseLog(text).events.map(({ event }) => event.type);
    logs.set(header.meta.pool as string, { profile: header.meta.profile, config: header.config, events, study: header.meta.study });
  }
  return logs;
}

test("R-65: quick play by serve's --rules and options, a study's games by its study file's game, each log's header with its config", async () => {
  const study = validStudy();
  setPath(study, 'game', { rules: 'cb2' });
  setPath(study, 'time.leaderTurnSeconds', 500);
  setPath(study, 'time.followerTurnSeconds', 400);
  const studyFile = writeStudy(studyFolder(), study);
  serve = await startServe(['--live-feedback', '--cancel-instructions', '--leader-seconds', '600', '--follower-seconds', '600', '--drain-seconds', '0', '--study', studyFile]);
  expect(serve.output()).toContain("Rules of quick play: cerealbar (live feedback on, cancelling on; a leader's turn 600 s, a follower's 600 s)");
  expect(serve.output()).toContain("its rules: cb2 (live feedback on, cancelling on; a leader's turn 500 s, a follower's 400 s)");

  const quick = await startGame(serve.url);
  await feedbackAndCancel(quick.leader, quick.follower);

  const [studyLeader, studyFollower] = await playStudyGame();
  await feedbackAndCancel(studyLeader, studyFollower);
  for (const player of [quick.leader, quick.follower, studyLeader, studyFollower]) player.room.reconnection.enabled = false;
  await stopServe();

  const logs = logsByPool();
  expect(logs.get('default')).toEqual({
    profile: 'cerealbar',
    config: makeConfig({ liveFeedback: true, cancelInstructions: true, turnSeconds: { leader: 600, follower: 600 } }),
    events: ['instruction', 'instruction', 'endTurn', 'move', 'feedback', 'cancel'],
    study: undefined,
  });
  expect(logs.get('pilot-1')).toEqual({
    profile: 'cb2',
    config: profileConfig('cb2', { turnSeconds: { leader: 500, follower: 400 } }),
    events: ['instruction', 'instruction', 'endTurn', 'move', 'feedback', 'cancel'],
    study: 'pilot-1',
  });
});

test("R-65: serve's --no- options turn a profile's options off; a study without a game in its study file plays by quick play's rules", async () => {
  serve = await startServe(['--rules', 'cb2', '--no-cancel-instructions', '--drain-seconds', '0', '--study', writeStudy(studyFolder(), validStudy())]);
  expect(serve.output()).toContain("Rules of quick play: cb2 (live feedback on, cancelling off; a leader's turn 60 s, a follower's 180 s)");
  expect(serve.output()).toContain("its rules: quick play's, cb2 (live feedback on, cancelling off; a leader's turn 60 s, a follower's 180 s)");
  const { leader, follower } = await startGame(serve.url);
  leader.act({ type: 'instruction', text: 'go' });
  leader.act({ type: 'endTurn' });
  await waitFor(() => follower.view?.turn.role === 'follower', "the follower's turn");
  expect(leader.view!.legal).toMatchObject({ feedback: true, cancel: false });
  leader.act({ type: 'cancel' });
  await waitFor(() => leader.errors().length === 1, 'the refusal');
  expect(leader.errors()[0]).toMatchObject({ code: 'CANCEL_OFF' });
  const studyGame = await playStudyGame();
  for (const player of [leader, follower, ...studyGame]) player.room.reconnection.enabled = false;
  await stopServe();
  const logs = logsByPool();
  expect(logs.get('default')).toMatchObject({ profile: 'cb2', config: profileConfig('cb2', { cancelInstructions: false }) });
  expect(logs.get('pilot-1')).toMatchObject({ profile: 'cb2', config: profileConfig('cb2', { cancelInstructions: false }) });
});

test("P-141: a game served under serve --rules cb2 names cb2 in its log header, and dataset export and eval over its log label it cb2", async () => {
  serve = await startServe(['--rules', 'cb2', '--drain-seconds', '0']);
  const { leader, follower } = await startGame(serve.url);
  leader.act({ type: 'instruction', text: 'stay where you are' });
  leader.act({ type: 'endTurn' });
  await waitFor(() => follower.view?.turn.role === 'follower', "the follower's turn");
  follower.act({ type: 'done' });
  await waitFor(() => leader.view?.turn.role === 'leader', "the leader's next turn");
  for (const player of [leader, follower]) player.room.reconnection.enabled = false;
  await stopServe();
  expect(logsByPool().get('default')!.profile).toBe('cb2');

  const exported = join(dataDir, 'dataset');
  expect(await cerealbar('dataset', 'export', '--data', dataDir, '--out', exported)).toMatchObject({ status: 0 });
  const games = readdirSync(join(exported, 'games')).flatMap((split) => readFileSync(join(exported, 'games', split), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line)));
  expect(games.map((game) => game.profile)).toEqual(['cb2']);

  const report = join(dataDir, 'eval.json');
  expect(await cerealbar('eval', '--agent', 'heuristic', '--logs', join(dataDir, 'logs'), '--out', report)).toMatchObject({ status: 0 });
  const episodes = JSON.parse(readFileSync(report, 'utf8')).episodes as { profile: string }[];
  expect(episodes.length).toBeGreaterThan(0);
  expect(new Set(episodes.map((episode) => episode.profile))).toEqual(new Set(['cb2']));
});
