/**
 * Reading a study file: YAML or JSON text to a checked `Study`, with the Markdown it names read
 * through a function the caller passes (the server reads files; a test can pass strings). Every
 * problem is reported as `<file>: <field path>: <what is wrong> (line N)`, all of them at once.
 */
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import { z } from 'zod';
import { armSeat, type CheckArm } from './arms';
import { studyFileSchema, type Study, type StudyFile } from './studyFile';

/** Study files are a few kilobytes; anything this big is not one. */
export const MAX_STUDY_FILE_BYTES = 1_000_000;
/** The longest consent form or rules file read. */
export const MAX_MARKDOWN_BYTES = 200_000;
/** Problems listed in one error; the rest are counted. */
const MAX_PROBLEMS = 20;

export interface StudyProblem {
  /** The field, as in `quiz.questions[2].answer`; absent for a problem with the text itself. */
  readonly path?: string;
  readonly message: string;
  /** 1-based line in the study file, when known. */
  readonly line?: number;
}

/** A study file that cannot be used: its message has one line per problem. */
export class StudyFileError extends Error {
  readonly problems: readonly StudyProblem[];

  constructor(
    readonly file: string,
    problems: readonly StudyProblem[],
  ) {
    // In the order of the file, those without a line last.
    const sorted = [...problems].sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity));
    const shown = sorted.slice(0, MAX_PROBLEMS).map((problem) => formatProblem(file, problem));
    if (problems.length > MAX_PROBLEMS) shown.push(`${file}: and ${problems.length - MAX_PROBLEMS} more problem(s)`);
    super(shown.join('\n'));
    this.name = 'StudyFileError';
    this.problems = sorted;
  }
}

function formatProblem(file: string, problem: StudyProblem): string {
  const where = problem.path === undefined ? '' : `${problem.path || '(the whole file)'}: `;
  const line = problem.line === undefined ? '' : ` (line ${problem.line})`;
  return `${file}: ${where}${problem.message}${line}`;
}

/** `['quiz', 'questions', 2, 'answer']` as `quiz.questions[2].answer`. */
export function formatPath(path: readonly PropertyKey[]): string {
  return path.map((key, i) => (typeof key === 'number' ? `[${key}]` : `${i === 0 ? '' : '.'}${String(key)}`)).join('');
}

// ---------------------------------------------------------------------------------------------
// Text

type StudyFormat = 'yaml' | 'json';

export function studyFormatOf(file: string): StudyFormat | null {
  if (/\.ya?ml$/i.test(file)) return 'yaml';
  if (/\.json$/i.test(file)) return 'json';
  return null;
}

interface ParsedText {
  readonly data: unknown;
  /** The line a field path starts on, when the text has it. */
  readonly lineOf: (path: readonly PropertyKey[]) => number | undefined;
}

function parseText(file: string, text: string): ParsedText {
  const format = studyFormatOf(file);
  if (format === null) throw new StudyFileError(file, [{ message: 'a study file must end in .yaml, .yml or .json' }]);
  if (text.length > MAX_STUDY_FILE_BYTES) throw new StudyFileError(file, [{ message: `is over ${MAX_STUDY_FILE_BYTES} bytes: not a study file` }]);
  if (format === 'json') {
    try {
      JSON.parse(text);
    } catch (error) {
      throw new StudyFileError(file, [{ message: `is not valid JSON: ${(error as Error).message}` }]);
    }
  }
  // JSON is YAML too: one parser gives both formats the line of every field.
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) {
    throw new StudyFileError(
      file,
      doc.errors.map((error) => ({ message: `is not valid ${format === 'json' ? 'JSON' : 'YAML'}: ${error.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')}`, line: error.linePos?.[0].line })),
    );
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    throw new StudyFileError(file, [{ message: `cannot be read: ${(error as Error).message}` }]);
  }
  return { data, lineOf: (path) => lineOf(doc, lineCounter, path) };
}

/** The line of the deepest node on `path` (the key's line for a field of a mapping). */
function lineOf(doc: Document, lines: LineCounter, path: readonly PropertyKey[]): number | undefined {
  let node: unknown = doc.contents;
  let offset = (node as { range?: [number] } | null)?.range?.[0];
  for (const key of path) {
    if (isMap(node)) {
      const pair = node.items.find((item) => isScalar(item.key) && String(item.key.value) === String(key));
      if (!pair) break;
      offset = (pair.key as { range?: [number] }).range?.[0] ?? offset;
      node = pair.value;
    } else if (isSeq(node) && typeof key === 'number' && node.items[key] !== undefined) {
      node = node.items[key];
      offset = (node as { range?: [number] }).range?.[0] ?? offset;
    } else {
      break;
    }
  }
  return offset === undefined ? undefined : lines.linePos(offset).line;
}

// ---------------------------------------------------------------------------------------------
// Schema issues in plain words

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'string') return `the text ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value)}`;
  if (typeof value === 'object') return 'a mapping of fields';
  return `${typeof value} ${String(value)}`;
}

const EXPECTED: Record<string, string> = {
  number: 'a number',
  int: 'a whole number',
  string: 'text',
  boolean: 'true or false',
  array: 'a list',
  object: 'a mapping of fields',
};

/** Messages for the issues the schema leaves to zod's defaults (types, unknown fields, enums). */
const plainWords: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'is required';
      return `must be ${EXPECTED[issue.expected] ?? issue.expected}, not ${describe(issue.input)}`;
    case 'invalid_value':
      return `must be ${issue.values.map((value) => JSON.stringify(value)).join(' or ')}, not ${describe(issue.input)}`;
    case 'too_small':
      return issue.origin === 'array' ? `must have at least ${issue.minimum} item(s)` : `must be at least ${issue.minimum}`;
    case 'too_big':
      return issue.origin === 'array' ? `must have at most ${issue.maximum} item(s)` : `must be at most ${issue.maximum}`;
    default:
      return undefined;
  }
};

const SHAPE_ISSUES = new Set<string>(['invalid_type', 'invalid_value', 'unrecognized_keys', 'invalid_union']);

/** One problem per unknown field, and a union's issues from the one branch whose shape matched. */
function problemsOf(issues: readonly z.core.$ZodIssue[], prefix: readonly PropertyKey[], lineOf: ParsedText['lineOf']): StudyProblem[] {
  return issues.flatMap((issue): StudyProblem[] => {
    const path = [...prefix, ...issue.path];
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ path: formatPath([...path, key]), message: 'is not a field here (check its spelling and place)', line: lineOf([...path, key]) }));
    }
    if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      // The branches whose own shape matched (right type, no unknown field): their issues lie inside the value.
      const matched = issue.errors.filter((branch) => !branch.some((inner) => inner.path.length === 0 && SHAPE_ISSUES.has(inner.code)));
      if (matched.length === 1) return problemsOf(matched[0], path, lineOf);
    }
    return [{ path: formatPath(path), message: issue.message, line: lineOf(path) }];
  });
}

// ---------------------------------------------------------------------------------------------
// Parsing and loading

/** Checks parsed data against the schema; `lineOf` adds line numbers when the data came from text. */
export function checkStudyData(file: string, data: unknown, lineOf: ParsedText['lineOf'] = () => undefined): StudyFile {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new StudyFileError(file, [{ message: `must be a mapping of fields (id, title, ...), not ${describe(data)}` }]);
  }
  const parsed = studyFileSchema.safeParse(data, { error: plainWords, reportInput: true });
  if (!parsed.success) throw new StudyFileError(file, problemsOf(parsed.error.issues, [], lineOf));
  return parsed.data;
}

/** Reads a file named in the study, relative to it; throws an Error saying why it cannot. */
export type ReadDocument = (relativePath: string) => string;

/**
 * The study in `text` (named `file`, whose extension says YAML or JSON), with its consent form
 * and rules read through `readDocument`, and each arm's agent checked by `checkArm` (when given:
 * the agents live above this layer). Throws a StudyFileError listing every problem.
 */
export function parseStudy(file: string, text: string, readDocument: ReadDocument, checkArm?: CheckArm): Study {
  const { data, lineOf } = parseText(file, text.replace(/^\uFEFF/, ''));
  const problems: StudyProblem[] = [];
  const read = (fieldPath: readonly string[], path: string): string => {
    const field = formatPath(fieldPath);
    try {
      const markdown = readDocument(path).replace(/^\uFEFF/, '');
      if (markdown.length > MAX_MARKDOWN_BYTES) problems.push({ path: field, message: `${path} is over ${MAX_MARKDOWN_BYTES} bytes`, line: lineOf(fieldPath) });
      else if (markdown.trim() === '') problems.push({ path: field, message: `${path} is empty`, line: lineOf(fieldPath) });
      return markdown;
    } catch (error) {
      problems.push({ path: field, message: `${path}: ${(error as Error).message}`, line: lineOf(fieldPath) });
      return '';
    }
  };
  let study: StudyFile;
  try {
    study = checkStudyData(file, data, lineOf);
  } catch (error) {
    if (!(error instanceof StudyFileError)) throw error;
    // Report a missing consent form with the other problems, when its field itself is right.
    const consent = (data as { consent?: unknown } | null)?.consent;
    if (typeof consent === 'string' && !error.problems.some((problem) => problem.path === 'consent')) read(['consent'], consent.trim());
    throw new StudyFileError(file, [...error.problems, ...problems]);
  }
  const consentText = read(['consent'], study.consent);
  const rules = study.rules;
  const rulesText = rules === undefined ? null : 'file' in rules ? read(['rules', 'file'], rules.file) : rules.text;
  study.arms?.forEach((arm, i) => {
    for (const problem of checkArm?.(arm, armSeat(study)) ?? []) {
      const path = ['arms', i, ...problem.path];
      problems.push({ path: formatPath(path), message: problem.message, line: lineOf(path) });
    }
  });
  if (problems.length > 0) throw new StudyFileError(file, problems);
  return { ...study, consentText, rulesText };
}

/** Refuses two studies with one id (their URLs would collide); `files[i]` names `studies[i]`. */
export function checkDistinctStudies(studies: readonly Study[], files: readonly string[]): void {
  const seen = new Map<string, number>();
  studies.forEach((study, i) => {
    const first = seen.get(study.id);
    if (first !== undefined) {
      throw new StudyFileError(files[i], [{ path: 'id', message: `"${study.id}" is already the id of the study in ${files[first]}: each study needs an id of its own` }]);
    }
    seen.set(study.id, i);
  });
}
