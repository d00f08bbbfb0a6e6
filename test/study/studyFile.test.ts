/** The study file: what it accepts, the defaults it fills in, and how it names each problem. */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadStudyFile, loadStudyFiles } from '../../server/study/loadStudy';
import { joinOptionsSchema } from '../../shared/protocol/messages';
import { parseStudy, StudyFileError } from '../../shared/study/parseStudy';
import { makeConfig, profileConfig } from '../../shared/engine/config';
import { completionUrl, publicStudy, studyFileSchema, studyGameConfig, type Study } from '../../shared/study/studyFile';
import { exampleStudyYaml, EXAMPLE_CONSENT } from '../../cli/study/example';
import { CONSENT, setPath, studyFolder, validStudy, writeStudy } from './fixtures';

let dir: string;
beforeEach(() => {
  dir = studyFolder();
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The error loading `file` throws (failing the test if it loads). */
function problemLoading(file: string): StudyFileError {
  let loaded: Study | undefined;
  try {
    loaded = loadStudyFile(file);
  } catch (error) {
    expect(error).toBeInstanceOf(StudyFileError);
    return error as StudyFileError;
  }
  throw new Error(`${file} loaded: ${JSON.stringify(loaded).slice(0, 200)}`);
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe('a valid study', () => {
  test('loads with its Markdown read and every default filled in', () => {
    const data = validStudy();
    delete data.time;
    delete data.roles;
    setPath(data, 'quiz.passMark', undefined);
    setPath(data, 'quiz.attempts', undefined);
    setPath(data, 'pay.bonusPerPoint', undefined);
    const study = loadStudyFile(writeStudy(dir, data));
    expect(study.consentText).toBe(CONSENT);
    expect(study.rulesText).toBe('Be kind.\n');
    expect(study.pool).toBe('pilot-1');
    expect(study.time).toEqual({ waitForPartnerSeconds: 300, sessionMinutes: 30 });
    // P-134, P-135: a crowd study's admission defaults; a lab's below.
    expect(study.admission).toEqual({ newWorkersPerAddressPerHour: 5, newWorkersPerMinute: 60, sameAddressPartners: false, armWorkersPerAddressPerHour: 5 });
    expect(studyFileSchema.parse({ ...validStudy(), platform: { kind: 'lab' } }).admission).toEqual({ newWorkersPerAddressPerHour: null, newWorkersPerMinute: 60, sameAddressPartners: true, armWorkersPerAddressPerHour: 20 });
    expect(study.roles).toEqual({ newWorkersStartAs: 'either', promotion: 'manual' });
    expect(study.quiz.passMark).toBe(3);
    expect(study.quiz.attempts).toBe(2);
    expect(study.pay.bonusPerPoint).toBe(0);
    expect(study.platform).toEqual({ kind: 'prolific', completionUrl: 'https://app.prolific.com/submissions/complete?cc={code}' });
    expect(completionUrl(study, 'noPartner')).toBe('https://app.prolific.com/submissions/complete?cc=CNOPART');
  });

  test('the example that `study init` writes loads', () => {
    writeFileSync(join(dir, 'consent.md'), EXAMPLE_CONSENT);
    const study = loadStudyFile(writeExample());
    expect(study.id).toBe('my-study');
    expect(study.quiz.questions).toHaveLength(3);
    expect(study.quiz.questions.map((q) => q.choices[q.answer])).toEqual([
      'The leader',
      '1 red star, 2 blue hearts, 3 green cubes',
      'Mark the instruction as done, to get the next one',
    ]);
    expect(study.consentText).toBe(EXAMPLE_CONSENT);
    expect(study.rulesText).toMatch(/plain English/);
    expect(study.game).toBeUndefined();
    const withGame = exampleStudyYaml('my-study').replace(/^# (game:\n)# (.*\n)# (.*\n)# (.*\n)/m, '$1$2$3$4');
    writeFileSync(join(dir, 'example.yaml'), withGame);
    expect(loadStudyFile(join(dir, 'example.yaml')).game).toEqual({ rules: 'cerealbar', liveFeedback: true, cancelInstructions: true });
  });

  function writeExample(): string {
    const path = join(dir, 'example.yaml');
    writeFileSync(path, exampleStudyYaml('my-study'));
    return path;
  }

  test('JSON works as well as YAML, and inline rules as well as a file', () => {
    const study = loadStudyFile(writeStudy(dir, { ...validStudy(), rules: { text: 'Inline *rules*.' }, pool: 'pool_A' }, 'study.json'));
    expect(study.rulesText).toBe('Inline *rules*.');
    expect(study.pool).toBe('pool_A');
    const noRules = validStudy();
    delete noRules.rules;
    expect(loadStudyFile(writeStudy(dir, noRules)).rulesText).toBeNull();
  });

  test('the Markdown is found relative to the study file, not to the working directory', () => {
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'sub', 'consent.md'), 'Sub consent.\n');
    expect(loadStudyFile(writeStudy(join(dir, 'sub'), { ...validStudy(), rules: undefined })).consentText).toBe('Sub consent.\n');
    expect(loadStudyFile(writeStudy(join(dir, 'sub'), { ...validStudy(), consent: '../consent.md', rules: { file: '../rules.md' } })).consentText).toBe(CONSENT);
  });

  test('MTurk and lab platforms, with their defaults', () => {
    const mturk = loadStudyFile(writeStudy(dir, { ...validStudy(), pay: { base: 2, currency: 'USD' }, platform: { kind: 'mturk' } }));
    expect(mturk.platform).toEqual({ kind: 'mturk', sandbox: true, frameHeight: 0 });
    expect(completionUrl(mturk, 'completed')).toBeNull();
    const lab = loadStudyFile(writeStudy(dir, { ...validStudy(), platform: { kind: 'lab', participantIdPattern: 'P[0-9]{3}' } }));
    expect(lab.platform).toEqual({ kind: 'lab', participantIdLabel: 'Participant id', participantIdPattern: 'P[0-9]{3}' });
  });

  test("a study's game: a rules profile and CB2's options on top of it, each the profile's when left out; none leaves the rules to the server", () => {
    const load = (game: unknown) => loadStudyFile(writeStudy(dir, { ...validStudy(), game }));
    expect(load({}).game).toEqual({ rules: 'cerealbar', liveFeedback: false, cancelInstructions: false });
    expect(load({ rules: 'cb2' }).game).toEqual({ rules: 'cb2', liveFeedback: true, cancelInstructions: true });
    expect(load({ rules: 'cb2', cancelInstructions: false }).game).toEqual({ rules: 'cb2', liveFeedback: true, cancelInstructions: false });
    expect(studyGameConfig(load({ liveFeedback: true }).game!)).toEqual(makeConfig({ liveFeedback: true }));
    expect(studyGameConfig(load({ rules: 'cb2', liveFeedback: false }).game!)).toEqual(profileConfig('cb2', { liveFeedback: false }));
    expect(loadStudyFile(writeStudy(dir, validStudy())).game).toBeUndefined();
  });

  test("a study's id and pool are pool names the join options accept", () => {
    const study = loadStudyFile(writeStudy(dir, { ...validStudy(), id: 'a-very-long-study-id-of-fifty-characters-0123456789'.slice(0, 50) }));
    expect(joinOptionsSchema.parse({ pool: study.pool }).pool).toBe(study.pool);
  });
});

describe('a bad field is named with its path, and nothing is loaded', () => {
  test.each<[string, string, unknown, string]>([
    ['an id with capitals', 'id', 'Pilot-1', 'id: must be lowercase letters, digits and single dashes'],
    ['an id too long for a pool', 'id', 'a'.repeat(51), 'id: must be at most 50 characters'],
    ['the quick-play pool', 'id', 'default', 'id: "default" is the public quick-play pool'],
    ['an empty title', 'title', '   ', 'title: must not be empty'],
    ['no description', 'description', undefined, 'description: is required'],
    ['an absolute consent path', 'consent', '/etc/consent.md', 'consent: must be a path relative to the study file'],
    ['a consent form that is not Markdown', 'consent', 'consent.txt', 'consent: must name a Markdown file'],
    ['a missing consent form', 'consent', 'missing.md', 'consent: missing.md: cannot read: no such file'],
    ['an empty consent form', 'consent', 'empty.md', 'consent: empty.md is empty'],
    ['a missing rules file', 'rules', { file: 'gone.md' }, 'rules.file: gone.md: cannot read: no such file'],
    ['rules that are neither a file nor text', 'rules', { file: 'rules.md', text: 'x' }, 'rules: must be {file: some.md} or {text: ...}'],
    ['rules that are not Markdown', 'rules', { file: 'rules.txt' }, 'rules.file: must name a Markdown file'],
    ['a negative base pay', 'pay.base', -1, 'pay.base: must not be negative'],
    ['base pay in fractions of a cent', 'pay.base', 4.505, 'pay.base: must have at most 2 decimal places'],
    ['a bonus written as text', 'pay.bonusPerPoint', '0.10', 'pay.bonusPerPoint: must be a number, not the text "0.10"'],
    ['a lowercase currency', 'pay.currency', 'gbp', 'pay.currency: must be an ISO 4217 code of three capital letters'],
    ['an unknown currency', 'pay.currency', 'XYZ', 'pay.currency: "XYZ" is not an ISO 4217 currency code'],
    ['a bonus cap below zero', 'pay.maxBonus', -0.5, 'pay.maxBonus: must not be negative'],
    ['a very short wait', 'time.waitForPartnerSeconds', 5, 'time.waitForPartnerSeconds: must be at least 10'],
    ['no new worker a minute', 'admission', { newWorkersPerMinute: 0 }, 'admission.newWorkersPerMinute: must be at least 1'],
    ['a fractional per-address limit', 'admission', { newWorkersPerAddressPerHour: 2.5 }, 'admission.newWorkersPerAddressPerHour: must be a whole number'],
    ['no worker an hour to play with the arms', 'admission', { armWorkersPerAddressPerHour: 0 }, 'admission.armWorkersPerAddressPerHour: must be at least 1 (or null: no limit)'],
    ['a wait longer than the session', 'time.waitForPartnerSeconds', 2400, 'time.waitForPartnerSeconds: 2400 s is longer than the whole session (sessionMinutes: 30)'],
    ['a fractional turn', 'time.leaderTurnSeconds', 1.5, 'time.leaderTurnSeconds: must be a whole number of seconds'],
    ['no questions', 'quiz.questions', [], 'quiz.questions: must have at least one question'],
    ['one choice', 'quiz.questions.0.choices', ['only'], 'quiz.questions[0].choices: must list at least 2 choices'],
    ['seven choices', 'quiz.questions.0.choices', ['a', 'b', 'c', 'd', 'e', 'f', 'g'], 'quiz.questions[0].choices: must list at most 6 choices'],
    ['an answer past the choices', 'quiz.questions.2.answer', 4, 'quiz.questions[2].answer: 4 is not one of the 3 choices: answers count from 0, so 0 to 2'],
    ['a negative answer', 'quiz.questions.1.answer', -1, 'quiz.questions[1].answer: must not be negative'],
    ['an answer given as the choice', 'quiz.questions.1.answer', '3', 'quiz.questions[1].answer: must be a number, not the text "3"'],
    ['the same choice twice', 'quiz.questions.1.choices', ['3', '4', '3'], 'quiz.questions[1].choices[2]: is the same as choice 0'],
    ['an empty prompt', 'quiz.questions.0.prompt', '', 'quiz.questions[0].prompt: must not be empty'],
    ['a pass mark above the questions', 'quiz.passMark', 4, 'quiz.passMark: 4 right answers are needed but the quiz has only 3 question(s)'],
    ['a pass mark as a fraction', 'quiz.passMark', 0.8, 'quiz.passMark: must be a whole number: how many right answers pass'],
    ['no attempts', 'quiz.attempts', 0, 'quiz.attempts: must be at least 1'],
    ['an unknown start role', 'roles.newWorkersStartAs', 'captain', 'roles.newWorkersStartAs: must be "follower" or "leader" or "either", not the text "captain"'],
    ['a promotion after no games', 'roles.promotion.afterGames', 0, 'roles.promotion.afterGames: must be at least 1'],
    ['a promotion without its score', 'roles.promotion.minMeanScore', undefined, 'roles.promotion.minMeanScore: is required'],
    ['an unknown promotion', 'roles.promotion', 'auto', 'roles.promotion: must be manual, or {afterGames, minMeanScore}'],
    ['a missing completion code', 'completionCodes.screenedOut', undefined, 'completionCodes.screenedOut: is required'],
    ['an empty completion code', 'completionCodes.noPartner', ' ', 'completionCodes.noPartner: must not be empty'],
    ['a completion code with a space', 'completionCodes.completed', 'C 1', 'completionCodes.completed: must be letters, digits, _ and - only'],
    ['two endings with one code', 'completionCodes.partnerLeft', 'CDONE1', 'completionCodes.partnerLeft: is the same code as completed'],
    ['an unknown platform', 'platform.kind', 'amazon', 'platform.kind: must be one of prolific, mturk, lab'],
    ['a completion URL without the code', 'platform.completionUrl', 'https://app.prolific.com/submissions/complete', 'platform.completionUrl: must contain {code} once'],
    ['a completion URL over http', 'platform.completionUrl', 'http://app.prolific.com/?cc={code}', 'platform.completionUrl: must be an https:// URL'],
    ['a field of another platform', 'platform.sandbox', false, 'platform.sandbox: is not a field here'],
    ['a pool with a space', 'pool', 'my pool', 'pool: pool names use letters, digits, _ and -'],
    ['a misspelt field', 'titel', 'x', 'titel: is not a field here (check its spelling and place)'],
    ['a misplaced field', 'pay.sessionMinutes', 30, 'pay.sessionMinutes: is not a field here'],
  ])('%s', (_name, path, value, message) => {
    const file = writeStudy(dir, setPath(validStudy(), path, value));
    const error = problemLoading(file);
    expect(error.message).toMatch(new RegExp(`^${escape(`${file}: ${message}`)}`, 'm'));
    expect(() => loadStudyFiles([writeStudy(dir, validStudy(), 'good.yaml'), file])).toThrow(StudyFileError);
  });

  test.each<[string, Record<string, unknown>, string]>([
    ['a promotion rule for a study that starts with leaders', { roles: { newWorkersStartAs: 'either', promotion: { afterGames: 2, minMeanScore: 1 } } }, 'roles.promotion: a promotion rule needs newWorkersStartAs: follower'],
    ['MTurk paid in pounds', { platform: { kind: 'mturk' } }, 'pay.currency: MTurk pays in USD only, not GBP'],
    ['MTurk paying nothing', { platform: { kind: 'mturk' }, pay: { base: 0, currency: 'USD' } }, "pay.base: is the HIT's reward on MTurk, which must be at least 0.01"],
    ['a lab id pattern that does not compile', { platform: { kind: 'lab', participantIdPattern: 'P[0-9' } }, 'platform.participantIdPattern: is not a valid regular expression'],
    ['a negative frame height', { pay: { base: 1, currency: 'USD' }, platform: { kind: 'mturk', frameHeight: -1 } }, 'platform.frameHeight: must not be negative'],
    ['a pool named default', { pool: 'default' }, 'pool: "default" is the public quick-play pool'],
    ['an unknown rules profile', { game: { rules: 'cb3' } }, 'game.rules: must be one of cerealbar, cb2'],
    ['feedback written as text', { game: { liveFeedback: 'yes' } }, 'game.liveFeedback: must be true or false, not the text "yes"'],
    ['a rule the study file does not set', { game: { rules: 'cb2', turnsPerPlayer: 3 } }, 'game.turnsPerPlayer: is not a field here'],
  ])('%s', (_name, change, message) => {
    const error = problemLoading(writeStudy(dir, { ...validStudy(), ...change }));
    expect(error.message).toContain(`: ${message}`);
  });

  test('every problem is listed at once, in the order of the file, with its line', () => {
    const data = setPath(setPath(setPath(validStudy(), 'quiz.questions.2.answer', 4), 'pay.currency', 'XYZ'), 'consent', 'missing.md');
    const file = writeStudy(dir, data);
    const lines = problemLoading(file).message.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/: consent: missing\.md: cannot read: no such file \(line 4\)$/);
    expect(lines[1]).toMatch(/: pay\.currency: "XYZ" is not an ISO 4217 currency code \(line \d+\)$/);
    expect(lines[2]).toMatch(/: quiz\.questions\[2\]\.answer: 4 is not one of the 3 choices.* \(line \d+\)$/);
  });

  test('text that is not a study: bad YAML, bad JSON, a list, a duplicated key, another extension', () => {
    const write = (name: string, text: string) => {
      const path = join(dir, name);
      writeFileSync(path, text);
      return path;
    };
    expect(problemLoading(write('a.yaml', 'id: a\n  b: [\n')).message).toMatch(/a\.yaml: is not valid YAML: .*\(line \d+\)/);
    expect(problemLoading(write('b.json', '{"id": "a",}')).message).toMatch(/b\.json: is not valid JSON: /);
    expect(problemLoading(write('c.yaml', '- id: a\n')).message).toMatch(/c\.yaml: must be a mapping of fields \(id, title, \.\.\.\), not a list/);
    expect(problemLoading(write('d.yaml', 'id: a\nid: b\n')).message).toMatch(/d\.yaml: is not valid YAML: Map keys must be unique \(line 2\)/);
    expect(problemLoading(write('e.txt', 'id: a\n')).message).toBe(`${join(dir, 'e.txt')}: a study file must end in .yaml, .yml or .json`);
    expect(problemLoading(join(dir, 'absent.yaml')).message).toBe(`${join(dir, 'absent.yaml')}: cannot read: no such file`);
  });

  test('two studies with one id are refused, naming both files', () => {
    const first = writeStudy(dir, validStudy(), 'first.yaml');
    const second = writeStudy(dir, { ...validStudy(), pool: 'other' }, 'second.yaml');
    expect(() => loadStudyFiles([first, second])).toThrow(`${second}: id: "pilot-1" is already the id of the study in ${first}: each study needs an id of its own`);
    expect(loadStudyFiles([first, writeStudy(dir, { ...validStudy(), id: 'pilot-2' }, 'third.yaml')]).map((s) => s.id)).toEqual(['pilot-1', 'pilot-2']);
  });

  test('parseStudy reads the Markdown through the function it is given', () => {
    const text = JSON.stringify({ ...validStudy(), rules: undefined });
    const study = parseStudy('s.json', text, (path) => {
      if (path !== 'consent.md') throw new Error('cannot read: no such file');
      return '# Consent';
    });
    expect(study.consentText).toBe('# Consent');
    expect(() => parseStudy('s.json', text, () => 'x'.repeat(200_001))).toThrow('s.json: consent: consent.md is over 200000 bytes');
  });
});

describe('what anyone may see of a study', () => {
  test('no quiz answers, no explanations, no completion codes, no pool', () => {
    const study = loadStudyFile(writeStudy(dir, validStudy()));
    const shown = publicStudy(study, { liveFeedback: true, cancelInstructions: false });
    expect(shown.game).toEqual({ partnerIsPerson: true, liveFeedback: true, cancelInstructions: false });
    expect(shown.quiz.questions).toEqual(study.quiz.questions.map(({ prompt, choices }) => ({ prompt, choices })));
    expect(shown).toMatchObject({ id: 'pilot-1', consent: CONSENT, rules: 'Be kind.\n', pay: study.pay, platform: { kind: 'prolific' } });
    const text = JSON.stringify(shown);
    for (const secret of ['answer', 'explanation', 'CDONE1', 'CNOPART', 'CLEFT', 'CSCREEN', 'completionCodes', 'pool', 'The leader does.']) {
      expect(text).not.toContain(secret);
    }
  });
});
