/// <reference lib="dom" />
/**
 * The leader's board can be read at 1280x800: in both overviews, every card's symbols are drawn
 * at least MIN_SYMBOL_PX across with nothing of the world in front of them, and nothing over the
 * world (its buttons, the notices, the inset of the follower's view) covers the board by default.
 * The sizes come from the page's own camera (`__overview`, WorldRenderer.overviewLayout).
 */
import type { Page } from 'playwright-core';
import { DOCUMENTED_GAME, openPage, screenshot, serverAndBrowser } from './harness';
import { waitForWorld } from './players';
import type { OverviewLayout, ScreenRect } from '../../client/src/world/WorldRenderer';

jest.setTimeout(180_000);

/**
 * The smallest a symbol may be drawn, in CSS pixels: at 12 px the outlines of a star, a cross and
 * a diamond still differ (at 5 px they were one blot), as text of 12 px is still read.
 */
const MIN_SYMBOL_PX = 12;

interface Cell {
  readonly x: number;
  readonly y: number;
}
interface PageGame {
  view: { phase: string; cards: (Cell & { id: number })[]; leader: Cell; follower: Cell | null };
}

const running = serverAndBrowser(DOCUMENTED_GAME);

const overlaps = (a: ScreenRect, b: ScreenRect) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;
const inside = (inner: ScreenRect, outer: ScreenRect) =>
  inner.x >= outer.x && inner.y >= outer.y && inner.x + inner.width <= outer.x + outer.width && inner.y + inner.height <= outer.y + outer.height;

/** The overview as drawn, and what is over the world (its bar's buttons, the notices, the close-up), in the canvas's pixels. */
async function measure(page: Page): Promise<{ layout: OverviewLayout; covers: { what: string; rect: ScreenRect }[]; game: PageGame }> {
  await waitForWorld(page);
  return page.evaluate(() => {
    const canvas = document.querySelector('.world-canvas')!.getBoundingClientRect();
    const covers = Array.from(document.querySelectorAll<HTMLElement>('.world-bar button, .world-bar .inset-controls, .banner, .inset-caption, .world .selection'))
      .filter((element) => element.offsetParent !== null && !element.hidden)
      .map((element) => {
        const box = element.getBoundingClientRect();
        return { what: element.className || element.tagName, rect: { x: box.x - canvas.x, y: box.y - canvas.y, width: box.width, height: box.height } };
      });
    const page = window as never as { __overview: () => OverviewLayout; __game: PageGame };
    return { layout: page.__overview(), covers, game: page.__game };
  });
}

/** Every way a card is not legible, in words (empty when all are). */
function illegible({ layout, covers, game }: Awaited<ReturnType<typeof measure>>): string[] {
  const problems: string[] = [];
  const canvas = { x: 0, y: 0, width: layout.canvas.width, height: layout.canvas.height };
  const cells = new Map(game.view.cards.map((card) => [card.id, card]));
  const avatars = [game.view.leader, game.view.follower].filter((cell): cell is Cell => cell !== null);
  expect(layout.cards.map((card) => card.id).sort()).toEqual([...cells.keys()].sort());
  for (const card of layout.cards) {
    const cell = cells.get(card.id)!;
    const name = `card ${card.id} at (${cell.x}, ${cell.y})`;
    if (!inside(card.rect, canvas)) problems.push(`${name} leaves the view`);
    for (const cover of [...covers, ...(layout.inset ? [{ what: 'the inset', rect: layout.inset }] : [])]) {
      if (overlaps(card.rect, cover.rect)) problems.push(`${name} is under ${cover.what}`);
    }
    // An avatar standing on a card hides part of it, as it should.
    const underAvatar = avatars.some((avatar) => avatar.x === cell.x && avatar.y === cell.y);
    for (const symbol of card.symbols) {
      const size = Math.min(symbol.rect.width, symbol.rect.height);
      if (size < MIN_SYMBOL_PX) problems.push(`${name} has a symbol ${size.toFixed(1)} px across`);
      if (!symbol.seen && !underAvatar) problems.push(`${name} has a symbol hidden by something in front of it`);
    }
  }
  return problems;
}

/** What covers the board's rectangle (nothing should, by default). */
function coversOfBoard({ layout, covers }: Awaited<ReturnType<typeof measure>>): string[] {
  return [...covers, ...(layout.inset ? [{ what: 'the inset', rect: layout.inset }] : [])].filter((cover) => overlaps(layout.board, cover.rect)).map((cover) => cover.what);
}

const smallest = (layout: OverviewLayout) => Math.min(...layout.cards.flatMap((card) => card.symbols.map((symbol) => Math.min(symbol.rect.width, symbol.rect.height))));

test("every card on the leader's board is legible and uncovered at 1280x800, in both views, and at 1920x1080", async () => {
  const { page, errors } = await openPage(running.browser, `${running.server.url}/?pool=legibility`, { width: 1280, height: 800 });
  await page.click('button.bot-game');
  await page.waitForFunction(() => (window as never as { __game?: PageGame }).__game?.view.phase === 'playing');

  const angled = await measure(page);
  await screenshot(page, 'legibility-leader-angled-1280x800');
  expect(angled.layout.cards.length).toBeGreaterThanOrEqual(10);
  expect(angled.layout.inset).toBeNull(); // the inset starts hidden
  expect(illegible(angled)).toEqual([]);
  expect(coversOfBoard(angled)).toEqual([]);
  // The board fills the world below its bar: it is not shrunk to a corner.
  expect(angled.layout.board.height).toBeGreaterThan((angled.layout.canvas.height - angled.layout.canvas.band) * 0.9);
  console.log(`smallest symbol: ${smallest(angled.layout).toFixed(1)} px (angled view, 1280x800)`);

  // A notice sits in the bar, beside the buttons, not over the board. (An instruction the scripted
  // follower understands: one it does not is explained in a longer notice, which would stack below.)
  await page.fill('textarea.instruction-input', 'turn left');
  await page.keyboard.press('Enter');
  await page.click('button.end-turn');
  await page.waitForSelector('.banner:has-text("Your turn")', { timeout: 60_000 });
  const withNotice = await measure(page);
  await screenshot(page, 'legibility-leader-notice-1280x800');
  expect(withNotice.covers.some((cover) => cover.what.includes('banner'))).toBe(true);
  expect(coversOfBoard(withNotice)).toEqual([]);
  expect(illegible(withNotice)).toEqual([]);

  await page.click('button.camera-toggle');
  await page.waitForSelector('.world[data-view=topdown]');
  const topdown = await measure(page);
  await screenshot(page, 'legibility-leader-topdown-1280x800');
  expect(illegible(topdown)).toEqual([]);
  expect(coversOfBoard(topdown)).toEqual([]);
  console.log(`smallest symbol: ${smallest(topdown.layout).toFixed(1)} px (top-down view, 1280x800)`);

  await page.click('button.camera-toggle');
  await page.setViewportSize({ width: 1920, height: 1080 });
  const large = await measure(page);
  expect(illegible(large)).toEqual([]);
  expect(coversOfBoard(large)).toEqual([]);
  expect(smallest(large.layout)).toBeGreaterThan(smallest(angled.layout));
  expect(errors).toEqual([]);
});
