/**
 * `cerealbar study init`, `study links`, `study workers` and `serve --study`: run through the CLI's entry point in
 * this process (its output captured), and `serve` as a real process too.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cerealbar } from './run';
import { SqliteWorkerStore } from '../../server/store/SqliteWorkerStore';
import { loadStudyFile } from '../../server/study/loadStudy';
import { waitFor } from '../server/harness';
import { setPath, studyFolder, validStudy, writeStudy } from '../study/fixtures';
import { readXml } from '../study/xml';
import { serializeLine } from '../../shared/log/recorder';
import { generateMap } from '../../shared/maps/generate';
import { playSelfPlayGame } from '../../shared/selfplay/game';
import { mkdirSync } from 'node:fs';

jest.setTimeout(60_000);

const BIN = join(__dirname, '..', '..', 'bin', 'cerealbar.cjs');

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cerealbar-study-cli-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('study init', () => {
  test('writes a study file and a consent form that load as they are', async () => {
    const out = join(dir, 'pilot');
    const run = await cerealbar('study', 'init', '--id', 'pilot-3', '--out', out);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(`Wrote ${join(out, 'study.yaml')} and ${join(out, 'consent.md')}.`);
    const study = loadStudyFile(join(out, 'study.yaml'));
    expect(study).toMatchObject({ id: 'pilot-3', pool: 'pilot-3', platform: { kind: 'prolific' }, pay: { currency: 'GBP' } });
    // Any two new participants are paired, and init says what that means and where the paper's protocol is.
    expect(study.roles).toEqual({ newWorkersStartAs: 'either', promotion: 'manual' });
    expect(run.stdout).toContain('\nRoles: new participants may play either role (roles.newWorkersStartAs: either): each practises both, and any two are paired, one of them leading. For the CerealBar paper\'s protocol');
    expect(study.consentText).toBe(readFileSync(join(out, 'consent.md'), 'utf8'));
    // Every field is in the file, explained.
    const text = readFileSync(join(out, 'study.yaml'), 'utf8');
    for (const field of ['id:', 'title:', 'description:', 'consent:', 'rules:', 'pay:', 'bonusPerPoint:', 'maxBonus:', 'time:', 'waitForPartnerSeconds:', 'sessionMinutes:', 'leaderTurnSeconds:', 'followerTurnSeconds:', 'quiz:', 'passMark:', 'attempts:', 'roles:', 'newWorkersStartAs:', 'promotion:', 'completionCodes:', 'platform:', 'pool:']) {
      expect(text).toContain(field);
    }
  });

  test('without --out it writes under studies/<id> of the working directory', async () => {
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      expect((await cerealbar('study', 'init', '--id', 'second')).status).toBe(0);
    } finally {
      process.chdir(cwd);
    }
    expect(loadStudyFile(join(dir, 'studies', 'second', 'study.yaml')).id).toBe('second');
  });

  test('refuses to overwrite either file, and writes nothing then', async () => {
    writeFileSync(join(dir, 'consent.md'), 'my own consent form');
    const run = await cerealbar('study', 'init', '--id', 'pilot-3', '--out', dir);
    expect(run.status).toBe(2);
    expect(run.stderr).toBe(`cerealbar: ${join(dir, 'consent.md')} already exists: init never overwrites (choose another --out, or move the file away)\n`);
    expect(existsSync(join(dir, 'study.yaml'))).toBe(false);
    expect(readFileSync(join(dir, 'consent.md'), 'utf8')).toBe('my own consent form');

    expect((await cerealbar('study', 'init', '--id', 'pilot-3', '--out', join(dir, 'x'))).status).toBe(0);
    const again = await cerealbar('study', 'init', '--id', 'other', '--out', join(dir, 'x'));
    expect(again.status).toBe(2);
    expect(again.stderr).toMatch(/study\.yaml and .*consent\.md already exist: init never overwrites/);
    expect(loadStudyFile(join(dir, 'x', 'study.yaml')).id).toBe('pilot-3');
  });

  test('refuses an id that is not a slug', async () => {
    const run = await cerealbar('study', 'init', '--id', 'My Study', '--out', dir);
    expect(run.status).toBe(2);
    expect(run.stderr).toBe('cerealbar: --id "My Study" must be lowercase letters, digits and single dashes inside, as in "pilot-2"\n');
  });
});

describe('study links', () => {
  test('Prolific: the study URL with exact placeholders and the completion URLs, as text and as JSON', async () => {
    const file = writeStudy(studyFolder(join(dir, 'study')), validStudy());
    const text = await cerealbar('study', 'links', '--study', file, '--base-url', 'https://study.example.org/');
    expect(text.status).toBe(0);
    // The study starts everyone as followers: no game starts without a leader the researcher makes.
    expect(text.stderr).toBe(
      'cerealbar: warning: roles: every new participant starts as a follower (roles.newWorkersStartAs: follower), and a game needs a leader: no game starts until you promote a worker to leader on the admin page. The promotion rule (after 3 games as follower) cannot make the first leaders: those games need leaders. For any two participants to be paired, set roles.newWorkersStartAs: either.\n',
    );
    expect(text.stdout).not.toContain('Roles:');
    expect(text.stdout).toContain('\n  https://study.example.org/study/pilot-1?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}\n');
    expect(text.stdout).toMatch(/^ {2}screenedOut +CSCREEN +https:\/\/app\.prolific\.com\/submissions\/complete\?cc=CSCREEN$/m);
    const json = await cerealbar('study', 'links', '--study', file, '--base-url', 'https://study.example.org', '--json');
    expect(JSON.parse(json.stdout)).toMatchObject({
      study: 'pilot-1',
      platform: 'prolific',
      entryUrl: 'https://study.example.org/study/pilot-1',
      prolific: { studyUrl: 'https://study.example.org/study/pilot-1?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}' },
    });
  });

  test("a study that pairs any two participants says so with the links, and warns of nothing", async () => {
    const file = writeStudy(studyFolder(join(dir, 'study')), setPath(validStudy(), 'roles', { newWorkersStartAs: 'either', promotion: 'manual' }));
    const run = await cerealbar('study', 'links', '--study', file, '--base-url', 'https://study.example.org');
    expect([run.status, run.stderr]).toEqual([0, '']);
    expect(run.stdout).toMatch(/\n\nRoles: new participants may play either role \(roles\.newWorkersStartAs: either\): each practises both, and any two are paired, one of them leading\.\n$/);
  });

  test('MTurk: the ExternalQuestion, well-formed, in the text and in the JSON', async () => {
    const data = { ...validStudy(), pay: { base: 2.5, currency: 'USD' }, platform: { kind: 'mturk', frameHeight: 900 } };
    const file = writeStudy(studyFolder(join(dir, 'study')), data);
    const text = await cerealbar('study', 'links', '--study', file, '--base-url', 'https://example.org/cb');
    expect(text.status).toBe(0);
    expect(text.stdout).toContain('sandbox: create the HIT on https://requestersandbox.mturk.com');
    const xml = /<\?xml[\s\S]*<\/ExternalQuestion>/.exec(text.stdout)![0];
    expect(readXml(xml).children.map((child) => child.text)).toEqual(['https://example.org/cb/study/pilot-1', '900']);
    const json = JSON.parse((await cerealbar('study', 'links', '--study', file, '--base-url', 'https://example.org/cb', '--json')).stdout);
    expect(json.mturk.externalQuestion).toBe(xml);
    expect(json.mturk.createHit).toMatchObject({ Reward: '2.50', Question: xml });
  });

  test('a lab: the plain URL; http on localhost is allowed with a warning', async () => {
    const file = writeStudy(studyFolder(join(dir, 'study')), { ...validStudy(), platform: { kind: 'lab' } });
    const run = await cerealbar('study', 'links', '--study', file, '--base-url', 'http://localhost:2567');
    expect(run.status).toBe(0);
    expect(run.stdout).toContain('\n  http://localhost:2567/study/pilot-1\n');
    expect(run.stderr).toMatch(/^cerealbar: warning: http:\/\/localhost:2567 is plain http on this machine/);
  });

  test.each([
    [['--base-url', 'http://study.example.org'], /^cerealbar: --base-url: "http:\/\/study\.example\.org" must use https/],
    [['--base-url', 'not a url'], /^cerealbar: --base-url: "not a url" is not a URL/],
    [[], /required option '--base-url <url>' not specified/],
  ])('a bad base URL exits 2: %j', async (args, message) => {
    const file = writeStudy(studyFolder(join(dir, 'study')), validStudy());
    const run = await cerealbar('study', 'links', '--study', file, ...args);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stdout).toBe('');
  });

  test('a bad study file exits 2 with its problems, and prints no links', async () => {
    const file = writeStudy(studyFolder(join(dir, 'study')), setPath(validStudy(), 'quiz.questions.2.answer', 4));
    const run = await cerealbar('study', 'links', '--study', file, '--base-url', 'https://example.org');
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(new RegExp(`^cerealbar: ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: quiz\\.questions\\[2\\]\\.answer: 4 is not one of the 3 choices`));
    expect(run.stdout).toBe('');
  });
});

describe('serve --study', () => {
  test('a bad study file stops the server before it starts: exit 2, the problem, nothing stored', async () => {
    const file = writeStudy(studyFolder(join(dir, 'study')), setPath(validStudy(), 'pay.currency', 'pounds'));
    const data = join(dir, 'data');
    const run = await cerealbar('serve', '--port', '0', '--data', data, '--study', file);
    expect(run.status).toBe(2);
    expect(run.stderr).toContain(`cerealbar: ${file}: pay.currency: must be an ISO 4217 code`);
    expect(run.stdout).toBe('');
    expect(existsSync(data)).toBe(false);
  });

  test('two studies with one id stop it too', async () => {
    const folder = studyFolder(join(dir, 'study'));
    const first = writeStudy(folder, validStudy(), 'a.yaml');
    const second = writeStudy(folder, validStudy(), 'b.yaml');
    const run = await cerealbar('serve', '--port', '0', '--data', join(dir, 'data'), '--study', first, '--study', second);
    expect(run.status).toBe(2);
    expect(run.stderr).toBe(`cerealbar: ${second}: id: "pilot-1" is already the id of the study in ${first}: each study needs an id of its own\n`);
  });

  test('as a real process: a bad study is exit 2; good ones are served, their public parts without answers', async () => {
    const folder = studyFolder(join(dir, 'study'));
    const bad = spawnSync(process.execPath, [BIN, 'serve', '--port', '0', '--data', join(dir, 'data'), '--study', join(folder, 'missing.yaml')], { encoding: 'utf8', timeout: 30_000 });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toBe(`cerealbar: ${join(folder, 'missing.yaml')}: cannot read: no such file\n`);

    const prolific = writeStudy(folder, validStudy(), 'p.yaml');
    const mturk = writeStudy(folder, { ...validStudy(), id: 'hits', pay: { base: 1, currency: 'USD' }, platform: { kind: 'mturk' } }, 'm.json');
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--host', '127.0.0.1', '--data', join(dir, 'data'), '--study', prolific, '--study', mturk], {
      env: { ...process.env, ADMIN_TOKEN: 'a-test-token-of-enough-length' },
    });
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      // The warnings go to stderr, the rest to stdout: the two pipes may arrive in either order.
      await waitFor(() => /Admin token/.test(output) && /study hits: every new/.test(output), 'the server to start and warn', 30_000);
      expect(output).toMatch(/Study pilot-1 \(prolific, pool pilot-1\): participants enter at http:\/\/localhost:\d+\/study\/pilot-1 /);
      expect(output).toMatch(/Admin page \(the studies live, with the admin token\): http:\/\/localhost:\d+\/admin/);
      expect(output).toMatch(/Study hits \(mturk, pool hits\)/);
      // Both start everyone as followers, and no worker may lead yet.
      expect(output).toContain('cerealbar: warning: study pilot-1: every new participant starts as a follower (roles.newWorkersStartAs: follower), and a game needs a leader');
      expect(output).toContain('cerealbar: warning: study hits: every new participant starts as a follower');
      const port = /localhost:(\d+)/.exec(output)![1];
      const res = await fetch(`http://127.0.0.1:${port}/api/studies/pilot-1/public`);
      expect(res.status).toBe(200);
      const shown = await res.text();
      expect(JSON.parse(shown).quiz.questions[0]).toEqual({ prompt: 'Who sees the whole map?', choices: ['The leader', 'The follower'] });
      expect(shown).not.toMatch(/answer|CDONE1/);
      // The MTurk study lets MTurk frame the pages and take the completion form.
      expect(res.headers.get('content-security-policy')).toMatch(/form-action 'self' https:\/\/\*\.mturk\.com; frame-ancestors 'self' https:\/\/\*\.mturk\.com$/);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});

describe('study bonuses', () => {
  /** A finished game of the study in data/logs, played by these workers; its final score. */
  function loggedGame(data: string, seed: number, players: Record<string, unknown>[], study = 'pilot-1'): number {
    mkdirSync(join(data, 'logs'), { recursive: true });
    let text = '';
    const result = playSelfPlayGame({ seed, map: generateMap(seed), gameId: `g-${seed}`, meta: { study, players } }, (line) => (text += `${serializeLine(line)}\n`));
    writeFileSync(join(data, 'logs', `g-${seed}.jsonl`), text);
    return result.state.score;
  }
  const seat = (workerId: string, assignmentId?: string) => ({ role: 'follower', playerId: workerId, kind: 'human', workerId, ...(assignmentId && { assignmentId }) });

  test('P-102: writes the Prolific sheet from the logs, prints the table, and names what it could not count', async () => {
    const folder = studyFolder(join(dir, 'study'));
    const file = writeStudy(folder, setPath(validStudy(), 'pay', { base: 4, bonusPerPoint: 0.1, currency: 'GBP' }));
    const data = join(dir, 'data');
    const first = loggedGame(data, 3, [seat('P1'), seat('P2')]);
    const second = loggedGame(data, 4, [seat('P1'), { role: 'follower', playerId: 'b', kind: 'bot' }]);
    loggedGame(data, 5, [seat('P9')], 'another-study');
    writeFileSync(join(data, 'logs', 'broken.jsonl'), '{"kind":"header"\n');
    const out = join(dir, 'bonuses.csv');
    const run = await cerealbar('study', 'bonuses', '--study', file, '--data', data, '--format', 'prolific', '--out', out);
    expect(run.status).toBe(0);
    const amount = (points: number) => (Math.round(points * 10) / 100).toFixed(2);
    expect(readFileSync(out, 'utf8')).toBe([`P1,${amount(first + second)}`, `P2,${amount(first)}`].filter((line) => !line.endsWith(',0.00')).map((line) => `${line}\n`).join(''));
    expect(run.stdout).toMatch(/participant\s+assignment\s+games\s+points\s+bonus \(GBP\)/);
    expect(run.stdout).toContain(`P1           -           2      ${first + second}`);
    expect(run.stderr).toMatch(/broken\.jsonl: line 1: .*\(not counted\)/);
    const json = await cerealbar('study', 'bonuses', '--study', file, '--data', data, '--format', 'mturk', '--out', join(dir, 'mturk.csv'), '--json');
    expect(JSON.parse(json.stdout).rows[0]).toMatchObject({ participantId: 'P1', assignmentId: null, games: [{ gameId: 'g-3', score: first }, { gameId: 'g-4', score: second }] });
    expect(json.stderr).toContain('P1 P2 played without an MTurk assignment id');
  });

  test('P-138: names the completion codes earned without a game played, which the platform would pay too', async () => {
    const file = writeStudy(studyFolder(join(dir, 'study')), validStudy());
    const study = loadStudyFile(file);
    const data = join(dir, 'data');
    loggedGame(data, 3, [seat('P1'), seat('P2')]);
    const store = SqliteWorkerStore.open(data);
    store.startSession(study, { participantId: 'QUICK', ids: {} });
    store.recordGameStart('pilot-1', 'QUICK', 'g-9', 'follower');
    store.recordGameEnd(study, 'QUICK', 'g-9', { reason: 'abandoned', score: 0, left: false });
    store.close();
    const run = await cerealbar('study', 'bonuses', '--study', file, '--data', data, '--format', 'prolific', '--out', join(dir, 'b.csv'));
    expect(run.status).toBe(0);
    expect(run.stderr).toContain('1 completion code(s) were earned without a game played, check them before approving: QUICK');
  });

  test('bad options and a data directory without logs are refused with one line', async () => {
    const file = writeStudy(studyFolder(join(dir, 'study')), validStudy());
    const format = await cerealbar('study', 'bonuses', '--study', file, '--data', dir, '--format', 'paypal', '--out', join(dir, 'x.csv'));
    expect(format).toMatchObject({ status: 2, stderr: expect.stringContaining('--format must be prolific or mturk, got "paypal"') });
    const empty = await cerealbar('study', 'bonuses', '--study', file, '--data', join(dir, 'nothing'), '--format', 'prolific', '--out', join(dir, 'x.csv'));
    expect(empty).toMatchObject({ status: 2, stderr: expect.stringContaining('no logs/ folder') });
    expect(existsSync(join(dir, 'x.csv'))).toBe(false);
  });
});

describe('study workers', () => {
  test('P-138: prints the workers table from the data directory (read-only), as text and as JSON, each code earned without a game played flagged', async () => {
    const file = writeStudy(studyFolder(join(dir, 'study')), validStudy());
    const study = loadStudyFile(file);
    const data = join(dir, 'data');
    const empty = await cerealbar('study', 'workers', '--study', file, '--data', data);
    expect(empty.status).toBe(0);
    expect(empty.stdout).toBe('Study pilot-1: no workers yet\n');
    expect(existsSync(data)).toBe(false);

    const store = SqliteWorkerStore.open(data);
    store.startSession(study, { participantId: 'P-ONE', ids: {} });
    store.startSession(study, { participantId: 'P-TWO', ids: {} });
    store.answerConsent('pilot-1', 'P-TWO', true);
    store.block('pilot-1', 'P-ONE', 'two accounts');
    store.recordGameStart('pilot-1', 'P-TWO', 'g1', 'follower');
    store.recordGameEnd(study, 'P-TWO', 'g1', { reason: 'abandoned', score: 4, left: true });
    // P-THREE's partner left at once: a partnerLeft code without a game played.
    store.startSession(study, { participantId: 'P-THREE', ids: {} });
    store.recordGameStart('pilot-1', 'P-THREE', 'g1', 'leader');
    store.recordGameEnd(study, 'P-THREE', 'g1', { reason: 'abandoned', score: 0, left: false });
    store.close();

    const text = await cerealbar('study', 'workers', '--study', file, '--data', data);
    expect(text.stderr).toBe('');
    expect(text.status).toBe(0);
    const lines = text.stdout.split('\n');
    expect(lines[0]).toBe('Study pilot-1: 3 worker(s)');
    expect(lines[1]).toMatch(/^participant\s+step\s+role\s+quiz\s+games\s+points\s+bonus \(GBP\)\s+minutes\s+completion\s+created\s+blocked\s+check$/);
    expect(lines[2]).toMatch(/^P-ONE\s+blocked\s+follower\s+0\/2\s+0\s+0\s+0\.00\s+0\.0\s+-\s+\S+\s+yes: two accounts\s+-$/);
    expect(lines[3]).toMatch(/^P-TWO\s+rules\s+follower\s+0\/2\s+1 \(0 to the end\)\s+4\s+0\.40\s+0\.0\s+-.*\s-$/);
    expect(lines[4]).toMatch(/^P-THREE\s+done\s+.*partnerLeft CLEFT\s.*no game played: the partner left 0 s into game g1$/);
    expect(lines[5]).toBe('1 completion code(s) were earned without a game played (the check column): see "Before approving" in the study guide');

    const json = await cerealbar('study', 'workers', '--study', file, '--data', data, '--json');
    const parsed = JSON.parse(json.stdout) as { study: string; workers: { participantId: string; step: string }[] };
    expect(parsed.study).toBe('pilot-1');
    expect(parsed.workers.map((w) => [w.participantId, w.step])).toEqual([['P-ONE', 'blocked'], ['P-TWO', 'rules'], ['P-THREE', 'done']]);
    const listed = (JSON.parse(json.stdout) as { workers: { gameList: unknown[]; withoutPlay: string | null }[] }).workers;
    expect(listed.map((w) => w.gameList)).toEqual([[], [expect.objectContaining({ gameId: 'g1', role: 'follower', endReason: 'abandoned', score: 4, left: true })], [expect.objectContaining({ gameId: 'g1' })]]);
    expect(listed.map((w) => w.withoutPlay)).toEqual([null, null, 'no game played: the partner left 0 s into game g1']);
  });

  test('--store: a URL that is not postgres://, or a database that does not answer, exits 2 with the reason, its password never printed', async () => {
    const file = writeStudy(studyFolder(join(dir, 'study-store')), validStudy());
    const out = join(dir, 'never.csv');
    for (const command of [['workers'], ['bonuses', '--format', 'prolific', '--out', out]]) {
      const notPostgres = await cerealbar('study', ...command, '--study', file, '--store', 'mysql://user:secret@db/games');
      expect(notPostgres).toMatchObject({ status: 2, stdout: '' });
      expect(notPostgres.stderr).toContain('--store: mysql://user:***@db/games is not a postgres:// URL');
      const unreachable = await cerealbar('study', ...command, '--study', file, '--store', 'postgres://user:secret@127.0.0.1:1/games');
      expect(unreachable).toMatchObject({ status: 2, stdout: '' });
      expect(unreachable.stderr).toMatch(/postgres:\/\/user:\*\*\*@127\.0\.0\.1:1\/games: cannot (open the worker store|read the games): .*ECONNREFUSED/);
      expect(unreachable.stderr).not.toContain('secret');
    }
    expect(existsSync(out)).toBe(false);
  });

  test('a bad study file exits 2', async () => {
    const run = await cerealbar('study', 'workers', '--study', join(dir, 'missing.yaml'), '--data', dir);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
  });
});
