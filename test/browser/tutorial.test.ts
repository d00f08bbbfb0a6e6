/// <reference lib="dom" />
/**
 * The interactive tutorials, played in a real page to their end: the leader's (move, write an
 * instruction, end the turn, watch it done, make a set) and the follower's (read the instruction,
 * walk onto the card it names, press Done, until a set is made). The test steers with the
 * engine's path planner over the tutorial map, pressing the keys a person would. The follower's
 * first instruction must name a card in its first view, and that view must show the hex it stands on.
 */
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { describeCard } from '../../shared/engine/cards';
import { ROLE_COLOURS } from '../../client/src/world/avatars';
import { launchBrowser, openPage, pixelsIn, screenshot, startBrowserTestServer, type Box, type BrowserTestServer } from './harness';
import { waitForWorld } from './players';
import { currentStep, myTurn, playFollowerTutorial, playLeaderTutorial, tutorialView } from './tutorialPlayer';

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

/** The share of a screenshot's pixels inside `box` (sampled on a grid) that are `colour`, give or take a little. */
async function shareOfColour(page: Page, png: Buffer, box: Box, colour: string): Promise<number> {
  const want = [1, 3, 5].map((at) => parseInt(colour.slice(at, at + 2), 16));
  const pixels = await pixelsIn(page, png, box, 2);
  return pixels.filter((pixel) => want.every((value, i) => Math.abs(pixel[i] - value) <= 12)).length / pixels.length;
}

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

  // The first instruction names a card the follower sees from where it starts (a follower's view
  // holds only the cards in view), and its footing shows the hex it stands on.
  await myTurn(page, 'follower');
  const first = await tutorialView(page);
  const instruction = first.instructions.find((i) => i.status === 'current')!.text;
  expect(first.cards.filter((card) => instruction.includes(describeCard(card)))).toHaveLength(1);
  await waitForWorld(page);
  await page.waitForFunction(() => document.querySelectorAll('.banner').length === 0, undefined, { timeout: 15_000 });
  const start = readFileSync(await screenshot(page, 'tutorial-follower-start'));
  const world = (await page.locator('.world').boundingBox())!;
  // The footing's teal outline lies at the bottom of the view, on the hex the follower stands on.
  const bottom = { x: world.x, y: world.y + (world.height * 2) / 3, width: world.width, height: world.height / 3 };
  const top = { ...bottom, y: world.y };
  expect(await shareOfColour(page, start, bottom, ROLE_COLOURS.follower)).toBeGreaterThan(0.02);
  expect(await shareOfColour(page, start, top, ROLE_COLOURS.follower)).toBe(0);

  await playFollowerTutorial(page, async (instruction) => {
    if (instruction === 0) expect(await currentStep(page)).toContain('press Done');
  });
  await page.waitForSelector('.tutorial-complete');
  expect(await page.locator('.tutorial-hint li.done').count()).toBe(4);
  await screenshot(page, 'tutorial-follower-complete');
  expect(errors).toEqual([]);
});
