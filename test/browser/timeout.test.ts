/// <reference lib="dom" />
/**
 * A leader's turn that runs out of time, in real browser pages: the countdown turns red, and both
 * players are told what happened (one server per file: Colyseus's matchmaker is one per process).
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

test('a turn that runs out of time is announced to both players', async () => {
  const leader = await openPage(browser, `${server.url}/?pool=timeout-test&role=leader`);
  await leader.page.click('button.quick-play');
  const follower = await openPage(browser, `${server.url}/?pool=timeout-test&role=follower`);
  await follower.page.click('button.quick-play');
  await leader.page.waitForSelector('.game-screen.leader');
  // The countdown turns red in the last seconds.
  await leader.page.waitForSelector('.stat.urgent [data-stat=time]');
  await leader.page.waitForSelector('.banner:has-text("Your time ran out")', { timeout: 10_000 });
  await follower.page.waitForSelector('.banner:has-text("your turn was skipped")');
  expect([...leader.errors, ...follower.errors]).toEqual([]);
});
