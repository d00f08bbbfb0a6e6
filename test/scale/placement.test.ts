/**
 * Where new games go with several processes (P-110, P-153): on the emptier process, never on one
 * without room, and refused as busy (503, Retry-After) only when no process has room.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { BUSY_MESSAGE } from '../../server/admission';
import { BUSY_RETRY_AFTER_SECONDS } from '../../shared/protocol/messages';
import { freePort, startRedis, type RunningService } from '../../bench/services';
import { createPrivate, SERVE_ADMIN_TOKEN, sleep, startServeProcess, type Player, type ServeProcess } from '../server/harness';

jest.setTimeout(120_000);

let redis: RunningService;
let dataDir: string;
const processes: ServeProcess[] = [];
const players: Player[] = [];

async function startClusterProcess(options: readonly string[] = []): Promise<ServeProcess> {
  const port = await freePort();
  const serve = await startServeProcess(dataDir, ['--port', String(port), '--redis', redis.url, '--public-address', `127.0.0.1:${port}`, ...options]);
  processes.push(serve);
  return serve;
}

async function playersConnected(serve: ServeProcess): Promise<number> {
  const text = await (await fetch(`${serve.url}/metrics`, { headers: { authorization: `Bearer ${SERVE_ADMIN_TOKEN}` } })).text();
  return Number(/^cerealbar_players_connected (\d+)/m.exec(text)![1]);
}

/** A new private game asked for through `serve`, its creator kept for the end of the test. */
async function newGame(serve: ServeProcess): Promise<void> {
  players.push((await createPrivate(serve.url, { role: 'leader' })).creator);
}

async function stopAll(): Promise<void> {
  const left = (player: Player) => Promise.race([player.room.leave(true).catch(() => undefined), sleep(1000)]);
  await Promise.all(players.splice(0).map(left));
  const exits = processes.splice(0).map((serve) => {
    if (serve.child.exitCode !== null) return Promise.resolve();
    serve.child.kill('SIGINT');
    return new Promise((resolve) => serve.child.once('exit', resolve));
  });
  await Promise.all(exits);
}

beforeAll(async () => {
  redis = await startRedis();
  dataDir = mkdtempSync(joinPath(tmpdir(), 'cerealbar-placement-'));
});

afterEach(stopAll);

afterAll(async () => {
  await redis?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

test('P-110: new games asked for through a process with 3 games go to the empty one', async () => {
  const a = await startClusterProcess();
  for (let i = 0; i < 3; i++) await newGame(a);
  const b = await startClusterProcess();
  await sleep(1500); // the processes' shared counts renewed
  for (let i = 0; i < 3; i++) await newGame(a);
  expect([await playersConnected(a), await playersConnected(b)]).toEqual([3, 3]);
});

test('P-153: a process without room places new games on one with room; with no room anywhere they are refused as busy', async () => {
  const a = await startClusterProcess(['--max-games', '1']);
  const b = await startClusterProcess(['--max-games', '1']);
  await newGame(a);
  await sleep(1000); // its busy state in its heartbeat
  await newGame(a);
  expect([await playersConnected(a), await playersConnected(b)]).toEqual([1, 1]);
  await sleep(1000);
  for (const serve of [a, b]) {
    const refused = await fetch(`${serve.url}/matchmake/joinOrCreate/cerealbar`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ private: true }) });
    expect([refused.status, refused.headers.get('retry-after'), await refused.json()]).toEqual([503, String(BUSY_RETRY_AFTER_SECONDS), { code: 503, error: BUSY_MESSAGE }]);
    const ready = await fetch(`${serve.url}/readyz`);
    expect([ready.status, await ready.json()]).toEqual([503, { ready: false, draining: false, busy: 'games' }]);
  }
});
