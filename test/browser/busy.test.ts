/// <reference lib="dom" />
/**
 * A server without room for a new game (`--max-games 1`, its one game taken), as players meet it
 * in real pages: the lobby and a study's play page say the server is busy, keep the player's
 * place, and ask again by themselves; once the game is over, both are seated without a click.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { loadStudyFile } from '../../server/study/loadStudy';
import { BUSY_RETRY_AFTER_SECONDS } from '../../shared/protocol/messages';
import { join as joinGame, type Player } from '../server/harness';
import { setPath, studyFolder, validStudy, writeStudy } from '../study/fixtures';
import { launchBrowser, openPage, screenshot, startBrowserTestServer, type BrowserTestServer } from './harness';
import { preparedWorker } from './studyWorkers';

jest.setTimeout(120_000);

let dir: string;
let server: BrowserTestServer;
let browser: Browser;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cerealbar-busy-'));
  const data = setPath(validStudy(), 'id', 'lab');
  setPath(data, 'platform', { kind: 'lab' });
  setPath(data, 'roles', { newWorkersStartAs: 'either', promotion: 'manual' });
  const study = loadStudyFile(writeStudy(studyFolder(join(dir, 'lab')), data));
  server = await startBrowserTestServer({ seed: 3, leaderTurnSeconds: 600, followerTurnSeconds: 600 }, { admission: { maxGames: 1, maxEventLoopDelayMs: 0 } }, [study]);
  browser = await launchBrowser();
});

afterAll(async () => {
  await server?.close();
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The server's one game, held by a player waiting in it until `free()`. */
async function takeTheOneGame(): Promise<{ free(): Promise<void> }> {
  const holder: Player = await joinGame(server.url, { role: 'leader', private: true });
  return {
    free: async () => {
      await holder.room.leave(true);
    },
  };
}

test('P-153: the lobby says the server is busy and joins by itself once there is room', async () => {
  const held = await takeTheOneGame();
  const { page, errors } = await openPage(browser, `${server.url}/?pool=busy-lobby`);
  await page.waitForSelector('button.quick-play');
  const refused = page.waitForResponse((response) => response.url().includes('/matchmake/'));
  await page.click('button.quick-play');
  const response = await refused;
  expect([response.status(), await response.headerValue('retry-after')]).toEqual([503, String(BUSY_RETRY_AFTER_SECONDS)]);
  await page.waitForSelector('.waiting h1:has-text("Many people are playing right now")');
  expect(await page.textContent('.queue-position')).toMatch(/^The server is busy\. This page will look for a game again in \d\u00a0s\.$/);
  await screenshot(page, 'lobby-busy');

  await held.free();
  await page.waitForSelector('.waiting h1:has-text("Waiting for a")', { timeout: 3 * BUSY_RETRY_AFTER_SECONDS * 1000 });
  expect(errors).toEqual([]);
  await page.click('button.cancel');
  await page.waitForSelector('button.quick-play');
});

test("P-153: a study's play page says so, keeps the worker's place, and seats it by itself once there is room", async () => {
  await preparedWorker(server.url, 'lab', { participantId: 'P1' }, { tutorials: ['leader', 'follower'] });
  const held = await takeTheOneGame();
  const { page, errors } = await openPage(browser, `${server.url}/study/lab`);
  await page.fill('#participant-id', 'P1');
  await page.click('form.lab-id button.start');
  await page.waitForSelector('button.find-partner');
  const refused = page.waitForResponse((response) => response.url().endsWith('/play'));
  await page.click('button.find-partner');
  const response = await refused;
  expect([response.status(), await response.headerValue('retry-after'), (await response.json()).error.code]).toEqual([503, String(BUSY_RETRY_AFTER_SECONDS), 'BUSY']);
  await page.waitForSelector('text=Many people are playing right now: your page will look for a game again in a few seconds, so keep it open.');
  // Still the play page: no error page, and the worker still at its step.
  expect(await page.locator('button.find-partner').count()).toBe(1);
  expect(server.workers!.get('lab', 'P1')!.waitingSince).toBeNull();
  await screenshot(page, 'study-busy');

  await held.free();
  await page.waitForSelector('.waiting', { timeout: 3 * BUSY_RETRY_AFTER_SECONDS * 1000 });
  expect(server.workers!.get('lab', 'P1')!.waitingSince).not.toBeNull();
  expect(errors).toEqual([]);
});
