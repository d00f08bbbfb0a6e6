/// <reference lib="dom" />
/**
 * The pictures of the game screens in docs/client.md: the leader's and the follower's screens at
 * 1280x800 and 1920x1080, in a game where the leader has written two instructions (one current,
 * one queued) and the follower has taken a step. They always go to test-artifacts/; with
 * UPDATE_DOC_SCREENSHOTS=1 (`npm run docs:screenshots`) also to docs/images/.
 */
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { DOCUMENTED_GAME, pixelsIn, screenshot, serverAndBrowser, type Box } from './harness';
import { gameWithQueuedInstruction, waitForWorld } from './players';

jest.setTimeout(180_000);

const DOC_IMAGES = resolve(__dirname, '../../docs/images');
const UPDATE_DOCS = process.env.UPDATE_DOC_SCREENSHOTS === '1';
const SIZES = [
  { width: 1280, height: 800 },
  { width: 1920, height: 1080 },
] as const;

const running = serverAndBrowser(DOCUMENTED_GAME);

/** A PNG's width and height, from its IHDR chunk. */
function pngSize(png: Buffer): { width: number; height: number } {
  expect(png.subarray(0, 8).toString('latin1')).toBe('\x89PNG\r\n\x1a\n');
  expect(png.subarray(12, 16).toString('latin1')).toBe('IHDR');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

/**
 * How many distinct colours the picture has inside `box` (sampled on a grid), decoded by the
 * browser in a blank page of its own: a world that was not drawn is one flat colour.
 */
async function coloursIn(png: Buffer, box: Box): Promise<number> {
  const page = await running.browser.newPage();
  try {
    return new Set((await pixelsIn(page, png, box, 4)).map(([red, green, blue]) => (red << 16) | (green << 8) | blue)).size;
  } finally {
    await page.close();
  }
}

async function takeScreenshot(page: Page, name: string, size: { width: number; height: number }): Promise<void> {
  await page.setViewportSize(size);
  await waitForWorld(page);
  const path = await screenshot(page, name);
  const png = readFileSync(path);
  expect(pngSize(png)).toEqual(size);
  const world = (await page.locator('.world').boundingBox())!;
  expect(world.width).toBeGreaterThan(size.width / 2);
  // Terrain, props, cards and avatars: many colours, not a blank canvas.
  expect(await coloursIn(png, world)).toBeGreaterThan(50);
  if (UPDATE_DOCS) {
    mkdirSync(DOC_IMAGES, { recursive: true });
    copyFileSync(path, join(DOC_IMAGES, `${name}.png`));
  }
}

interface FollowerState {
  readonly cards: readonly unknown[];
  readonly follower: { readonly x: number; readonly y: number; readonly heading: string };
}
const followerState = (page: Page) => page.evaluate(() => (window as never as { __game: { view: FollowerState } }).__game.view);

test("the leader's and the follower's screens, with instructions in their panels, at two sizes", async () => {
  const { leader, follower } = await gameWithQueuedInstruction(running.browser, running.server.url, 'screenshots');
  // The follower turns until it has cards in view (a turn costs a step; it has enough for five).
  for (let turn = 0; turn < 5 && (await followerState(follower.page)).cards.length < 2; turn++) {
    const { follower: pose } = await followerState(follower.page);
    await follower.page.keyboard.press('ArrowRight');
    await follower.page.waitForFunction((heading) => (window as never as { __game: { view: FollowerState } }).__game.view.follower.heading !== heading, pose.heading);
  }
  const { follower: pose } = await followerState(follower.page);
  await leader.page.waitForFunction(
    (at) => JSON.stringify((window as never as { __game: { view: FollowerState } }).__game.view.follower) === at,
    JSON.stringify(pose),
  );
  expect(await leader.page.locator('.leader-panel .instructions li').count()).toBe(2);
  expect(await leader.page.locator('.leader-panel .instructions li.queued').count()).toBe(1);
  expect(await follower.page.locator('.follower-instructions li.current').count()).toBe(1);
  for (const size of SIZES) {
    for (const [role, player] of [['leader', leader], ['follower', follower]] as const) {
      // The banners of the game's start have faded by now; any left would cover the world.
      await player.page.waitForFunction(() => document.querySelectorAll('.banner').length === 0, undefined, { timeout: 15_000 });
      await takeScreenshot(player.page, `${role}-${size.width}x${size.height}`, size);
    }
  }
  expect([...leader.errors, ...follower.errors]).toEqual([]);
});
