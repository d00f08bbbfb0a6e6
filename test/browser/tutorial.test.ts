/// <reference lib="dom" />
/**
 * The interactive tutorials, played in a real page to their end: the leader's (move, write an
 * instruction, end the turn, watch it done, make a set) and the follower's (read the instruction,
 * walk onto the card it names, press Done, until a set is made). The test steers with the
 * engine's path planner over the tutorial map, pressing the keys a person would.
 */
import type { Browser } from 'playwright-core';
import { launchBrowser, openPage, screenshot, startBrowserTestServer, type BrowserTestServer } from './harness';
import { currentStep, myTurn, playFollowerTutorial, playLeaderTutorial } from './tutorialPlayer';

jest.setTimeout(180_000);

let server: BrowserTestServer;
let browser: Browser;

beforeAll(async () => {
  server = await startBrowserTestServer();
  browser = await launchBrowser();
});

afterAll(async () => {
  await server?.close();
  await browser?.close();
});

test("the leader's tutorial: every step must be done, and it ends in the lobby", async () => {
  const { page, errors } = await openPage(browser, `${server.url}/?tutorial=leader`);
  await page.waitForSelector('.game-screen.leader .tutorial-hint');
  expect(await currentStep(page)).toContain('Move your avatar');
  await screenshot(page, 'tutorial-leader');
  await myTurn(page, 'leader');

  // The leader steps onto each card of a valid set, giving the follower a bare move to make
  // between its turns (steps 2 to 4 along the way).
  await playLeaderTutorial(page, {
    beforeInstruction: async () => expect(await currentStep(page)).toContain('Write an instruction'),
    beforeEndTurn: async () => expect(await currentStep(page)).toContain('End turn'),
  });
  await page.waitForSelector('.tutorial-complete');
  expect(await page.locator('.tutorial-hint li.done').count()).toBe(5);
  await screenshot(page, 'tutorial-leader-complete');
  await page.click('.tutorial-complete button.continue');
  await page.waitForSelector('button.quick-play');
  expect(new URL(page.url()).searchParams.get('tutorial')).toBeNull();
  expect(errors).toEqual([]);
});

test("the follower's tutorial: follow the scripted leader's instructions until a set is made", async () => {
  // From the lobby's "Learn to play", keeping the link's pool.
  const { page, errors } = await openPage(browser, `${server.url}/?pool=tutorials`);
  await page.click('a.tutorial-link[data-role=follower]');
  await page.waitForSelector('.game-screen.follower .tutorial-hint');
  expect(Object.fromEntries(new URL(page.url()).searchParams)).toEqual({ pool: 'tutorials', tutorial: 'follower' });
  await playFollowerTutorial(page, async (instruction) => {
    if (instruction === 0) expect(await currentStep(page)).toContain('press Done');
  });
  await page.waitForSelector('.tutorial-complete');
  expect(await page.locator('.tutorial-hint li.done').count()).toBe(4);
  await screenshot(page, 'tutorial-follower-complete');
  expect(errors).toEqual([]);
});
