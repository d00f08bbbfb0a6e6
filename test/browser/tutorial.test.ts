/// <reference lib="dom" />
/**
 * The interactive tutorials, played in a real page to their end: the leader's (move, write an
 * instruction, end the turn, watch it done, make a set) and the follower's (read the instruction,
 * walk onto the card it names, press Done, until a set is made). The test steers with the
 * engine's path planner over the tutorial map, pressing the keys a person would.
 */
import type { Browser } from 'playwright-core';
import { isValidSet } from '../../shared/engine/cards';
import { launchBrowser, openPage, screenshot, startBrowserTestServer, type BrowserTestServer } from './harness';
import { currentStep, myTurn, playFollowerTutorial, stepToward, tutorialView as view } from './tutorialPlayer';

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

  // A valid set on the board: the leader steps onto each of its cards, giving the follower a
  // bare move to make between its turns (steps 2 to 4 along the way).
  const cards = (await view(page)).cards;
  const set = cards.flatMap((a, i) => cards.slice(i + 1).flatMap((b, j) => cards.slice(i + j + 2).map((c) => [a, b, c]))).find(isValidSet)!;
  expect(set).toBeDefined();
  let leftToSelect = [...set];
  for (let rounds = 0; leftToSelect.length > 0 && rounds < 40; rounds++) {
    await myTurn(page, 'leader');
    while ((await view(page)).turn.stepsLeft > 0 && leftToSelect.length > 0) {
      if (!(await stepToward(page, 'leader', leftToSelect[0]))) leftToSelect = leftToSelect.slice(1);
      const selected = new Set((await view(page)).cards.filter((card) => card.selected).map((card) => card.id));
      leftToSelect = leftToSelect.filter((card) => !selected.has(card.id));
      if ((await view(page)).score > 0) leftToSelect = [];
    }
    if (leftToSelect.length === 0) break;
    if (rounds === 0) expect(await currentStep(page)).toContain('Write an instruction');
    await page.fill('textarea.instruction-input', 'Turn left');
    await page.keyboard.press('Enter');
    if (rounds === 0) expect(await currentStep(page)).toContain('End turn');
    await page.click('button.end-turn');
  }
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
