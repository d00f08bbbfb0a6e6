/// <reference lib="dom" />
/**
 * A study from end to end, as its participants and its researcher live it: two workers arrive by
 * their platform's links in browsers of their own, go through consent, the rules, their role's
 * tutorial and the quiz on the pages, are paired by the server, play a short game to its end (the
 * leader makes a set, so the game scores), see their completion codes and are handed back to the
 * platform; the researcher then writes the bonus sheet with the command line, from the logs. On
 * Prolific, on MTurk (the pages in MTurk's frame, the assignment posted to a stand-in for
 * MTurk's submit endpoint), and with both tabs refreshed in the middle of the game. And the study
 * `cerealbar study init` writes, as written: its first two workers are paired.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Frame, FrameLocator, Page } from 'playwright-core';
import { loadStudyFile, type LoadedStudy } from '../../server/study/loadStudy';
import { makeConfig } from '../../shared/engine/config';
import { buildWorld } from '../../shared/engine/map';
import { generateMap } from '../../shared/maps/generate';
import { PathPlanner } from '../../shared/nav/pathing';
import { setPath, studyFolder, validStudy, writeStudy } from '../study/fixtures';
import { launchBrowser, openPage, screenshot, startBrowserTestServer, type BrowserTestServer } from './harness';
import { quickSetGame, type QuickSet } from './quickSet';
import { api, preparedWorker } from './studyWorkers';
import { playFollowerTutorial, playLeaderTutorial, stepToward, tutorialView, type TutorialView } from './tutorialPlayer';

jest.setTimeout(300_000);

const BIN = resolve(__dirname, '../../bin/cerealbar.cjs');
/** Three turns each and no extra turns: a game of a minute, in which the leader alone makes a set. */
const CONFIG = makeConfig({ turnsPerPlayer: 3, extraTurns: [] });
const QUICK: QuickSet = quickSetGame(CONFIG, 12);
const planner = new PathPlanner(buildWorld(generateMap(QUICK.seed)));
const BONUS_PER_POINT = 0.25;

let dir: string;
let server: BrowserTestServer;
let browser: Browser;
const files: Record<string, string> = {};

function study(id: string, changes: Record<string, unknown>): LoadedStudy {
  const data = setPath(validStudy(), 'id', id);
  setPath(data, 'pay', { base: 2, bonusPerPoint: BONUS_PER_POINT, currency: changes.platform ? 'USD' : 'GBP' });
  setPath(data, 'roles', { newWorkersStartAs: 'follower', promotion: 'manual' });
  for (const [path, value] of Object.entries(changes)) setPath(data, path, value);
  files[id] = writeStudy(studyFolder(join(dir, id)), data);
  return loadStudyFile(files[id]);
}

/** The study `cerealbar study init` writes, as written. */
function initStudy(id: string): LoadedStudy {
  const out = join(dir, id);
  const run = spawnSync(process.execPath, [BIN, 'study', 'init', '--id', id, '--out', out], { encoding: 'utf8' });
  expect([run.status, run.stderr]).toEqual([0, '']);
  files[id] = join(out, 'study.yaml');
  return loadStudyFile(files[id]);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cerealbar-study-e2e-'));
  const studies = [study('prolific-e2e', {}), study('mturk-e2e', { platform: { kind: 'mturk' } }), study('refresh-e2e', {}), initStudy('init-e2e')];
  // Every game has the quick set's seed; turns never time out, so the test sets the pace. A seat
  // is kept 20 s for a refreshed page.
  server = await startBrowserTestServer({ seed: QUICK.seed, config: CONFIG, leaderTurnSeconds: 600, followerTurnSeconds: 600, reconnectSeconds: 20 }, {}, studies);
  browser = await launchBrowser();
});

afterAll(async () => {
  await server?.close();
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A worker taken through consent, rules, its tutorials and the quiz by the API alone (the first test does it on the pages). */
const atPlay = (studyId: string, ids: Record<string, string>, leader: boolean) => preparedWorker(server.url, studyId, ids, { promote: leader });

type Place = Page | Frame;

/** The keyboard that types into `place` (a frame's is its page's; the frame must have the focus). */
const keyboardOf = (place: Place) => ('keyboard' in place ? place : place.page()).keyboard;

const gameView = (place: Place) => place.evaluate(() => (window as never as { __game?: { view: TutorialView & { phase: string } } }).__game?.view ?? null);

/** Until it is `role`'s turn in `place`'s game, or the game is over; true while the game goes on. */
async function turnOf(place: Place, role: 'leader' | 'follower'): Promise<boolean> {
  await place.waitForFunction(
    (role) => {
      const view = (window as never as { __game?: { view: { phase: string; turn: { role: string } } } }).__game?.view;
      return !!view && (view.phase === 'ended' || view.turn.role === role);
    },
    role,
    { timeout: 60_000 },
  );
  return (await gameView(place))!.phase === 'playing';
}

/**
 * Plays the quick-set game to its end: the leader walks onto the set's cards with its steps, and
 * each turn writes an instruction and ends the turn; the follower marks each instruction done.
 * `afterFirstRound` runs once both have played a turn (the refresh test reloads the pages there).
 */
async function playQuickSetGame(players: { leader: () => Place; follower: () => Place }, afterFirstRound: () => Promise<void> = async () => undefined): Promise<void> {
  let left = [...QUICK.cardIds];
  for (let round = 0; ; round++) {
    if (!(await turnOf(players.leader(), 'leader'))) break;
    const leader = players.leader();
    for (let view = (await gameView(leader))!; view.turn.stepsLeft > 0 && left.length > 0; view = (await gameView(leader))!) {
      const target = view.cards.find((card) => card.id === left[0]);
      if (!target || target.selected) left = left.slice(1);
      else if (!(await stepToward(leader, 'leader', target, planner))) left = left.slice(1);
    }
    await leader.fill('textarea.instruction-input', `Stay where you are (round ${round + 1})`);
    await keyboardOf(leader).press('Enter');
    await leader.waitForSelector('.leader-panel .instructions li');
    await leader.click('button.end-turn');
    if (!(await turnOf(players.follower(), 'follower'))) break;
    await keyboardOf(players.follower()).press('d');
    if (round === 0) {
      await turnOf(players.leader(), 'leader');
      await afterFirstRound();
    }
  }
  for (const place of [players.leader(), players.follower()]) {
    await place.waitForSelector('.game-over button', { timeout: 30_000 });
    expect((await gameView(place))!.score).toBe(1);
    // The turn's cues (each replacing its own earlier one) are gone once the game is over.
    const banners = await place.locator('.banners .banner').allTextContents();
    expect(banners.filter((text) => /^(Your turn|Set made|Last round)/.test(text))).toEqual([]);
  }
}

/** The bonus sheet, written by the command line a researcher runs. */
function bonusSheet(studyId: string, format: 'prolific' | 'mturk'): string {
  const out = join(dir, `${studyId}-${format}.csv`);
  const run = spawnSync(process.execPath, [BIN, 'study', 'bonuses', '--study', files[studyId], '--data', server.dataDir, '--format', format, '--out', out], { encoding: 'utf8' });
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  return readFileSync(out, 'utf8');
}

const stubProlific = (page: Page) => page.route('https://app.prolific.com/**', (route) => route.fulfill({ contentType: 'text/html', body: '<title>Prolific</title>' }));

test('two Prolific workers: consent, rules, tutorials and quiz on the pages, paired, a game played to its end, their codes, back to Prolific, and the bonus sheet', async () => {
  const pids = { leader: '60a1b2c3d4e5f60718293a4b', follower: '60a1b2c3d4e5f60718293a4c' };
  const open = async (pid: string) => {
    const opened = await openPage(browser, `${server.url}/study/prolific-e2e?PROLIFIC_PID=${pid}&STUDY_ID=PS1&SESSION_ID=SESS-${pid.slice(-2)}`);
    await stubProlific(opened.page);
    await opened.page.click('button.agree');
    await opened.page.waitForSelector('button.rules-read');
    return opened;
  };
  const leader = await open(pids.leader);
  const follower = await open(pids.follower);
  // The researcher makes one of them a leader (by hand, as the study's promotion is manual).
  await api(server.url, `studies/prolific-e2e/workers/${pids.leader}/promote`, {});
  for (const [role, { page }] of [['leader', leader], ['follower', follower]] as const) {
    await page.click('button.rules-read');
    await page.waitForSelector('button.tutorial-start');
    expect(await page.textContent('main h1')).toBe(`Practice as the ${role}`);
    await page.click('button.tutorial-start');
    await page.waitForSelector(`.game-screen.${role} .tutorial-hint li.current`);
    await (role === 'leader' ? playLeaderTutorial(page) : playFollowerTutorial(page));
    await page.click('.tutorial-complete button.continue');
    await page.waitForSelector('form.quiz');
    for (const [question, choice] of [[0, 0], [1, 1], [2, 1]]) await page.check(`fieldset[data-question="${question}"] input[value="${choice}"]`);
    await page.click('button.quiz-submit');
    await page.waitForSelector('button.find-partner');
  }
  await follower.page.click('button.find-partner');
  await follower.page.waitForSelector('.waiting h1:has-text("You are the follower")');
  await leader.page.click('button.find-partner');
  await leader.page.waitForSelector('.game-screen.leader .world canvas', { timeout: 30_000 });
  await follower.page.waitForSelector('.game-screen.follower .world canvas', { timeout: 30_000 });

  await playQuickSetGame({ leader: () => leader.page, follower: () => follower.page });
  await screenshot(leader.page, 'study-e2e-leader-game-over');
  for (const { page } of [leader, follower]) await page.click('.game-over button');
  for (const { page } of [leader, follower]) {
    await page.waitForSelector('.completion-code');
    expect(await page.textContent('main h1')).toBe('Thank you: you have finished');
    expect(await page.textContent('.completion-code .code')).toBe('CDONE1');
    expect(await page.textContent('.earnings')).toBe('Base pay£2.00Bonus so far£0.25 (paid after the study)Total£2.25');
  }
  await screenshot(follower.page, 'study-e2e-follower-done');
  // Each is handed back to Prolific with the completed code.
  for (const { page } of [leader, follower]) await page.waitForURL('https://app.prolific.com/submissions/complete?cc=CDONE1', { timeout: 15_000 });

  const [game] = server.store.listGames();
  expect(game.score).toBe(1);
  expect(game.seats.map((seat) => [seat.role, seat.workerId]).sort()).toEqual([
    ['follower', pids.follower],
    ['leader', pids.leader],
  ]);
  expect(bonusSheet('prolific-e2e', 'prolific').trimEnd().split('\n').sort()).toEqual([`${pids.leader},0.25`, `${pids.follower},0.25`]);
  expect([...leader.errors, ...follower.errors]).toEqual([]);
});

test('a study as study init writes it: its first two workers, through consent, rules, tutorials and quiz on the pages, are paired into a game', async () => {
  const answers = server.server.studies.get('init-e2e')!.quiz.questions.map((question) => question.answer);
  const open = async (pid: string) => {
    const opened = await openPage(browser, `${server.url}/study/init-e2e?PROLIFIC_PID=${pid}&STUDY_ID=PS3&SESSION_ID=SESS-${pid}`);
    await stubProlific(opened.page);
    await opened.page.click('button.agree');
    await opened.page.click('button.rules-read');
    // Each practises both roles, since either may lead.
    const practised: string[] = [];
    for (;;) {
      await opened.page.waitForSelector('button.tutorial-start, form.quiz');
      if (await opened.page.isVisible('form.quiz')) break;
      const role = (await opened.page.textContent('main h1'))!.replace('Practice as the ', '') as 'leader' | 'follower';
      practised.push(role);
      await opened.page.click('button.tutorial-start');
      await opened.page.waitForSelector(`.game-screen.${role} .tutorial-hint li.current`);
      await (role === 'leader' ? playLeaderTutorial(opened.page) : playFollowerTutorial(opened.page));
      await opened.page.click('.tutorial-complete button.continue');
    }
    expect(practised.sort()).toEqual(['follower', 'leader']);
    for (const [question, choice] of answers.entries()) await opened.page.check(`fieldset[data-question="${question}"] input[value="${choice}"]`);
    await opened.page.click('button.quiz-submit');
    await opened.page.waitForSelector('button.find-partner');
    return opened;
  };
  const first = await open('INITFIRST01');
  const second = await open('INITSECOND1');
  await first.page.click('button.find-partner');
  await first.page.waitForSelector('.waiting');
  await second.page.click('button.find-partner');
  for (const { page } of [first, second]) await page.waitForSelector('.game-screen .world canvas', { timeout: 30_000 });
  const roles = await Promise.all([first, second].map(({ page }) => page.evaluate(() => (window as never as { __game: { role: string } }).__game.role)));
  expect(roles.sort()).toEqual(['follower', 'leader']);
  await screenshot(first.page, 'study-e2e-init-paired');
  const [game] = server.store.listGames({ pool: 'init-e2e' });
  expect([game.endedAt, game.seats.map((seat) => seat.workerId).sort()]).toEqual([null, ['INITFIRST01', 'INITSECOND1']]);
  expect([...first.errors, ...second.errors]).toEqual([]);
  for (const { page } of [first, second]) await page.context().close();
});

test("two MTurk workers in MTurk's frame: a game to its end, each assignment posted to MTurk, and MTurk's bonus sheet", async () => {
  const hits = {
    leader: { workerId: 'A1LEADER', assignmentId: '3ASGLEADER', hitId: '3HIT', turkSubmitTo: 'https://workersandbox.mturk.com' },
    follower: { workerId: 'A2FOLLOWER', assignmentId: '3ASGFOLLOWER', hitId: '3HIT', turkSubmitTo: 'https://workersandbox.mturk.com' },
  };
  await atPlay('mturk-e2e', hits.leader, true);
  await atPlay('mturk-e2e', hits.follower, false);
  const framed = async (ids: Record<string, string>) => {
    const opened = await openPage(browser, 'about:blank');
    await opened.page.route('https://workersandbox.mturk.com/**', (route) => route.fulfill({ contentType: 'text/html', body: '<title>MTurk</title>' }));
    const submitted = opened.page.waitForRequest((request) => request.url().startsWith('https://workersandbox.mturk.com/'), { timeout: 120_000 });
    // A page of the server's own origin frames the study, as MTurk's worker site does.
    await opened.page.route(`${server.url}/hit-${ids.workerId}`, (route) =>
      route.fulfill({ contentType: 'text/html', body: `<title>HIT</title><iframe src="/study/mturk-e2e?${new URLSearchParams(ids)}" width="1240" height="760" title="The HIT"></iframe>` }),
    );
    await opened.page.goto(`${server.url}/hit-${ids.workerId}`);
    const frame = opened.page.frameLocator('iframe');
    await frame.locator('button.find-partner').waitFor();
    return { ...opened, frame, inner: () => opened.page.frames()[1], submitted };
  };
  const leader = await framed(hits.leader);
  const follower = await framed(hits.follower);
  await follower.frame.locator('button.find-partner').click();
  await leader.frame.locator('button.find-partner').click();
  for (const player of [leader, follower]) {
    await player.frame.locator('.game-screen .world canvas').waitFor({ timeout: 30_000 });
    // Keys go to the frame a person clicked in.
    await player.frame.locator('.game-screen .world').click({ position: { x: 5, y: 5 } });
  }

  await playQuickSetGame({ leader: () => leader.inner(), follower: () => follower.inner() });
  await screenshot(follower.page, 'study-e2e-mturk-frame');
  for (const player of [leader, follower]) await player.frame.locator('.game-over button').click();
  // Each page shows its code, then posts the assignment to MTurk by itself a few seconds later.
  await Promise.all(
    [leader, follower].map(async (player) => {
      const frame: FrameLocator = player.frame;
      await frame.locator('.completion-code').waitFor();
      expect(await frame.locator('.completion-code .code').textContent()).toBe('CDONE1');
    }),
  );
  for (const [role, player] of [['leader', leader], ['follower', follower]] as const) {
    const request = await player.submitted;
    expect([request.method(), request.url(), request.postData()]).toEqual(['POST', 'https://workersandbox.mturk.com/mturk/externalSubmit', `assignmentId=${hits[role].assignmentId}&completionCode=CDONE1`]);
    expect(request.frame()).not.toBe(player.page.mainFrame());
  }
  const [head, ...rows] = bonusSheet('mturk-e2e', 'mturk').trimEnd().split('\n');
  const gameId = server.store.listGames({ pool: 'mturk-e2e' })[0].gameId;
  expect(head).toBe('workerId,assignmentId,bonusAmount,reason,uniqueRequestToken');
  expect(rows.sort()).toEqual(
    [hits.follower, hits.leader].map((hit) => `${hit.workerId},${hit.assignmentId},0.25,A game: 1 point in 1 game (${gameId}),mturk-e2e-${hit.assignmentId}`).sort(),
  );
  expect([...leader.errors, ...follower.errors]).toEqual([]);
});

test('both tabs refreshed in the middle of a game come back to their seats, and the game is finished', async () => {
  const pids = { leader: 'REFRESHLEADER01', follower: 'REFRESHFOLLOW01' };
  await atPlay('refresh-e2e', { PROLIFIC_PID: pids.leader, STUDY_ID: 'PS2', SESSION_ID: 'RS1' }, true);
  await atPlay('refresh-e2e', { PROLIFIC_PID: pids.follower, STUDY_ID: 'PS2', SESSION_ID: 'RS2' }, false);
  const open = async (pid: string, session: string) => {
    const opened = await openPage(browser, `${server.url}/study/refresh-e2e?PROLIFIC_PID=${pid}&STUDY_ID=PS2&SESSION_ID=${session}`);
    await stubProlific(opened.page);
    await opened.page.waitForSelector('button.find-partner');
    return opened;
  };
  const leader = await open(pids.leader, 'RS1');
  const follower = await open(pids.follower, 'RS2');
  await follower.page.click('button.find-partner');
  await leader.page.click('button.find-partner');
  for (const { page } of [leader, follower]) await page.waitForSelector('.game-screen .world canvas', { timeout: 30_000 });

  let before: TutorialView | null = null;
  await playQuickSetGame({ leader: () => leader.page, follower: () => follower.page }, async () => {
    before = await tutorialView(leader.page);
    await Promise.all([leader.page.reload(), follower.page.reload()]);
    for (const { page } of [leader, follower]) await page.waitForSelector('.game-screen .world canvas', { timeout: 30_000 });
    expect(await leader.page.evaluate(() => (window as never as { __game: { role: string } }).__game.role)).toBe('leader');
    expect(await follower.page.evaluate(() => (window as never as { __game: { role: string } }).__game.role)).toBe('follower');
    // The same game, where it was: the leader's pose and the cards it had selected.
    const after = (await gameView(leader.page))!;
    expect([after.leader, after.cards.filter((card) => card.selected).map((card) => card.id)]).toEqual([before!.leader, before!.cards.filter((card) => card.selected).map((card) => card.id)]);
  });
  for (const { page } of [leader, follower]) await page.click('.game-over button');
  for (const { page } of [leader, follower]) {
    await page.waitForSelector('.completion-code');
    expect(await page.textContent('.completion-code .code')).toBe('CDONE1');
  }
  const games = server.store.listGames({ pool: 'refresh-e2e' });
  expect(games.map((game) => [game.endReason, game.score])).toEqual([['turns-exhausted', 1]]);
  expect([...leader.errors, ...follower.errors]).toEqual([]);
});
