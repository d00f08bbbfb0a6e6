/**
 * A researcher's promotion reaching a worker's game on another process: two `cerealbar serve`
 * processes sharing one Redis and one data directory; the worker waits in a game on one of them,
 * and the researcher promotes it through the other.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { Client } from '@colyseus/sdk';
import { SERVE_ADMIN_TOKEN, startServeProcess, track, waitFor, type Player, type ServeProcess } from '../server/harness';
import { freePort, startRedis, type RunningService } from '../../bench/services';
import { CLOSE_ROLE_CHANGED } from '../../shared/protocol/messages';
import { api, preparedWorker } from '../browser/studyWorkers';
import { setPath, studyFolder, validStudy, writeStudy } from '../study/fixtures';

jest.setTimeout(120_000);

const STUDY = 'pilot-1';
let redis: RunningService;
let dataDir: string;
const processes: ServeProcess[] = [];

beforeAll(async () => {
  redis = await startRedis();
  dataDir = mkdtempSync(joinPath(tmpdir(), 'cerealbar-promotion-'));
  const study = setPath(validStudy(), 'id', STUDY);
  setPath(study, 'roles', { newWorkersStartAs: 'follower', promotion: 'manual' });
  const studyFile = writeStudy(studyFolder(joinPath(dataDir, 'study')), study);
  for (let i = 0; i < 2; i++) {
    const port = await freePort();
    processes.push(await startServeProcess(dataDir, ['--port', String(port), '--redis', redis.url, '--public-address', `127.0.0.1:${port}`, '--study', studyFile]));
  }
});

afterAll(async () => {
  await Promise.all(
    processes.map((serve) => {
      if (serve.child.exitCode !== null || serve.child.signalCode !== null) return undefined;
      const exited = new Promise((resolve) => serve.child.once('exit', resolve));
      serve.child.kill('SIGINT');
      return exited;
    }),
  );
  await redis?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const ids = (pid: string) => ({ PROLIFIC_PID: pid, STUDY_ID: 'ST', SESSION_ID: `S-${pid}` });

/** Asks `url` for a game for the worker and takes its seat; the process whose room it is. */
async function play(url: string, token: string): Promise<{ player: Player; holder: ServeProcess }> {
  const { reservation } = await api(url, `studies/${STUDY}/play`, {}, token);
  const player = track(await new Client(url).consumeSeatReservation(reservation));
  await waitFor(() => player.messages.some((m) => m.type === 'seat'), 'the seat');
  return { player, holder: processes.find((serve) => serve.url.endsWith(`:${reservation.publicAddress.split(':')[1]}`))! };
}

test('P-114: a worker promoted through one process while it waits in a game on the other is sent away at once, and then leads a game', async () => {
  const urls = processes.map((serve) => serve.url);
  const token = await preparedWorker(urls, STUDY, ids('F1'));
  const { player: waiting, holder } = await play(urls[0], token);
  let closed: number | null = null;
  waiting.room.onLeave((code) => (closed = code));
  expect(holder).toBeDefined();
  const other = processes.find((serve) => serve !== holder)!;

  const { worker } = await api(other.url, `studies/${STUDY}/workers/F1/promote`, {}, SERVE_ADMIN_TOKEN);
  expect(worker).toMatchObject({ role: 'leader', step: 'tutorial', waitingSince: null });
  await waitFor(() => closed !== null, 'the promoted worker to be sent away', 3000);
  expect(closed).toBe(CLOSE_ROLE_CHANGED);

  // Past the leader's tutorial it is seated as leader through either process, and a follower meets it.
  await api(other.url, `studies/${STUDY}/tutorial`, { role: 'leader' }, token);
  const follower = await play(other.url, await preparedWorker(urls, STUDY, ids('F2')));
  const leader = await play(holder.url, token);
  await waitFor(() => leader.player.phase === 'playing' && follower.player.phase === 'playing', 'the game to start', 10_000);
  expect(leader.player.messages.find((m) => m.type === 'seat')!.payload.role).toBe('leader');
  await Promise.all([leader.player.room.leave(true), follower.player.room.leave(true)]);
});
