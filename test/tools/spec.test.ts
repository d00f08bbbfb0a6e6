import { readFileSync } from 'node:fs';
import { ACTION_ERROR_CODES } from '../../shared/engine/errors';
import { checkSpec, specOf, statementsIn, testReferencesIn } from '../../tools/spec';

const DOC = [
  '# Rules',
  '',
  '| id | rule | effect |',
  '|---|---|---|',
  '| **R-1** | 1 | the leader gives an [instruction](x.md): `queued` |',
  '',
  '- **R-2** A move costs one step.',
  'Refer to R-1 again without defining it.',
  '| **M-3** | NE | d(q_\\|Q\\|, r_\\|R\\|) |',
].join('\n');

describe('the specification checker', () => {
  test('finds every bold id in a doc, with its line and its text without Markdown', () => {
    expect(statementsIn('docs/rules.md', DOC)).toEqual([
      { id: 'R-1', doc: 'docs/rules.md', line: 5, text: '1 | the leader gives an instruction: queued' },
      { id: 'R-2', doc: 'docs/rules.md', line: 7, text: 'A move costs one step.' },
      { id: 'M-3', doc: 'docs/rules.md', line: 9, text: 'NE | d(q_|Q|, r_|R|)' },
    ]);
  });

  test('reads ids from test, it and describe titles, but not from skipped tests or comments', () => {
    const source = [
      "describe('R-1 and P-2: things', () => {",
      "  test('M-3: a metric', () => {}); // R-9 in a comment",
      "  it(`E-4: ${'x'} template`, () => {});",
      "  test.each([1, 2])('R-5: case %i', () => {});",
      "  test.skip('R-6: skipped', () => {});",
      "  test.todo('R-7: not written');",
      "  xit('R-8: skipped too', () => {});",
      "  test('R-10: ' + 'joined', () => {});",
      '});',
    ].join('\n');
    const found = testReferencesIn('t.test.ts', source).map(({ id, line }) => `${id}@${line}`);
    expect(found).toEqual(['R-1@1', 'P-2@1', 'M-3@2', 'E-4@3', 'R-5@4', 'R-10@8']);
  });

  test('reports an id without a test, an id defined twice, and a test naming an unknown id', () => {
    const statements = statementsIn('docs/rules.md', DOC).filter((statement) => statement.id !== 'M-3');
    const twice = [...statements, { ...statements[0], line: 99 }];
    const references = [{ id: 'R-1', file: 'a.test.ts', line: 3, title: 'R-1: x' }, { id: 'R-77', file: 'a.test.ts', line: 4, title: 'R-77: y' }];
    const report = checkSpec(twice, references);
    expect(report.problems).toEqual([
      'R-1 is defined twice: docs/rules.md:5 and docs/rules.md:99',
      'a.test.ts:4 names R-77, which no doc defines ("R-77: y")',
      'R-2 (docs/rules.md:7) has no test: A move costs one step.',
    ]);
    expect(report.tests.get('R-1')).toHaveLength(1);
  });

  test("this repository's docs and tests agree: every statement has a test and every named id exists", () => {
    const report = specOf(process.cwd());
    expect(report.problems).toEqual([]);
    expect(report.statements.length).toBeGreaterThanOrEqual(60);
  });

  test('every refusal code of the engine is a numbered statement of docs/rules.md', () => {
    const statements = statementsIn('docs/rules.md', readFileSync('docs/rules.md', 'utf8'));
    const undocumented = ACTION_ERROR_CODES.filter((code) => !statements.some((statement) => statement.text.startsWith(`${code} |`)));
    expect(undocumented).toEqual([]);
  });
});
