/// <reference lib="dom" />
/**
 * A study's participant pages (/study/<id>) in a real browser, against a server running four
 * studies (Prolific, MTurk, two labs) with its worker records in a temporary directory: a Prolific
 * worker through consent, the rules, the follower's tutorial, the quiz (a failed attempt, then a
 * pass), the wait for a partner (kept across a refresh) and the noPartner ending's hand-back; a
 * declining worker; a link without its ids; MTurk's preview; an MTurk worker screened out by the
 * quiz, in a frame, whose page posts the assignment to MTurk; a lab worker's id form and a hostile
 * consent form shown as text; two lab workers seated in one game by the server (a refresh keeps
 * the seat), whose partner leaves; two games in a session, then the completed code; a blocked
 * worker; a study with arms, whose pages claim no other person and run no clock. Every page is audited with axe, and a picture of each goes to test-artifacts/ (with
 * UPDATE_DOC_SCREENSHOTS=1 also to docs/images/).
 */
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Frame, Page } from 'playwright-core';
import { loadStudyFile, type LoadedStudy } from '../../server/study/loadStudy';
import { setPath, studyFolder, validStudy, writeStudy } from '../study/fixtures';
import { audit, describe as describeViolations } from './axe';
import { ADMIN_TOKEN, ARTIFACTS, launchBrowser, openPage, screenshot, startBrowserTestServer, type BrowserTestServer } from './harness';
import { waitForWorld } from './players';
import { api, preparedWorker } from './studyWorkers';
import { playFollowerTutorial } from './tutorialPlayer';

jest.setTimeout(240_000);

const DOC_IMAGES = resolve(__dirname, '../../docs/images');
const UPDATE_DOCS = process.env.UPDATE_DOC_SCREENSHOTS === '1';
const WAIT_SECONDS = 10;

const CONSENT = `# Taking part

You are invited to play a **game for two** with another person, as part of a study of how people
give and follow instructions. It takes about *20 minutes*.

## What we record

- The moves you make and the instructions you write or follow.
- Your Prolific id, kept apart from the game records.

Taking part is voluntary: you may stop at any time by closing the page. Questions? Read
[the study's page](https://example.org/cerealbar-study) or write to the researchers through Prolific.
`;

/** A consent form that tries to run script: it must show as text. */
const HOSTILE_CONSENT = `# Consent

<script>window.__pwned = true</script>
<img src=x onerror="window.__pwned = true">

[Click here](javascript:window.__pwned=true) or [here](https://example.org/ok).
`;

/** A study with arms' consent form: the partner is not said to be a person (P-145). */
const ARMS_CONSENT = '# Taking part\n\nYou are invited to play a game for two with a partner, as part of a study of how instructions are given and followed.\n';

const RULES = 'Please play as you would with a friend: write **clear** instructions, and never share personal details in them.';

let dir: string;
let server: BrowserTestServer;
let browser: Browser;

function study(id: string, consent: string, changes: Record<string, unknown>): LoadedStudy {
  const data = setPath(validStudy(), 'id', id);
  setPath(data, 'rules', { text: RULES });
  setPath(data, 'time', { waitForPartnerSeconds: WAIT_SECONDS, sessionMinutes: 30 });
  setPath(data, 'title', 'Collecting cards together');
  setPath(data, 'description', 'Play a short online game with another participant: one of you gives instructions, the other follows them. About 20 minutes.');
  for (const [path, value] of Object.entries(changes)) setPath(data, path, value);
  const folder = studyFolder(join(dir, id));
  writeFileSync(join(folder, 'consent.md'), consent);
  return loadStudyFile(writeStudy(folder, data));
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'cerealbar-study-pages-'));
  const studies = [
    study('pilot', CONSENT, {}),
    study('turk', CONSENT, { platform: { kind: 'mturk' }, 'pay.currency': 'USD' }),
    study('lab', HOSTILE_CONSENT, { platform: { kind: 'lab', participantIdPattern: 'P[0-9]{3}' }, 'roles.newWorkersStartAs': 'either', 'roles.promotion': 'manual' }),
    // Two games a session, each over in seconds: every turn times out after 1 s.
    study('short', CONSENT, {
      platform: { kind: 'lab' },
      'roles.newWorkersStartAs': 'either',
      'roles.promotion': 'manual',
      gamesPerSession: 2,
      time: { waitForPartnerSeconds: 60, sessionMinutes: 30, leaderTurnSeconds: 1, followerTurnSeconds: 1 },
    }),
    // One new participant a minute: the next waits.
    study('busy', CONSENT, { admission: { newWorkersPerMinute: 1 } }),
    // A study with arms, in a lab: its participants lead, and the heuristic follower follows.
    study('agents', ARMS_CONSENT, {
      platform: { kind: 'lab' },
      description: 'Play a short online game with a partner: one of you gives instructions, the other follows them. About 20 minutes.',
      roles: { newWorkersStartAs: 'leader', promotion: 'manual' },
      arms: [{ id: 'heuristic-follower', agent: 'heuristic' }],
    }),
  ];
  // Seats are kept 3 s: a refresh comes back in time, a closed page ends its partner's game soon.
  server = await startBrowserTestServer({ seed: 7, leaderTurnSeconds: 600, followerTurnSeconds: 600, reconnectSeconds: 3 }, {}, studies);
  browser = await launchBrowser();
});

afterAll(async () => {
  await server?.close();
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Fails on any axe violation of the page as it is now (minor ones too), naming the page. */
async function accessible(page: Page, name: string): Promise<void> {
  const result = await audit(page, name);
  if (result.violations.length > 0) throw new Error(`${name}:\n${describeViolations(result.violations)}`);
}

async function picture(page: Page, name: string): Promise<void> {
  const path = await screenshot(page, `study-${name}`);
  if (UPDATE_DOCS) copyFileSync(path, join(DOC_IMAGES, `study-${name}.png`));
}

/** A worker taken through the steps by the API alone, up to the quiz (`quiz`) or past it (`play`). */
const prepared = (studyId: string, ids: Record<string, string>, upTo: 'quiz' | 'play', tutorials: readonly ('leader' | 'follower')[] = ['follower']) =>
  preparedWorker(server.url, studyId, ids, { upTo, tutorials });

const answer = (page: Page | Frame, question: number, choice: number) => page.check(`fieldset[data-question="${question}"] input[value="${choice}"]`);

const heading = (page: Page | Frame) => page.textContent('main h1');

/** Reloads the page with its game code held back a moment, and waits for it to say it joins (its seat kept from before). */
async function reloadJoining(page: Page): Promise<void> {
  await page.route(
    '**/assets/session-*.js',
    async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await route.continue();
    },
    { times: 1 },
  );
  await page.reload();
  await page.waitForSelector('.waiting h1:has-text("Joining")');
}

test('a Prolific worker: consent, rules, the tutorial, the quiz failed then passed, the wait kept across a refresh, and the noPartner ending', async () => {
  const pid = '5f0c1e2d3b4a59687766554a';
  const { page, errors } = await openPage(browser, `${server.url}/study/pilot?PROLIFIC_PID=${pid}&STUDY_ID=S1&SESSION_ID=SESS1`);
  await page.waitForSelector('button.agree');
  expect(await page.textContent('.study-progress')).toBe('Step 1 of 5: Consent');
  expect(await page.textContent('.study-facts')).toContain('£4.50 for taking part, plus a bonus of £0.10 for each point your team scores (at most £3.00 more).');
  expect(await page.getAttribute('.consent-form a', 'href')).toBe('https://example.org/cerealbar-study');
  // The first control a keyboard reaches after the heading is in the page, not lost.
  expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('H1');
  await accessible(page, 'consent');
  await picture(page, 'consent');

  await page.click('button.agree');
  await page.waitForSelector('button.rules-read');
  expect(await page.textContent('.study-progress')).toBe('Step 2 of 5: How to play');
  expect(await page.textContent('.rules .markdown')).toBe(RULES.replace(/\*\*/g, ''));
  // Both pictures are served (fingerprinted by the build) and decoded.
  await page.waitForFunction(() => Array.from(document.querySelectorAll<HTMLImageElement>('.view-picture img')).every((img) => img.complete && img.naturalWidth === 640));
  await accessible(page, 'rules');
  await picture(page, 'rules');
  await page.screenshot({ path: join(ARTIFACTS, 'study-rules-whole.png'), fullPage: true });
  // A refresh comes back to the same step, with the same session.
  const kept = await page.evaluate(() => localStorage.getItem('cerealbar.study.pilot'));
  expect(JSON.parse(kept!)).toMatchObject({ participantId: pid, ids: { PROLIFIC_PID: pid, STUDY_ID: 'S1', SESSION_ID: 'SESS1' } });
  await page.reload();
  await page.waitForSelector('button.rules-read');
  expect(await page.evaluate(() => localStorage.getItem('cerealbar.study.pilot'))).toBe(kept);

  await page.click('button.rules-read');
  await page.waitForSelector('button.tutorial-start');
  expect(await heading(page)).toBe('Practice as the follower');
  await accessible(page, 'tutorial introduction');
  await picture(page, 'tutorial');
  await page.click('button.tutorial-start');
  await page.waitForSelector('.game-screen.follower .tutorial-hint li.current');
  await waitForWorld(page);
  await accessible(page, 'tutorial');
  await playFollowerTutorial(page);
  await page.click('.tutorial-complete button.continue');

  await page.waitForSelector('form.quiz');
  expect(await page.textContent('.quiz-status')).toBe('You have 2 attempts.');
  await accessible(page, 'quiz');
  // Every question must be answered before anything is sent.
  await page.click('button.quiz-submit');
  expect(await page.textContent('.study-problem')).toBe('Please answer every question: question 1 has no answer yet.');
  await answer(page, 0, 1);
  await answer(page, 1, 0);
  await answer(page, 2, 1);
  // A person takes minutes over the rules and the practice; a worker at the quiz in seconds is not told which answers were wrong (P-136).
  server.passWorkerTime(90_000);
  await page.click('button.quiz-submit');
  await page.waitForSelector('.quiz-question.wrong');
  expect(await page.locator('.quiz-question.wrong').evaluateAll((groups) => groups.map((group) => (group as HTMLElement).dataset.question))).toEqual(['0', '1']);
  expect(await page.textContent('.quiz-status')).toBe('You got 1 of 3 right; you need 2. The questions marked "Wrong answer" need another answer. This is your last attempt.');
  await accessible(page, 'quiz with wrong answers');
  await picture(page, 'quiz');
  await answer(page, 0, 0);
  await answer(page, 1, 1);
  await page.click('button.quiz-submit');

  await page.waitForSelector('button.find-partner');
  expect(await page.textContent('.quiz-passed')).toBe('You passed the quiz.');
  await accessible(page, 'ready to play');
  await picture(page, 'play');
  await page.click('button.find-partner');
  await page.waitForSelector('.waiting h1:has-text("You are the follower. Waiting for a leader to join")');
  await accessible(page, 'waiting for a partner');
  await picture(page, 'waiting');
  // A refresh takes the seat back, and the clock goes on from where it was.
  const clock = async () => {
    const [minutes, seconds] = (await page.textContent('.wait-clock'))!.split(':').map(Number);
    return minutes * 60 + seconds;
  };
  await page.waitForFunction((limit) => Number(document.querySelector('.wait-clock')?.textContent?.split(':')[1]) < limit, WAIT_SECONDS - 1);
  // While the page joins again (its game code held back a moment here), the time left shows already.
  await reloadJoining(page);
  expect(await clock()).toBeLessThan(WAIT_SECONDS - 1);
  await page.waitForSelector('.waiting h1:has-text("You are the follower")');
  expect(await clock()).toBeLessThan(WAIT_SECONDS - 1);

  // The wait runs out: the noPartner code, the pay, and back to Prolific by itself.
  await page.route('https://app.prolific.com/**', (route) => route.fulfill({ contentType: 'text/html', body: '<title>Prolific</title>' }));
  await page.waitForSelector('.completion-code', { timeout: (WAIT_SECONDS + 10) * 1000 });
  expect(await heading(page)).toBe('No partner was free');
  expect(await page.textContent('.completion-code .code')).toBe('CNOPART');
  expect(await page.textContent('.earnings')).toBe('Base pay£4.50Bonus so far£0.00 (paid after the study)Total£4.50');
  expect(await page.getAttribute('a.prolific-return', 'href')).toBe('https://app.prolific.com/submissions/complete?cc=CNOPART');
  await accessible(page, 'completion, Prolific');
  await picture(page, 'done');
  expect(server.workers!.get('pilot', pid)!.completion).toMatchObject({ outcome: 'noPartner', code: 'CNOPART' });
  await page.waitForURL('https://app.prolific.com/submissions/complete?cc=CNOPART', { timeout: 10_000 });
  expect(errors).toEqual([]);
});

test('declining ends politely, and is recorded', async () => {
  const { page, errors } = await openPage(browser, `${server.url}/study/pilot?PROLIFIC_PID=decliner1&STUDY_ID=S1&SESSION_ID=SESS2`);
  await page.click('button.decline');
  await page.waitForSelector('h1:has-text("You declined")');
  expect(await page.textContent('main')).toContain('Please return the study on Prolific');
  await accessible(page, 'declined');
  await picture(page, 'declined');
  expect(server.workers!.get('pilot', 'decliner1')!.declinedAt).not.toBeNull();
  // Coming back shows the same ending.
  await page.reload();
  await page.waitForSelector('h1:has-text("You declined")');
  // A link naming someone else in the same browser is a new session, not the kept one.
  await page.goto(`${server.url}/study/pilot?PROLIFIC_PID=another1&STUDY_ID=S1&SESSION_ID=SESS4`);
  await page.waitForSelector('button.agree');
  expect(JSON.parse((await page.evaluate(() => localStorage.getItem('cerealbar.study.pilot')))!).participantId).toBe('another1');
  expect(errors).toEqual([]);
});

test("P-132: a participant's id with another SESSION_ID opens nothing in a stranger's browser; the participant's own browser goes on", async () => {
  const own = await openPage(browser, `${server.url}/study/pilot?PROLIFIC_PID=owner1&STUDY_ID=S1&SESSION_ID=OWN1`);
  await own.page.click('button.agree');
  await own.page.waitForSelector('button.rules-read');
  const stranger = await openPage(browser, `${server.url}/study/pilot?PROLIFIC_PID=owner1&STUDY_ID=S1&SESSION_ID=MADEUP`);
  await stranger.page.waitForSelector('h1:has-text("The study could not be opened")');
  expect(await stranger.page.textContent('main')).toContain('This Prolific id already takes part in this study in another submission: open the study from the link Prolific gave you for it');
  await accessible(stranger.page, 'session elsewhere');
  await picture(stranger.page, 'session-elsewhere');
  expect(server.workers!.get('pilot', 'owner1')!.platformIds.prolificSessionId).toBe('OWN1');
  // The same worker's browser, with a link of a new submission, sends its kept token and goes on.
  await own.page.goto(`${server.url}/study/pilot?PROLIFIC_PID=owner1&STUDY_ID=S1&SESSION_ID=OWN2`);
  await own.page.waitForSelector('button.rules-read');
  expect(server.workers!.get('pilot', 'owner1')!.platformIds.prolificSessionId).toBe('OWN2');
  expect([...own.errors, ...stranger.errors]).toEqual([]);
});

test('P-134: a participant who arrives while the study takes no one new is told so, and the page lets them in once it does', async () => {
  const first = await openPage(browser, `${server.url}/study/busy?PROLIFIC_PID=early1&STUDY_ID=S1&SESSION_ID=E1`);
  await first.page.waitForSelector('button.agree');
  const { page, errors } = await openPage(browser, `${server.url}/study/busy?PROLIFIC_PID=later1&STUDY_ID=S1&SESSION_ID=L1`);
  await page.waitForSelector('h1:has-text("Many people are starting the study")');
  expect(await page.textContent('main')).toMatch(/This page tries again by itself in \d+ seconds: keep it open\./);
  await accessible(page, 'join later');
  await picture(page, 'join-later');
  expect(server.workers!.get('busy', 'later1')).toBeNull();
  // A minute on, the page's next try (here asked for at once) lets the participant in.
  server.passWorkerTime(60_000);
  await page.click('button.retry');
  await page.waitForSelector('button.agree');
  expect(server.workers!.get('busy', 'later1')).not.toBeNull();
  expect([...first.errors, ...errors]).toEqual([]);
});

test('a link without the platform ids says what is missing, and records nothing', async () => {
  const { page, errors } = await openPage(browser, `${server.url}/study/pilot?PROLIFIC_PID=someone2`);
  await page.waitForSelector('.link-problem');
  expect(await heading(page)).toBe('This link is not complete');
  expect(await page.textContent('.link-problem')).toBe('The link is missing STUDY_ID and SESSION_ID.');
  await accessible(page, 'bad link');
  await picture(page, 'bad-link');
  expect(server.workers!.get('pilot', 'someone2')).toBeNull();

  const unknown = await openPage(browser, `${server.url}/study/no-such-study`);
  await unknown.page.waitForSelector('h1:has-text("No study here")');
  await accessible(unknown.page, 'no such study');
  expect([...errors, ...unknown.errors]).toEqual([]);
});

test("MTurk's preview shows what the study is, and records nothing", async () => {
  const { page, errors } = await openPage(browser, `${server.url}/study/turk?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=3HIT&turkSubmitTo=https%3A%2F%2Fworkersandbox.mturk.com`);
  await page.waitForSelector('.accept-hit');
  expect(await heading(page)).toBe('Collecting cards together');
  expect(await page.textContent('.accept-hit')).toBe('Accept the HIT to start.');
  expect(await page.textContent('.study-facts')).toContain('$4.50 for taking part');
  expect(await page.locator('button').count()).toBe(0);
  await accessible(page, 'MTurk preview');
  await picture(page, 'mturk-preview');
  expect(server.workers!.list('turk')).toEqual([]);
  expect(errors).toEqual([]);
});

test("an MTurk worker screened out by the quiz, in MTurk's frame: the code, and the assignment posted to MTurk", async () => {
  const ids = { workerId: 'A1B2C3D4', assignmentId: '3ASG', hitId: '3HIT', turkSubmitTo: 'https://workersandbox.mturk.com' };
  const token = await prepared('turk', ids, 'quiz');
  await api(server.url, 'studies/turk/quiz', { answers: [1, 0, 0] }, token);
  const query = new URLSearchParams(ids).toString();

  const { page, errors } = await openPage(browser, 'about:blank');
  await page.route('https://workersandbox.mturk.com/**', (route) => route.fulfill({ contentType: 'text/html', body: '<title>MTurk</title>' }));
  const submitted = page.waitForRequest((request) => request.url().startsWith('https://workersandbox.mturk.com/'), { timeout: 60_000 });
  // A page of the server's own origin frames the study, as MTurk does (the server lets both frame it).
  await page.route(`${server.url}/hit`, (route) =>
    route.fulfill({ contentType: 'text/html', body: `<title>HIT</title><iframe src="/study/turk?${query}" width="1240" height="760" title="The HIT"></iframe>` }),
  );
  await page.goto(`${server.url}/hit`);
  const frame = page.frameLocator('iframe');
  await frame.locator('form.quiz').waitFor();
  expect(await frame.locator('.quiz-status').textContent()).toBe('This is your last attempt.');
  for (const [question, choice] of [[0, 1], [1, 0], [2, 0]]) await frame.locator(`fieldset[data-question="${question}"] input[value="${choice}"]`).check();
  await frame.locator('button.quiz-submit').click();
  await frame.locator('.completion-code').waitFor();
  expect(await frame.locator('main h1').textContent()).toBe('The quiz was not passed');
  expect(await frame.locator('.completion-code .code').textContent()).toBe('CSCREEN');
  expect(await frame.locator('form.mturk-submit').getAttribute('action')).toBe('https://workersandbox.mturk.com/mturk/externalSubmit');
  await picture(page, 'screened-out');
  // The form goes to MTurk by itself, from the frame: the assignment and the code.
  const request = await submitted;
  expect([request.method(), request.url(), request.postData()]).toEqual(['POST', 'https://workersandbox.mturk.com/mturk/externalSubmit', 'assignmentId=3ASG&completionCode=CSCREEN']);
  expect(request.frame()).not.toBe(page.mainFrame());
  expect(server.workers!.get('turk', 'A1B2C3D4')!.completion).toMatchObject({ outcome: 'screenedOut', code: 'CSCREEN' });

  // The same ending, opened again at the top level, for the audit (axe reads the top document).
  const top = await openPage(browser, `${server.url}/study/turk?${query}`);
  await top.page.route('https://workersandbox.mturk.com/**', (route) => route.fulfill({ contentType: 'text/html', body: '<title>MTurk</title>' }));
  await top.page.waitForSelector('form.mturk-submit');
  await accessible(top.page, 'completion, MTurk, screened out');
  expect([...errors, ...top.errors]).toEqual([]);
});

test("a lab worker types an id; the researcher's Markdown cannot run script", async () => {
  const { page, errors } = await openPage(browser, `${server.url}/study/lab`);
  await page.waitForSelector('form.lab-id');
  expect(await page.textContent('form.lab-id label')).toBe('Participant id');
  await accessible(page, 'lab id form');
  await picture(page, 'lab-id');
  await page.fill('#participant-id', 'P1');
  await page.click('form.lab-id button.start');
  expect(await page.textContent('.field-problem')).toBe("The id does not have the form this study's ids have (P[0-9]{3}).");
  expect(await page.getAttribute('#participant-id', 'aria-invalid')).toBe('true');
  await accessible(page, 'lab id form with a bad id');
  expect(server.workers!.list('lab')).toEqual([]);

  await page.fill('#participant-id', ' P001 ');
  await page.keyboard.press('Enter');
  await page.waitForSelector('button.agree');
  const consent = page.locator('.consent-form');
  expect(await consent.locator('script, img').count()).toBe(0);
  expect(await consent.textContent()).toContain('<script>window.__pwned = true</script>');
  expect(await consent.textContent()).toContain('<img src=x onerror="window.__pwned = true">');
  expect(await consent.locator('a').evaluateAll((links) => links.map((link) => [link.textContent, link.getAttribute('href'), link.getAttribute('rel'), link.getAttribute('target')]))).toEqual([
    ['here', 'https://example.org/ok', 'noopener noreferrer', '_blank'],
  ]);
  expect(await page.evaluate(() => (window as never as { __pwned?: boolean }).__pwned)).toBeUndefined();
  expect(server.workers!.get('lab', 'P001')!.consentedAt).toBeNull();
  // A refresh keeps the session: no form again. A token the server no longer knows is replaced by a new session for the same id.
  await page.reload();
  await page.waitForSelector('button.agree');
  await page.evaluate(() => localStorage.setItem('cerealbar.study.lab', JSON.stringify({ ...JSON.parse(localStorage.getItem('cerealbar.study.lab')!), token: 'expired' })));
  await page.reload();
  await page.waitForSelector('button.agree');
  expect(JSON.parse((await page.evaluate(() => localStorage.getItem('cerealbar.study.lab')))!)).toMatchObject({ participantId: 'P001', ids: { participantId: 'P001' } });
  expect(JSON.parse((await page.evaluate(() => localStorage.getItem('cerealbar.study.lab')))!).token).not.toBe('expired');
  expect(errors).toEqual([]);
});

test('two lab workers: the server seats them in one game; a refresh keeps the seat; the partner leaves', async () => {
  for (const id of ['P101', 'P102']) await prepared('lab', { participantId: id }, 'play', ['leader', 'follower']);
  const players = await Promise.all(
    ['P101', 'P102'].map(async (id) => {
      const opened = await openPage(browser, `${server.url}/study/lab`);
      await opened.page.fill('#participant-id', id);
      await opened.page.click('form.lab-id button.start');
      await opened.page.waitForSelector('button.find-partner');
      expect(await opened.page.textContent('main')).toContain('You will play as the leader or the follower');
      return opened;
    }),
  );
  for (const { page } of players) await page.click('button.find-partner');
  for (const { page } of players) await page.waitForSelector('.game-screen .world canvas', { timeout: 30_000 });
  const roles = await Promise.all(players.map(({ page }) => page.evaluate(() => (window as never as { __game: { role: string } }).__game.role)));
  expect([...roles].sort()).toEqual(['follower', 'leader']);
  for (const [i, { page }] of players.entries()) {
    await waitForWorld(page);
    await accessible(page, `the ${roles[i]}'s game in a study`);
  }

  const [stays, leaves] = players;
  await stays.page.reload();
  await stays.page.waitForSelector('.game-screen .world canvas', { timeout: 30_000 });
  expect(await stays.page.evaluate(() => (window as never as { __game: { role: string } }).__game.role)).toBe(roles[0]);

  await leaves.page.context().close();
  await stays.page.waitForSelector('.game-over button', { timeout: 30_000 });
  expect(await stays.page.textContent('.game-over button')).toBe('Continue');
  await stays.page.click('.game-over button');
  await stays.page.waitForSelector('.completion-code');
  expect(await heading(stays.page)).toBe('Your partner left the game');
  expect(await stays.page.textContent('.completion-code .code')).toBe('CLEFT');
  expect(await stays.page.textContent('.hand-back')).toContain('Please tell the experimenter that you have finished');
  await accessible(stays.page, 'completion, lab');
  await picture(stays.page, 'done-lab');
  // The experimenter starts the page again for the next participant.
  await stays.page.click('button.new-participant');
  await stays.page.waitForSelector('form.lab-id');
  expect(await stays.page.evaluate(() => localStorage.getItem('cerealbar.study.lab'))).toBeNull();
  expect(stays.errors).toEqual([]);
});

test('two games a session: after the first the page offers the next, after the second the completed code', async () => {
  const ids = ['S-1', 'S-2'];
  for (const id of ids) await prepared('short', { participantId: id }, 'play', ['leader', 'follower']);
  const players = await Promise.all(
    ids.map(async (id) => {
      const opened = await openPage(browser, `${server.url}/study/short`);
      await opened.page.fill('#participant-id', id);
      await opened.page.click('form.lab-id button.start');
      await opened.page.waitForSelector('button.find-partner');
      return opened;
    }),
  );
  for (const game of [1, 2]) {
    for (const { page } of players) await page.click('button.find-partner');
    for (const { page } of players) {
      await page.waitForSelector('.game-over button', { timeout: 60_000 });
      await page.click('.game-over button');
    }
    if (game === 1) {
      for (const { page } of players) {
        await page.waitForSelector('button.find-partner');
        expect(await heading(page)).toBe('Play another game');
        expect(await page.textContent('.games-so-far')).toBe('Games played so far: 1. Your pay so far: £4.50 base pay and a bonus of £0.00.');
      }
      await accessible(players[0].page, 'play another game');
    }
  }
  for (const { page } of players) {
    await page.waitForSelector('.completion-code');
    expect(await heading(page)).toBe('Thank you: you have finished');
    expect(await page.textContent('.completion-code .code')).toBe('CDONE1');
  }
  for (const id of ids) expect(server.workers!.get('short', id)!.games).toMatchObject({ played: 2, completed: 2 });
  expect(players.flatMap((player) => player.errors)).toEqual([]);
});

test('a blocked worker is told so', async () => {
  await prepared('pilot', { PROLIFIC_PID: 'blocked1', STUDY_ID: 'S1', SESSION_ID: 'SESS3' }, 'quiz');
  const response = await fetch(`${server.url}/api/studies/pilot/workers/blocked1/block`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ reason: 'two accounts' }),
  });
  expect(response.status).toBe(200);
  const { page, errors } = await openPage(browser, `${server.url}/study/pilot?PROLIFIC_PID=blocked1&STUDY_ID=S1&SESSION_ID=SESS3`);
  await page.waitForSelector('h1:has-text("You cannot take part in this study")');
  expect(await page.textContent('main')).toContain('contact the researchers through Prolific');
  await accessible(page, 'blocked');
  expect(errors).toEqual([]);
});

test('P-146: in a study with arms the play page says "a partner", and as nobody waits it runs no clock and never asks for the noPartner ending', async () => {
  await prepared('agents', { participantId: 'A-1' }, 'play', ['leader']);
  const { page, errors } = await openPage(browser, `${server.url}/study/agents`);
  await page.fill('#participant-id', 'A-1');
  await page.click('form.lab-id button.start');
  await page.waitForSelector('button.find-partner');
  const ready = await page.textContent('main');
  expect(ready).toContain('You will play as the leader. When you press Find a partner, the study finds you a partner.');
  expect(ready).toContain('Keep this page open: the game starts by itself in a moment.');
  expect(ready).not.toMatch(/another participant|person|nobody arrives/i);
  await accessible(page, 'ready to play, with arms');
  await picture(page, 'play-arms');

  const claims: string[] = [];
  page.on('request', (request) => {
    if (request.url().endsWith('/no-partner')) claims.push(request.method());
  });
  await page.click('button.find-partner');
  await page.waitForSelector('.game-screen .world canvas', { timeout: 30_000 });
  // A refresh mid-game, longer after asking to play than the study's wait: the page takes its seat
  // back (its game code held back a moment, to see it join) without a clock, and claims no ending.
  await page.evaluate((wait) => {
    const kept = JSON.parse(localStorage.getItem('cerealbar.study.agents')!);
    localStorage.setItem('cerealbar.study.agents', JSON.stringify({ ...kept, waitStartedAt: kept.waitStartedAt - (wait + 1) * 1000 }));
  }, WAIT_SECONDS);
  await reloadJoining(page);
  expect(await page.locator('.wait-clock').count()).toBe(0);
  expect(await page.textContent('.waiting')).not.toMatch(/another participant|person|nobody arrives/i);
  await accessible(page, 'joining, with arms');
  await picture(page, 'joining-arms');
  await page.waitForSelector('.game-screen .world canvas', { timeout: 30_000 });
  await waitForWorld(page);
  expect(claims).toEqual([]);
  expect(errors).toEqual([]);
});
