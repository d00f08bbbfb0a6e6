/**
 * The docs as a tested specification. Every normative statement in the specification docs carries
 * a stable id in bold (`**R-12**`: R rules, P protocol, E evaluation, M metrics), and every test
 * that checks one names the id in its title (`test('R-12: ...')`, or a `describe` around it).
 *
 * `npm run spec` prints each id with its statement's first line and the tests that name it, and
 * fails when an id has no test, when an id is defined twice, or when a test names an id no doc
 * defines. Test titles are read from the sources with the TypeScript parser, so a test that is
 * skipped (`test.skip`, `xit`, `test.todo`) checks nothing and does not count.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

export const SPEC_DOCS = ['docs/rules.md', 'docs/protocol.md', 'docs/evaluation.md', 'docs/metrics.md'];
export const TEST_DIR = 'test';

const ID = /\b([RPEM]-\d+)\b/g;
const DEFINITION = /\*\*([RPEM]-\d+)\*\*/g;

export interface Statement {
  readonly id: string;
  readonly doc: string;
  readonly line: number;
  /** The statement's first line, without Markdown. */
  readonly text: string;
}

export interface TestReference {
  readonly id: string;
  readonly file: string;
  readonly line: number;
  readonly title: string;
}

export interface SpecReport {
  readonly statements: readonly Statement[];
  readonly tests: ReadonlyMap<string, readonly TestReference[]>;
  readonly problems: readonly string[];
}

/** The statements a doc defines, in order. */
export function statementsIn(doc: string, markdown: string): Statement[] {
  const found: Statement[] = [];
  markdown.split('\n').forEach((raw, i) => {
    for (const match of raw.matchAll(DEFINITION)) found.push({ id: match[1], doc, line: i + 1, text: plainText(raw.replace(match[0], '')) });
  });
  return found;
}

function plainText(line: string): string {
  let text = line.trim();
  // A table row: its cells, split on the pipes that are not escaped.
  if (text.startsWith('|')) text = text.split(/(?<!\\)\|/).map((cell) => cell.trim()).filter(Boolean).join(' | ');
  return text
    .replace(/\\\|/g, '|')
    .replace(/^(?:[-*]|\d+\.)\s+/, '')
    .replace(/\*\*|`/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/^[\s|:.-]+/, '')
    .trim();
}

const TEST_FUNCTIONS = new Set(['test', 'it', 'describe']);
const SKIPPING = new Set(['skip', 'todo', 'failing']);

/** The ids named in the titles of the tests (and describe blocks) of one source file. */
export function testReferencesIn(file: string, source: string): TestReference[] {
  const sourceFile = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: TestReference[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && isTestCall(node.expression) && node.arguments.length > 0) {
      const title = titleOf(node.arguments[0]);
      if (title !== null) {
        const line = sourceFile.getLineAndCharacterOfPosition(node.getStart(sourceFile)).line + 1;
        for (const id of new Set([...title.matchAll(ID)].map((m) => m[1]))) found.push({ id, file, line, title });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return found;
}

/** `test`, `it`, `describe`, their `.each(...)`, `.only` and `.concurrent`; not skipped ones. */
function isTestCall(callee: ts.Expression): boolean {
  if (ts.isIdentifier(callee)) return TEST_FUNCTIONS.has(callee.text);
  if (ts.isCallExpression(callee)) return isTestCall(callee.expression); // test.each(table)(title, fn)
  if (ts.isTaggedTemplateExpression(callee)) return isTestCall(callee.tag);
  if (ts.isPropertyAccessExpression(callee)) return !SKIPPING.has(callee.name.text) && isTestCall(callee.expression);
  return false;
}

/** The literal text of a title: a string, a template (its literal parts), or a sum of those. */
function titleOf(node: ts.Node): string | null {
  if (ts.isStringLiteralLike(node)) return node.text;
  if (ts.isTemplateExpression(node)) return [node.head.text, ...node.templateSpans.map((span) => span.literal.text)].join('…');
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const parts = [titleOf(node.left), titleOf(node.right)];
    return parts.some((part) => part !== null) ? parts.map((part) => part ?? '…').join('') : null;
  }
  return null;
}

/** Checks the statements against the tests. */
export function checkSpec(statements: readonly Statement[], references: readonly TestReference[]): SpecReport {
  const problems: string[] = [];
  const defined = new Map<string, Statement>();
  for (const statement of statements) {
    const earlier = defined.get(statement.id);
    if (earlier) problems.push(`${statement.id} is defined twice: ${earlier.doc}:${earlier.line} and ${statement.doc}:${statement.line}`);
    else defined.set(statement.id, statement);
  }
  const tests = new Map<string, TestReference[]>();
  for (const reference of references) {
    if (!defined.has(reference.id)) problems.push(`${reference.file}:${reference.line} names ${reference.id}, which no doc defines ("${reference.title}")`);
    else tests.set(reference.id, [...(tests.get(reference.id) ?? []), reference]);
  }
  for (const statement of defined.values()) {
    if (!tests.has(statement.id)) problems.push(`${statement.id} (${statement.doc}:${statement.line}) has no test: ${statement.text}`);
  }
  return { statements: [...defined.values()], tests, problems };
}

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** Reads the docs and the tests under `root`. */
export function specOf(root: string): SpecReport {
  const statements = SPEC_DOCS.flatMap((doc) => statementsIn(doc, readFileSync(join(root, doc), 'utf8')));
  const references = testFiles(join(root, TEST_DIR)).flatMap((path) => testReferencesIn(relative(root, path), readFileSync(path, 'utf8')));
  return checkSpec(statements, references);
}

export function formatSpec(report: SpecReport): string {
  const lines: string[] = [];
  for (const statement of report.statements) {
    const tests = report.tests.get(statement.id) ?? [];
    lines.push(`${statement.id}  ${statement.text.length > 110 ? `${statement.text.slice(0, 109)}…` : statement.text}`);
    for (const test of tests) lines.push(`        ${test.file}:${test.line}  ${test.title}`);
    if (tests.length === 0) lines.push('        (no test)');
  }
  const tested = report.statements.filter((statement) => report.tests.has(statement.id)).length;
  lines.push('', `${report.statements.length} statements in ${SPEC_DOCS.join(', ')}; ${tested} with tests.`);
  if (report.problems.length > 0) lines.push('', `${report.problems.length} problems:`, ...report.problems.map((problem) => `  ${problem}`));
  return lines.join('\n');
}

if (require.main === module) {
  const report = specOf(process.cwd());
  console.log(formatSpec(report));
  process.exitCode = report.problems.length > 0 ? 1 : 0;
}
