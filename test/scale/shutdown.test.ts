/**
 * A `serve` process of several (on Redis) while Redis is away: it says so once and once again when
 * Redis is back, and stopping meanwhile still ends every game's log, with an exit code that says
 * whether every log could be ended.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { replay } from '../../shared/log/replay';
import { freePort, startRedis } from '../../bench/services';
import { startGame, startServeProcess, waitFor } from '../server/harness';

jest.setTimeout(120_000);

test.each(['SIGTERM', 'SIGINT'] as const)('%s with Redis gone: the game in play ends as server-shutdown, its log is closed, and serve exits', async (signal) => {
  const redis = await startRedis();
  const dataDir = mkdtempSync(joinPath(tmpdir(), 'cerealbar-redis-gone-'));
  const port = await freePort();
  const serve = await startServeProcess(dataDir, ['--port', String(port), '--redis', redis.url, '--public-address', `127.0.0.1:${port}`, '--drain-seconds', '0']);
  try {
    const { leader, follower } = await startGame(serve.url);
    for (const player of [leader, follower]) player.room.reconnection.enabled = false;
    await redis.stop();
    const exited = new Promise<number | null>((resolve) => serve.child.once('exit', resolve));
    serve.child.kill(signal);
    const code = await Promise.race([exited, new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 30_000))]);
    expect(code).toBe(0);
    const [log] = readdirSync(joinPath(dataDir, 'logs'));
    expect(replay(readFileSync(joinPath(dataDir, 'logs', log), 'utf8')).end?.reason).toBe('server-shutdown');
    expect(serve.output()).toMatch(/^cerealbar: Redis at redis:\/\/127\.0\.0\.1:\d+ is unreachable \(connect ECONNREFUSED [\d.:]+\): the games in play here go on; new games and joins wait for it$/m);
    expect(serve.output()).not.toContain('\n    at ');
  } finally {
    serve.child.kill('SIGKILL');
  }
});

test('Redis going away and coming back is said in one line each, and the game in play goes on meanwhile', async () => {
  const port = await freePort();
  let redis = await startRedis(port);
  const dataDir = mkdtempSync(joinPath(tmpdir(), 'cerealbar-redis-outage-'));
  const servePort = await freePort();
  const serve = await startServeProcess(dataDir, ['--port', String(servePort), '--redis', redis.url, '--public-address', `127.0.0.1:${servePort}`]);
  try {
    const { leader, follower } = await startGame(serve.url);
    // The server is killed at the end: the players must not try to reconnect for ever.
    for (const player of [leader, follower]) player.room.reconnection.enabled = false;
    await redis.stop();
    await waitFor(() => /is unreachable/.test(serve.output()), 'the outage to be said');
    const views = leader.messages.filter((message) => message.type === 'view').length;
    leader.act({ type: 'instruction', text: 'go to the red star' });
    await waitFor(() => leader.messages.filter((message) => message.type === 'view').length > views, 'the instruction to be acknowledged while Redis is away');
    // Long enough for every connection to fail its reconnections a few times.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    redis = await startRedis(port);
    await waitFor(() => /is reachable again/.test(serve.output()), 'the return to be said');
    const output = serve.output();
    expect(output.match(/Redis at redis:\/\/127\.0\.0\.1:\d+ is unreachable/g)).toHaveLength(1);
    expect(output.match(/^cerealbar: Redis at redis:\/\/127\.0\.0\.1:\d+ is reachable again$/gm)).toHaveLength(1);
    expect(output).not.toMatch(/Unhandled error event|connection error|MaxRetriesPerRequest|\n    at /);
  } finally {
    serve.child.kill('SIGKILL');
    await redis.stop();
  }
});
