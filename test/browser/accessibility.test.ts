/// <reference lib="dom" />
/**
 * An accessibility audit with axe-core (test/browser/axe.ts) of every screen a player or a
 * researcher meets: the lobby, the waiting screen, the leader's and the follower's game screens
 * with instructions in their panels, the game-over dialog, and the replay viewer's file picker and
 * a game open in it. A serious or critical violation fails the test, listed by rule, impact,
 * element and what to fix; moderate and minor ones are printed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { GameState } from '../../shared/engine';
import { makeConfig } from '../../shared/engine/config';
import { serializeLine } from '../../shared/log/recorder';
import { replay } from '../../shared/log/replay';
import type { LogLine } from '../../shared/log/format';
import { generateMap } from '../../shared/maps/generate';
import { playSelfPlayGame } from '../../shared/selfplay/game';
import { audit, describe as describeViolations, type Audit } from './axe';
import { launchBrowser, openPage, startBrowserTestServer, type BrowserTestServer } from './harness';
import { gameWithQueuedInstruction, quickPlay, waitForWorld } from './players';

jest.setTimeout(180_000);

let server: BrowserTestServer;
let browser: Browser;
const audits: Audit[] = [];

beforeAll(async () => {
  // A player whose page closes has left at once: the partner's game ends, with its dialog. The
  // leader's feedback and Cancel are on, so that the follower's turn shows them.
  const config = makeConfig({ liveFeedback: true, cancelInstructions: true });
  server = await startBrowserTestServer({ seed: 7, leaderTurnSeconds: 600, followerTurnSeconds: 600, reconnectSeconds: 0, config });
  browser = await launchBrowser();
});

afterAll(async () => {
  await server?.close();
  await browser?.close();
  const lesser = audits.filter((one) => one.violations.some((violation) => violation.impact === 'moderate' || violation.impact === 'minor'));
  if (lesser.length > 0) {
    console.log(
      `Moderate and minor accessibility findings:\n${lesser
        .map((one) => `${one.name}:\n${describeViolations(one.violations.filter((violation) => violation.impact === 'moderate' || violation.impact === 'minor'))}`)
        .join('\n')}`,
    );
  }
});

/** The serious and critical violations found so far in the running test, by screen. */
let failures: string[] = [];
beforeEach(() => {
  failures = [];
});

/** Audits the page as it is now; expectNoFailures() fails the test on what was found. */
async function check(page: Page, name: string): Promise<void> {
  const result = await audit(page, name);
  audits.push(result);
  if (result.failures !== '') failures.push(`${name}:\n${result.failures}`);
}

/** Fails on every serious or critical violation of the test's screens, each named. */
function expectNoFailures(): void {
  if (failures.length > 0) throw new Error(`Serious or critical accessibility violations:\n${failures.join('\n')}`);
}

test('the lobby and the waiting screen', async () => {
  const { page, errors } = await openPage(browser, `${server.url}/?pool=a11y-lobby&workerId=W1&assignmentId=A1`);
  await page.waitForSelector('button.quick-play');
  await check(page, 'lobby');

  // A join that failed is shown on the lobby page.
  await page.fill('input[name=code]', 'not a code!');
  await page.click('button.join-private');
  await page.waitForSelector('.error-text:has-text("That is not a game code")');
  await check(page, 'lobby with an error');

  await page.check('input[name=role][value=leader]');
  await page.click('button.create-private');
  await page.waitForSelector('.waiting .code');
  await check(page, 'waiting screen with a private code');
  await page.click('button.cancel');
  await page.waitForSelector('button.quick-play');

  const waiting = await quickPlay(browser, server.url, 'a11y-queue', 'follower');
  await waiting.page.waitForSelector('.queue-position:has-text("next in line")');
  await check(waiting.page, 'waiting screen in the queue');
  await waiting.page.click('button.cancel');
  await waiting.page.waitForSelector('button.quick-play');

  // A bad study link: said on the page, every button disabled.
  const badLink = await openPage(browser, `${server.url}/?role=captain`);
  await badLink.page.waitForSelector('.error-text:has-text("The link has a bad role")');
  await check(badLink.page, 'lobby with a bad study link');
  expect([...errors, ...waiting.errors, ...badLink.errors]).toEqual([]);
  expectNoFailures();
});

test("the leader's and the follower's game screens, and the game-over dialog", async () => {
  const { leader, follower } = await gameWithQueuedInstruction(browser, server.url, 'a11y-game');
  await waitForWorld(leader.page);
  await waitForWorld(follower.page);
  await leader.page.waitForSelector('.interjections:not([hidden])');
  await check(leader.page, "leader's game screen");
  await check(follower.page, "follower's game screen");

  // The leader's feedback: the follower's cue, the leader's confirmation; Cancel waiting for its second press.
  await leader.page.click('button.feedback.negative');
  await follower.page.waitForSelector('.feedback-cue:not([hidden])');
  await check(follower.page, "follower's game screen with the leader's feedback");
  await leader.page.waitForSelector('.interjection-note:has-text("Sent")');
  await leader.page.click('button.cancel-instructions');
  await leader.page.waitForSelector('button.cancel-instructions.armed');
  await check(leader.page, "leader's game screen, feedback sent and Cancel asking again");

  // The leader's top-down view and a banner over the world.
  await leader.page.click('button.camera-toggle');
  await leader.page.keyboard.press('ArrowUp');
  await leader.page.waitForSelector('.banner');
  await check(leader.page, "leader's game screen with a banner");

  // The follower's page closes: the leader's game ends, and the dialog says so.
  await follower.page.context().close();
  await leader.page.waitForSelector('.game-over');
  await check(leader.page, 'game-over dialog');
  expect([...leader.errors, ...follower.errors]).toEqual([]);
  expectNoFailures();
});

test("the leader's own turn with the scripted follower: a long instruction, a sent one, and the follower's turn", async () => {
  const { page, errors } = await openPage(browser, `${server.url}/?pool=a11y-bot`);
  await page.click('button.bot-game');
  await page.waitForSelector('body[data-turn=mine] .game-screen.leader');
  await waitForWorld(page);
  await page.fill('textarea.instruction-input', 'x'.repeat(301));
  await page.waitForSelector('.instruction-form .count.over');
  await check(page, "leader's turn, an instruction over the limit");

  await page.fill('textarea.instruction-input', 'Walk to the pond');
  await page.keyboard.press('Enter');
  await page.waitForSelector('.leader-panel .instructions li.current');
  await check(page, "leader's turn, an instruction not yet seen");
  await page.click('button.end-turn');
  await page.waitForSelector('body[data-turn=theirs]');
  await check(page, "the follower's turn on the leader's screen");
  expect(errors).toEqual([]);
  expectNoFailures();
});

test("both tutorials, with the steps' list", async () => {
  for (const role of ['leader', 'follower']) {
    const { page, errors } = await openPage(browser, `${server.url}/?tutorial=${role}`);
    await page.waitForSelector('.tutorial-hint li.current');
    await waitForWorld(page);
    await check(page, `the ${role}'s tutorial`);
    expect(errors).toEqual([]);
  }
  expectNoFailures();
});

test('the replay viewer: the file picker, and a game open', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cerealbar-a11y-'));
  try {
    const lines: LogLine[] = [];
    playSelfPlayGame({ seed: 7, map: generateMap(7) }, (line) => lines.push(line));
    const text = lines.map((line) => `${serializeLine(line)}\n`).join('');
    const log = join(dir, 'selfplay-7.jsonl');
    writeFileSync(log, text);
    const states: GameState[] = [];
    replay(text, { onState: (state) => states.push(state) });

    const { page, errors } = await openPage(browser, `${server.url}/replay/`);
    await page.waitForSelector('.replay-picker:not([hidden])');
    await check(page, 'replay file picker');

    await page.setInputFiles('input.replay-file', log);
    await page.waitForFunction(() => (window as never as { __replay: { ready: boolean } }).__replay.ready, undefined, { timeout: 60_000 });
    const scrub = async (at: number) => {
      await page.locator('input.replay-slider').fill(String(at));
      await page.waitForFunction((to) => (window as never as { __replay: { cursor: number } }).__replay.cursor === to, at);
    };
    // The bar in each player's colour, in each view.
    const leaderTurn = states.findIndex((state, at) => at > 0 && state.turn.role === 'leader' && state.queue.length > 0);
    const followerTurn = states.findIndex((state) => state.turn.role === 'follower');
    expect(Math.min(leaderTurn, followerTurn)).toBeGreaterThan(0);
    for (const [at, key, view] of [[leaderTurn, '1', 'Leader'], [followerTurn, '2', 'Follower'], [leaderTurn, '3', 'Top-down']] as const) {
      await scrub(at);
      await page.keyboard.press(key);
      await page.waitForSelector(`.replay-views button[aria-pressed=true]:has-text("${view}")`);
      await waitForWorld(page);
      await check(page, `replay viewer, ${view.toLowerCase()} view, event ${at} (${states[at].turn.role}'s turn)`);
    }
    await page.keyboard.press('End');
    await page.waitForSelector('.replay-status[data-replay-turn=over]');
    await check(page, 'replay viewer at the end');

    // The picker again, over the open game, with a server's token asked for.
    await page.click('button.replay-open');
    await page.fill('input.replay-token', 'not-the-admin-token');
    await page.click('.replay-token-form button[type=submit]');
    await page.waitForSelector('.replay-message:not([hidden])');
    await check(page, 'replay picker with an error over a game');
    expect(errors).toEqual([]);
    expectNoFailures();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
