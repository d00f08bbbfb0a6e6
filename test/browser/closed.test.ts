/// <reference lib="dom" />
/**
 * Connections that end for good, in real browser pages: the server closes a page that sends too
 * fast, and both players are told why in plain words (the server's code in small print, for
 * support); a partner who closes its page and does not come back ends the game, and the page left
 * says so. The server here allows 3 messages a second (one server per file: Colyseus's matchmaker
 * is one per process).
 */
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, openPage, screenshot, startBrowserTestServer, type BrowserTestServer } from './harness';

jest.setTimeout(120_000);

const LIMIT = 3;

let server: BrowserTestServer;
let browser: Browser;

beforeAll(async () => {
  server = await startBrowserTestServer({ seed: 9, leaderTurnSeconds: 600, followerTurnSeconds: 600, reconnectSeconds: 2 }, { maxMessagesPerSecond: LIMIT });
  browser = await launchBrowser();
});

afterAll(async () => {
  await server?.close();
  await browser?.close();
});

async function startGame(pool: string): Promise<{ leader: { page: Page; errors: string[] }; follower: { page: Page; errors: string[] } }> {
  const leader = await openPage(browser, `${server.url}/?pool=${pool}&role=leader`);
  await leader.page.click('button.quick-play');
  await leader.page.waitForSelector('.queue-position');
  const follower = await openPage(browser, `${server.url}/?pool=${pool}&role=follower`);
  await follower.page.click('button.quick-play');
  await leader.page.waitForSelector('.game-screen.leader');
  await follower.page.waitForSelector('.game-screen.follower');
  return { leader, follower };
}

test('P-76, P-78, P-29: a page that sends too fast is told the server closed its connection and why; its partner is told why the game ended', async () => {
  const { leader, follower } = await startGame('flood');
  // Eight turns in one go, as a key stuck down might send: every one is legal in the view the page holds.
  await leader.page.evaluate(() => {
    for (let i = 0; i < 8; i++) window.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight' }));
  });

  const closed = leader.page.locator('.banner[data-key=connection]');
  await closed.waitFor();
  expect(await closed.locator('.text').evaluate((text) => text.firstChild!.textContent)).toBe(
    `The server closed your connection because your browser sent more than ${LIMIT} messages in a second. The game has ended.`,
  );
  // The code and the server's reason stay visible in small print, and in an attribute, for support.
  expect(await closed.locator('small.detail').textContent()).toBe(`code 1008: RATE_LIMITED: more than ${LIMIT} messages in a second`);
  expect(await closed.getAttribute('data-detail')).toBe(`code 1008: RATE_LIMITED: more than ${LIMIT} messages in a second`);
  await screenshot(leader.page, 'closed-own-connection');

  const why = `The server closed the leader's connection because it sent more than ${LIMIT} messages in a second.`;
  await follower.page.waitForSelector(`.banner:has-text("${why} The game has ended.")`);
  expect(await follower.page.getAttribute(`.banner:has-text("${why}")`, 'data-detail')).toBe(`RATE_LIMITED: more than ${LIMIT} messages in a second`);
  await follower.page.waitForSelector('.game-over');
  expect(await follower.page.textContent('.game-over p')).toBe(`points. ${why}`);
  await screenshot(follower.page, 'closed-partner-connection');

  // Back to the lobby from the closed page.
  await closed.locator('button').click();
  await leader.page.waitForSelector('button.quick-play');
  expect([...leader.errors, ...follower.errors]).toEqual([]);
});

test("P-29, P-58: a partner who closes its page and does not come back in time: the page left says so, then the game's end", async () => {
  const { leader, follower } = await startGame('gone');
  await follower.page.close();
  await leader.page.waitForSelector('.banner:has-text("The follower lost the connection: waiting up to 2 s")');
  await leader.page.waitForSelector('.banner:has-text("The follower lost the connection and did not come back in time. The game has ended.")');
  await leader.page.waitForSelector('.game-over');
  expect(await leader.page.textContent('.game-over p')).toBe('points. The follower lost the connection and did not come back in time.');
  expect(await leader.page.locator('.banner[data-key=partner]').count()).toBe(0);
  expect(leader.errors).toEqual([]);
});
