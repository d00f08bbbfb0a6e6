/** The links a platform needs: exact placeholders, a well-formed ExternalQuestion, checked base URLs. */
import { rmSync } from 'node:fs';
import { loadStudyFile } from '../../server/study/loadStudy';
import { checkBaseUrl, escapeXml, EXTERNAL_QUESTION_NAMESPACE, externalQuestionXml, studyLinks } from '../../shared/study/links';
import { studyFolder, validStudy, writeStudy } from './fixtures';
import { readXml } from './xml';

let dir: string;
beforeAll(() => {
  dir = studyFolder();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const load = (change: Record<string, unknown> = {}) => loadStudyFile(writeStudy(dir, { ...validStudy(), ...change }));

describe('the base URL', () => {
  test('https anywhere; http only on this machine, with a warning; a trailing slash is dropped', () => {
    expect(checkBaseUrl('https://study.example.org/')).toEqual({ base: 'https://study.example.org', warning: null });
    expect(checkBaseUrl('https://example.org/games/cerealbar/')).toEqual({ base: 'https://example.org/games/cerealbar', warning: null });
    expect(checkBaseUrl('http://localhost:2567')).toEqual({ base: 'http://localhost:2567', warning: expect.stringMatching(/MTurk and Prolific need an https address/) });
    expect(checkBaseUrl('http://127.0.0.1:8080').warning).toMatch(/plain http/);
    expect(checkBaseUrl('https://localhost').warning).toMatch(/participants elsewhere cannot reach it/);
  });

  test.each([
    ['http://study.example.org', /must use https: MTurk and Prolific open studies over HTTPS only/],
    ['study.example.org', /is not a URL/],
    ['ftp://study.example.org', /must start with https:\/\//],
    ['https://study.example.org/?x=1', /must not have a query or a fragment/],
    ['https://study.example.org/#top', /must not have a query or a fragment/],
    ['https://user:pw@study.example.org', /must not hold a user name or password/],
  ])('%s is refused', (url, message) => {
    expect(() => checkBaseUrl(url)).toThrow(message);
  });
});

describe('links for each platform', () => {
  test("Prolific: the study URL with Prolific's placeholders exactly, and a completion URL per ending", () => {
    const links = studyLinks(load(), 'https://study.example.org');
    expect(links.entryUrl).toBe('https://study.example.org/study/pilot-1');
    expect(links.prolific!.studyUrl).toBe('https://study.example.org/study/pilot-1?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}');
    expect(links.prolific!.completion).toEqual({
      completed: { code: 'CDONE1', url: 'https://app.prolific.com/submissions/complete?cc=CDONE1' },
      noPartner: { code: 'CNOPART', url: 'https://app.prolific.com/submissions/complete?cc=CNOPART' },
      partnerLeft: { code: 'CLEFT', url: 'https://app.prolific.com/submissions/complete?cc=CLEFT' },
      screenedOut: { code: 'CSCREEN', url: 'https://app.prolific.com/submissions/complete?cc=CSCREEN' },
    });
    expect(links.mturk).toBeUndefined();
    expect(links.lab).toBeUndefined();
  });

  test('MTurk: a well-formed ExternalQuestion of the 2006-07-14 schema, and the HIT parameters the study fixes', () => {
    const study = load({ pay: { base: 3, currency: 'USD' }, platform: { kind: 'mturk', sandbox: false, frameHeight: 800 } });
    const links = studyLinks(study, 'https://example.org/a&b<c>');
    const question = readXml(links.mturk!.externalQuestion);
    expect(links.mturk!.externalQuestion.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<ExternalQuestion ')).toBe(true);
    expect(question.name).toBe('ExternalQuestion');
    expect(question.attributes).toEqual({ xmlns: EXTERNAL_QUESTION_NAMESPACE });
    expect(EXTERNAL_QUESTION_NAMESPACE).toBe('http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2006-07-14/ExternalQuestion.xsd');
    expect(question.children.map((child) => [child.name, child.text])).toEqual([
      ['ExternalURL', 'https://example.org/a&b<c>/study/pilot-1'],
      ['FrameHeight', '800'],
    ]);
    expect(links.mturk!.externalQuestion).toContain('<ExternalURL>https://example.org/a&amp;b&lt;c&gt;/study/pilot-1</ExternalURL>');
    expect(links.mturk).toMatchObject({ sandbox: false, requesterSite: 'https://requester.mturk.com' });
    expect(links.mturk!.createHit).toEqual({ Title: 'A game', Description: 'Play a game with another person.', Reward: '3.00', AssignmentDurationInSeconds: 30 * 60 + 300, Question: links.mturk!.externalQuestion });
    const sandbox = studyLinks(load({ pay: { base: 3, currency: 'USD' }, platform: { kind: 'mturk' } }), 'https://example.org');
    expect(sandbox.mturk).toMatchObject({ sandbox: true, requesterSite: 'https://requestersandbox.mturk.com' });
    expect(readXml(sandbox.mturk!.externalQuestion).children[1].text).toBe('0');
  });

  test('the XML reader used above refuses what is not well-formed', () => {
    expect(() => readXml('<a><b></a></b>')).toThrow(/closes/);
    expect(() => readXml('<a>x & y</a>')).toThrow(/bare &/);
    expect(() => readXml('<a>')).toThrow(/never closed/);
    expect(() => readXml('<a></a><b></b>')).toThrow(/two root elements/);
    expect(escapeXml(`<"'&>`)).toBe('&lt;&quot;&apos;&amp;&gt;');
    expect(readXml(externalQuestionXml(`https://x.org/?a=1&b='2'`, 5)).children[0].text).toBe(`https://x.org/?a=1&b='2'`);
  });

  test('a lab: the plain study URL', () => {
    expect(studyLinks(load({ platform: { kind: 'lab' } }), 'https://lab.example.org')).toEqual({
      study: 'pilot-1',
      platform: 'lab',
      entryUrl: 'https://lab.example.org/study/pilot-1',
      lab: { url: 'https://lab.example.org/study/pilot-1' },
    });
  });
});
