/// <reference lib="dom" />
/**
 * Two players in real browser pages, on a real server: the leader writes instructions and ends
 * its turn, the follower moves with the keyboard onto a card and presses Done, and each page
 * shows what that player may see, and nothing more.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { describeCard } from '../../shared/engine/cards';
import { HEURISTIC_UNDERSTANDS } from '../../shared/agents/builtin';
import { buildWorld, cellIndex, mapSchema, type GameMap } from '../../shared/engine/map';
import { launchBrowser, openPage, screenshot, startBrowserTestServer, type BrowserTestServer } from './harness';
import type { ClientView } from '../../shared/protocol/messages';
import type { OverviewLayout } from '../../client/src/world/WorldRenderer';

jest.setTimeout(180_000);

const tutorial = mapSchema.parse(JSON.parse(readFileSync(join(__dirname, '../../maps/tutorial.json'), 'utf8')));
const tutorialWorld = buildWorld(tutorial);
const isFree = (cell: { x: number; y: number }) =>
  tutorialWorld.walkable[cellIndex(tutorial, cell)] === 1 && !tutorial.cards!.some((card) => card.x === cell.x && card.y === cell.y);
/** A card with a free cell to its west, where the follower starts, facing it. */
const TARGET_ID = tutorial.cards!.findIndex((card) => isFree({ x: card.x - 1, y: card.y }));
const TARGET = tutorial.cards![TARGET_ID];
const map: GameMap = { ...tutorial, spawn: { leader: tutorial.spawn!.leader, follower: { x: TARGET.x - 1, y: TARGET.y, heading: 'E' } } };

const FIRST = 'Step forward onto the <b>card</b> & stop';
const SECOND = 'Then walk north to the pond';

interface PageGame {
  role: string;
  /** The page's GameView: the player's view as the server sent it (shared/protocol/messages.ts, ClientView). */
  view: Pick<ClientView, 'phase' | 'turn' | 'follower' | 'cards' | 'instructions'>;
}
const game = (page: Page) => page.evaluate(() => (window as unknown as { __game?: PageGame }).__game ?? null);

let server: BrowserTestServer;
let browser: Browser;

beforeAll(async () => {
  expect(TARGET_ID).toBeGreaterThanOrEqual(0);
  server = await startBrowserTestServer({ map, seed: 7, leaderTurnSeconds: 600, followerTurnSeconds: 600 });
  browser = await launchBrowser();
});

afterAll(async () => {
  // The server first: pages that vanished first would leave seats held for reconnection.
  await server?.close();
  await browser?.close();
});

async function joinAs(role: 'leader' | 'follower', query: string): Promise<{ page: Page; errors: string[] }> {
  const opened = await openPage(browser, `${server.url}/?${query}`);
  await opened.page.check(`input[name=role][value=${role}]`);
  await opened.page.click('button.quick-play');
  return opened;
}

test('a leader and a follower play a turn each, each page showing only what its player may see', async () => {
  const leader = await joinAs('leader', 'pool=browser&workerId=W1&assignmentId=A1');
  await leader.page.waitForSelector('.queue-position:has-text("next in line")');
  const follower = await joinAs('follower', 'pool=browser&workerId=W2&assignmentId=A2');
  await leader.page.waitForSelector('.game-screen.leader');
  await follower.page.waitForSelector('.game-screen.follower');
  await leader.page.waitForFunction(() => (window as never as { __game?: { view: { phase: string } } }).__game?.view.phase === 'playing');

  // The page's colour says whose turn it is.
  expect(await leader.page.getAttribute('body', 'data-turn')).toBe('mine');
  expect(await follower.page.getAttribute('body', 'data-turn')).toBe('theirs');
  await expect(leader.page.isDisabled('button.end-turn')).resolves.toBe(true);

  // The box counts characters as the server does (an emoji is one): over the limit, the counter
  // turns red and nothing can be sent; at the limit it can.
  await leader.page.fill('textarea.instruction-input', '🙂'.repeat(301));
  await leader.page.waitForSelector('.instruction-form .count.over:has-text("301 / 300")');
  await expect(leader.page.isDisabled('button.send')).resolves.toBe(true);
  await leader.page.keyboard.press('Enter');
  await leader.page.fill('textarea.instruction-input', '🙂'.repeat(300));
  await leader.page.waitForSelector('.instruction-form .count:not(.over):has-text("300 / 300")');
  await expect(leader.page.isDisabled('button.send')).resolves.toBe(false);
  expect(await leader.page.locator('.leader-panel .instructions li.empty').count()).toBe(1);
  expect((await game(leader.page))!.view.instructions).toEqual([]);

  // The leader writes two instructions; Enter sends. The text is shown as text, not as HTML.
  await leader.page.fill('textarea.instruction-input', FIRST);
  await leader.page.keyboard.press('Enter');
  await leader.page.waitForSelector(`.instructions li:has-text("Step forward")`);
  await leader.page.fill('textarea.instruction-input', SECOND);
  await leader.page.click('button.send');
  await leader.page.waitForSelector('.leader-panel .instructions li:nth-child(2)');
  expect(await leader.page.locator('.leader-panel .instructions li').allTextContents()).toEqual([
    `Next · not seen yet${FIRST}`,
    `Not seen yet${SECOND}`,
  ]);
  expect(await leader.page.locator('.leader-panel .instructions b').count()).toBe(0);
  expect(await follower.page.textContent('body')).not.toContain('Step forward');

  await leader.page.click('button.end-turn');
  // The follower's turn is cued on its page, and not on the leader's.
  await follower.page.waitForSelector('.banner:has-text("Your turn: follow the current instruction.")');
  expect(await leader.page.locator('.banner:has-text("Your turn")').count()).toBe(0);
  await follower.page.waitForSelector(`.follower-instructions li:has-text("Step forward")`);
  expect(await follower.page.getAttribute('body', 'data-turn')).toBe('mine');
  await leader.page.waitForSelector('.leader-panel .instructions li.current:has-text("Current")');

  // The follower sees the current instruction only: not the queued one, on the page or in its state.
  const followerText = await follower.page.textContent('body');
  expect(followerText).toContain(FIRST);
  expect(followerText).not.toContain(SECOND);
  expect(JSON.stringify(await game(follower.page))).not.toContain(SECOND);

  // The leader's keys do nothing on the follower's turn.
  const before = (await game(leader.page))!.view.follower;
  await leader.page.keyboard.press('ArrowUp');
  await leader.page.waitForSelector('.banner:has-text("follower\'s turn")');

  // The follower steps onto the card with the keyboard; the leader sees it move and the card selected.
  await follower.page.keyboard.press('ArrowUp');
  await leader.page.waitForFunction(
    ([x, y]) => {
      const view = (window as never as { __game: PageGame }).__game.view;
      return view.follower.x === x && view.follower.y === y && view.cards.some((card) => card.selected);
    },
    [TARGET.x, TARGET.y],
  );
  const seenByLeader = (await game(leader.page))!.view;
  expect(seenByLeader.follower).toMatchObject({ x: TARGET.x, y: TARGET.y, heading: 'E' });
  expect(before).toMatchObject(map.spawn!.follower);
  expect(seenByLeader.cards.filter((card) => card.selected).map((card) => card.id)).toEqual([TARGET_ID]);
  await follower.page.waitForFunction(() => (window as never as { __game: PageGame }).__game.view.cards.some((card) => card.selected));
  expect(await follower.page.textContent('[data-stat=steps]')).toBe('9');
  expect(await leader.page.textContent('[data-stat=steps]')).toBe('9');
  // Each says whose steps they are.
  expect(await follower.page.textContent('.stat:has([data-stat=steps]) .label')).toBe('Your steps');
  expect(await leader.page.textContent('.stat:has([data-stat=steps]) .label')).toBe("Follower's steps");

  // Both say in words which card is selected, a cue that does not rest on its colour.
  for (const { page } of [leader, follower]) await page.waitForSelector(`.world .selection:not(.invalid):has-text("Selected: ${describeCard(TARGET)}.")`);
  // On the leader's page the line is in the bar over the world, not over the board.
  const lineOverBoard = await leader.page.evaluate(() => {
    const canvas = document.querySelector('.world-canvas')!.getBoundingClientRect();
    const line = document.querySelector('.world .selection')!.getBoundingClientRect();
    const { board } = (window as never as { __overview: () => OverviewLayout }).__overview();
    return line.x < canvas.x + board.x + board.width && canvas.x + board.x < line.right && line.y < canvas.y + board.y + board.height && canvas.y + board.y < line.bottom;
  });
  expect(lineOverBoard).toBe(false);

  await screenshot(leader.page, 'game-leader');
  await screenshot(follower.page, 'game-follower');

  // Done: the first instruction is finished and the second, sent at the start of this turn, becomes current.
  expect(await follower.page.textContent('body')).not.toContain(SECOND);
  await follower.page.keyboard.press('d');
  await follower.page.waitForSelector(`.follower-instructions li:has-text("north to the pond")`);
  expect(await follower.page.locator('.follower-panel ol').nth(1).textContent()).toContain('Step forward');
  await leader.page.waitForSelector('.leader-panel .instructions li.done:has-text("Step forward")');

  // Clicking Done on the last instruction ends the follower's turn (rule: all done).
  await follower.page.click('button.done-button');
  await leader.page.waitForFunction(() => document.body.dataset.turn === 'mine');
  // Each player gets its own view message: the follower's may land a moment after the leader's.
  await follower.page.waitForSelector('button.done-button:disabled');

  expect(leader.errors).toEqual([]);
  expect(follower.errors).toEqual([]);

  // Both players, with the crowdsourcing ids from the link, are in the game's index.
  const games = server.store.listGames({});
  expect(games).toHaveLength(1);
  expect(games[0].seats.map((seat) => [seat.role, seat.workerId, seat.assignmentId])).toEqual([
    ['leader', 'W1', 'A1'],
    ['follower', 'W2', 'A2'],
  ]);
});

test("the leader's box keeps the focus after sending, its arrows move the avatar while it is empty, and the list shows each new instruction", async () => {
  const { page, errors } = await openPage(browser, `${server.url}/?pool=browser-bot`, { width: 1280, height: 800 });
  await page.click('button.bot-game');
  await page.waitForFunction(() => (window as never as { __game?: PageGame }).__game?.view.phase === 'playing');
  for (let n = 1; n <= 14; n++) {
    await page.fill('textarea.instruction-input', `Instruction number ${n}: walk to the pond and pick up the two red stars on the way there`);
    await page.keyboard.press('Enter');
    await page.waitForSelector(`.leader-panel .instructions li:nth-child(${n})`);
    // Enter sent it and the box is empty, with the focus kept for the next one.
    expect(await page.evaluate(() => [document.activeElement?.tagName, document.querySelector('textarea')!.value])).toEqual(['TEXTAREA', '']);
  }
  // The newest instruction is scrolled into the panel's view.
  const newest = await page.locator('.leader-panel .instructions li').last().boundingBox();
  expect(newest!.y + newest!.height).toBeLessThanOrEqual(801);
  // The arrows move the avatar from the empty box.
  const before = (await game(page))!.view.turn.stepsLeft;
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction((steps) => (window as never as { __game: PageGame }).__game.view.turn.stepsLeft === steps - 1, before!);
  expect(errors).toEqual([]);
});

test("the inset of the follower's view starts hidden, can be shown, moved, resized and hidden again, and the choice is remembered", async () => {
  const { page, errors } = await openPage(browser, `${server.url}/?pool=browser-inset`, { width: 1280, height: 800 });
  await page.click('button.bot-game');
  await page.waitForFunction(() => (window as never as { __game?: PageGame }).__game?.view.phase === 'playing');
  const caption = page.locator('.inset-caption');
  // Hidden at first, as it would cover part of the board: only Show is offered.
  await page.waitForSelector('.inset-controls button.inset-hide:has-text("Show")');
  expect(await caption.isVisible()).toBe(false);
  expect(await page.isVisible('.inset-controls button.inset-move')).toBe(false);
  await page.click('.inset-controls button.inset-hide');
  await caption.waitFor({ state: 'visible' });
  const world = (await page.locator('.world').boundingBox())!;
  const at = async () => (await caption.boundingBox())!;
  const start = await at();
  expect(start.x).toBeGreaterThan(world.x + world.width / 2); // bottom right
  expect(start.y).toBeGreaterThan(world.y + world.height / 2);

  await page.click('.inset-controls button.inset-move');
  await page.waitForFunction((middle) => document.querySelector('.inset-caption')!.getBoundingClientRect().x < middle, world.x + world.width / 2); // bottom left
  const left = await at();
  await page.click('.inset-controls button.inset-size');
  await page.waitForFunction((top) => document.querySelector('.inset-caption')!.getBoundingClientRect().y < top, left.y); // taller, so its top is higher
  await screenshot(page, 'game-leader-inset-moved');

  await page.click('.inset-controls button.inset-hide');
  await caption.waitFor({ state: 'hidden' });
  expect(await page.textContent('.inset-controls button.inset-hide')).toBe('Show');
  // Remembered in this browser: the game screen, back after a refresh, starts with the inset hidden.
  await page.reload();
  await page.waitForSelector('.inset-controls button.inset-hide:has-text("Show")');
  expect(await caption.isVisible()).toBe(false);
  expect(errors).toEqual([]);
});

/** Moves a pointer over the world, row by row in the page, until a card's close-up shows; where it did. */
async function pointAtACard(page: Page): Promise<{ x: number; y: number } | null> {
  return page.evaluate(() => {
    const canvas = document.querySelector<HTMLCanvasElement>('.world-canvas')!;
    const box = canvas.getBoundingClientRect();
    const closeUp = document.querySelector<HTMLElement>('.card-pointer')!;
    for (let y = box.top + 4; y < box.bottom; y += 6) {
      for (let x = box.left + 4; x < box.right; x += 6) {
        canvas.dispatchEvent(new PointerEvent('pointermove', { clientX: x, clientY: y, bubbles: true }));
        if (!closeUp.hidden) return { x, y };
      }
    }
    return null;
  });
}

test('a card under the pointer is shown large and named in words, in both views', async () => {
  const leader = await joinAs('leader', 'pool=browser-cards');
  const follower = await joinAs('follower', 'pool=browser-cards');
  for (const { page } of [leader, follower]) {
    await page.waitForFunction(() => (window as never as { __game?: PageGame }).__game?.view.phase === 'playing');
    const point = await pointAtACard(page);
    expect(point).not.toBeNull();
    // A real pointer at that place shows the same close-up; the card it names is one the player can see.
    await page.mouse.move(point!.x, point!.y);
    const named = await page.getAttribute('.card-pointer .card-close-up', 'data-card');
    const visible = (await game(page))!.view.cards.map(describeCard);
    expect(visible).toContain(named);
    expect(await page.textContent('.card-pointer .caption')).toBe(named);
    // The glyphs: as many as the card's count.
    const count = Number(named!.split(' ')[0]);
    expect([...(await page.textContent('.card-pointer .face'))!]).toHaveLength(count);
    await screenshot(page, `card-close-up-${(await game(page))!.role}`);
    // Off the card, the close-up goes.
    await page.mouse.move(2, 2);
    await page.waitForSelector('.card-pointer', { state: 'hidden' });
    expect(leader.errors.concat(follower.errors)).toEqual([]);
  }
});

test('the sound cues are off until turned on, then a turn change plays one, and the choice is remembered', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  // Counts the tones the page starts, from outside the client.
  await context.addInitScript(`
    window.__tones = 0;
    const start = OscillatorNode.prototype.start;
    OscillatorNode.prototype.start = function (...args) { window.__tones++; return start.apply(this, args); };
  `);
  const page = await context.newPage();
  await page.goto(`${server.url}/?pool=browser-sound`);
  await page.click('button.bot-game');
  await page.waitForFunction(() => (window as never as { __game?: PageGame }).__game?.view.phase === 'playing');
  const tones = () => page.evaluate(() => (window as never as { __tones: number }).__tones);
  expect(await page.getAttribute('button.sound-toggle', 'aria-pressed')).toBe('false');
  /** The leader's turn ends with an instruction, and comes back after the scripted follower's. */
  const round = async () => {
    await page.fill('textarea.instruction-input', 'Turn around');
    await page.keyboard.press('Enter');
    await page.click('button.end-turn');
    await page.waitForFunction(() => document.body.dataset.turn === 'theirs');
    await page.waitForFunction(() => document.body.dataset.turn === 'mine');
  };
  await round();
  expect(await tones()).toBe(0);

  await page.click('button.sound-toggle');
  expect(await page.getAttribute('button.sound-toggle', 'aria-pressed')).toBe('true');
  // Turning it on plays a sample.
  const sample = await tones();
  expect(sample).toBeGreaterThan(0);
  await round();
  expect(await tones()).toBeGreaterThan(sample);

  // Remembered: after a refresh (which comes back to the same game) the sound is still on.
  await page.reload();
  await page.waitForSelector('.game-screen.leader button.sound-toggle[aria-pressed=true]');
  await context.close();
});

test('P-116: the leader reads why the scripted follower marked an instruction done without doing it', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.goto(`${server.url}/?pool=browser-gave-up`);
  await page.click('button.bot-game');
  await page.waitForFunction(() => (window as never as { __game?: PageGame }).__game?.view.phase === 'playing');
  await page.fill('textarea.instruction-input', 'Dance a little');
  await page.keyboard.press('Enter');
  await page.click('button.end-turn');
  const banner = page.locator('.banner.warning:has-text("Scripted follower:")');
  await banner.waitFor();
  expect(await banner.innerText()).toBe(`Scripted follower: I did not understand "Dance a little", so I marked it done. ${HEURISTIC_UNDERSTANDS}`);
  await screenshot(page, 'leader-follower-gave-up');
  await context.close();
});
