/**
 * Two `cerealbar serve` processes sharing one Redis and one data directory, as players and the
 * researcher meet them: quick play and private codes across processes, one game list, and a drain
 * that hands new players to the other process while the game in play goes on.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { Client } from '@colyseus/sdk';
import { createPrivate, join, SERVE_ADMIN_TOKEN, startServeProcess, track, waitFor, type Player, type ServeProcess } from '../server/harness';
import { Redis } from 'ioredis';
import { freePort, startRedis, type RunningService } from '../../bench/services';
import { api, preparedWorker } from '../browser/studyWorkers';
import { setPath, studyFolder, validStudy, writeStudy } from '../study/fixtures';

jest.setTimeout(120_000);

let redis: RunningService;
/** To read the shared room listings, as Colyseus keeps them. */
let redisClient: Redis;
let dataDir: string;
/** Every process runs this study (a study worker's requests may reach any of them). */
let studyFile: string;
const STUDY = 'pilot-1';
const processes: ServeProcess[] = [];
const players: Player[] = [];

/** A `serve` process of the cluster, on its own port, which is also its public address. */
async function startClusterProcess(): Promise<ServeProcess> {
  const port = await freePort();
  const serve = await startServeProcess(dataDir, [
    ...['--port', String(port), '--redis', redis.url, '--public-address', `127.0.0.1:${port}`],
    ...['--study', studyFile],
  ]);
  processes.push(serve);
  return serve;
}

async function joinTracked(url: string, options: Record<string, unknown>): Promise<Player> {
  const player = await join(url, options);
  players.push(player);
  return player;
}

async function gamesRunning(serve: ServeProcess): Promise<number> {
  const text = await (await fetch(`${serve.url}/metrics`, { headers: { authorization: `Bearer ${SERVE_ADMIN_TOKEN}` } })).text();
  return Number(/^cerealbar_games_running (\d+)/m.exec(text)![1]);
}

function exitOf(serve: ServeProcess): Promise<number | null> {
  if (serve.child.exitCode !== null || serve.child.signalCode !== null) return Promise.resolve(serve.child.exitCode);
  return new Promise((resolve) => serve.child.once('exit', (code) => resolve(code)));
}

beforeAll(async () => {
  redis = await startRedis();
  redisClient = new Redis(redis.url);
  dataDir = mkdtempSync(joinPath(tmpdir(), 'cerealbar-cluster-'));
  studyFile = writeStudy(studyFolder(joinPath(dataDir, 'study')), setPath(validStudy(), 'id', STUDY));
});

afterEach(async () => {
  // A player of a process that has stopped never hears its leave confirmed.
  const left = (player: Player) => Promise.race([player.room.leave(true).catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 1000))]);
  await Promise.all(players.splice(0).map(left));
});

afterAll(async () => {
  for (const serve of processes) if (serve.child.exitCode === null && serve.child.signalCode === null) serve.child.kill('SIGINT');
  await Promise.all(processes.map(exitOf));
  redisClient?.disconnect();
  await redis?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('P-109: 20 quick-play pairs joining at once, alternately through either process, make 20 games of two; both processes list them', async () => {
  const [a, b] = [await startClusterProcess(), await startClusterProcess()];
  const urls = [a.url, b.url];
  const leaders = Array.from({ length: 20 }, (_, i) => joinTracked(urls[i % 2], { role: 'leader', pool: 'pairs' }));
  const followers = Array.from({ length: 20 }, (_, i) => joinTracked(urls[(i + 1) % 2], { role: 'follower', pool: 'pairs' }));
  const joined = await Promise.all([...leaders, ...followers]);
  await waitFor(() => joined.every((player) => player.phase === 'playing'), 'every game to start', 20_000);
  const games = new Map<string, string[]>();
  for (const player of joined) games.set(player.room.roomId, [...(games.get(player.room.roomId) ?? []), player.view!.role].sort());
  expect(games.size).toBe(20);
  expect([...games.values()].every((roles) => roles.join() === 'follower,leader')).toBe(true);
  // The games were made on both processes, and the researcher sees all of them through either.
  const running = await Promise.all([a, b].map(gamesRunning));
  expect(running[0] + running[1]).toBe(20);
  expect(Math.min(...running)).toBeGreaterThan(0);
  for (const serve of [a, b]) {
    const list = await (await fetch(`${serve.url}/api/games?pool=pairs`, { headers: { authorization: `Bearer ${SERVE_ADMIN_TOKEN}` } })).json();
    expect(list.games.filter((game: { endedAt: string | null }) => game.endedAt === null)).toHaveLength(20);
  }
});

test('P-109: a leader and a follower arriving at the same moment in an empty pool, through two processes, meet in one game (20 pools)', async () => {
  const [a, b] = processes;
  const pairs = await Promise.all(
    Array.from({ length: 20 }, (_, i) => Promise.all([joinTracked(a.url, { role: 'leader', pool: `empty-${i}` }), joinTracked(b.url, { role: 'follower', pool: `empty-${i}` })])),
  );
  await waitFor(() => pairs.flat().every((player) => player.phase === 'playing'), 'every pair to play', 10_000);
  for (const [leader, follower] of pairs) expect(follower.room.roomId).toBe(leader.room.roomId);
});

test('P-109: a private game made through one process is joined by its code through the other; a wrong code is refused there', async () => {
  const [a, b] = processes;
  const { creator, code } = await createPrivate(a.url, { role: 'leader' });
  players.push(creator);
  await expect(join(b.url, { code: code === 'AAAAA' ? 'BBBBB' : 'AAAAA' })).rejects.toThrow(/no game with this code/);
  const partner = await joinTracked(b.url, { code });
  await waitFor(() => creator.phase === 'playing' && partner.phase === 'playing', 'the private game to start');
  expect(partner.room.roomId).toBe(creator.room.roomId);
  expect(partner.view!.role).toBe('follower');
});

test("P-109: a game's listing is written to Redis once per step: the partner's seat reserved, then seated with the game's start", async () => {
  const [a, b] = processes;
  const { creator, code } = await createPrivate(a.url, { role: 'leader' });
  players.push(creator);
  const roomId = creator.room.roomId;
  const monitor = await redisClient.monitor(); // a connection of its own, closed below
  const written: string[] = [];
  monitor.on('monitor', (_time: string, args: string[]) => {
    if (args[0]?.toLowerCase() === 'hset' && args[1] === 'roomcaches' && args[2] === roomId) written.push(args[3]!);
  });
  try {
    const partner = await joinTracked(b.url, { code });
    await waitFor(() => creator.phase === 'playing' && partner.phase === 'playing', 'the private game to start');
    await new Promise((resolve) => setTimeout(resolve, 200)); // a write still on its way
    // Each write holds every change of its step, as the room holds them.
    expect(written.map((listing) => JSON.parse(listing))).toEqual([
      expect.objectContaining({ clients: 2, locked: true, metadata: expect.objectContaining({ phase: 'waiting', leaderOpen: false, followerOpen: false }) }),
      expect.objectContaining({ clients: 2, locked: true, metadata: expect.objectContaining({ phase: 'playing', leaderOpen: false, followerOpen: false }) }),
    ]);
    expect(await redisClient.hget('roomcaches', roomId)).toBe(written[1]);
  } finally {
    monitor.disconnect();
  }
});

test("P-20: a private game waiting for its partner is told its place in the queue each second without reading every game's listing", async () => {
  const [a] = processes;
  // Every command Redis runs, as it runs them: the listings are all read with HGETALL roomcaches.
  const monitor = await redisClient.monitor(); // a connection of its own, closed below
  const allListingsRead: string[] = [];
  monitor.on('monitor', (_time: string, args: string[]) => {
    if (args[0]?.toLowerCase() === 'hgetall' && args[1] === 'roomcaches') allListingsRead.push(args.join(' '));
  });
  try {
    const { creator } = await createPrivate(a.url, { role: 'leader' });
    players.push(creator);
    await waitFor(() => creator.messages.some((m) => m.type === 'queue'), 'the place in the queue');
    expect(creator.messages.find((m) => m.type === 'queue')!.payload).toEqual({ position: 1, waiting: 1 });
    // The room checks its place every second while it waits.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(allListingsRead).toEqual([]);
  } finally {
    monitor.disconnect();
  }
});

test('P-109: a dropped player reconnects to its seat through the other process; a scripted-follower game is made through either', async () => {
  const [a, b] = processes;
  const leader = await joinTracked(a.url, { role: 'leader', pool: 'reconnect' });
  const follower = await joinTracked(b.url, { role: 'follower', pool: 'reconnect' });
  await waitFor(() => leader.phase === 'playing' && follower.phase === 'playing', 'the game to start');
  follower.room.reconnection.enabled = false;
  const token = follower.room.reconnectionToken;
  follower.room.connection.close(4999, 'test drop');
  await waitFor(() => leader.view!.partnerConnected === false, 'the follower to show as disconnected');
  const back = track(await new Client(a.url).reconnect(token));
  players.push(back);
  await waitFor(() => back.phase === 'playing' && leader.view!.partnerConnected === true, 'the follower to be back in its seat');
  expect(back.room.roomId).toBe(leader.room.roomId);
  expect(back.view!.role).toBe('follower');

  for (const serve of [a, b]) {
    const withBot = await joinTracked(serve.url, { role: 'leader', botFollower: true });
    await waitFor(() => withBot.phase === 'playing', 'the game with the scripted follower to start');
  }
});

test("P-149: one player's games with the agent partner are counted across processes: joins through either, one after another, seat 2 and are refused 429 beyond", async () => {
  const [a, b] = processes;
  const outcomes: (Player | number)[] = [];
  for (let i = 0; i < 6; i++) {
    outcomes.push(await joinTracked([a, b][i % 2].url, { role: 'leader', botFollower: true }).catch((error: { code: number }) => error.code));
  }
  expect(outcomes.filter((outcome) => typeof outcome !== 'number')).toHaveLength(2);
  expect(outcomes.filter((outcome) => typeof outcome === 'number')).toEqual([429, 429, 429, 429]);
});

test("P-109: a study across processes: each worker's steps go to either process, both ask to play at once through different ones, and the game's end reaches them through either", async () => {
  const [a, b] = processes;
  const urls = [a.url, b.url];
  const ids = (pid: string) => ({ PROLIFIC_PID: pid, STUDY_ID: 'ST', SESSION_ID: `S-${pid}` });
  const leaderToken = await preparedWorker(urls, STUDY, ids('L1'), { promote: true, adminToken: SERVE_ADMIN_TOKEN });
  const followerToken = await preparedWorker([b.url, a.url], STUDY, ids('F1'));
  const asked = await Promise.all([api(a.url, `studies/${STUDY}/play`, {}, leaderToken), api(b.url, `studies/${STUDY}/play`, {}, followerToken)]);
  // Each takes its seat through the process it asked; the reservation names the process of the room.
  const [leader, follower] = await Promise.all(asked.map(async ({ reservation }, i) => track(await new Client(urls[i]).consumeSeatReservation(reservation))));
  players.push(leader, follower);
  await waitFor(() => leader.phase === 'playing' && follower.phase === 'playing', 'the study game to start');
  expect(leader.room.roomId).toBe(follower.room.roomId);
  expect([leader.view!.role, follower.view!.role]).toEqual(['leader', 'follower']);
  // A second tab of the leader's, through the other process, gets no second seat.
  await expect(api(b.url, `studies/${STUDY}/play`, {}, leaderToken)).rejects.toThrow(/409 .*ALREADY_SEATED/);

  await leader.room.leave(true);
  const completion = async (url: string) => (await api(url, `studies/${STUDY}/me`, undefined, followerToken)).worker.completion;
  const deadline = Date.now() + 5000;
  while ((await completion(a.url)) === null && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  for (const url of urls) {
    expect(await completion(url)).toMatchObject({ outcome: 'partnerLeft', code: 'CLEFT' });
    const { studies } = await api(url, 'studies', undefined, SERVE_ADMIN_TOKEN);
    expect(studies.find((study: { id: string }) => study.id === STUDY).games).toMatchObject({ games: 1, live: 0 });
  }
});

test('P-110: SIGTERM: /readyz answers 503 at once, the game in play goes on and ends, new players are seated by the other process, then it exits 0', async () => {
  const [a, b] = processes;
  const { creator: leader, code } = await createPrivate(a.url, { role: 'leader', pool: 'drain' });
  players.push(leader);
  const follower = await joinTracked(a.url, { code });
  await waitFor(() => leader.phase === 'playing' && follower.phase === 'playing', 'the game to start');
  // The process that holds the game (the earlier tests' games have ended) is told to stop.
  let running = [0, 0];
  const deadline = Date.now() + 5000;
  while ((running = await Promise.all([a, b].map(gamesRunning))).join() !== '1,0' && running.join() !== '0,1' && Date.now() < deadline);
  expect(running[0] + running[1]).toBe(1);
  const [holder, other] = running[0] === 1 ? [a, b] : [b, a];
  holder.child.kill('SIGTERM');
  const signalled = Date.now();
  await waitFor(() => /SIGTERM: draining/.test(holder.output()), 'the drain to start', 1000);
  const ready = await fetch(`${holder.url}/readyz`);
  expect(ready.status).toBe(503);
  expect(Date.now() - signalled).toBeLessThan(1000);
  expect((await fetch(`${other.url}/readyz`)).status).toBe(200);

  // New players, through either process, get a game on the other one.
  const newLeader = await joinTracked(holder.url, { role: 'leader', pool: 'after-drain' });
  const newFollower = await joinTracked(other.url, { role: 'follower', pool: 'after-drain' });
  await waitFor(() => newLeader.phase === 'playing' && newFollower.phase === 'playing', 'the new game to start');
  expect(newLeader.room.roomId).toBe(newFollower.room.roomId);

  // The game in play goes on, then ends by itself; the process exits 0 once it has.
  leader.act({ type: 'instruction', text: 'go to the red cards' });
  await waitFor(() => leader.view!.instructions.length === 1, 'the instruction to be accepted');
  expect(holder.child.exitCode).toBeNull();
  await follower.room.leave(true);
  await waitFor(() => leader.phase === 'ended', 'the game to end');
  expect(await exitOf(holder)).toBe(0);
  const list = await (await fetch(`${other.url}/api/games?pool=drain`, { headers: { authorization: `Bearer ${SERVE_ADMIN_TOKEN}` } })).json();
  expect(list.games.map((game: { endReason: string }) => game.endReason)).toEqual(['abandoned']);
});

test("P-111: a process killed with SIGKILL: quick play through the other is seated at once, and the dead process's rooms leave the listings within seconds", async () => {
  const survivor = processes.find((serve) => serve.child.exitCode === null)!;
  const listed = async () => Object.values(await redisClient.hgetall('roomcaches')).map((json) => JSON.parse(json) as { publicAddress?: string });
  const onProcess = async (serve: ServeProcess) => (await listed()).filter((room) => room.publicAddress === new URL(serve.url).host).length;
  for (const deadline = Date.now() + 5000; (await onProcess(survivor)) > 0; await new Promise((resolve) => setTimeout(resolve, 50))) {
    if (Date.now() > deadline) throw new Error("the earlier tests' rooms are still listed after 5 s");
  }
  const doomed = await startClusterProcess();
  // Leaders waiting for a partner, on both processes: a new room goes to the process with fewer,
  // and a process that has just started is one of them at once (of the first two rooms, one is its).
  const waiting: Player[] = [];
  while (waiting.length < 4) {
    const leader = await joinTracked(survivor.url, { role: 'leader', pool: 'crash' });
    waiting.push(leader);
    await waitFor(() => leader.messages.some((m) => m.type === 'seat'), 'the leader to be seated');
    if (waiting.length === 2) expect(await onProcess(doomed)).toBe(1);
  }
  const onDoomed = await onProcess(doomed);
  expect(onDoomed).toBeGreaterThan(0);
  expect(onDoomed).toBeLessThan(waiting.length);
  // Games in play until the doomed process holds one (a new room goes to the process with fewer).
  let made = 0;
  const codes: string[] = [];
  while ((await gamesRunning(doomed)) === 0 && made < 6) {
    const { creator, code } = await createPrivate(survivor.url, { role: 'leader', pool: 'crash-games' });
    codes.push(code);
    const partner = await joinTracked(survivor.url, { code });
    players.push(creator);
    await waitFor(() => creator.phase === 'playing' && partner.phase === 'playing', 'the game to start');
    made++;
  }
  const doomedGames = await gamesRunning(doomed);
  expect(doomedGames).toBeGreaterThan(0);

  doomed.child.kill('SIGKILL');
  await exitOf(doomed);
  const killed = Date.now();
  // As many followers: each is seated at once, never sent to the dead process; those who find a live leader play.
  const followers: Player[] = [];
  for (let i = 0; i < waiting.length; i++) {
    const start = Date.now();
    followers.push(await joinTracked(survivor.url, { role: 'follower', pool: 'crash' }));
    expect(Date.now() - start).toBeLessThan(1000);
  }
  await waitFor(() => followers.filter((follower) => follower.phase === 'playing').length === waiting.length - onDoomed, 'the live leaders to get their followers');
  const deadline = Date.now() + 10_000;
  while ((await onProcess(doomed)) > 0) {
    if (Date.now() > deadline) throw new Error('the dead process\'s rooms are still listed after 10 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const goneAfter = Date.now() - killed;
  process.stdout.write(`the killed process's rooms left the listings ${goneAfter} ms after it died\n`);
  expect(goneAfter).toBeLessThan(5000);
  // The dead games' codes find nothing, and looking them up drops them from the index of codes.
  for (const code of codes) await expect(join(survivor.url, { code })).rejects.toThrow(/no game with this code/);
  const indexed = await Promise.all(codes.map((code) => redisClient.hget('cerealbar:codes', code)));
  expect(indexed.filter((roomId) => roomId !== null)).toHaveLength(made - doomedGames);

  // Its game in play is closed in the shared data directory by the live process (P-112), the other goes on.
  const games = async () =>
    (await (await fetch(`${survivor.url}/api/games?pool=crash-games`, { headers: { authorization: `Bearer ${SERVE_ADMIN_TOKEN}` } })).json()).games as { endReason: string | null }[];
  const closedBy = Date.now() + 10_000;
  while ((await games()).every((game) => game.endReason === null)) {
    if (Date.now() > closedBy) throw new Error("the dead process's game was not closed within 10 s");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  process.stdout.write(`the killed process's game was closed ${Date.now() - killed} ms after it died\n`);
  await new Promise((resolve) => setTimeout(resolve, 3000)); // the next checks close nothing more
  const reasons = (await games()).map((game) => game.endReason);
  expect(reasons.filter((reason) => reason === 'interrupted')).toHaveLength(doomedGames);
  expect(reasons.filter((reason) => reason === null)).toHaveLength(made - doomedGames);
});
