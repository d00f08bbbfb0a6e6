/// <reference lib="dom" />
/**
 * Leader turns that run out of time, in real browser pages: the countdown turns red, both players
 * are told what happened, and when no turns are left both see the game's end and the score (one server per file: Colyseus's matchmaker is one per process).
 */
import type { Browser } from 'playwright-core';
import { launchBrowser, openPage, startBrowserTestServer, type BrowserTestServer } from './harness';

jest.setTimeout(120_000);

let server: BrowserTestServer;
let browser: Browser;

beforeAll(async () => {
  server = await startBrowserTestServer({ seed: 12, leaderTurnSeconds: 3, followerTurnSeconds: 600 });
  browser = await launchBrowser();
});

afterAll(async () => {
  await server?.close();
  await browser?.close();
});

test('turns that run out of time are announced to both players, and so is the end of the game', async () => {
  const leader = await openPage(browser, `${server.url}/?pool=timeout-test&role=leader`);
  await leader.page.click('button.quick-play');
  const follower = await openPage(browser, `${server.url}/?pool=timeout-test&role=follower`);
  await follower.page.click('button.quick-play');
  await leader.page.waitForSelector('.game-screen.leader');
  // The countdown turns red in the last seconds.
  await leader.page.waitForSelector('.stat.urgent [data-stat=time]');
  await leader.page.waitForSelector('.banner:has-text("Your time ran out")', { timeout: 10_000 });
  await follower.page.waitForSelector('.banner:has-text("your turn was skipped")');

  // Every leader turn runs out with an empty queue, so the turns run out too: game over, for both.
  for (const { page } of [leader, follower]) {
    await page.waitForSelector('.game-over [data-final-score="0"]', { timeout: 40_000 });
    expect(await page.textContent('.game-over')).toContain('No turns are left.');
    expect(await page.getAttribute('body', 'data-phase')).toBe('ended');
  }
  await leader.page.click('.game-over button');
  await leader.page.waitForSelector('button.quick-play');
  expect([...leader.errors, ...follower.errors]).toEqual([]);
});
