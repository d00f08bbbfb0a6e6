/**
 * The replay viewer in a real browser: a self-play log opened from a file (picker and drag and
 * drop), scrubbed, stepped, played and seen from every view; corrupt logs named by their line;
 * and a game opened from the server by the evaluation report's link, with the admin token.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { CB2_FILES, importCb2Game } from '../../shared/cb2/import';
import type { Browser, Page } from 'playwright-core';
import { ObservationTracker } from '../../shared/agents/observation';
import { isInvalidSelection, type GameState } from '../../shared/engine';
import { describeEvent, instructionNumber } from '../../shared/log/describe';
import type { LogEnd, LogEvent, LogHeader, LogLine } from '../../shared/log/format';
import { serializeLine } from '../../shared/log/recorder';
import { replay } from '../../shared/log/replay';
import { generateMap } from '../../shared/maps/generate';
import { playSelfPlayGame } from '../../shared/selfplay/game';
import { ADMIN_TOKEN, launchBrowser, openPage, screenshot, startBrowserTestServer, type BrowserTestServer } from './harness';
import type { OverviewLayout } from '../../client/src/world/WorldRenderer';

jest.setTimeout(120_000);

interface ReplayHook {
  ready: boolean;
  events: number;
  cursor: number;
  score: number;
  error: string | null;
}
type PageReplay = { __replay: ReplayHook };

/** A whole self-play game, its text, and every state the viewer should show. */
const lines: LogLine[] = [];
playSelfPlayGame({ seed: 7, map: generateMap(7) }, (line) => lines.push(line));
const header = lines[0] as LogHeader;
const events = lines.filter((line): line is LogEvent => line.kind === 'event');
const end = lines[lines.length - 1] as LogEnd;
const logText = lines.map((line) => `${serializeLine(line)}\n`).join('');
const states: GameState[] = [];
const followerSeesCards: number[] = [];
{
  const tracker = new ObservationTracker();
  replay(logText, {
    onState: (state) => {
      states.push(state);
      followerSeesCards.push(tracker.observe(state).visibleCards.length);
    },
  });
}
const N = events.length;

let dir: string;
let server: BrowserTestServer;
let browser: Browser;

/** Writes a log file for the file picker. */
function logFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cerealbar-replay-'));
  server = await startBrowserTestServer();
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const hook = (page: Page) => page.evaluate('window.__replay') as Promise<ReplayHook>;
const waitReady = (page: Page) => page.waitForFunction(() => (window as unknown as PageReplay).__replay.ready, undefined, { timeout: 60_000 });
const waitCursor = (page: Page, cursor: number) => page.waitForFunction((at) => (window as unknown as PageReplay).__replay.cursor === at, cursor, { timeout: 10_000 });
const text = (page: Page, selector: string) => page.locator(selector).innerText();

/** Scrubs the timeline slider to `cursor`. */
async function scrub(page: Page, cursor: number): Promise<void> {
  await page.locator('input.replay-slider').fill(String(cursor));
  await waitCursor(page, cursor);
}

interface InstructionItem {
  readonly tag: string;
  readonly text: string;
  readonly className: string;
}

/** The instruction list the viewer must show after `cursor` events. */
function expectedInstructions(cursor: number): InstructionItem[] {
  const queue = states[cursor].queue.map((instruction) => instruction.id);
  return events
    .slice(0, cursor)
    .filter((event) => event.type === 'instruction')
    .map((event) => {
      const id = event.outcome.instruction!;
      const text = `${instructionNumber(id)}. ${(event.payload as { text: string }).text}`;
      if (id === queue[0]) return { tag: 'Current', text, className: 'current active' };
      return queue.includes(id) ? { tag: 'Queued', text, className: 'queued' } : { tag: 'Done', text, className: 'done' };
    });
}

function shownInstructions(page: Page): Promise<InstructionItem[]> {
  return page.locator('.replay-side .instructions li').evaluateAll((elements) =>
    elements.map((element) => ({
      tag: element.querySelector('.tag')?.textContent ?? '',
      text: element.lastChild?.textContent ?? '',
      className: element.className,
    })),
  );
}

test('a self-play log from a file: scrub, step, play, instructions, the event in words, and the three views', async () => {
  expect(end.score).toBeGreaterThan(0);
  const { page, errors } = await openPage(browser, `${server.url}/replay/`);
  await page.setInputFiles('input.replay-file', logFile('selfplay-7.jsonl', logText));
  await waitReady(page);
  expect(await hook(page)).toEqual({ ready: true, events: N, cursor: 0, score: 0, error: null });
  expect(await page.locator('.replay-picker').isHidden()).toBe(true);
  expect(await text(page, '.replay-position')).toBe(`Event 0 of ${N}`);
  expect(await text(page, '.replay-event')).toBe('The game starts: the leader plays first');

  // To the end: the final score, the whole instruction list.
  await scrub(page, N);
  expect(await text(page, '[data-stat=score] .value')).toBe(String(end.score));
  expect((await hook(page)).score).toBe(end.score);
  expect(await text(page, '.replay-position')).toBe(`Event ${N} of ${N}`);
  expect(await text(page, '.replay-status .turn')).toBe('Game over');
  expect(await shownInstructions(page)).toEqual(expectedInstructions(N));
  expect(await page.locator('.instructions li.active').count()).toBe(states[N].queue.length > 0 ? 1 : 0);

  // Back with the key, forward with the button.
  await page.keyboard.press('ArrowLeft');
  await waitCursor(page, N - 1);
  expect(await text(page, '.replay-position')).toBe(`Event ${N - 1} of ${N}`);
  await page.click('button[aria-label="Step forward (→)"]');
  await waitCursor(page, N);

  // Onto the first set, one step forward (animated): the event in words and the status, exactly
  // as the shared code says.
  const setAt = events.findIndex((event) => event.outcome.set) + 1;
  await scrub(page, setAt - 1);
  expect(await text(page, '[data-stat=score] .value')).toBe('0');
  await page.keyboard.press('ArrowRight');
  await waitCursor(page, setAt);
  const sentences = describeEvent(events[setAt - 1], states[setAt - 1].cards);
  expect(sentences.some((sentence) => sentence.startsWith('Set made: +1 point, 3 new cards'))).toBe(true);
  expect((await text(page, '.replay-event')).split('\n')).toEqual(sentences);
  expect(await text(page, '[data-stat=score] .value')).toBe('1');
  expect(await text(page, '[data-stat=turnsLeft] .value')).toBe(String(states[setAt].turnsLeft));
  expect(await text(page, '[data-stat=stepsLeft] .value')).toBe(String(states[setAt].turn.stepsLeft));
  expect(await shownInstructions(page)).toEqual(expectedInstructions(setAt));
  expect(await page.locator('.instructions li.current.active').count()).toBe(1);

  // Space plays and pauses, even with a control bar button focused.
  await page.keyboard.press('Home');
  await waitCursor(page, 0);
  await page.focus('button.replay-play');
  await page.keyboard.press('Space');
  await page.waitForFunction(() => (window as unknown as PageReplay).__replay.cursor >= 3, undefined, { timeout: 20_000 });
  expect(await text(page, 'button.replay-play')).toBe('Pause');
  await page.keyboard.press('Space');
  expect(await text(page, 'button.replay-play')).toBe('Play');
  const paused = (await hook(page)).cursor;
  await page.waitForTimeout(800);
  expect((await hook(page)).cursor).toBe(paused);

  // Playing to the end stops there, and the button says so; so does jumping to the end while playing.
  await scrub(page, N - 2);
  await page.keyboard.press('Space');
  await waitCursor(page, N);
  await page.waitForFunction(() => document.querySelector('button.replay-play')?.textContent === 'Play', undefined, { timeout: 5_000 });
  await page.keyboard.press('Home');
  await waitCursor(page, 0);
  await page.keyboard.press('Space');
  expect(await text(page, 'button.replay-play')).toBe('Pause');
  await page.keyboard.press('End');
  await waitCursor(page, N);
  await page.waitForFunction(() => document.querySelector('button.replay-play')?.textContent === 'Play', undefined, { timeout: 5_000 });

  // The leader's view where the leader's marks show (an invalid selection if the game has one).
  const invalidAt = states.findIndex((state) => isInvalidSelection(state.cards.filter((card) => card.selected)));
  const markedAt = invalidAt >= 0 ? invalidAt : states.findIndex((state) => state.cards.some((card) => card.selected));
  expect(markedAt).toBeGreaterThan(0);
  await scrub(page, markedAt);
  await page.click('.replay-views button:has-text("Leader")');
  expect(await page.getAttribute('.replay-views button:has-text("Leader")', 'aria-pressed')).toBe('true');
  await page.waitForTimeout(1000);
  await screenshot(page, 'replay-leader');
  expect(await boardUnderViewButtons(page)).toBe(false);

  // The follower's view where the follower has several cards in view.
  const seesCardsAt = followerSeesCards.findIndex((count) => count >= 3);
  expect(seesCardsAt).toBeGreaterThanOrEqual(0);
  await scrub(page, seesCardsAt);
  await page.keyboard.press('2');
  expect(await page.getAttribute('.replay-views button:has-text("Follower")', 'aria-pressed')).toBe('true');
  await page.waitForTimeout(1000);
  await screenshot(page, 'replay-follower');

  await page.click('.replay-views button:has-text("Top-down")');
  expect(await page.getAttribute('.replay-views button:has-text("Top-down")', 'aria-pressed')).toBe('true');
  await page.waitForTimeout(1000);
  await screenshot(page, 'replay-topdown');
  expect(await boardUnderViewButtons(page)).toBe(false);
  expect(errors).toEqual([]);
});

/** Whether the view buttons over the world cover part of the board, as the overview last drew it. */
function boardUnderViewButtons(page: Page): Promise<boolean> {
  return page.evaluate(() => {
    const canvas = document.querySelector('.world-canvas')!.getBoundingClientRect();
    const views = document.querySelector('.replay-views')!.getBoundingClientRect();
    const { board } = (window as never as { __overview: () => OverviewLayout }).__overview();
    return canvas.x + board.x < views.right && views.x < canvas.x + board.x + board.width && canvas.y + board.y < views.bottom && views.y < canvas.y + board.y + board.height;
  });
}

test('corrupt logs are named by their line; the open game stays, and the picker stays usable', async () => {
  const logLines = logText.split('\n');
  const cut = [...logLines.slice(0, 4), logLines[4].slice(0, 40), ...logLines.slice(5)].join('\n');
  const badEvent = logText.replace(/^(.*"seq":9,.*)"score":0(.*)$/m, '$1"score":5$2');
  expect(badEvent).not.toBe(logText);

  const { page, errors } = await openPage(browser, `${server.url}/replay/`);
  // A corrupt file first: the message names the line, and the picker is still there.
  await page.setInputFiles('input.replay-file', logFile('cut.jsonl', cut));
  await page.waitForFunction(() => (window as unknown as PageReplay).__replay.error !== null);
  expect(await text(page, '.replay-message')).toMatch(/^Cannot replay cut\.jsonl: line 5: not JSON/);
  expect(await hook(page)).toMatchObject({ ready: false, events: 0 });

  // A good one, dropped on the page.
  const dropped = await page.evaluateHandle(
    `(() => { const data = new DataTransfer(); data.items.add(new File([${JSON.stringify(logText)}], 'dropped.jsonl')); return data; })()`,
  );
  for (const type of ['dragenter', 'dragover', 'drop']) await page.dispatchEvent('body', type, { dataTransfer: dropped });
  await waitReady(page);
  expect(await hook(page)).toMatchObject({ events: N, error: null });
  await scrub(page, 12);

  // A bad event with a game open: the error names the line, the game stays as it was.
  await page.click('button.replay-open');
  await page.setInputFiles('input.replay-file', logFile('bad-event.jsonl', badEvent));
  await page.waitForFunction(() => (window as unknown as PageReplay).__replay.error !== null);
  expect(await text(page, '.replay-message')).toMatch(/^Cannot replay bad-event\.jsonl: line 10: outcome differs from the rules: outcome\.score: recorded 5, replay gives 0/);
  expect(await hook(page)).toMatchObject({ ready: true, events: N, cursor: 12 });
  await page.click('button.replay-close');
  expect(await page.locator('.replay-picker').isHidden()).toBe(true);
  await page.keyboard.press('ArrowRight');
  await waitCursor(page, 13);
  expect(errors).toEqual([]);
});

describe('games on the server', () => {
  const GAME_ID = 'replay-from-server';
  const EVENT = 57;

  beforeAll(() => {
    const writer = server.store.startGame({ ...header, gameId: GAME_ID, startedAt: '2026-02-01T10:00:00.000Z' }, {
      pool: 'browser',
      seats: [
        { role: 'leader', playerId: 'p1', kind: 'bot' },
        { role: 'follower', playerId: 'p2', kind: 'bot' },
      ],
    });
    for (const line of lines.slice(1)) {
      if (line.kind === 'end') writer.end(line);
      else writer.append(line);
    }
  });

  test("the report's link opens the game at its event once the token is entered", async () => {
    // The report's default link has no slash after /replay: the server redirects, keeping the query.
    const { page, errors } = await openPage(browser, `${server.url}/replay?game=${GAME_ID}&event=${EVENT}`);
    await page.waitForSelector('.replay-message:has-text("Enter the admin token to open game")');
    await page.fill('input.replay-token', ADMIN_TOKEN);
    await page.click('.replay-token-form button[type=submit]');
    await waitReady(page);
    expect(await hook(page)).toEqual({ ready: true, events: N, cursor: EVENT, score: states[EVENT].score, error: null });
    expect(await text(page, '.replay-position')).toBe(`Event ${EVENT} of ${N}`);

    // The token stays for this tab: a reload opens the game at once, and the list offers it.
    await page.reload();
    await waitReady(page);
    expect((await hook(page)).cursor).toBe(EVENT);
    await page.click('button.replay-open');
    await page.click(`.replay-games button[data-game="${GAME_ID}"]`);
    await page.waitForFunction(() => (window as unknown as PageReplay).__replay.cursor === 0);
    expect(errors).toEqual([]);
  });

  test("a report's link to a game the server does not have opens at its event from the log file", async () => {
    // An evaluation report over self-play logs links to games that were never on this server.
    const { page, errors } = await openPage(browser, `${server.url}/replay/?game=${header.gameId}&event=40`);
    await page.fill('input.replay-token', ADMIN_TOKEN);
    await page.click('.replay-token-form button[type=submit]');
    await page.waitForSelector(`.replay-message:has-text("Game ${header.gameId} is not on this server. Open its log file (${header.gameId}.jsonl) to see it at event 40.")`);
    await page.setInputFiles('input.replay-file', logFile(`${header.gameId}.jsonl`, logText));
    await waitReady(page);
    expect(await hook(page)).toMatchObject({ ready: true, events: N, cursor: 40, error: null });
    expect(errors).toEqual([]);
  });

  test('the list tells games played with a bot from games of two people', async () => {
    const seat = (role: 'leader' | 'follower', kind: 'human' | 'bot') => ({ role, playerId: `${role}-${kind}`, kind });
    server.store.startGame({ ...header, gameId: 'two-people', startedAt: '2026-02-02T10:00:00.000Z' }, { pool: 'browser', seats: [seat('follower', 'human'), seat('leader', 'human')] });
    server.store.startGame({ ...header, gameId: 'with-a-bot', startedAt: '2026-02-03T10:00:00.000Z' }, { pool: 'browser', seats: [seat('leader', 'human'), seat('follower', 'bot')] });
    // With no game open, the page opens on the picker.
    const { page, errors } = await openPage(browser, `${server.url}/replay/`);
    await page.fill('input.replay-token', ADMIN_TOKEN);
    await page.click('.replay-token-form button[type=submit]');
    const players = (gameId: string) => text(page, `.replay-games button[data-game="${gameId}"] .replay-game-players`);
    expect(await players('two-people')).toBe('Leader: a person · Follower: a person');
    expect(await players('with-a-bot')).toBe('Leader: a person · Follower: a bot');
    await screenshot(page, 'replay-picker-players');
    expect(errors).toEqual([]);
  });

  test('a wrong token, or no server, gets a clear message', async () => {
    const { page, errors } = await openPage(browser, `${server.url}/replay/?game=${GAME_ID}&event=${EVENT}`);
    await page.fill('input.replay-token', 'not-the-admin-token');
    await page.click('.replay-token-form button[type=submit]');
    await page.waitForFunction(() => (window as unknown as PageReplay).__replay.error !== null);
    expect(await text(page, '.replay-message')).toBe(
      `Cannot load game ${GAME_ID}: The server refused this token (403: the token is not the admin token).`,
    );
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    expect((await hook(page)).ready).toBe(false);

    await page.route('**/api/**', (route) => route.abort('connectionrefused'));
    await page.fill('input.replay-token', ADMIN_TOKEN);
    await page.click('.replay-token-form button[type=submit]');
    await page.waitForSelector('.replay-message:has-text("Could not reach the game server")');
    expect(errors).toEqual([]);
  });
});

test('an imported CB2 game replays in the viewer by its own rules (mountains walkable, recorded cards), to its final score', async () => {
  const folder = join(__dirname, '..', 'fixtures', 'cb2-logs', 'gemini_vision', 'bot-sandbox', '2024-05-13T21h.50m.12s_130_GAME');
  const unzip = (name: string) => gunzipSync(readFileSync(join(folder, `${name}.gz`))).toString('utf8');
  const imported = importCb2Game({ name: basename(folder), origin: 'cb2', gameInfo: unzip(CB2_FILES.gameInfo), messagesFromServer: unzip(CB2_FILES.messagesFromServer) });
  const text = imported.lines.map((line) => `${serializeLine(line)}\n`).join('');
  const { page, errors } = await openPage(browser, `${server.url}/replay/`);
  await page.setInputFiles('input.replay-file', logFile(`${imported.gameId}.jsonl`, text));
  await waitReady(page);
  expect(await hook(page)).toMatchObject({ ready: true, events: imported.events, error: null });
  await scrub(page, imported.events);
  expect(await page.locator('[data-stat=score] .value').innerText()).toBe('4');
  expect(await page.locator('.replay-status .turn').innerText()).toBe('Game over');
  await page.screenshot({ path: join(dir, 'cb2.png') });
  if (process.env.CB2_SCREENSHOT) writeFileSync(process.env.CB2_SCREENSHOT, readFileSync(join(dir, 'cb2.png')));
  expect(errors).toEqual([]);
});
