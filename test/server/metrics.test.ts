/** /metrics: Prometheus text with the admin token, counting what a real game on the server does. */
import { GameMetrics } from '../../server/metrics';
import { createPrivate, join, startStoreServer, waitFor } from './harness';

jest.setTimeout(30_000);

const TOKEN = 'metrics-test-admin-token-0123';
let running: Awaited<ReturnType<typeof startStoreServer>>;
let base: string;

beforeEach(async () => {
  running = await startStoreServer(TOKEN, new GameMetrics());
  base = running.base;
});

afterEach(() => running?.close());

async function scrape(): Promise<Map<string, number>> {
  const response = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0.0.4/);
  const values = new Map<string, number>();
  for (const line of (await response.text()).split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    values.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return values;
}

test('P-107: without the admin token /metrics is refused; with it, the counts of a game played follow what happened', async () => {
  expect((await fetch(`${base}/metrics`)).status).toBe(401);
  expect((await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer wrong-token-wrong-token' } })).status).toBe(403);

  const before = await scrape();
  expect(before.get('cerealbar_games_running')).toBe(0);
  expect(before.get('cerealbar_players_connected')).toBe(0);
  expect(before.has('nodejs_eventloop_lag_seconds')).toBe(true);

  const { creator: leader, code } = await createPrivate(base, { role: 'leader' });
  const follower = await join(base, { code });
  await waitFor(() => leader.phase === 'playing' && follower.phase === 'playing', 'the game to start');
  leader.act({ type: 'instruction', text: 'go' });
  leader.act({ type: 'endTurn' });
  follower.act({ type: 'endTurn' }); // the follower cannot end a turn: refused
  await waitFor(() => follower.errors().length === 1 && leader.view!.turn.role === 'follower', 'the actions');
  const playing = await scrape();
  expect(playing.get('cerealbar_games_running')).toBe(1);
  expect(playing.get('cerealbar_players_connected')).toBe(2);
  expect(playing.get('cerealbar_actions_total{actor="leader",type="instruction"}')).toBe(1);
  expect(playing.get('cerealbar_actions_total{actor="leader",type="endTurn"}')).toBe(1);
  expect(playing.get('cerealbar_refusals_total{code="FOLLOWER_CANNOT_END_TURN"}')).toBe(1);
  expect(playing.get('cerealbar_action_seconds_count')).toBe(3);
  expect(playing.get('cerealbar_log_write_seconds_count')).toBe(2);

  await follower.room.leave(true);
  await waitFor(() => leader.phase === 'ended', 'the game to end');
  const ended = await scrape();
  expect(ended.get('cerealbar_games_running')).toBe(0);
  expect(ended.get('cerealbar_games_finished_total{reason="abandoned"}')).toBe(1);
  await leader.room.leave(true);
});
