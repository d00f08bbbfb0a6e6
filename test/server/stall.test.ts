/**
 * A server process stopped mid-game (SIGSTOP, as a paused machine or swap would): once it runs
 * again its players are told how long the game was paused, and the turn whose time ran out
 * meanwhile gets back the time it had left (P-154).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { startGame, sleep, startServeProcess, stopServeProcess, waitFor, type ServeProcess } from './harness';

jest.setTimeout(60_000);

let dir: string;
let serve: ServeProcess;

beforeAll(async () => {
  dir = mkdtempSync(joinPath(tmpdir(), 'cerealbar-stall-'));
  serve = await startServeProcess(joinPath(dir, 'data'), ['--leader-seconds', '6', '--follower-seconds', '6']);
});

afterAll(async () => {
  if (serve.child.signalCode === null) serve.child.kill('SIGCONT');
  await stopServeProcess(serve);
  rmSync(dir, { recursive: true, force: true });
});

test('P-154: players are told of a stall once the server runs again, and the turn it overran keeps the time it had left', async () => {
  const { leader, follower } = await startGame(serve.url, { pool: 'stall' });
  const deadline = leader.view!.turnDeadline;
  expect(leader.view!.turn.role).toBe('leader');
  await sleep(1000);
  const stoppedAt = Date.now();
  const left = deadline - stoppedAt;
  serve.child.kill('SIGSTOP');
  await sleep(8000); // past the turn's deadline, and past a stall's 5 s
  const resumedAt = Date.now();
  serve.child.kill('SIGCONT');

  const stalled = (player: typeof leader) => player.messages.find((m) => m.type === 'notice' && m.payload.kind === 'serverStalled');
  await waitFor(() => stalled(leader) !== undefined && stalled(follower) !== undefined, 'both players told of the stall', 5000);
  expect(stalled(leader)!.payload.seconds).toBeGreaterThanOrEqual(7);
  expect(stalled(leader)!.payload.seconds).toBeLessThanOrEqual(10);
  // No timeout at the resume: the leader's turn goes on, with about the time it had left.
  expect(leader.messages.some((m) => m.type === 'notice' && m.payload.kind === 'timeout')).toBe(false);
  await waitFor(() => leader.view!.turnDeadline > resumedAt, 'the turn given back its time');
  expect(leader.view!.turn.role).toBe('leader');
  expect(Math.abs(leader.view!.turnDeadline - resumedAt - left)).toBeLessThan(1500);
  // Then it runs out as any turn does: a timeout, and the next turn (the follower's is skipped, its queue empty).
  const turnsLeft = leader.view!.turnsLeft;
  await waitFor(() => leader.messages.some((m) => m.type === 'notice' && m.payload.kind === 'timeout'), 'the turn to time out', left + 3000);
  await waitFor(() => leader.view!.turnsLeft < turnsLeft, 'the next turn');
});
