/// <reference lib="dom" />
/**
 * The interactive tutorials, played in a real page to their end: the leader's (move, write an
 * instruction, end the turn, watch it done, make a set) and the follower's (read the instruction,
 * walk onto the card it names, press Done, until a set is made). The test steers with the
 * engine's path planner over the tutorial map, pressing the keys a person would.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { describeCard, isValidSet, type Card } from '../../shared/engine/cards';
import { buildWorld, mapSchema } from '../../shared/engine/map';
import type { Pose } from '../../shared/engine/hex';
import { PathPlanner } from '../../shared/nav/pathing';
import { launchBrowser, openPage, screenshot, startBrowserTestServer, type BrowserTestServer } from './harness';

jest.setTimeout(180_000);

const tutorial = mapSchema.parse(JSON.parse(readFileSync(join(__dirname, '../../maps/tutorial.json'), 'utf8')));
const planner = new PathPlanner(buildWorld(tutorial));
const KEYS = { MF: 'ArrowUp', MB: 'ArrowDown', RL: 'ArrowLeft', RR: 'ArrowRight' } as const;

interface TutorialView {
  readonly turn: { readonly role: string; readonly stepsLeft: number };
  readonly leader: Pose;
  readonly follower: Pose;
  readonly cards: Card[];
  readonly score: number;
  readonly instructions: { readonly text: string; readonly status: string; readonly shown: boolean }[];
}
const view = (page: Page) => page.evaluate(() => (window as never as { __game: { view: TutorialView } }).__game.view);
const myTurn = (page: Page, role: string) =>
  page.waitForFunction((role) => (window as never as { __game?: { view: TutorialView } }).__game?.view.turn.role === role, role, { timeout: 60_000 });
const currentStep = (page: Page) => page.textContent('.tutorial-hint li.current');

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

/** One key toward `target`, on `role`'s turn; false when there is nothing to press (there, or no way). */
async function stepToward(page: Page, role: 'leader' | 'follower', target: Card): Promise<boolean> {
  const before = await view(page);
  const pose = before[role];
  if (pose.x === target.x && pose.y === target.y) return false;
  const move = planner.nextMove(before.cards, pose, target);
  if (!move) return false;
  await page.keyboard.press(KEYS[move]);
  await page.waitForFunction(
    ([role, x, y, heading, steps]) => {
      const now = (window as never as { __game: { view: TutorialView } }).__game.view;
      const me = now[role as 'leader'];
      return me.x !== x || me.y !== y || me.heading !== heading || now.turn.stepsLeft !== steps || now.turn.role !== role;
    },
    [role, pose.x, pose.y, pose.heading, before.turn.stepsLeft] as const,
  );
  return true;
}

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
  for (let instructions = 0; instructions < 12 && !(await page.isVisible('.tutorial-complete')); instructions++) {
    await myTurn(page, 'follower');
    const current = (await view(page)).instructions.find((instruction) => instruction.status === 'current')!;
    expect(current.text).toMatch(/^Walk to the card with /);
    // The card it names, from the tutorial's cards (no set has been made yet, so they are all there).
    const target = tutorial.cards!.map((card, id) => ({ ...card, id, selected: false }) as Card).find((card) => current.text.includes(describeCard(card)))!;
    expect(target).toBeDefined();
    while (await stepToward(page, 'follower', target)) {
      if ((await view(page)).turn.role !== 'follower') await myTurn(page, 'follower');
    }
    if (instructions === 0) expect(await currentStep(page)).toContain('press Done');
    await page.keyboard.press('d');
    await page.waitForFunction((text) => !(window as never as { __game: { view: TutorialView } }).__game.view.instructions.some((i) => i.text === text && i.status === 'current'), current.text);
  }
  await page.waitForSelector('.tutorial-complete');
  expect(await page.locator('.tutorial-hint li.done').count()).toBe(4);
  await screenshot(page, 'tutorial-follower-complete');
  expect(errors).toEqual([]);
});
