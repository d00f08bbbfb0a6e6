/**
 * `cerealbar serve` as a real process: a game survives SIGKILL up to its last acknowledged action,
 * and SIGTERM ends games cleanly.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import type { LogHeader } from '../../shared/log/format';
import { serializeLine } from '../../shared/log/recorder';
import { replay } from '../../shared/log/replay';
import { generateMap } from '../../shared/maps/generate';
import { playSelfPlayGame } from '../../shared/selfplay/game';
import { RECOVERY_NOTE } from '../../server/store/closing';
import { SqliteGameStore } from '../../server/store/SqliteGameStore';
import { SERVE_ADMIN_TOKEN, startGame, startServeProcess, track, waitFor, type Player } from './harness';
import { Client } from '@colyseus/sdk';
import { studyFolder, validStudy, writeStudy } from '../study/fixtures';
import { api, preparedWorker } from '../browser/studyWorkers';

jest.setTimeout(60_000);

const BIN = joinPath(__dirname, '..', '..', 'bin', 'cerealbar.cjs');

const serve = (dataDir: string, ...options: string[]) => startServeProcess(dataDir, options);

function selfPlayHeader(): LogHeader {
  let header: LogHeader | undefined;
  playSelfPlayGame({ seed: 1, map: generateMap(1) }, (line) => {
    if (line.kind === 'header') header = line;
  });
  return header!;
}

/** An instruction of `bytes` UTF-8 bytes (at most 1,188) in at most 300 characters: 4-byte emoji, then ASCII. */
function textOfBytes(bytes: number): string {
  const wide = Math.ceil(Math.max(0, bytes - 300) / 3);
  return '🙂'.repeat(wide) + 'y'.repeat(bytes - 4 * wide);
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
    expect(next.output()).toMatch(/closed 1 unfinished log\(s\)/);
  } finally {
    next.child.kill('SIGTERM');
  }
  expect(await stopped).toBe(0);
  const store = SqliteGameStore.open(dataDir);
  expect(store.recover().recovered).toEqual([]);
  const [game] = store.listGames();
  const result = replay(onlyLog(dataDir));
  expect(result.events).toBe(7);
  expect(result.end?.reason).toBe('interrupted');
  expect(result.final.queue.map((i) => i.text)).toEqual(['instruction 0', 'instruction 2', 'instruction 4', 'instruction 6']);
  expect(game).toMatchObject({ endReason: 'interrupted', score: 0 });
  store.close();
});

test("P-60: a study's game closed at the next start after SIGKILL ends for its workers too, who may then play again", async () => {
  const dataDir = mkdtempSync(joinPath(tmpdir(), 'cerealbar-kill-study-'));
  const study = writeStudy(studyFolder(), validStudy());
  const { child, url } = await serve(dataDir, '--study', study);
  const prolific = (pid: string) => ({ PROLIFIC_PID: pid, STUDY_ID: 'ST', SESSION_ID: `S-${pid}` });
  const leaderToken = await preparedWorker(url, 'pilot-1', prolific('L1'), { promote: true, adminToken: SERVE_ADMIN_TOKEN });
  const followerToken = await preparedWorker(url, 'pilot-1', prolific('F1'));
  const asked = await Promise.all([leaderToken, followerToken].map((token) => api(url, 'studies/pilot-1/play', {}, token)));
  const players = await Promise.all(asked.map(async ({ reservation }) => track(await new Client(url).consumeSeatReservation(reservation))));
  for (const player of players) player.room.reconnection.enabled = false;
  await waitFor(() => players.every((player) => player.phase === 'playing'), 'the study game to start');
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));

  const next = await serve(dataDir, '--study', study);
  try {
    await waitFor(() => next.output().includes('closed 1 unfinished log(s)'), 'the game to be closed');
    const { workers } = await api(next.url, 'studies/pilot-1/workers', undefined, SERVE_ADMIN_TOKEN);
    for (const worker of workers) expect(worker.games).toMatchObject({ played: 1, inProgress: 0 });
    // No longer in a game: the worker may ask for another.
    expect((await api(next.url, 'studies/pilot-1/play', {}, followerToken)).reservation).toBeDefined();
  } finally {
    next.child.kill('SIGKILL');
  }
});

test.each(['SIGTERM', 'SIGINT'] as const)('P-59, P-70: %s (SIGTERM with --drain-seconds 0) ends running games as server-shutdown and closes their logs, under the data directory', async (signal) => {
  const dataDir = mkdtempSync(joinPath(tmpdir(), 'cerealbar-term-'));
  const { child, output } = await serve(dataDir, '--drain-seconds', '0').then(async (s) => {
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
  const store = SqliteGameStore.open(dataDir);
  expect(store.recover().recovered).toEqual([]);
  expect(store.listGames()[0]).toMatchObject({ endReason: 'server-shutdown' });
  expect(readdirSync(joinPath(dataDir, 'logs'))).toEqual([`${store.listGames()[0].gameId}.jsonl`]);
  expect(readdirSync(dataDir)).toContain('games.sqlite');
  store.close();
});

test('P-108: SIGTERM drains: no new game, the game in play goes on to its end, then the process exits', async () => {
  const dataDir = mkdtempSync(joinPath(tmpdir(), 'cerealbar-drain-'));
  const { child, url, output } = await serve(dataDir);
  const { leader, follower } = await startGame(url);
  await playSome(leader, 1);
  child.kill('SIGTERM');
  await waitFor(() => output().includes('SIGTERM: draining: no new games; 1 game(s) in play'), 'the drain to begin');
  expect((await fetch(`${url}/readyz`)).status).toBe(503);
  expect((await fetch(`${url}/healthz`)).status).toBe(200);
  const refused = await fetch(`${url}/matchmake/joinOrCreate/cerealbar`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  expect(refused.status).toBe(503);
  // The game goes on: one more action is accepted and logged.
  const views = leader.messages.filter((m) => m.type === 'view').length;
  leader.act({ type: 'move', move: 'RL' });
  await waitFor(() => leader.messages.filter((m) => m.type === 'view').length === views + 1, 'the action after the drain began');
  expect(child.exitCode).toBeNull();
  await follower.room.leave(true);
  const code = await new Promise((resolve) => child.once('exit', resolve));
  expect(code).toBe(0);
  const result = replay(onlyLog(dataDir));
  expect(result.end?.reason).toBe('abandoned');
  expect(result.events).toBeGreaterThanOrEqual(2);
});

test('P-108: a game still in play when --drain-seconds run out ends as server-shutdown', async () => {
  const dataDir = mkdtempSync(joinPath(tmpdir(), 'cerealbar-drain-'));
  const { child, url, output } = await serve(dataDir, '--drain-seconds', '1');
  const { leader, follower } = await startGame(url);
  for (const player of [leader, follower]) player.room.reconnection.enabled = false;
  await playSome(leader, 1);
  const started = Date.now();
  child.kill('SIGTERM');
  const code = await new Promise((resolve) => child.once('exit', resolve));
  expect(code).toBe(0);
  expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  expect(output()).toContain('SIGTERM: ending games');
  expect(replay(onlyLog(dataDir)).end?.reason).toBe('server-shutdown');
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
    expect((await fetch(`${first.url}/api/games`, { headers: { authorization: `Bearer ${SERVE_ADMIN_TOKEN}` } })).status).toBe(200);
    const { leader, follower } = await startGame(first.url);
    expect(leader.view!.role).toBe('leader');
    for (const player of [leader, follower]) await player.room.leave(true);
  } finally {
    first.child.kill('SIGTERM');
    await new Promise((resolve) => first.child.on('exit', resolve));
  }
});

/** Runs the CLI to its end: exit code and output. */
function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args]);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

const logFiles = (dataDir: string) => readdirSync(joinPath(dataDir, 'logs')).map((file) => joinPath(dataDir, 'logs', file));

test('P-85: a data directory that cannot be used is one line naming the problem, not a stack trace', async () => {
  const dataDir = mkdtempSync(joinPath(tmpdir(), 'cerealbar-unusable-'));
  const store = SqliteGameStore.open(dataDir);
  store.startGame({ ...selfPlayHeader(), gameId: 'stuck' }, { pool: 'default', seats: [] });
  store.close();
  // The open game's log cannot be closed: in its place is a directory.
  rmSync(joinPath(dataDir, 'logs', 'stuck.jsonl'));
  mkdirSync(joinPath(dataDir, 'logs', 'stuck.jsonl'));
  const { code, stderr } = await run(['serve', '--port', '0', '--host', '127.0.0.1', '--data', dataDir]);
  expect(code).toBe(2);
  expect(stderr).toMatch(new RegExp(`^cerealbar: ${dataDir}: cannot recover the games of the last run: EISDIR: [^\\n]*\\n$`));
});

test('P-84: at start, logs the index lacks are indexed and closed, so that every log of the data directory replays', async () => {
  const dataDir = mkdtempSync(joinPath(tmpdir(), 'cerealbar-orphans-'));
  SqliteGameStore.open(dataDir).close();
  // A process killed between creating a log and indexing it leaves the header alone, or nothing.
  const header = { ...selfPlayHeader(), gameId: 'orphan', meta: { source: 'server', pool: 'expert', players: [{ role: 'leader', playerId: 'p1', kind: 'human', workerId: 'W1' }] } };
  writeFileSync(joinPath(dataDir, 'logs', 'orphan.jsonl'), `${serializeLine(header)}\n`);
  writeFileSync(joinPath(dataDir, 'logs', 'empty.jsonl'), '');
  const { child, output } = await serve(dataDir);
  await waitFor(() => output().includes('Removed 1 empty log'), 'the recovery lines');
  expect(output()).toContain('(closed 1 unfinished log(s): orphan)');
  expect(output()).toContain('Removed 1 empty log(s) of games that never started: empty');
  child.kill('SIGTERM');
  expect(await new Promise((resolve) => child.once('exit', resolve))).toBe(0);

  const replayed = await run(['replay', ...logFiles(dataDir)]);
  expect(replayed).toMatchObject({ code: 0, stderr: '' });
  expect(replayed.stdout).toContain('orphan.jsonl: ok: 0 events, score 0, ended: interrupted');
  const store = SqliteGameStore.open(dataDir);
  expect(store.getGame('orphan')).toMatchObject({ pool: 'expert', endReason: 'interrupted', note: `the log was not in the index; ${RECOVERY_NOTE}`, seats: [{ role: 'leader', playerId: 'p1', kind: 'human', workerId: 'W1' }] });
  store.close();
});

test('P-83: SIGTERM when the end lines cannot be written says so and exits 1; the next start closes the logs', async () => {
  const dataDir = mkdtempSync(joinPath(tmpdir(), 'cerealbar-full-'));
  SqliteGameStore.open(dataDir).close();
  // No file of the server may grow past LIMIT bytes: its log is filled to just under it.
  const LIMIT = 48 * 1024;
  const child = spawn('sh', ['-c', `ulimit -f ${LIMIT / 512} && exec "$0" "$@"`, process.execPath, BIN, 'serve', '--port', '0', '--host', '127.0.0.1', '--data', dataDir, '--drain-seconds', '0'], {
    env: { ...process.env, ADMIN_TOKEN: SERVE_ADMIN_TOKEN },
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  await waitFor(() => /listening on http:\/\/localhost:\d+/.test(output), 'the server to start', 30_000);
  const { leader, follower } = await startGame(`http://127.0.0.1:${/localhost:(\d+)/.exec(output)![1]}`);
  for (const player of [leader, follower]) player.room.reconnection.enabled = false;
  const [log] = logFiles(dataDir);
  const lastLine = () => readFileSync(log, 'utf8').trimEnd().split('\n').at(-1)!;
  const instruct = async (text: string) => {
    const size = statSync(log).size;
    leader.act({ type: 'instruction', text });
    await waitFor(() => statSync(log).size > size, 'the instruction to be logged');
  };
  await instruct('x');
  try {
    // An instruction's line is this many bytes more than its text.
    const overhead = Buffer.byteLength(lastLine()) - 1;
    // The end line (about 60 bytes) must not fit: leave 11 bytes. Texts of wide characters fill the
    // log in fewer instructions than the queue holds (50).
    for (;;) {
      const bytes = LIMIT - statSync(log).size - overhead - 11;
      if (bytes <= 1100) {
        await instruct(textOfBytes(bytes));
        break;
      }
      await instruct(textOfBytes(Math.min(1100, bytes - overhead - 550)));
    }
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  expect(LIMIT - statSync(log).size).toBeLessThan(40);

  child.kill('SIGTERM');
  const code = await new Promise((resolve) => child.once('exit', resolve));
  expect(code).toBe(1);
  expect(output).toMatch(/cerealbar: SIGTERM: stopped, but storage failed: 1 game\(s\) could not be saved completely \(g[\w-]+\); the next start closes their logs\n/);
  expect(output).not.toContain('\n    at ');

  const store = SqliteGameStore.open(dataDir);
  const [game] = store.listGames();
  expect(game).toMatchObject({ endReason: 'server-shutdown', note: 'the log could not be written (EFBIG); the log ends at the last saved action' });
  expect(store.recover().recovered).toEqual([game.gameId]);
  store.close();
  expect(replay(readFileSync(log, 'utf8')).end).toMatchObject({ reason: 'server-shutdown' });
});
