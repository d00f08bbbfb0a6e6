/**
 * The nginx configuration in deploy/ as it is (only its ports changed) in front of two `cerealbar
 * serve` processes on Redis: the pages, the API and a whole join go through it, each player's
 * WebSocket reaching the process that holds its game by that process's path.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { freePort, startNginx, startRedis, type RunningService } from '../../bench/services';
import { createPrivate, join, SERVE_ADMIN_TOKEN, startServeProcess, waitFor, type Player, type ServeProcess } from '../server/harness';

jest.setTimeout(60_000);

const SITE = readFileSync(joinPath(__dirname, '..', '..', 'deploy', 'nginx-cerealbar.conf'), 'utf8');

let redis: RunningService;
let nginx: RunningService;
let dataDir: string;
const processes: ServeProcess[] = [];
const players: Player[] = [];

beforeAll(async () => {
  redis = await startRedis();
  dataDir = mkdtempSync(joinPath(tmpdir(), 'cerealbar-nginx-data-'));
  const [front, p1, p2] = [await freePort(), await freePort(), await freePort()];
  for (const [port, path] of [
    [p1, 'p1'],
    [p2, 'p2'],
  ] as const) {
    processes.push(await startServeProcess(dataDir, ['--port', String(port), '--redis', redis.url, '--public-address', `127.0.0.1:${front}/${path}`]));
  }
  // After the processes: nginx counts a process that does not answer as down for a few seconds.
  const site = SITE.replace('listen 80;', `listen 127.0.0.1:${front};`).replaceAll(':2567', `:${p1}`).replaceAll(':2568', `:${p2}`);
  nginx = await startNginx(site, front);
});

afterAll(async () => {
  await Promise.all(players.map((player) => Promise.race([player.room.leave(true).catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 1000))])));
  for (const serve of processes) serve.child.kill('SIGINT');
  await Promise.all(processes.map((serve) => new Promise((resolve) => (serve.child.exitCode !== null ? resolve(null) : serve.child.once('exit', resolve)))));
  await nginx?.stop();
  await redis?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('P-109: through nginx: the pages and the API answer, and quick-play pairs and a private game play on both processes', async () => {
  const front = nginx.url;
  expect((await fetch(`${front}/healthz`)).status).toBe(200);
  expect((await fetch(`${front}/api/games`, { headers: { authorization: `Bearer ${SERVE_ADMIN_TOKEN}` } })).status).toBe(200);
  expect((await fetch(`${front}/api/games`)).status).toBe(401);

  // Six pairs: the least-loaded process gets each new game, so both hold games.
  const pairs: Player[][] = [];
  for (let i = 0; i < 6; i++) pairs.push([await join(front, { role: 'leader', pool: `via-nginx-${i}` }), await join(front, { role: 'follower', pool: `via-nginx-${i}` })]);
  const { creator, code } = await createPrivate(front, { role: 'leader' });
  pairs.push([creator, await join(front, { code })]);
  players.push(...pairs.flat());
  await waitFor(() => pairs.flat().every((player) => player.phase === 'playing'), 'every game to start through nginx', 10_000);
  for (const [leader, follower] of pairs) expect(follower.room.roomId).toBe(leader.room.roomId);

  // The players' sockets went through both processes' paths: each process runs games.
  const running = await Promise.all(
    processes.map(async (serve) => {
      const text = await (await fetch(`${serve.url}/metrics`, { headers: { authorization: `Bearer ${SERVE_ADMIN_TOKEN}` } })).text();
      return Number(/^cerealbar_games_running (\d+)/m.exec(text)![1]);
    }),
  );
  expect(running[0] + running[1]).toBe(7);
  expect(Math.min(...running)).toBeGreaterThan(0);

  // A game goes on through the proxy.
  const [leader] = pairs[0]!;
  leader.act({ type: 'instruction', text: 'through the proxy' });
  await waitFor(() => leader.view!.instructions.length === 1, 'the instruction to come back through nginx');
});
