/**
 * Draining before a stop: no new games (matchmaking and a study's play answer 503, /readyz 503 while
 * /healthz stays 200), a player waiting for a partner is sent away with a word, and a game in play
 * goes on to its end.
 */
import type { RunningGameServer } from '../../server/index';
import { SERVER_DRAINING_MESSAGE } from '../../server/rooms/GameRoom';
import { createPrivate, join, startStoreServer, waitFor, type Player } from './harness';

jest.setTimeout(30_000);

let running: Awaited<ReturnType<typeof startStoreServer>>;
let server: RunningGameServer;
let base: string;

beforeEach(async () => {
  running = await startStoreServer('drain-test-admin-token-01');
  ({ server, base } = running);
});

afterEach(() => running?.close());

function closedWith(player: Player): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => player.room.onLeave((code, reason) => resolve({ code, reason: reason ?? '' })));
}

test('P-108: a draining server takes no new games, sends a waiting player away, and lets the game in play end', async () => {
  expect((await fetch(`${base}/readyz`)).status).toBe(200);
  const { creator: leader, code } = await createPrivate(base, { role: 'leader' });
  const follower = await join(base, { code });
  await waitFor(() => leader.phase === 'playing' && follower.phase === 'playing', 'the game to start');
  const waiting = await join(base, { role: 'leader', pool: 'other' });
  const sentAway = closedWith(waiting);

  expect(await server.drain()).toBe(1);
  const ready = await fetch(`${base}/readyz`);
  expect([ready.status, await ready.json()]).toEqual([503, { ready: false, draining: true, busy: null }]);
  expect((await fetch(`${base}/healthz`)).status).toBe(200);
  expect((await sentAway).reason).toBe(SERVER_DRAINING_MESSAGE);
  // No new game: quick play, a private game and a study's play are refused at once.
  await expect(join(base, { role: 'follower' })).rejects.toThrow(/restarting and takes no new games/);
  const play = await fetch(`${base}/api/studies/any/play`, { method: 'POST' });
  expect([play.status, play.headers.get('retry-after'), (await play.json()).error.code]).toEqual([503, '5', 'BUSY']);

  // The game in play goes on.
  leader.act({ type: 'instruction', text: 'go' });
  await waitFor(() => leader.view!.instructions.length === 1, 'the instruction');
  expect(await server.gamesInPlay()).toBe(1);
  await follower.room.leave(true);
  await waitFor(() => leader.phase === 'ended', 'the game to end');
  expect(await server.gamesInPlay()).toBe(0);
  await leader.room.leave(true);
});
