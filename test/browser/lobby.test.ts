/// <reference lib="dom" />
/**
 * The lobby and what happens around a game, in real browser pages: private games by code, the
 * scripted follower, a bad study link, cancelling while waiting, and a dropped connection that
 * comes back.
 */
import { matchMaker } from '@colyseus/core';
import type { Browser, Page } from 'playwright-core';
import { ROOM_NAME } from '../../shared/protocol/messages';
import { launchBrowser, openPage, startBrowserTestServer, type BrowserTestServer } from './harness';

jest.setTimeout(180_000);

let server: BrowserTestServer;
let browser: Browser;

beforeAll(async () => {
  server = await startBrowserTestServer({ seed: 11, leaderTurnSeconds: 600, followerTurnSeconds: 600, botStepMs: 50 });
  browser = await launchBrowser();
});

afterAll(async () => {
  await server?.close();
  await browser?.close();
});

const gameView = (page: Page) =>
  page.evaluate(() => (window as unknown as { __game?: { view: { follower: { x: number; y: number; heading: string }; turn: { role: string } } } }).__game?.view ?? null);

async function waitUntil(condition: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const start = Date.now();
  while (!(await condition())) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function lobby(query: string): Promise<{ page: Page; errors: string[] }> {
  const opened = await openPage(browser, `${server.url}/?${query}`);
  await opened.page.waitForSelector('.lobby');
  return opened;
}

test('a private game: one player creates it, the other joins with the code', async () => {
  const creator = await lobby('pool=private-test');
  await creator.page.check('input[name=role][value=follower]');
  await creator.page.click('button.create-private');
  const code = (await creator.page.locator('.waiting .code').textContent())!;
  expect(code).toMatch(/^[a-hjkmnp-z2-9]{10}$/);
  expect(await creator.page.textContent('.share-link')).toContain(`code=${code}`);

  // Quick play in the same pool does not land in the private game.
  const stranger = await lobby('pool=private-test');
  await stranger.page.check('input[name=role][value=leader]');
  await stranger.page.click('button.quick-play');
  await stranger.page.waitForSelector('.queue-position:has-text("next in line")');

  const friend = await lobby(`pool=private-test&code=${code}`);
  expect(await friend.page.inputValue('input[name=code]')).toBe(code);
  await friend.page.click('button.join-private');
  await creator.page.waitForSelector('.game-screen.follower');
  await friend.page.waitForSelector('.game-screen.leader');
  expect(await stranger.page.locator('.game-screen').count()).toBe(0);
  await stranger.page.click('button.cancel');
  await stranger.page.waitForSelector('button.quick-play');
  expect([...creator.errors, ...friend.errors, ...stranger.errors]).toEqual([]);
});

test('a mistyped or expired code says so and makes no game; a code works in any case', async () => {
  const creator = await lobby('pool=code-test');
  await creator.page.check('input[name=role][value=leader]');
  await creator.page.click('button.create-private');
  const code = (await creator.page.locator('.waiting .code').textContent())!;
  const games = async () => (await matchMaker.query({ name: ROOM_NAME })).length;
  const before = await games();

  const partner = await lobby('pool=code-test');
  await partner.page.fill('input[name=code]', `${code.slice(0, -1)}x`);
  await partner.page.click('button.join-private');
  await partner.page.waitForSelector('.error-text:has-text("no game with this code")');
  expect(await games()).toBe(before);

  await partner.page.fill('input[name=code]', code.toUpperCase());
  await partner.page.click('button.join-private');
  await creator.page.waitForSelector('.game-screen.leader');
  await partner.page.waitForSelector('.game-screen.follower');
  expect([...creator.errors, ...partner.errors]).toEqual([]);
});

test('cancelling while waiting leaves no game behind', async () => {
  const waiting = await lobby('pool=cancel-test');
  await waiting.page.check('input[name=role][value=leader]');
  await waiting.page.click('button.quick-play');
  await waiting.page.waitForSelector('.queue-position');
  expect(await matchMaker.query({ name: ROOM_NAME, pool: 'cancel-test' } as never)).toHaveLength(1);
  await waiting.page.click('button.cancel');
  await waiting.page.waitForSelector('button.quick-play');
  await waitUntil(async () => (await matchMaker.query({ name: ROOM_NAME, pool: 'cancel-test' } as never)).length === 0, 'the game to close');
});

test('a bad study link is reported in the lobby, and nothing can be joined with it', async () => {
  const { page, errors } = await lobby('pool=not%20a%20pool!');
  expect(await page.textContent('.error-text')).toMatch(/bad pool: pool names use letters, digits, _ and -/);
  expect(await page.isDisabled('button.quick-play')).toBe(true);
  expect(await page.isDisabled('button.bot-game')).toBe(true);
  expect(errors).toEqual([]);
});

test('a leader plays with the scripted follower at once, and sees it move', async () => {
  const { page, errors } = await lobby('pool=bot-test');
  await page.click('button.bot-game');
  await page.waitForSelector('.game-screen.leader');
  const start = (await gameView(page))!.follower;
  await page.fill('textarea.instruction-input', 'Go forward and turn around');
  await page.keyboard.press('Enter');
  await page.waitForSelector('.leader-panel .instructions li');
  await page.click('button.end-turn');
  await page.waitForFunction(
    (from) => {
      const view = (window as unknown as { __game: { view: { follower: { x: number; y: number; heading: string } } } }).__game.view;
      return view.follower.x !== from.x || view.follower.y !== from.y || view.follower.heading !== from.heading;
    },
    start,
  );
  expect(errors).toEqual([]);
});

test('a dropped connection shows a banner, reconnects by itself, and the game goes on', async () => {
  const leader = await lobby('pool=drop-test');
  await leader.page.check('input[name=role][value=leader]');
  await leader.page.click('button.quick-play');
  const follower = await lobby('pool=drop-test');
  await follower.page.check('input[name=role][value=follower]');
  await follower.page.click('button.quick-play');
  await follower.page.waitForSelector('.game-screen.follower');
  await leader.page.waitForSelector('.game-screen.leader');

  // Cut the follower's socket from the server's side, as a network failure would.
  const [listed] = await matchMaker.query({ name: ROOM_NAME, pool: 'drop-test' } as never);
  const room = matchMaker.getLocalRoomById(listed.roomId) as unknown as { seats: Map<string, { client: { ref: { terminate(): void } } }> };
  room.seats.get('follower')!.client.ref.terminate();

  await leader.page.waitForSelector('.banner:has-text("follower lost the connection: waiting up to 30 s for them to come back. The turn\'s clock keeps running.")');
  await follower.page.waitForSelector('.banner:has-text("Reconnected")', { timeout: 30_000 });
  await leader.page.waitForSelector('.banner:has-text("follower is back")');
  expect(await leader.page.locator('.banner:has-text("lost the connection")').count()).toBe(0);

  // The game goes on for both: the leader's instruction reaches the follower after End Turn.
  await leader.page.fill('textarea.instruction-input', 'Turn right twice');
  await leader.page.keyboard.press('Enter');
  await leader.page.waitForSelector('.leader-panel .instructions li');
  await leader.page.click('button.end-turn');
  await follower.page.waitForSelector('.follower-instructions li:has-text("Turn right twice")');
  await follower.page.keyboard.press('ArrowRight');
  await leader.page.waitForFunction(() => (window as unknown as { __game: { view: { turn: { stepsLeft: number } } } }).__game.view.turn.stepsLeft === 9);
  expect([...leader.errors, ...follower.errors]).toEqual([]);
});
