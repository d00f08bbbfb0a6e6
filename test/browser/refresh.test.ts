/// <reference lib="dom" />
/**
 * A refresh, or a tab closed and opened again, brings a player back to the same seat within the
 * reconnection window: the page keeps the seat's reconnection token (client/src/game/savedSeat.ts).
 * Here both players refresh in the middle of a short game and then play it to its end.
 */
import type { Browser, Page } from 'playwright-core';
import { makeConfig } from '../../shared/engine/config';
import { launchBrowser, openPage, startBrowserTestServer, type BrowserTestServer } from './harness';
import { FIRST_INSTRUCTION, quickPlay } from './players';

jest.setTimeout(120_000);

let server: BrowserTestServer;
let browser: Browser;

beforeAll(async () => {
  server = await startBrowserTestServer({ seed: 5, config: makeConfig({ turnsPerPlayer: 2 }), leaderTurnSeconds: 600, followerTurnSeconds: 600 });
  browser = await launchBrowser();
});

afterAll(async () => {
  await server?.close();
  await browser?.close();
});

interface PageView {
  readonly phase: string;
  readonly turn: { readonly role: string };
  readonly turnsLeft: number;
}
const view = (page: Page) => page.evaluate(() => (window as never as { __game?: { role: string; view: PageView } }).__game ?? null);
const savedSeat = (page: Page) => page.evaluate(() => localStorage.getItem('cerealbar.seat'));
const turnIs = (page: Page, role: string) =>
  page.waitForFunction((role) => (window as never as { __game?: { view: PageView } }).__game?.view.turn.role === role, role);

test('both players refresh in the middle of a game, come back to their seats, and finish it', async () => {
  const leader = await quickPlay(browser, server.url, 'refresh', 'leader');
  await leader.page.waitForSelector('.queue-position');
  const follower = await quickPlay(browser, server.url, 'refresh', 'follower');
  await leader.page.waitForSelector('.game-screen.leader');
  await follower.page.waitForSelector('.game-screen.follower');
  expect(JSON.parse((await savedSeat(leader.page))!)).toMatchObject({ role: 'leader' });

  // The leader writes an instruction, refreshes, and finds the game as it was: its seat, its instruction.
  await leader.page.fill('textarea.instruction-input', FIRST_INSTRUCTION);
  await leader.page.keyboard.press('Enter');
  await leader.page.waitForSelector('.leader-panel .instructions li.current');
  await leader.page.reload();
  await leader.page.waitForSelector(`.game-screen.leader .leader-panel .instructions li:has-text("${FIRST_INSTRUCTION}")`);
  expect((await view(leader.page))!.role).toBe('leader');
  // The follower was told, and then told again that the leader is back.
  await follower.page.waitForSelector('.banner:has-text("The leader is back")');
  await leader.page.click('button.end-turn');

  // The follower refreshes on its turn, and its instruction is still there.
  await turnIs(follower.page, 'follower');
  await follower.page.reload();
  await follower.page.waitForSelector(`.game-screen.follower .follower-instructions li.current:has-text("${FIRST_INSTRUCTION}")`);
  await leader.page.waitForSelector('.banner:has-text("The follower is back")');
  await follower.page.click('button.done-button');

  // The second and last round, played to the end.
  await turnIs(leader.page, 'leader');
  await leader.page.fill('textarea.instruction-input', 'Stay where you are');
  await leader.page.keyboard.press('Enter');
  await leader.page.click('button.end-turn');
  await turnIs(follower.page, 'follower');
  await follower.page.click('button.done-button');
  for (const { page } of [leader, follower]) {
    await page.waitForSelector('.game-over');
    // The game is over: nothing is kept to come back to.
    expect(await savedSeat(page)).toBeNull();
  }
  const games = server.store.listGames({});
  expect(games).toHaveLength(1);
  expect(games[0].endReason).toBe('turns-exhausted');
  expect(leader.errors.concat(follower.errors)).toEqual([]);
});

test('a seat the server no longer keeps is forgotten, and the lobby says so', async () => {
  const { page, errors } = await openPage(browser, `${server.url}/?pool=refresh-stale`);
  await page.evaluate(() => localStorage.setItem('cerealbar.seat', JSON.stringify({ token: 'noroom:notoken', role: 'leader' })));
  await page.reload();
  await page.waitForSelector('text=Your last game is over, or its seat was not kept');
  await page.waitForSelector('button.quick-play:enabled');
  expect(await savedSeat(page)).toBeNull();
  // Storage holding something else entirely is ignored: the lobby, with no note.
  await page.evaluate(() => localStorage.setItem('cerealbar.seat', '{not json'));
  await page.reload();
  await page.waitForSelector('button.quick-play:enabled');
  expect(await page.textContent('.error-text')).toBe('');
  expect(errors).toEqual([]);
});

test('a second tab cannot take over a seat whose player is connected', async () => {
  const leader = await quickPlay(browser, server.url, 'refresh-twice', 'leader');
  await leader.page.waitForSelector('.queue-position');
  const token = await savedSeat(leader.page);
  expect(token).not.toBeNull();
  // Another tab of the same browser (same storage) opens the game page: it is told, and gets the lobby.
  const second = await leader.page.context().newPage();
  await second.goto(`${server.url}/?pool=refresh-twice`);
  await second.waitForSelector('text=your game is open in another tab or window');
  await second.waitForSelector('button.quick-play:enabled');
  // The first tab still holds the seat, and the token is still kept for it.
  expect(await leader.page.isVisible('.waiting .queue-position')).toBe(true);
  expect(await savedSeat(leader.page)).toBe(token);
  await leader.page.click('button.cancel');
  await leader.page.waitForSelector('button.quick-play');
  expect(await savedSeat(leader.page)).toBeNull();
});
