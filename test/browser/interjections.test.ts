/// <reference lib="dom" />
/**
 * The leader's live feedback and cancelling in real browsers, on a server whose games have both
 * rules on: the follower sees a negative signal as it arrives (an icon and words, not a colour) and
 * the leader that it was sent, without losing the draft in its box; the leader cancels with the
 * keyboard alone (a second press confirms, one press alone does nothing) and both pages show the
 * instructions cancelled and the follower's turn over; the replay of that game marks both on its
 * timeline, with the words of describeEvent. The pages after the cancel and the replay with its
 * marks have no accessibility violation (test/browser/accessibility.test.ts audits the controls).
 */
import type { Page } from 'playwright-core';
import { makeConfig } from '../../shared/engine/config';
import { audit } from './axe';
import { ADMIN_TOKEN, DOCUMENTED_GAME, screenshot, serverAndBrowser, openPage } from './harness';
import { FIRST_INSTRUCTION, gameWithQueuedInstruction, SECOND_INSTRUCTION, waitForWorld, type PlayerPage } from './players';

jest.setTimeout(120_000);

const POOL = 'interjections';
const started = serverAndBrowser({ ...DOCUMENTED_GAME, config: makeConfig({ liveFeedback: true, cancelInstructions: true }) });

interface PageView {
  readonly turn: { readonly role: string; readonly stepsLeft: number | null };
  readonly instructions: readonly { readonly status: string; readonly text: string }[];
  readonly legal: { readonly feedback: boolean; readonly cancel: boolean };
  readonly config: { readonly followerSteps: number };
}
const viewOf = (page: Page) => page.evaluate(() => (window as never as { __game: { view: PageView } }).__game.view);

/** An accessibility audit that fails on any violation, of any impact. */
async function expectAccessible(page: Page, name: string): Promise<void> {
  const found = await audit(page, name);
  expect(found.violations.map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`)).toEqual([]);
}

let leader: PlayerPage;
let follower: PlayerPage;

beforeAll(async () => {
  ({ leader, follower } = await gameWithQueuedInstruction(started.browser, started.server.url, POOL));
  await waitForWorld(leader.page);
  await waitForWorld(follower.page);
});

test('the follower sees a negative signal as it arrives; the leader sees it sent, and keeps its draft', async () => {
  expect((await viewOf(leader.page)).legal).toMatchObject({ feedback: true, cancel: true });
  await leader.page.waitForSelector('.interjections:not([hidden]) button.feedback.negative');
  // The leader writes the next instruction in the follower's turn: keys go into the box, the chord does not.
  await leader.page.keyboard.type('Next, the green');
  await leader.page.keyboard.press('Control+ArrowDown');

  const cue = follower.page.locator('.feedback-cue');
  await cue.waitFor({ state: 'visible' });
  expect(await cue.getAttribute('role')).toBe('status');
  expect(await cue.getAttribute('data-signal')).toBe('negative');
  expect(await cue.innerText()).toMatch(/^Not that\s+The leader's feedback$/);
  expect(await cue.locator('svg.icon.thumb.negative').count()).toBe(1);
  await screenshot(follower.page, 'feedback-follower-negative');

  await leader.page.waitForSelector('.interjection-note:has-text("Sent")');
  const { config, turn } = await viewOf(follower.page);
  const steps = config.followerSteps - (turn.stepsLeft ?? 0);
  expect(steps).toBeGreaterThan(0);
  expect(await leader.page.locator('.interjection-note').innerText()).toBe(`Sent “Not that” to the follower, after its step ${steps}.`);
  expect(await leader.page.inputValue('textarea.instruction-input')).toBe('Next, the green');
  await screenshot(leader.page, 'feedback-leader-sent');
  // The signal changed nothing: still the follower's turn, its instruction current.
  expect((await viewOf(follower.page)).turn.role).toBe('follower');

  // It fades after a few seconds.
  await cue.waitFor({ state: 'hidden', timeout: 8000 });
  expect([...leader.errors, ...follower.errors]).toEqual([]);
});

test('the leader cancels with the keyboard alone: one press asks, a second within seconds cancels; both pages show it', async () => {
  await leader.page.fill('textarea.instruction-input', '');
  await leader.page.locator('textarea.instruction-input').blur();

  // One press alone only asks, and stops asking after a few seconds.
  await leader.page.keyboard.press('Control+Shift+X');
  await leader.page.waitForSelector('button.cancel-instructions.armed');
  await screenshot(leader.page, 'cancel-leader-asking');
  expect(await leader.page.locator('.interjection-note').innerText()).toMatch(/within 3 s to cancel both instructions and end the follower's turn\.$/);
  await leader.page.waitForSelector('button.cancel-instructions:not(.armed)', { timeout: 6000 });
  expect((await viewOf(follower.page)).turn.role).toBe('follower');

  await leader.page.keyboard.press('Control+Shift+X');
  await leader.page.keyboard.press('Control+Shift+X');

  // The follower: its instruction cancelled, its turn over, and why in words.
  await follower.page.waitForSelector('body[data-turn=theirs] .follower-panel ol li.cancelled');
  const previous = follower.page.locator('.follower-panel ol').nth(1).locator('li');
  expect(await previous.textContent()).toBe(`Cancelled by the leader${FIRST_INSTRUCTION}`);
  expect(await follower.page.locator('.follower-instructions li').innerText()).toBe('No instruction yet: wait for the leader.');
  await follower.page.waitForSelector('.banner:has-text("The leader cancelled its instructions, so your turn is over")');
  const followerView = await viewOf(follower.page);
  expect(followerView.turn.role).toBe('leader');
  expect(followerView.instructions.map((instruction) => instruction.status)).toEqual(['cancelled']);
  await screenshot(follower.page, 'cancel-follower');
  await expectAccessible(follower.page, "the follower's page after a cancel");

  // The leader: both instructions cancelled, in words and struck through, and its turn.
  await leader.page.waitForSelector('body[data-turn=mine] .leader-panel .instructions li.cancelled:nth-child(2)');
  const items = leader.page.locator('.leader-panel .instructions li');
  expect(await items.locator('.tag').allTextContents()).toEqual(['Cancelled', 'Cancelled']);
  expect(await items.locator('.text').allInnerTexts()).toEqual([FIRST_INSTRUCTION, SECOND_INSTRUCTION]);
  expect(await items.first().evaluate((item) => getComputedStyle(item).textDecorationLine)).toBe('line-through');
  await leader.page.waitForSelector('.banner:has-text("You cancelled the follower\'s 2 instructions: its turn is over, and yours begins.")');
  expect(await leader.page.locator('.interjections').isHidden()).toBe(true);
  await screenshot(leader.page, 'cancel-leader');
  await expectAccessible(leader.page, "the leader's page after a cancel");
  expect([...leader.errors, ...follower.errors]).toEqual([]);
});

test("the game's replay marks the feedback and the cancel on the timeline", async () => {
  const [game] = await started.server.store.listGames({ pool: POOL });
  const { page, errors } = await openPage(started.browser, `${started.server.url}/replay/?game=${game.gameId}`);
  await page.fill('input.replay-token', ADMIN_TOKEN);
  await page.click('.replay-token-form button[type=submit]');
  await page.waitForFunction(() => (window as never as { __replay: { ready: boolean } }).__replay.ready, undefined, { timeout: 60_000 });
  await waitForWorld(page);

  const marks = page.locator('.replay-marks .replay-mark');
  expect(await marks.evaluateAll((all) => all.map((mark) => mark.getAttribute('data-kind')))).toEqual(['negative', 'cancel']);
  const labels = await marks.evaluateAll((all) => all.map((mark) => mark.getAttribute('aria-label')));
  expect(labels[0]).toMatch(/^Event \d+: The leader gave negative feedback on instruction 1$/);
  expect(labels[1]).toMatch(/^Event \d+: The leader cancelled instructions 1 and 2\. The follower's turn ends: the leader's turn begins \(\d+ turns? left\)$/);
  expect(await marks.first().getAttribute('title')).toBe(labels[0]);

  // Each mark sits over its event on the slider, and a click goes there.
  const slider = await page.locator('input.replay-slider').boundingBox();
  const events = (await page.evaluate(() => (window as never as { __replay: { events: number } }).__replay.events)) as number;
  for (const mark of await marks.all()) {
    const at = Number(await mark.getAttribute('data-at'));
    const box = (await mark.boundingBox())!;
    const thumb = 16;
    const expected = slider!.x + thumb / 2 + ((slider!.width - thumb) * at) / events;
    expect(Math.abs(box.x + box.width / 2 - expected)).toBeLessThan(2);
  }
  const cancelAt = Number(await marks.last().getAttribute('data-at'));
  await marks.last().click();
  await page.waitForFunction((at) => (window as never as { __replay: { cursor: number } }).__replay.cursor === at, cancelAt);
  expect(await page.locator('.replay-event li').first().innerText()).toBe('The leader cancelled instructions 1 and 2');
  expect(await page.locator('.replay-instructions li.cancelled .tag').allTextContents()).toEqual(['Cancelled', 'Cancelled']);
  await marks.first().hover();
  await screenshot(page, 'replay-feedback-marks');
  await expectAccessible(page, 'the replay with its marks');
  expect(errors).toEqual([]);
});
