/**
 * Completion codes that strangers cannot work out: `study init` draws each at random, and `serve`
 * warns of a study whose codes look derived from one another or from the study id.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadStudyFile } from '../../server/study/loadStudy';
import { DERIVED_CODE_OVERLAP, derivedCodesProblem } from '../../shared/study/completionCodes';
import { COMPLETION_OUTCOMES } from '../../shared/study/studyFile';
import { startServeProcess, stopServeProcess, waitFor, type ServeProcess } from '../server/harness';
import { setPath, studyFolder, validStudy, writeStudy } from '../study/fixtures';
import { cerealbar } from './run';

jest.setTimeout(60_000);

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cerealbar-codes-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The longest run of characters two codes share at their start or at their end. */
function overlap(a: string, b: string): number {
  let start = 0;
  while (start < Math.min(a.length, b.length) && a[start] === b[start]) start += 1;
  let end = 0;
  while (end < Math.min(a.length, b.length) && a[a.length - 1 - end] === b[b.length - 1 - end]) end += 1;
  return Math.max(start, end);
}

async function initCodes(id: string, out: string): Promise<string[]> {
  const run = await cerealbar('study', 'init', '--id', id, '--out', out);
  expect(run.status).toBe(0);
  const study = loadStudyFile(join(out, 'study.yaml'));
  return COMPLETION_OUTCOMES.map((outcome) => study.completionCodes[outcome]);
}

test('P-126: study init writes random completion codes, each drawn on its own: none tells another or comes from the study id', async () => {
  const first = await initCodes('pilot-2', join(dir, 'a'));
  const again = await initCodes('pilot-2', join(dir, 'b'));
  for (const codes of [first, again]) {
    // Ten characters without the ones read alike (0/O, 1/I): 50 bits each.
    for (const code of codes) expect(code).toMatch(/^[A-HJ-NP-Z2-9]{10}$/);
    expect(new Set(codes).size).toBe(4);
    for (let i = 0; i < codes.length; i += 1) {
      for (let j = i + 1; j < codes.length; j += 1) expect(overlap(codes[i], codes[j])).toBeLessThan(DERIVED_CODE_OVERLAP);
    }
    for (const code of codes) expect(code).not.toMatch(/PILOT/);
  }
  // The same id gives other codes: they are not computed from it.
  for (const code of again) expect(first).not.toContain(code);
  // The file says what they are, quoted (a code of digits and E alone would otherwise be read as a number).
  expect(readFileSync(join(dir, 'a', 'study.yaml'), 'utf8')).toContain(`completed: "${first[0]}"`);
});

test('P-126: codes that share a stem or hold the study id look derived; independent ones do not', () => {
  const codes = (completed: string, noPartner: string, partnerLeft: string, screenedOut: string) => ({ completed, noPartner, partnerLeft, screenedOut });
  // The codes study init wrote before: one stem and a suffix per ending.
  expect(derivedCodesProblem({ id: 'pilot-2', completionCodes: codes('C7QK2OK', 'C7QK2NP', 'C7QK2PL', 'C7QK2SO') })).toMatch(
    /^its completion codes look derived \(completed and noPartner begin alike \("C7QK2"\); completed and partnerLeft begin alike \("C7QK2"\), and 4 more\): whoever learns one code/,
  );
  expect(derivedCodesProblem({ id: 'pilot-2', completionCodes: codes('DONE-X8Q2', 'NOPART-X8Q2', 'K4TR7WQZ', 'M9VB3HJE') })).toMatch(/completed and noPartner end alike \("-X8Q2"\)/);
  expect(derivedCodesProblem({ id: 'pilot-2', completionCodes: codes('PILOT2DONE', 'H7WQ3ZK9', 'K4TR7WQZ', 'pilot-2-screened') })).toMatch(
    /the completed code contains the study id; the screenedOut code contains the study id/,
  );
  // Independent codes; a short id found by chance in one is not a sign.
  expect(derivedCodesProblem({ id: 'ab', completionCodes: codes('H7WQ3ZK9AB', 'K4TR7WQZ2M', 'M9VB3HJE6C', 'X2LN8PDF4R') })).toBeNull();
  expect(derivedCodesProblem(validStudy() as never)).toBeNull();
});

describe('serve', () => {
  let serve: ServeProcess | null = null;
  afterEach(() => stopServeProcess(serve));

  test('P-126: serve warns, in one line per study naming it and what to do, of completion codes that look derived', async () => {
    const folder = studyFolder(join(dir, 'study'));
    const derived = writeStudy(folder, setPath(setPath(validStudy(), 'id', 'derived-1'), 'completionCodes', { completed: 'C7QK2OK', noPartner: 'C7QK2NP', partnerLeft: 'C7QK2PL', screenedOut: 'C7QK2SO' }), 'a.yaml');
    const fine = writeStudy(folder, validStudy(), 'b.yaml');
    serve = await startServeProcess(join(dir, 'data'), ['--study', derived, '--study', fine]);
    await waitFor(() => serve!.output().includes('study derived-1: its completion codes'), 'the warning', 10_000);
    const warnings = serve.output().split('\n').filter((line) => line.includes('completion codes look derived'));
    expect(warnings).toEqual([
      expect.stringMatching(
        /^cerealbar: warning: study derived-1: its completion codes look derived \(completed and noPartner begin alike \("C7QK2"\);.*\): whoever learns one code .* claim pay\. Create four random, unrelated codes/,
      ),
    ]);
  });
});
