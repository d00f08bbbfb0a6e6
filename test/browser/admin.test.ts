/// <reference lib="dom" />
/**
 * The admin page in a real browser, as a researcher uses it while a study runs: the token, the
 * study's totals, a worker waiting for a partner (and the warning when no partner can come), a
 * game being played (watched live in the replay viewer while its players move, then replayed from
 * the study's list of games), Promote and Block, the bonus sheet's download, and a study's arms.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@colyseus/sdk';
import type { Browser, Page } from 'playwright-core';
import { loadStudyFile, type LoadedStudy } from '../../server/study/loadStudy';
import { CLOSE_STUDY_ENDED } from '../../shared/protocol/messages';
import { track, waitFor, type Player } from '../server/harness';
import { setPath, studyFolder, validStudy, writeStudy } from '../study/fixtures';
import { audit, describe as describeViolations } from './axe';
import { ADMIN_TOKEN, launchBrowser, openPage, screenshot, startBrowserTestServer, type BrowserTestServer } from './harness';
import { api, preparedWorker } from './studyWorkers';

jest.setTimeout(120_000);

const DOC_IMAGES = resolve(__dirname, '../../docs/images');
const STUDY = 'pilot-admin';
/** A study whose one worker, a follower, waits with no leader able to come. */
const STUCK = 'pilot-stuck';
/** A study with arms: its leaders play with the heuristic follower. */
const ARMS = 'pilot-arms';
/** A study whose arms lead: its participants are followers, and stay so. */
const LED = 'pilot-led';

let dir: string;
let server: BrowserTestServer;
let browser: Browser;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cerealbar-admin-'));
  const data = setPath(validStudy(), 'id', STUDY);
  setPath(data, 'title', 'Collecting cards together');
  setPath(data, 'roles', { newWorkersStartAs: 'follower', promotion: 'manual' });
  const study: LoadedStudy = loadStudyFile(writeStudy(studyFolder(join(dir, STUDY)), data));
  const stuck: LoadedStudy = loadStudyFile(writeStudy(studyFolder(join(dir, STUCK)), { ...data, id: STUCK, title: 'Followers only' }));
  const arms: LoadedStudy = loadStudyFile(
    writeStudy(studyFolder(join(dir, ARMS)), { ...data, id: ARMS, title: 'Leading agents', roles: { newWorkersStartAs: 'leader', promotion: 'manual' }, arms: [{ id: 'heuristic-follower', agent: 'heuristic' }] }),
  );
  const led: LoadedStudy = loadStudyFile(
    writeStudy(studyFolder(join(dir, LED)), { ...data, id: LED, title: 'Led by agents', roles: { newWorkersStartAs: 'follower', promotion: 'manual' }, arms: [{ id: 'scripted-leader', agent: 'scripted' }] }),
  );
  server = await startBrowserTestServer({ seed: 7, leaderTurnSeconds: 600, followerTurnSeconds: 600 }, {}, [study, stuck, arms, led]);
  browser = await launchBrowser();
});

afterAll(async () => {
  await server?.close();
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A Prolific worker at the play step (a leader after the researcher promoted it); its session token. */
const atPlay = (pid: string, leader = false, study = STUDY) => preparedWorker(server.url, study, { PROLIFIC_PID: pid, STUDY_ID: 'S', SESSION_ID: `S-${pid}` }, { promote: leader });

/** Seated by the study API, as the study's page is. */
async function seat(token: string, study = STUDY): Promise<Player> {
  const { reservation } = await api(server.url, `studies/${study}/play`, {}, token);
  return track(await new Client(server.url).consumeSeatReservation(reservation));
}

async function accessible(page: Page, name: string): Promise<void> {
  const result = await audit(page, name);
  if (result.violations.length > 0) throw new Error(`${name}:\n${describeViolations(result.violations)}`);
}

async function picture(page: Page, name: string): Promise<void> {
  const path = await screenshot(page, name);
  if (process.env.UPDATE_DOC_SCREENSHOTS === '1') copyFileSync(path, join(DOC_IMAGES, `${name}.png`));
}

test("P-106, P-127: the researcher signs in, sees the study live (its own games only), promotes and blocks workers, downloads the bonus sheet and watches a game as it is played", async () => {
  const follower = await seat(await atPlay('F-ONE'));
  const leader = await seat(await atPlay('L-ONE', true));
  await waitFor(() => leader.phase === 'playing' && follower.phase === 'playing', 'the game to start');
  const waiting = await seat(await atPlay('F-WAITS'));
  await atPlay('F-TWO');
  const stuck = await seat(await atPlay('F-STUCK', false, STUCK), STUCK);
  // P-127: a quick-play game in the study's pool whose joins name the study's workers is no game of the study's.
  const spoof = [
    track(await new Client(server.url).joinOrCreate('cerealbar', { role: 'leader', pool: STUDY, workerId: 'L-ONE' })),
    track(await new Client(server.url).joinOrCreate('cerealbar', { role: 'follower', pool: STUDY, workerId: 'F-TWO' })),
  ];
  await waitFor(() => spoof.every((player) => player.phase === 'playing'), 'the quick-play game to start');

  const { page, errors } = await openPage(browser, `${server.url}/admin`);
  await page.fill('#admin-token', 'not-the-token-at-all');
  await page.click('form.admin-token button');
  await page.waitForSelector('.admin-login .error-text:has-text("token")');
  await page.fill('#admin-token', ADMIN_TOKEN);
  await page.click('form.admin-token button');
  const panel = page.locator(`.admin-study[data-study="${STUDY}"]`);
  await panel.waitFor();
  expect(await panel.locator('.admin-totals').textContent()).toBe('Workers4Games1 (1 being played)Mean score-Time per game-Completion rate0% (0 of 4 who passed the quiz)');
  expect(await panel.locator('.admin-waiting li').allTextContents()).toEqual([expect.stringMatching(/^F-WAITS \(follower\): \d+ s$/)]);
  expect(await panel.locator('.admin-live li').count()).toBe(1);
  // The study's games: the one being played, with its players, and Watch live; not the quick-play game of its pool.
  const game = server.store.listGames({ pool: STUDY }).find((listed) => listed.seats.some((seat) => seat.workerId === 'F-ONE'))!;
  expect(server.store.listGames({ pool: STUDY })).toHaveLength(2);
  const row = panel.locator(`.admin-games tr[data-game="${game.gameId}"]`);
  expect(await row.locator('th, td').allTextContents()).toEqual([game.gameId, expect.any(String), 'L-ONE', 'F-ONE', '0', 'playing', 'Watch live']);
  expect(await panel.locator('.admin-games tbody tr').count()).toBe(1);
  expect(await row.locator('a.watch').getAttribute('href')).toBe(`/replay/?game=${game.gameId}&live=1`);
  // A leader plays here, so nobody's wait is hopeless; in the other study a follower waits with no leader able to come.
  expect(await panel.locator('.admin-problem').count()).toBe(0);
  expect(await page.locator(`.admin-study[data-study="${STUCK}"] .admin-problem`).allTextContents()).toEqual([
    'Warning: 1 follower waits for a partner (F-STUCK) and no leader can come: new participants start as followers and no worker who may lead can still play. Promote a worker to leader on the admin page, or set roles.newWorkersStartAs: either in the study file and restart the server.',
  ]);
  expect(await panel.locator('tr[data-participant="L-ONE"] td').nth(1).textContent()).toBe('leader (promoted)');
  await accessible(page, 'admin page');
  await picture(page, 'admin');

  // Promote, and block with a reason: the page asks first, then shows the store's new state.
  page.once('dialog', (dialog) => void dialog.accept());
  await panel.locator('tr[data-participant="F-TWO"] button.promote').click();
  await page.waitForSelector(`tr[data-participant="F-TWO"] td:has-text("leader (promoted)")`);
  expect(server.workers!.get(STUDY, 'F-TWO')!.role).toBe('leader');
  const sentAway = new Promise<number>((resolve) => waiting.room.onLeave((code) => resolve(code)));
  page.once('dialog', (dialog) => void dialog.accept('left the game twice'));
  await panel.locator('tr[data-participant="F-WAITS"] button.block').click();
  await page.waitForSelector(`tr[data-participant="F-WAITS"] td:has-text("blocked: left the game twice")`);
  expect(server.workers!.get(STUDY, 'F-WAITS')!.blocked).toMatchObject({ reason: 'left the game twice' });
  // Blocked while it waited, it is sent away from its seat at once (P-114).
  expect(await sentAway).toBe(CLOSE_STUDY_ENDED);
  // Declining the question changes nothing.
  page.once('dialog', (dialog) => void dialog.dismiss());
  await panel.locator('tr[data-participant="F-ONE"] button.block').click();
  await page.waitForTimeout(300);
  expect(server.workers!.get(STUDY, 'F-ONE')!.blocked).toBeNull();

  const download = page.waitForEvent('download');
  await panel.locator('button:has-text("Bonus sheet for MTurk")').click();
  const file = await (await download).path();
  expect(readFileSync(file, 'utf8')).toBe('workerId,assignmentId,bonusAmount,reason,uniqueRequestToken\n');

  // Watch the game: the replay viewer follows it while the leader moves.
  await panel.locator('.admin-live a.watch').click();
  await page.waitForURL(/\/replay\/\?game=/);
  await page.waitForFunction(() => (window as unknown as { __replay?: { ready: boolean } }).__replay?.ready, undefined, { timeout: 60_000 });
  expect(await page.isVisible('.replay-live')).toBe(true);
  const before = await page.evaluate(() => (window as unknown as { __replay: { events: number; cursor: number } }).__replay);
  leader.act({ type: 'instruction', text: 'Walk to the pond' });
  leader.act({ type: 'move', move: 'RL' });
  await page.waitForFunction((events) => (window as unknown as { __replay: { events: number; cursor: number } }).__replay.cursor >= events + 2, before.events, { timeout: 15_000 });
  await picture(page, 'admin-watch');
  await leader.room.leave(true);
  // The game ends (abandoned): its end line arrives and the viewer stops following, and says so.
  await page.waitForSelector('.replay-live', { state: 'hidden', timeout: 15_000 });
  expect(await page.textContent('.replay-status .turn')).toBe('Game ended: a player left');
  // Back on the admin page the game is finished, how it ended said, and replayed from its row.
  await page.goto(`${server.url}/admin`);
  const ended = page.locator(`.admin-study[data-study="${STUDY}"] .admin-games tr[data-game="${game.gameId}"]`);
  await ended.locator('td:has-text("finished: a player left")').waitFor({ timeout: 15_000 });
  await ended.locator('a.replay').click();
  await page.waitForURL(`${server.url}/replay/?game=${game.gameId}`);
  await page.waitForFunction(() => (window as unknown as { __replay?: { ready: boolean } }).__replay?.ready, undefined, { timeout: 60_000 });
  expect(await page.textContent('.replay-game-id')).toBe(game.gameId);
  expect(await page.isVisible('.replay-live')).toBe(false);
  await stuck.room.leave(true);
  for (const player of spoof) await player.room.leave(true);
  expect(errors).toEqual([]);
});

test("P-106: a study's arms, each with its games being played, ended and abandoned", async () => {
  const leader = await seat(await preparedWorker(server.url, ARMS, { PROLIFIC_PID: 'L-ARMS', STUDY_ID: 'S', SESSION_ID: 'S-L-ARMS' }, { tutorials: ['leader'] }), ARMS);
  await waitFor(() => leader.phase === 'playing', 'the game with the arm to start');
  const { page, errors } = await openPage(browser, `${server.url}/admin`);
  await page.fill('#admin-token', ADMIN_TOKEN);
  await page.click('form.admin-token button');
  const row = page.locator(`.admin-study[data-study="${ARMS}"] .admin-arms tr[data-arm="heuristic-follower"]`);
  await row.waitFor();
  expect(await row.locator('th, td').allTextContents()).toEqual(['heuristic-follower', 'heuristic', '1 (100%)', '1', '0', '0', '0']);
  await accessible(page, 'admin page with arms');
  // The leader leaves: its game counts as abandoned in its arm (the page refreshes itself).
  await leader.room.leave(true);
  await page.locator(`.admin-study[data-study="${ARMS}"] .admin-arms tr[data-arm="heuristic-follower"] td:nth-child(6):has-text("1")`).waitFor({ timeout: 15_000 });
  expect(await row.locator('th, td').allTextContents()).toEqual(['heuristic-follower', 'heuristic', '1 (100%)', '0', '0', '1', '0']);
  // A study without arms has no such table.
  expect(await page.locator(`.admin-study[data-study="${STUDY}"] .admin-arms`).count()).toBe(0);
  expect(errors).toEqual([]);
});

test("a study whose arms lead offers no Promote: its participants stay followers (the server refuses a promotion there too)", async () => {
  await preparedWorker(server.url, LED, { PROLIFIC_PID: 'F-LED', STUDY_ID: 'S', SESSION_ID: 'S-F-LED' }, { tutorials: ['follower'] });
  const { page, errors } = await openPage(browser, `${server.url}/admin`);
  await page.fill('#admin-token', ADMIN_TOKEN);
  await page.click('form.admin-token button');
  const row = page.locator(`.admin-study[data-study="${LED}"] tr[data-participant="F-LED"]`);
  await row.waitFor();
  expect(await row.locator('button.block').count()).toBe(1);
  expect(await row.locator('button.promote').count()).toBe(0);
  expect(errors).toEqual([]);
});
