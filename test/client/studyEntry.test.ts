/** How a worker arrives at a study's page: each platform's ids read from the link and checked with the server's own schemas. */
import { labIdProblem, participantIdOf, readEntry, studyIdOf } from '../../client/src/study/entry';

const PROLIFIC = 'PROLIFIC_PID=5f0c1e2d3b4a59687766554a&STUDY_ID=S1&SESSION_ID=SESS1';
const MTURK = 'workerId=A1B2C3D4&assignmentId=3ASG&hitId=3HIT&turkSubmitTo=https%3A%2F%2Fworkersandbox.mturk.com';

describe("the study's id in the page's path", () => {
  test.each([
    ['/study/pilot-1', 'pilot-1'],
    ['/study/pilot-1/', 'pilot-1'],
    ['/study/', null],
    ['/study', null],
    ['/study/a/b', null],
    ['/', null],
    ['/study/%E0%A4%A', null],
  ])('%s is %s', (path, id) => {
    expect(studyIdOf(path)).toBe(id);
  });
});

describe('Prolific', () => {
  test("the three ids are the session's body, and other parameters are left out", () => {
    const entry = readEntry('prolific', `?${PROLIFIC}&utm_source=x`);
    expect(entry).toEqual({ kind: 'ids', body: { PROLIFIC_PID: '5f0c1e2d3b4a59687766554a', STUDY_ID: 'S1', SESSION_ID: 'SESS1' } });
    expect(entry.kind === 'ids' && participantIdOf(entry.body)).toBe('5f0c1e2d3b4a59687766554a');
  });

  test('a link without the ids names every one missing', () => {
    expect(readEntry('prolific', '')).toEqual({ kind: 'badLink', problem: 'The link is missing PROLIFIC_PID, STUDY_ID and SESSION_ID.' });
    expect(readEntry('prolific', '?PROLIFIC_PID=P1&STUDY_ID=')).toEqual({ kind: 'badLink', problem: 'The link is missing STUDY_ID and SESSION_ID.' });
  });

  test("Prolific's placeholders left unfilled are garbled ids, named", () => {
    const entry = readEntry('prolific', '?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID=S1&SESSION_ID=SESS1');
    expect(entry).toEqual({ kind: 'badLink', problem: 'PROLIFIC_PID must be letters, digits, _ and - only.' });
  });

  test('missing and garbled ids are both said', () => {
    const entry = readEntry('prolific', `?PROLIFIC_PID=${'x'.repeat(101)}&SESSION_ID=S`);
    expect(entry).toEqual({ kind: 'badLink', problem: 'The link is missing STUDY_ID. PROLIFIC_PID must be at most 100 characters.' });
  });
});

describe('MTurk', () => {
  test('the four ids, turkSubmitTo decoded', () => {
    expect(readEntry('mturk', `?${MTURK}`)).toEqual({
      kind: 'ids',
      body: { workerId: 'A1B2C3D4', assignmentId: '3ASG', hitId: '3HIT', turkSubmitTo: 'https://workersandbox.mturk.com' },
    });
  });

  test("the HIT's preview is known by its assignmentId alone, and needs no other id", () => {
    expect(readEntry('mturk', '?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=3HIT')).toEqual({ kind: 'mturkPreview' });
  });

  test("a turkSubmitTo that is not MTurk's is refused, as the server would", () => {
    const entry = readEntry('mturk', `?${MTURK.replace('workersandbox.mturk.com', 'evil.example')}`);
    expect(entry).toEqual({ kind: 'badLink', problem: 'turkSubmitTo must be https://www.mturk.com or https://workersandbox.mturk.com.' });
  });

  test('a missing workerId is named', () => {
    expect(readEntry('mturk', `?${MTURK.replace('workerId=A1B2C3D4&', '')}`)).toEqual({ kind: 'badLink', problem: 'The link is missing workerId.' });
  });

  test('a preview parameter on a Prolific study is not a preview', () => {
    expect(readEntry('prolific', '?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE').kind).toBe('badLink');
  });
});

describe('a lab', () => {
  test('needs nothing in the link: the participant types an id', () => {
    expect(readEntry('lab', '')).toEqual({ kind: 'lab' });
    expect(readEntry('lab', `?${PROLIFIC}`)).toEqual({ kind: 'lab' });
    expect(participantIdOf({ participantId: 'P001' })).toBe('P001');
  });

  test("a typed id is checked against the study's pattern, trimmed, in words", () => {
    expect(labIdProblem(' P001 ', 'P[0-9]{3}')).toBeNull();
    expect(labIdProblem('anything', null)).toBeNull();
    expect(labIdProblem('P1', 'P[0-9]{3}')).toBe("The id does not have the form this study's ids have (P[0-9]{3}).");
    expect(labIdProblem('   ', null)).toBe('The id must not be empty.');
    expect(labIdProblem('two words', null)).toBe('The id must be visible ASCII characters, no spaces.');
  });
});
