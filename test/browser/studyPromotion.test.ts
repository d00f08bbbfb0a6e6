/// <reference lib="dom" />
/**
 * A follower the researcher promotes on the admin page while it waits for a partner, in real
 * browsers: its page goes on to the leader's tutorial at once (the game it waited in sends it
 * away), its wait ends and its seat is free, a reload keeps it on its step, and it then leads a
 * game with a follower who waits. And a promotion the game was not told of (as made by another
 * process, in the shared store): the page finds it when it checks the worker's step, and leaves
 * its seat.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { GameRoom } from '../../server/rooms/GameRoom';
import { loadStudyFile, type LoadedStudy } from '../../server/study/loadStudy';
import { setPath, studyFolder, validStudy, writeStudy } from '../study/fixtures';
import { ADMIN_TOKEN, launchBrowser, openPage, screenshot, startBrowserTestServer, type BrowserTestServer } from './harness';
import { api, preparedWorker } from './studyWorkers';
import { playLeaderTutorial } from './tutorialPlayer';

jest.setTimeout(180_000);

const STUDY = 'promote-e2e';

let dir: string;
let server: BrowserTestServer;
let browser: Browser;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cerealbar-study-promotion-'));
  const data = setPath(validStudy(), 'id', STUDY);
  setPath(data, 'roles', { newWorkersStartAs: 'follower', promotion: 'manual' });
  setPath(data, 'time.waitForPartnerSeconds', 600);
  const study: LoadedStudy = loadStudyFile(writeStudy(studyFolder(join(dir, STUDY)), data));
  // A seat is kept 20 s for a page that reloads.
  server = await startBrowserTestServer({ leaderTurnSeconds: 600, followerTurnSeconds: 600, reconnectSeconds: 20 }, {}, [study]);
  browser = await launchBrowser();
});

afterAll(async () => {
  await server?.close();
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A Prolific worker taken to the play step by the API, and its page open there. */
async function workerAtPlay(pid: string) {
  const ids = { PROLIFIC_PID: pid, STUDY_ID: 'PS', SESSION_ID: `S-${pid}` };
  await preparedWorker(server.url, STUDY, ids);
  const opened = await openPage(browser, `${server.url}/study/${STUDY}?${new URLSearchParams(ids)}`);
  await opened.page.route('https://app.prolific.com/**', (route) => route.fulfill({ contentType: 'text/html', body: '<title>Prolific</title>' }));
  await opened.page.waitForSelector('button.find-partner');
  return opened;
}

/** The workers the researcher's overview shows waiting for a partner now. */
async function waiting(): Promise<string[]> {
  const { studies } = await api(server.url, 'studies');
  return studies.find((overview: { id: string }) => overview.id === STUDY).waiting.map((worker: { participantId: string }) => worker.participantId);
}

test("P-114: a follower promoted on the admin page while it waits: its page goes on to the leader's tutorial at once, a reload keeps it there, and it then leads a game", async () => {
  const promoted = await workerAtPlay('PROMOTEDWAITER1');
  await promoted.page.click('button.find-partner');
  await promoted.page.waitForSelector('.waiting h1:has-text("You are the follower")');
  expect(await waiting()).toEqual(['PROMOTEDWAITER1']);

  // The researcher promotes it on the admin page.
  const admin = await openPage(browser, `${server.url}/admin`);
  await admin.page.fill('#admin-token', ADMIN_TOKEN);
  await admin.page.click('form.admin-token button');
  const row = admin.page.locator(`.admin-study[data-study="${STUDY}"] tr[data-participant="PROMOTEDWAITER1"]`);
  await row.waitFor();
  admin.page.once('dialog', (dialog) => void dialog.accept());
  const asked = Date.now();
  await row.locator('button.promote').click();
  await admin.page.waitForSelector(`tr[data-participant="PROMOTEDWAITER1"] td:has-text("leader (promoted)")`);
  // At once (well before the page's own check of its step, every 5 s): the leader's tutorial.
  await promoted.page.waitForSelector('button.tutorial-start', { timeout: 4000 });
  expect(Date.now() - asked).toBeLessThan(4000);
  expect(await promoted.page.textContent('main h1')).toBe('Practice as the leader');
  await screenshot(promoted.page, 'study-promoted-while-waiting');
  // Its old wait is over and its seat is free.
  expect(await waiting()).toEqual([]);
  expect(await GameRoom.seatsWorker(STUDY, 'PROMOTEDWAITER1')).toBe(false);
  await admin.page.close();

  // A reload lands on the same step, not in the old seat.
  await promoted.page.reload();
  await promoted.page.waitForSelector('button.tutorial-start');
  expect(await promoted.page.textContent('main h1')).toBe('Practice as the leader');
  await promoted.page.click('button.tutorial-start');
  await promoted.page.waitForSelector('.game-screen.leader .tutorial-hint li.current');
  await playLeaderTutorial(promoted.page);
  await promoted.page.click('.tutorial-complete button.continue');
  // Then the page that asks for a game: not the old waiting screen with its old countdown.
  await promoted.page.waitForSelector('button.find-partner');
  expect(await promoted.page.isVisible('.waiting')).toBe(false);

  // A follower waits; the promoted worker asks for a game, is seated at once, and leads it.
  const follower = await workerAtPlay('SECONDFOLLOWER1');
  await follower.page.click('button.find-partner');
  await follower.page.waitForSelector('.waiting h1:has-text("You are the follower")');
  await promoted.page.click('button.find-partner');
  await promoted.page.waitForSelector('.game-screen.leader .world canvas', { timeout: 30_000 });
  await follower.page.waitForSelector('.game-screen.follower .world canvas', { timeout: 30_000 });
  const [game] = server.store.listGames({ pool: STUDY });
  expect(game.seats.map((seat) => [seat.role, seat.workerId]).sort()).toEqual([
    ['follower', 'SECONDFOLLOWER1'],
    ['leader', 'PROMOTEDWAITER1'],
  ]);
  expect([...promoted.errors, ...follower.errors, ...admin.errors]).toEqual([]);
});

test('P-114: a promotion its game was not told of (made in the shared store, as by another process): the waiting page finds it when it checks its step, and leaves its seat', async () => {
  const quiet = await workerAtPlay('PROMOTEDQUIETLY1');
  await quiet.page.click('button.find-partner');
  await quiet.page.waitForSelector('.waiting h1:has-text("You are the follower")');
  server.workers!.promote(STUDY, 'PROMOTEDQUIETLY1');
  await quiet.page.waitForSelector('button.tutorial-start', { timeout: 10_000 });
  expect(await quiet.page.textContent('main h1')).toBe('Practice as the leader');
  // The page left its seat: the worker holds none, and waits no more.
  for (const start = Date.now(); await GameRoom.seatsWorker(STUDY, 'PROMOTEDQUIETLY1'); ) {
    if (Date.now() - start > 5000) throw new Error('the seat was not freed');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(await waiting()).toEqual([]);
  expect(quiet.errors).toEqual([]);
});

test('P-114: a promotion that comes while the waiting page is away (reloading): its seat is freed, and the page, back, shows the leader\'s tutorial and then asks for a new game', async () => {
  const away = await workerAtPlay('PROMOTEDAWAY1');
  const url = away.page.url();
  await away.page.click('button.find-partner');
  await away.page.waitForSelector('.waiting h1:has-text("You are the follower")');
  // The page goes; its seat is kept for it to come back to (the browser keeps the seat's token).
  await away.page.goto('about:blank');
  await expect(GameRoom.seatsWorker(STUDY, 'PROMOTEDAWAY1')).resolves.toBe(true);
  await api(server.url, `studies/${STUDY}/workers/PROMOTEDAWAY1/promote`, {});
  expect(await GameRoom.seatsWorker(STUDY, 'PROMOTEDAWAY1')).toBe(false);
  expect(await waiting()).toEqual([]);
  await away.page.goto(url);
  await away.page.waitForSelector('button.tutorial-start');
  expect(await away.page.textContent('main h1')).toBe('Practice as the leader');
  await away.page.click('button.tutorial-start');
  await away.page.waitForSelector('.game-screen.leader .tutorial-hint li.current');
  await playLeaderTutorial(away.page);
  await away.page.click('.tutorial-complete button.continue');
  // Not back in the old seat: the page asks for a game, which seats it as leader.
  await away.page.waitForSelector('button.find-partner');
  expect(await away.page.isVisible('.waiting')).toBe(false);
  await away.page.click('button.find-partner');
  await away.page.waitForSelector('.waiting h1:has-text("You are the leader")');
  expect(away.errors).toEqual([]);
});
