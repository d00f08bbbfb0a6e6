/**
 * `cerealbar serve --bot-leader A --bot-follower B` as a real process: the agents are checked
 * when serve starts (one that cannot play a live seat stops it, exit 2, with one line), and a
 * program agent is started for each game and stopped at its end.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { join, startServeProcess, waitFor, type ServeProcess } from './harness';

jest.setTimeout(60_000);

const BIN = joinPath(__dirname, '..', '..', 'bin', 'cerealbar.cjs');

let dir = '';
let serve: ServeProcess | null = null;
beforeEach(() => {
  dir = mkdtempSync(joinPath(tmpdir(), 'cerealbar-serve-agents-'));
});
afterEach(async () => {
  if (serve && serve.child.exitCode === null) {
    const exited = new Promise((resolve) => serve!.child.once('exit', resolve));
    serve.child.kill('SIGINT');
    await exited;
  }
  serve = null;
  rmSync(dir, { recursive: true, force: true });
});

/** Runs serve with `options` to its exit: its code and stderr. */
function serveToExit(dataDir: string, options: readonly string[]): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--host', '127.0.0.1', '--data', dataDir, ...options], { env: { ...process.env, ADMIN_TOKEN: 'a-test-token-of-enough-length' } });
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  child.stdout.on('data', (chunk) => (stdout += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, stdout });
    }),
  );
}

test.each([
  [['--bot-leader', 'heuristic'], 'cerealbar: --bot-leader "heuristic": "heuristic" is a built-in follower, not a leader; the built-in leaders are scripted'],
  [['--bot-follower', 'scripted'], 'cerealbar: --bot-follower "scripted": "scripted" is a built-in leader, not a follower; the built-in followers are random, heuristic, static-oracle, oracle'],
  [['--bot-follower', 'oracle'], 'cerealbar: --bot-follower "oracle": the oracle agent needs a recorded game or the whole state; it can only be evaluated offline'],
  [['--bot-leader', 'no-such-agent-program'], /^cerealbar: --bot-leader "no-such-agent-program": agent "no-such-agent-program" exited with code 127 before sending its answer to hello; its last stderr lines: .*not found$/],
])('P-118: serve %j stops before it starts (exit 2), in one line, with nothing made', async (options, message) => {
  const dataDir = joinPath(dir, 'data');
  const { code, stderr, stdout } = await serveToExit(dataDir, options);
  expect(code).toBe(2);
  expect(stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(stderr.trimEnd()).toMatch(message);
  expect(stdout).toBe('');
  expect(existsSync(dataDir)).toBe(false);
});

test('P-118: a program leader is started once to check it, then once per game, and stopped when its game ends', async () => {
  const started = joinPath(dir, 'started');
  const program = joinPath(dir, 'leader.js');
  // A protocol version 3 leader that writes down each start; it instructs once, then ends its turns.
  writeFileSync(
    program,
    [
      `require('fs').appendFileSync(${JSON.stringify(started)}, process.pid + "\\n");`,
      "const lines = require('readline').createInterface({ input: process.stdin });",
      'const say = (answer) => process.stdout.write(JSON.stringify(answer) + "\\n");',
      'lines.on("line", (line) => {',
      '  const message = JSON.parse(line);',
      '  if (message.type === "hello") say({ type: "hello", protocol: message.protocol, version: 3, name: "once" });',
      '  else if (message.type === "reset") say({ type: "ready" });',
      '  else if (message.type === "observe") say({ type: "act", actions: message.observation.instructions.length === 0 ? [{ instruction: "turn left" }, "END"] : [] });',
      '  else if (message.type === "close") process.exit(0);',
      '});',
    ].join('\n'),
  );
  serve = await startServeProcess(joinPath(dir, 'data'), ['--bot-leader', `node ${program}`]);
  expect(serve.output()).toContain(`Agent partners, for players who ask for one: leader ${JSON.stringify(`node ${program}`)}, follower "heuristic"`);
  const pids = () => (existsSync(started) ? readFileSync(started, 'utf8').trim().split('\n').map(Number) : []);
  expect(pids()).toHaveLength(1);
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  await waitFor(() => !alive(pids()[0]), 'the checked program to be stopped');
  const follower = await join(serve.url, { role: 'follower', botLeader: true });
  await waitFor(() => follower.view?.instructions.some((i) => i.status === 'current' && i.text === 'turn left') ?? false, "the program leader's instruction", 10_000);
  expect(pids()).toHaveLength(2);
  expect(alive(pids()[1])).toBe(true);
  await follower.room.leave(true);
  await waitFor(() => !alive(pids()[1]), "the game's program to be stopped when the game ends", 10_000);
});
