/**
 * Admission: a process without room for a new game (`serve --max-games`, or an event loop running
 * late) refuses the new game at matchmaking at once, with 503, a Retry-After and words; /readyz
 * answers 503 and /metrics shows it; a join into a game already made is never refused.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { Admission, BUSY_MESSAGE, BUSY_WINDOWS, DELAY_WINDOW_MS } from '../../server/admission';
import { BUSY_RETRY_AFTER_SECONDS } from '../../shared/protocol/messages';
import { join, SERVE_ADMIN_TOKEN, serveToExit, sleep, startServeProcess, stopServeProcess, waitFor, type Player, type ServeProcess } from './harness';

jest.setTimeout(60_000);

/** Keeps the event loop late for about `ms`, blocked 300 ms at a go, from the start of a window on. */
async function lateFor(ms: number): Promise<void> {
  const lateUntil = Date.now() + ms;
  while (Date.now() < lateUntil) {
    const until = Date.now() + 300;
    while (Date.now() < until); // eslint-disable-line no-empty
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('Admission', () => {
  test('P-153: busy once the games held reach --max-games, and free again below it', () => {
    let games = 0;
    const admission = new Admission({ maxGames: 2, maxEventLoopDelayMs: 0 }, () => games);
    expect(admission.busy()).toBeNull();
    games = 2;
    expect(admission.busy()).toBe('games');
    games = 1;
    expect(admission.busy()).toBeNull();
    admission.stop();
  });

  test("P-153: busy while the p99 of the event loop's delay is over the limit two windows in a row, free after a quiet window", async () => {
    const admission = new Admission({ maxEventLoopDelayMs: 200 }, () => 0);
    const reasons: string[] = [];
    admission.onRefused((reason) => reasons.push(reason));
    await sleep(DELAY_WINDOW_MS * 1.5);
    expect(admission.busy()).toBeNull();
    // Late all the time, as a saturated process's loop is: busy.
    await lateFor(DELAY_WINDOW_MS * (BUSY_WINDOWS + 0.8));
    expect(admission.eventLoopDelayP99Ms()).toBeGreaterThan(200);
    expect(admission.busy()).toBe('event-loop');
    admission.count('event-loop');
    expect(reasons).toEqual(['event-loop']);
    await sleep(DELAY_WINDOW_MS * 2.2);
    expect(admission.busy()).toBeNull();
    admission.stop();
  });

  test('with 0, or no limit given, the event loop is not watched', () => {
    for (const limits of [{ maxEventLoopDelayMs: 0 }, {}]) {
      const admission = new Admission(limits, () => 1000);
      expect([admission.busy(), admission.eventLoopDelayP99Ms()]).toEqual([null, 0]);
      admission.stop();
    }
  });
});

describe('serve --max-games', () => {
  let dir: string;
  let serve: ServeProcess;
  const players: Player[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(joinPath(tmpdir(), 'cerealbar-admission-'));
    serve = await startServeProcess(joinPath(dir, 'data'), ['--max-games', '1']);
  });

  afterAll(async () => {
    // A room already left never confirms a second leave.
    const left = (player: Player) => Promise.race([player.room.leave(true).catch(() => undefined), sleep(1000)]);
    await Promise.all(players.map(left));
    await stopServeProcess(serve);
    rmSync(dir, { recursive: true, force: true });
  });

  const metrics = async () => (await fetch(`${serve.url}/metrics`, { headers: { authorization: `Bearer ${SERVE_ADMIN_TOKEN}` } })).text();
  const matchmake = (body: Record<string, unknown>) =>
    fetch(`${serve.url}/matchmake/joinOrCreate/cerealbar`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

  test('P-153: a new game beyond the limit is refused at once with 503, Retry-After and words; the waiting game still takes its partner; /readyz and /metrics say so', async () => {
    expect((await fetch(`${serve.url}/readyz`)).status).toBe(200);
    expect(await metrics()).toMatch(/^cerealbar_admission_open 1$/m);
    const leader = await join(serve.url, { role: 'leader', pool: 'full' });
    players.push(leader);

    const started = Date.now();
    const refused = await matchmake({ role: 'leader', private: true });
    expect(Date.now() - started).toBeLessThan(2000); // at once: no seat reservation waited for
    expect([refused.status, refused.headers.get('retry-after'), await refused.json()]).toEqual([503, String(BUSY_RETRY_AFTER_SECONDS), { code: 503, error: BUSY_MESSAGE }]);
    // Quick play in another pool would make a game too; an agent partner always does.
    expect((await matchmake({ role: 'follower', pool: 'elsewhere' })).status).toBe(503);
    expect((await matchmake({ botFollower: true })).status).toBe(503);

    const ready = await fetch(`${serve.url}/readyz`);
    expect([ready.status, ready.headers.get('retry-after'), await ready.json()]).toEqual([503, String(BUSY_RETRY_AFTER_SECONDS), { ready: false, draining: false, busy: 'games' }]);
    const text = await metrics();
    expect(text).toMatch(/^cerealbar_admission_open 0$/m);
    expect(text).toMatch(/^cerealbar_new_games_refused_total\{reason="games"\} 3$/m);

    // The game already made is not a new one: its partner is seated and the game starts.
    const follower = await join(serve.url, { role: 'follower', pool: 'full' });
    players.push(follower);
    await waitFor(() => leader.phase === 'playing' && follower.phase === 'playing', 'the game to start');

    // Once the game is over and its room gone, the process has room again.
    await follower.room.leave(true);
    await leader.room.leave(true);
    const deadline = Date.now() + 10_000;
    while ((await fetch(`${serve.url}/readyz`)).status !== 200 && Date.now() < deadline) await sleep(50);
    expect((await fetch(`${serve.url}/readyz`)).status).toBe(200);
    const next = await join(serve.url, { role: 'leader', private: true });
    players.push(next);
    expect(next.room.roomId).toBeTruthy();
  });
});

test('bad admission limits stop serve with one line, before it listens', async () => {
  const dir = mkdtempSync(joinPath(tmpdir(), 'cerealbar-admission-bad-'));
  try {
    for (const [option, value, said] of [
      ['--max-games', '0', '--max-games must be between 1 and 1000000, got 0'],
      ['--max-event-loop-delay-ms', 'soon', '--max-event-loop-delay-ms must be an integer, got "soon"'],
    ]) {
      const { code, stderr, stdout } = await serveToExit(joinPath(dir, 'data'), [option!, value!]);
      expect([code, stdout]).toEqual([2, '']);
      expect(stderr).toContain(said);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
