/// <reference lib="dom" />
/**
 * Two players in browser pages joined into one game by quick play, and the game brought to a point
 * where both screens show something real: the leader has written two instructions and ended its
 * turn, so the follower has a current instruction and the leader's list has one current and one
 * queued; the follower has taken a step.
 */
import type { Browser, Page } from 'playwright-core';
import { openPage } from './harness';

interface FollowerState {
  readonly legal: { readonly moves: string[] };
  readonly turn: { readonly stepsLeft: number | null };
  readonly follower: { readonly heading: string };
}

export interface PlayerPage {
  readonly page: Page;
  readonly errors: string[];
}

export const FIRST_INSTRUCTION = 'Turn right and walk to the two red stars by the pond';
export const SECOND_INSTRUCTION = 'Then pick up the three blue triangles next to the tree';

/** Joins a page by quick play in `pool` as `role`; it shows the waiting screen until a partner comes. */
export async function quickPlay(browser: Browser, url: string, pool: string, role: 'leader' | 'follower', viewport?: { width: number; height: number }): Promise<PlayerPage> {
  const opened = await openPage(browser, `${url}/?pool=${pool}`, viewport);
  await opened.page.check(`input[name=role][value=${role}]`);
  await opened.page.click('button.quick-play');
  return opened;
}

/** The leader's and the follower's pages, playing, on the follower's turn with an instruction queued. */
export async function gameWithQueuedInstruction(
  browser: Browser,
  url: string,
  pool: string,
  viewport?: { width: number; height: number },
): Promise<{ leader: PlayerPage; follower: PlayerPage }> {
  const leader = await quickPlay(browser, url, pool, 'leader', viewport);
  await leader.page.waitForSelector('.queue-position');
  const follower = await quickPlay(browser, url, pool, 'follower', viewport);
  await leader.page.waitForFunction(() => (window as never as { __game?: { view: { phase: string } } }).__game?.view.phase === 'playing');
  await follower.page.waitForSelector('.game-screen.follower');

  for (const text of [FIRST_INSTRUCTION, SECOND_INSTRUCTION]) {
    await leader.page.fill('textarea.instruction-input', text);
    await leader.page.keyboard.press('Enter');
  }
  await leader.page.waitForSelector('.leader-panel .instructions li:nth-child(2)');
  await leader.page.click('button.end-turn');
  await follower.page.waitForSelector('.follower-instructions li.current');
  await leader.page.waitForSelector('.leader-panel .instructions li.current');
  // A step, if nothing is in the way: the follower turns until something is not.
  const followerView = () =>
    follower.page.evaluate(() => (window as never as { __game: { view: FollowerState } }).__game.view);
  for (let turn = 0; turn < 4; turn++) {
    const view = await followerView();
    if (view.legal.moves.includes('MF')) {
      await follower.page.keyboard.press('ArrowUp');
      await follower.page.waitForFunction((steps) => (window as never as { __game: { view: FollowerState } }).__game.view.turn.stepsLeft !== steps, view.turn.stepsLeft);
      break;
    }
    await follower.page.keyboard.press('ArrowRight');
    await follower.page.waitForFunction((heading) => (window as never as { __game: { view: FollowerState } }).__game.view.follower.heading !== heading, view.follower.heading);
  }
  return { leader, follower };
}

/** Waits until the page's world canvas has been drawn at the size of its box (after a resize, too). */
export async function waitForWorld(page: Page): Promise<void> {
  await page.waitForFunction(() => {
    const world = document.querySelector<HTMLElement>('.world');
    const canvas = world?.querySelector('canvas');
    return !!world && !!canvas && world.clientWidth > 0 && canvas.width === Math.round(world.clientWidth * devicePixelRatio) && canvas.height === Math.round(world.clientHeight * devicePixelRatio);
  });
  // Two more frames, for the browser to composite what was drawn.
  await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
}
