/// <reference lib="dom" />
/**
 * A set made with the follower's last step, in real browser pages. The rules keep the
 * instruction current: the turn ran out before the follower pressed Done, and only Done finishes
 * an instruction. Both pages say so plainly while the leader plays, and the follower finishes it
 * with Done in its next turn (one server per file: Colyseus's matchmaker is one per process).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { mapSchema, type GameMap } from '../../shared/engine/map';
import type { ClientView } from '../../shared/protocol/messages';
import { launchBrowser, openPage, screenshot, startBrowserTestServer, type BrowserTestServer } from './harness';

jest.setTimeout(180_000);

const tutorial = mapSchema.parse(JSON.parse(readFileSync(join(__dirname, '../../maps/tutorial.json'), 'utf8')));
/**
 * The follower starts at (5, 4) facing east along a free row; the tutorial's first three cards
 * (a red star, two blue hearts, three yellow cubes: a valid set) lie 8, 9 and 10 steps ahead, so
 * the tenth step, the last of the turn, makes the set.
 */
const START = { x: 5, y: 4, heading: 'E' as const };
const map: GameMap = {
  ...tutorial,
  spawn: { leader: tutorial.spawn!.leader, follower: START },
  cards: tutorial.cards!.map((card, i) => (i < 3 ? { ...card, x: START.x + 8 + i, y: START.y } : card)),
};
const INSTRUCTION = 'Walk straight east and pick up the three cards in a row';

type PageView = Pick<ClientView, 'phase' | 'turn' | 'score' | 'follower' | 'instructions'>;
const view = async (page: Page): Promise<PageView> => page.evaluate(() => (window as unknown as { __game: { view: PageView } }).__game.view);

let server: BrowserTestServer;
let browser: Browser;

beforeAll(async () => {
  server = await startBrowserTestServer({ map, seed: 5, leaderTurnSeconds: 600, followerTurnSeconds: 600 });
  browser = await launchBrowser();
});

afterAll(async () => {
  await server?.close();
  await browser?.close();
});

async function joinAs(role: 'leader' | 'follower'): Promise<{ page: Page; errors: string[] }> {
  const opened = await openPage(browser, `${server.url}/?pool=last-step&role=${role}`);
  await opened.page.click('button.quick-play');
  return opened;
}

test("R-7: after a set made with the follower's last step, both pages show the instruction as still current, not done, and say why", async () => {
  const leader = await joinAs('leader');
  await leader.page.waitForSelector('.queue-position');
  const follower = await joinAs('follower');
  await leader.page.waitForSelector('.game-screen.leader');
  await follower.page.waitForSelector('.game-screen.follower');

  await leader.page.fill('textarea.instruction-input', INSTRUCTION);
  await leader.page.keyboard.press('Enter');
  await leader.page.waitForSelector('.leader-panel .instructions li.current');
  await leader.page.click('button.end-turn');
  await follower.page.waitForSelector('.follower-instructions li.current:has-text("Now")');
  expect(await follower.page.isHidden('.follower-panel .instruction-note')).toBe(true);

  // Ten steps forward, one at a time: the last one lands on the third card of the set.
  for (let step = 1; step <= 10; step++) {
    await follower.page.keyboard.press('ArrowUp');
    await follower.page.waitForFunction((x) => (window as unknown as { __game: { view: PageView } }).__game.view.follower.x === x, START.x + step);
  }
  for (const { page } of [leader, follower]) {
    await page.waitForFunction(() => {
      const { view } = (window as unknown as { __game: { view: PageView } }).__game;
      return view.score === 1 && view.turn.role === 'leader';
    });
  }

  // The view is right (rule 7: the queue is kept), and the pages show what it holds.
  for (const { page } of [leader, follower]) {
    expect((await view(page)).instructions).toEqual([{ id: 0, text: INSTRUCTION, status: 'current', shown: true }]);
  }
  await follower.page.waitForSelector('.follower-instructions li.current:has-text("Not done yet")');
  expect(await follower.page.textContent('.follower-instructions li.current')).toBe(`Not done yet${INSTRUCTION}`);
  expect(await follower.page.textContent('.follower-panel .instruction-note')).toMatch(/^Your turn ended before you pressed Done, so this instruction is still yours\./);
  expect(await follower.page.isDisabled('button.done-button')).toBe(true);
  await leader.page.waitForSelector('.leader-panel .instructions li.current:has-text("Current · not done yet")');
  expect(await leader.page.textContent('.leader-panel .instruction-note')).toMatch(/Only Done finishes an instruction, not a set\.$/);
  await follower.page.waitForSelector('.banner:has-text("Set made: +1 point")');
  await screenshot(follower.page, 'last-step-set-follower');
  await screenshot(leader.page, 'last-step-set-leader');

  // The instruction counts as queued: the leader may end its turn at once, and the follower finishes it with Done.
  await expect(leader.page.isDisabled('button.end-turn')).resolves.toBe(false);
  await leader.page.click('button.end-turn');
  await follower.page.waitForSelector('.follower-instructions li.current:has-text("Now")');
  expect(await follower.page.isHidden('.follower-panel .instruction-note')).toBe(true);
  await leader.page.waitForSelector('.leader-panel .instructions li.current:has-text("Current")');
  expect(await leader.page.isHidden('.leader-panel .instruction-note')).toBe(true);
  await follower.page.keyboard.press('d');
  await follower.page.waitForSelector('.follower-instructions li.empty');
  expect(await follower.page.locator('.follower-panel ol').nth(1).textContent()).toBe(`Done${INSTRUCTION}`);
  await leader.page.waitForSelector('.leader-panel .instructions li.done');
  expect(await leader.page.locator('.leader-panel .instructions li').allTextContents()).toEqual([`Done${INSTRUCTION}`]);
  expect(await leader.page.isHidden('.leader-panel .instruction-note')).toBe(true);
  expect([...leader.errors, ...follower.errors]).toEqual([]);
});
