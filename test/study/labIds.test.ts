/** How guessable a lab study's typed ids are (`study links` warns of ids a stranger can try in turn). */
import { GUESSABLE_IDS, labIdCount, labIdWarning } from '../../shared/study/labIds';
import { studyFileSchema } from '../../shared/study/studyFile';
import { validStudy } from './fixtures';

const labStudy = (participantIdPattern?: string) => studyFileSchema.parse({ ...validStudy(), platform: { kind: 'lab', ...(participantIdPattern !== undefined && { participantIdPattern }) } });

describe('P-139: lab ids', () => {
  test.each([
    ['P[0-9]{3}', 1000],
    ['P\\d{3}', 1000],
    ['[A-Z0-9]{8}', 36 ** 8],
    ['lab-[a-f0-9]{4,}', 16 ** 4],
    ['[A-Za-z]?x+', 1],
    ['[^a-z]{2}', 68 ** 2],
  ])('P-139: %s allows about %d ids', (pattern, count) => {
    expect(labIdCount(pattern)).toBeCloseTo(count, -1);
  });

  test('P-139: a pattern with groups or alternatives is not counted', () => {
    expect(labIdCount('(P|Q)[0-9]{3}')).toBeNull();
    expect(labIdWarning(labStudy('(P|Q)[0-9]{3}'))).toBeNull();
  });

  test('P-139: study links warns of no pattern and of one a stranger can try in turn; a random id of 8 characters is not', () => {
    expect(labIdWarning(labStudy())).toMatch(/any typed id is accepted.*\[A-Z0-9\]\{8\}/);
    expect(labIdWarning(labStudy('P[0-9]{3}'))).toMatch(/P\[0-9\]\{3\} allows about 1,000 ids/);
    expect(labIdWarning(labStudy('[A-Z0-9]{8}'))).toBeNull();
    expect(36 ** 8).toBeGreaterThan(GUESSABLE_IDS);
    expect(labIdWarning(studyFileSchema.parse(validStudy()))).toBeNull();
  });
});
