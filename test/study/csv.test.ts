/**
 * Every CSV the project writes goes through one field function: text that a spreadsheet would
 * run as a formula (a lab participant's typed id, a study's title, an arm's agent) is made inert,
 * while the figures (amounts, differences, negative ones too) stay numbers.
 */
import { differencesCsv, type StudyReport } from '../../cli/study/report';
import type { LogEnd, LogHeader } from '../../shared/log/format';
import { bonusCsv, bonusSheet, type LoggedGame } from '../../shared/study/bonusSheet';
import { csvField } from '../../shared/study/csv';
import { studyFileSchema } from '../../shared/study/studyFile';
import { validStudy } from './fixtures';

test('P-131: text starting with =, +, -, @, a tab or a carriage return gets a single quote in front, then quoting as CSV needs', () => {
  expect(csvField('=1+1')).toBe("'=1+1");
  expect(csvField('+44 20 7946 0000')).toBe("'+44 20 7946 0000");
  expect(csvField('-2+3')).toBe("'-2+3");
  // Text that looks like a negative number is still text: it keeps its form.
  expect(csvField('-1')).toBe("'-1");
  expect(csvField('@SUM(A1:A9)')).toBe("'@SUM(A1:A9)");
  expect(csvField('\t=1')).toBe("'\t=1");
  expect(csvField('\r=1')).toBe(`"'\r=1"`);
  expect(csvField('=HYPERLINK("https://evil.example","pay")')).toBe(`"'=HYPERLINK(""https://evil.example"",""pay"")"`);
  expect(csvField("=cmd|' /C calc'!A0")).toBe("'=cmd|' /C calc'!A0");
  // Anything else as before: quoted only for a comma, a quote or a line break.
  expect(csvField('P-17')).toBe('P-17');
  expect(csvField('a, b')).toBe('"a, b"');
  expect(csvField('say "hi"')).toBe('"say ""hi"""');
  expect(csvField('two\nlines')).toBe('"two\nlines"');
  expect(csvField('')).toBe('');
});

test('P-131: numbers stay numbers, a negative one with its minus sign; no value is an empty field', () => {
  expect(csvField(-0.25, 2)).toBe('-0.25');
  expect(csvField(1.5, 2)).toBe('1.50');
  expect(csvField(-3)).toBe('-3');
  expect(csvField(0.125)).toBe('0.125');
  expect(csvField(null)).toBe('');
  expect(csvField(undefined)).toBe('');
  expect(() => csvField(Number.NaN)).toThrow('a CSV field cannot hold NaN');
  expect(() => csvField(Number.POSITIVE_INFINITY)).toThrow('a CSV field cannot hold Infinity');
});

const lab = studyFileSchema.parse({ ...validStudy(), pay: { base: 1, bonusPerPoint: 0.5, currency: 'GBP' }, platform: { kind: 'lab' } });

function game(gameId: string, score: number, workerIds: string[]): LoggedGame {
  const players = workerIds.map((workerId) => ({ role: 'leader', playerId: 'p', kind: 'human', workerId, assignmentId: `${workerId}-A` }));
  return {
    header: { gameId, startedAt: '2026-03-01T10:00:00.000Z', meta: { source: 'server', study: lab.id, players } } as unknown as LogHeader,
    end: { kind: 'end', score } as unknown as LogEnd,
  };
}

test("P-131: the bonus sheets neutralise the ids a lab's participants typed, and the study's title, while amounts stay numbers", () => {
  const games = [game('g1', 3, ['=HYPERLINK("https://evil.example","x")', '@SUM(1+1)']), game('g2', 2, ['-5+5', 'L-7'])];
  expect(bonusCsv(bonusSheet(lab, games, 'prolific'), 'prolific', lab.title)).toBe(
    [`"'=HYPERLINK(""https://evil.example"",""x"")",1.50`, `'@SUM(1+1),1.50`, `'-5+5,1.00`, `L-7,1.00`, ''].join('\n'),
  );
  expect(bonusCsv(bonusSheet(lab, games, 'mturk'), 'mturk', '=A game').split('\n').slice(1, 3)).toEqual([
    `"'=HYPERLINK(""https://evil.example"",""x"")","'=HYPERLINK(""https://evil.example"",""x"")-A",1.50,'=A game: 3 points in 1 game (g1),"pilot-1-=HYPERLINK(""https://evil.example"",""x"")-A"`,
    `'@SUM(1+1),'@SUM(1+1)-A,1.50,'=A game: 3 points in 1 game (g1),pilot-1-@SUM(1+1)-A`,
  ]);
});

test("P-131: the study report's tables neutralise text and keep negative differences numbers", () => {
  const report = { differences: [{ arm: '=evil', minus: 'heuristic', meanDifference: -0.5, interval: { low: -1.25, high: 0.25 } }] } as unknown as StudyReport;
  expect(differencesCsv(report)).toBe("arm,minus,mean_difference,ci_low,ci_high\n'=evil,heuristic,-0.5000,-1.2500,0.2500\n");
});
