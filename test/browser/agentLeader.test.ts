/// <reference lib="dom" />
/**
 * The lobby's "Play as follower with an agent leader", in a real browser page: the player is the
 * follower at once, the server's scripted leader writes instructions, and the player carries
 * them out with the keyboard.
 */
import { openPage, screenshot, serverAndBrowser } from './harness';

jest.setTimeout(120_000);

// The scripted leader may let its turn run out (a habit of self-play's leader): short leader turns.
const started = serverAndBrowser({ seed: 11, leaderTurnSeconds: 2, followerTurnSeconds: 600, botStepMs: 50 });

test('P-117: a player in the lobby plays as the follower with the agent leader, sees its instruction and marks it done', async () => {
  const { page, errors } = await openPage(started.browser, `${started.server.url}/?pool=agent-leader-test`);
  await page.waitForSelector('.lobby');
  await screenshot(page, 'lobby-agent-leader');
  const button = page.getByRole('button', { name: 'Play as follower with an agent leader' });
  expect(await button.isEnabled()).toBe(true);
  await button.click();
  await page.waitForSelector('.game-screen.follower');
  // The scripted leader's instruction reaches the follower when its turn begins.
  const current = page.locator('.follower-instructions li:not(.empty)');
  await current.waitFor({ timeout: 30_000 });
  const id = await current.getAttribute('data-instruction');
  const text = (await current.evaluate((item) => item.lastChild!.textContent))!;
  expect(text).toMatch(/\w/);
  await screenshot(page, 'follower-with-agent-leader');
  await page.keyboard.press('d');
  const previous = page.locator(`.follower-panel ol[aria-label="Previous instruction"] li[data-instruction="${id}"]`);
  await previous.waitFor();
  expect(await previous.textContent()).toBe(`Done${text}`);
  const game = started.server.store.listGames()[0];
  expect(game.seats).toEqual([
    expect.objectContaining({ role: 'follower', kind: 'human' }),
    expect.objectContaining({ role: 'leader', kind: 'bot' }),
  ]);
  expect(errors).toEqual([]);
});
