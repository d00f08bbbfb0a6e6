/// <reference lib="dom" />
/**
 * The leader's keyboard, in real browser pages: no key meant as text is lost. After Enter sends,
 * the box keeps the focus, so what is typed at once is the next instruction; a key typed while the
 * box does not have the focus goes into it; Enter focuses the box; the arrows move the leader
 * while the box is empty (or after Esc), and edit the text while it is not; Ctrl+Enter sends what
 * the box holds and ends the turn. The keys of an input method's composition are left to it.
 */
import type { Page } from 'playwright-core';
import type { ClientView } from '../../shared/protocol/messages';
import { DOCUMENTED_GAME, openPage, screenshot, serverAndBrowser } from './harness';
import { quickPlay } from './players';

jest.setTimeout(180_000);

const FIRST = 'Walk to the pond and stop by the tree';
const SECOND = 'Then pick up the two red stars';

type PageView = Pick<ClientView, 'phase' | 'turn' | 'leader' | 'instructions'>;
const view = (page: Page) => page.evaluate(() => (window as never as { __game: { view: PageView } }).__game.view);
const box = (page: Page) =>
  page.evaluate(() => {
    const input = document.querySelector<HTMLTextAreaElement>('textarea.instruction-input')!;
    return { value: input.value, focused: document.activeElement === input, caret: input.selectionStart };
  });
/** Waits for the leader's steps to be `steps`: a move was sent and the server's view has come back. */
const stepsLeftIs = (page: Page, steps: number) =>
  page.waitForFunction((steps) => (window as never as { __game: { view: PageView } }).__game.view.turn.stepsLeft === steps, steps);
const sentTexts = (page: Page) => page.locator('.leader-panel .instructions li:not(.empty)').evaluateAll((items) => items.map((item) => item.lastChild!.textContent));

const running = serverAndBrowser(DOCUMENTED_GAME);

test('no key the leader types is lost: the box keeps the focus after Enter, takes keys typed elsewhere, and Ctrl+Enter ends the turn', async () => {
  const leader = await quickPlay(running.browser, running.server.url, 'leader-keys', 'leader');
  await leader.page.waitForSelector('.queue-position');
  const follower = await quickPlay(running.browser, running.server.url, 'leader-keys', 'follower');
  const { page } = leader;
  await page.waitForFunction(() => (window as never as { __game?: { view: PageView } }).__game?.view.phase === 'playing');
  await follower.page.waitForSelector('.game-screen.follower');
  expect(await page.evaluate(() => document.activeElement === document.body)).toBe(true);
  // The help under the panel names the keys.
  expect(await page.locator('.leader-panel .keys kbd').allTextContents()).toEqual(expect.arrayContaining(['Enter', 'Ctrl', 'Esc']));
  expect(await page.getAttribute('button.end-turn', 'aria-keyshortcuts')).toBe('Control+Enter Meta+Enter');

  // Ctrl+Enter with nothing queued and nothing written: the turn goes on, and the page says why.
  await page.keyboard.press('Control+Enter');
  await page.waitForSelector('.banner:has-text("Send an instruction first")');
  expect((await view(page)).turn.role).toBe('leader');

  // Typed with the focus on the page, not in the box: every key lands in the box.
  await page.keyboard.type(FIRST);
  expect(await box(page)).toEqual({ value: FIRST, focused: true, caret: FIRST.length });
  // Enter sends, and what is typed straight after is the next instruction, in the box.
  await page.keyboard.press('Enter');
  await page.keyboard.type(SECOND);
  expect(await box(page)).toMatchObject({ value: SECOND, focused: true });
  await page.keyboard.press('Enter');
  await page.waitForSelector('.leader-panel .instructions li:nth-child(2)');
  expect(await sentTexts(page)).toEqual([FIRST, SECOND]);
  expect(await box(page)).toMatchObject({ value: '', focused: true });

  // In the empty box the arrows move the leader.
  const steps = (await view(page)).turn.stepsLeft!;
  await page.keyboard.press('ArrowRight');
  await stepsLeftIs(page, steps - 1);
  expect(await box(page)).toMatchObject({ value: '', focused: true });

  // With text in the box they move the caret, not the leader; after Esc they move the leader again.
  await page.keyboard.type('Then wait');
  await page.keyboard.press('ArrowLeft');
  expect(await box(page)).toEqual({ value: 'Then wait', focused: true, caret: 'Then wai'.length });
  await page.keyboard.press('Escape');
  expect((await box(page)).focused).toBe(false);
  await page.keyboard.press('ArrowRight');
  await stepsLeftIs(page, steps - 2);
  // A key typed out of the box goes at the end of the draft, wherever the caret was.
  await page.keyboard.type(' there');
  expect(await box(page)).toEqual({ value: 'Then wait there', focused: true, caret: 'Then wait there'.length });
  // Enter out of the box focuses it, and neither sends nor adds a line.
  await page.keyboard.press('Escape');
  await page.keyboard.press('Enter');
  expect(await box(page)).toMatchObject({ value: 'Then wait there', focused: true });
  expect(await sentTexts(page)).toEqual([FIRST, SECOND]);
  // Nor does an Enter or Esc with which an input method composes a character (for Chinese, Japanese...).
  for (const key of ['Enter', 'Escape']) {
    await page.evaluate((key) => {
      const event = new KeyboardEvent('keydown', { key, isComposing: true, bubbles: true, cancelable: true });
      document.querySelector('textarea.instruction-input')!.dispatchEvent(event);
    }, key);
    expect(await box(page)).toMatchObject({ value: 'Then wait there', focused: true });
  }
  await screenshot(page, 'leader-keys-draft');

  // Ctrl+Enter sends the draft and ends the turn.
  await page.keyboard.press('Control+Enter');
  await follower.page.waitForSelector(`.follower-instructions li.current:has-text("${FIRST}")`);
  await page.waitForFunction(() => document.body.dataset.turn === 'theirs');
  expect(await sentTexts(page)).toEqual([FIRST, SECOND, 'Then wait there']);
  expect((await view(page)).instructions.map((instruction) => instruction.text)).toEqual([FIRST, SECOND, 'Then wait there']);

  // In the follower's turn the leader may write the next one: the keys still go into the box.
  await page.keyboard.press('Escape');
  await page.keyboard.type('Next');
  expect(await box(page)).toMatchObject({ value: 'Next', focused: true });
  expect((await view(page)).turn.role).toBe('follower');
  await screenshot(page, 'leader-keys-follower-turn');
  expect([...leader.errors, ...follower.errors]).toEqual([]);
});

test("the leader's tutorial, played with the keys alone as its steps say: typing writes the instruction, Ctrl+Enter ends the turn", async () => {
  const { page, errors } = await openPage(running.browser, `${running.server.url}/?tutorial=leader`);
  await page.waitForSelector('.tutorial-hint li.current:has-text("arrow keys")');
  await page.keyboard.press('ArrowRight');
  await page.waitForSelector('.tutorial-hint li.current:has-text("press Enter")');
  await page.keyboard.type('Pick up the 1 red star');
  await page.keyboard.press('Enter');
  await page.waitForSelector('.tutorial-hint li.current:has-text("Press End turn (or Ctrl+Enter)")');
  await page.keyboard.press('Control+Enter');
  await page.waitForSelector('.tutorial-hint li.current:has-text("Watch the follower")');
  expect((await view(page)).instructions.map((instruction) => instruction.text)).toEqual(['Pick up the 1 red star']);
  expect(errors).toEqual([]);
});
