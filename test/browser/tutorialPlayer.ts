/// <reference lib="dom" />
/**
 * Playing the interactive tutorials in a page as a person would, steering with the engine's path
 * planner over the tutorial map and pressing the keys: used by the tutorials' own test and by the
 * study pages' test (where the follower's tutorial is one of a worker's steps).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Frame, Page } from 'playwright-core';
import { describeCard, isValidSet, type Card } from '../../shared/engine/cards';
import { buildWorld, mapSchema } from '../../shared/engine/map';
import type { Pose } from '../../shared/engine/hex';
import { PathPlanner } from '../../shared/nav/pathing';

export const tutorialMap = mapSchema.parse(JSON.parse(readFileSync(join(__dirname, '../../maps/tutorial.json'), 'utf8')));
const tutorialPlanner = new PathPlanner(buildWorld(tutorialMap));
const KEYS = { MF: 'ArrowUp', MB: 'ArrowDown', RL: 'ArrowLeft', RR: 'ArrowRight' } as const;

export interface TutorialView {
  readonly turn: { readonly role: string; readonly stepsLeft: number };
  readonly leader: Pose;
  readonly follower: Pose;
  readonly cards: Card[];
  readonly score: number;
  readonly instructions: { readonly text: string; readonly status: string; readonly shown: boolean }[];
}

export const tutorialView = (page: Page | Frame) => page.evaluate(() => (window as never as { __game: { view: TutorialView } }).__game.view);
export const myTurn = (page: Page, role: string) =>
  page.waitForFunction((role) => (window as never as { __game?: { view: TutorialView } }).__game?.view.turn.role === role, role, { timeout: 60_000 });
export const currentStep = (page: Page) => page.textContent('.tutorial-hint li.current');

/**
 * One key toward `target`, on `role`'s turn; false when there is nothing to press (there, or no
 * way). `planner` is for the map being played (the tutorial's by default). In a frame, the frame
 * must have the focus.
 */
export async function stepToward(page: Page | Frame, role: 'leader' | 'follower', target: Card, planner: PathPlanner = tutorialPlanner): Promise<boolean> {
  const before = await tutorialView(page);
  const pose = before[role];
  if (pose.x === target.x && pose.y === target.y) return false;
  const move = planner.nextMove(before.cards, pose, target);
  if (!move) return false;
  // A frame's page has the keyboard (its key presses go to the frame that has the focus).
  await ('keyboard' in page ? page : page.page()).keyboard.press(KEYS[move]);
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

/**
 * The follower's tutorial, played until its "complete" dialog: each of the scripted leader's
 * instructions names a card, walked onto, then Done. `beforeDone` runs before each Done is pressed.
 */
export async function playFollowerTutorial(page: Page, beforeDone: (instruction: number) => Promise<void> = async () => undefined): Promise<void> {
  for (let instructions = 0; instructions < 12 && !(await page.isVisible('.tutorial-complete')); instructions++) {
    await myTurn(page, 'follower');
    const current = (await tutorialView(page)).instructions.find((instruction) => instruction.status === 'current')!;
    expect(current.text).toMatch(/^Walk to the card with /);
    // The card it names, from the tutorial's cards (no set has been made yet, so they are all there).
    const target = tutorialMap.cards!.map((card, id) => ({ ...card, id, selected: false }) as Card).find((card) => current.text.includes(describeCard(card)))!;
    expect(target).toBeDefined();
    while (await stepToward(page, 'follower', target)) {
      if ((await tutorialView(page)).turn.role !== 'follower') await myTurn(page, 'follower');
    }
    await beforeDone(instructions);
    await page.keyboard.press('d');
    await page.waitForFunction((text) => !(window as never as { __game: { view: TutorialView } }).__game.view.instructions.some((i) => i.text === text && i.status === 'current'), current.text);
  }
  await page.waitForSelector('.tutorial-complete');
}

/**
 * The leader's tutorial, played until its "complete" dialog: the leader walks onto the cards of a
 * valid set, writing an instruction and ending its turn whenever its steps run out (the scripted
 * follower plays between). `checks` run at the first round's instruction and End Turn.
 */
export async function playLeaderTutorial(page: Page, checks: { beforeInstruction?: () => Promise<void>; beforeEndTurn?: () => Promise<void> } = {}): Promise<void> {
  await myTurn(page, 'leader');
  const cards = (await tutorialView(page)).cards;
  const set = cards.flatMap((a, i) => cards.slice(i + 1).flatMap((b, j) => cards.slice(i + j + 2).map((c) => [a, b, c]))).find(isValidSet)!;
  expect(set).toBeDefined();
  let leftToSelect = [...set];
  for (let rounds = 0; leftToSelect.length > 0 && rounds < 40; rounds++) {
    await myTurn(page, 'leader');
    while ((await tutorialView(page)).turn.stepsLeft > 0 && leftToSelect.length > 0) {
      if (!(await stepToward(page, 'leader', leftToSelect[0]))) leftToSelect = leftToSelect.slice(1);
      const selected = new Set((await tutorialView(page)).cards.filter((card) => card.selected).map((card) => card.id));
      leftToSelect = leftToSelect.filter((card) => !selected.has(card.id));
      if ((await tutorialView(page)).score > 0) leftToSelect = [];
    }
    if (leftToSelect.length === 0) break;
    if (rounds === 0) await checks.beforeInstruction?.();
    await page.fill('textarea.instruction-input', 'Turn left');
    await page.keyboard.press('Enter');
    if (rounds === 0) await checks.beforeEndTurn?.();
    await page.click('button.end-turn');
  }
  await page.waitForSelector('.tutorial-complete');
}
