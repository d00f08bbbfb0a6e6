/**
 * `cerealbar serve` as a real process: a game survives SIGKILL up to its last acknowledged action,
 * and SIGTERM ends games cleanly.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { replay } from '../../shared/log/replay';
import { GameStore } from '../../server/store/GameStore';
import { startGame, waitFor, type Player } from './harness';

jest.setTimeout(60_000);

const BIN = joinPath(__dirname, '..', '..', 'bin', 'cerealbar.cjs');

async function serve(dataDir: string): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--host', '127.0.0.1', '--data', dataDir], {
    env: { ...process.env, ADMIN_TOKEN: 'a-test-token-of-enough-length' },
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  await waitFor(() => /listening on http:\/\/localhost:\d+/.test(output), 'the server to start', 30_000);
  const port = /localhost:(\d+)/.exec(output)![1];
  return { child, url: `http://127.0.0.1:${port}`, output: () => output };
}

/** Plays `n` leader rotations and instructions, waiting for each to be acknowledged. */
async function playSome(leader: Player, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    if (i % 2 === 0) leader.act({ type: 'instruction', text: `instruction ${i}` });
    else leader.act({ type: 'move', move: 'RL' });
    // Each accepted leader action changes the leader's view: one view message more.
    await waitFor(() => leader.messages.filter((m) => m.type === 'view').length === i + 2, `action ${i + 1} to be acknowledged`);
  }
}

function onlyLog(dataDir: string): string {
  const files = readdirSync(joinPath(dataDir, 'logs'));
  expect(files).toHaveLength(1);
  return readFileSync(joinPath(dataDir, 'logs', files[0]), 'utf8');
}

test('P-60, P-62: a server killed with SIGKILL mid-game leaves a log that replays up to the last acknowledged action, closed at the next start', async () => {
  const dataDir = mkdtempSync(joinPath(tmpdir(), 'cerealbar-kill-'));
  const { child, url } = await serve(dataDir);
  const { leader, follower } = await startGame(url);
  for (const player of [leader, follower]) player.room.reconnection.enabled = false;
  await playSome(leader, 7);
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));

  // Before recovery the log is open: replay refuses it, naming the last line.
  expect(() => replay(onlyLog(dataDir))).toThrow(/without an end line/);
  // The next start closes it.
  const next = await serve(dataDir);
  const stopped = new Promise((resolve) => next.child.once('exit', resolve));
  try {
    await waitFor(() => next.output().includes('Games and logs'), 'the data directory line');
    expect(next.output()).toMatch(/closed 1 interrupted game\(s\)/);
  } finally {
    next.child.kill('SIGTERM');
  }
  expect(await stopped).toBe(0);
  const store = GameStore.open(dataDir);
  expect(store.recover().recovered).toEqual([]);
  const [game] = store.listGames();
  const result = replay(onlyLog(dataDir));
  expect(result.events).toBe(7);
  expect(result.end?.reason).toBe('interrupted');
  expect(result.final.queue.map((i) => i.text)).toEqual(['instruction 0', 'instruction 2', 'instruction 4', 'instruction 6']);
  expect(game).toMatchObject({ endReason: 'interrupted', score: 0 });
  store.close();
});

test.each(['SIGTERM', 'SIGINT'] as const)('P-59, P-70: %s ends running games as server-shutdown and closes their logs, under the data directory', async (signal) => {
  const dataDir = mkdtempSync(joinPath(tmpdir(), 'cerealbar-term-'));
  const { child, output } = await serve(dataDir).then(async (s) => {
    const { leader, follower } = await startGame(s.url);
    for (const player of [leader, follower]) player.room.reconnection.enabled = false;
    await playSome(leader, 3);
    return s;
  });
  child.kill(signal);
  const code = await new Promise((resolve) => child.once('exit', resolve));
  expect(code).toBe(0);
  expect(output()).toContain(`${signal}: ending games`);
  expect(output()).toContain('stopped');
  const result = replay(onlyLog(dataDir));
  expect(result.events).toBe(3);
  expect(result.end?.reason).toBe('server-shutdown');
  const store = GameStore.open(dataDir);
  expect(store.recover().recovered).toEqual([]);
  expect(store.listGames()[0]).toMatchObject({ endReason: 'server-shutdown' });
  expect(readdirSync(joinPath(dataDir, 'logs'))).toEqual([`${store.listGames()[0].gameId}.jsonl`]);
  expect(readdirSync(dataDir)).toContain('games.sqlite');
  store.close();
});

test('P-2: a port in use is a clear error and exit code 2, not a hang; the client pages and the API are served on the game port', async () => {
  const first = await serve(mkdtempSync(joinPath(tmpdir(), 'cerealbar-serve-')));
  try {
    const port = new URL(first.url).port;
    const second = spawn(process.execPath, [BIN, 'serve', '--port', port, '--host', '127.0.0.1', '--data', mkdtempSync(joinPath(tmpdir(), 'cerealbar-serve-'))]);
    let errors = '';
    second.stderr!.on('data', (chunk) => (errors += chunk));
    const code = await new Promise<number | null>((resolve) => second.on('exit', resolve));
    expect(code).toBe(2);
    expect(errors).toContain(`cerealbar: cannot start the server: port ${port} is already in use`);

    // npm test builds the client before jest runs, so the server serves its pages.
    const page = await fetch(`${first.url}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<div id="app">');
    const replayPage = await fetch(`${first.url}/replay?game=g1&event=3`, { redirect: 'manual' });
    expect(replayPage.status).toBe(301);
    expect(replayPage.headers.get('location')).toBe('/replay/?game=g1&event=3');
    expect(await (await fetch(`${first.url}/healthz`)).json()).toMatchObject({ ok: true });
    expect((await fetch(`${first.url}/api/games`, { headers: { authorization: 'Bearer a-test-token-of-enough-length' } })).status).toBe(200);
    const { leader, follower } = await startGame(first.url);
    expect(leader.view!.role).toBe('leader');
    for (const player of [leader, follower]) await player.room.leave(true);
  } finally {
    first.child.kill('SIGTERM');
    await new Promise((resolve) => first.child.on('exit', resolve));
  }
});
