/**
 * A study with arms says "a partner": `study init` writes it into the description and the consent
 * form, and `study links` and `serve` warn of a study with arms whose texts make the partner a person.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { humanPartnerWarnings } from '../../cli/study/partnerWording';
import { loadStudyFile } from '../../server/study/loadStudy';
import { startServeProcess, stopServeProcess, waitFor, type ServeProcess } from '../server/harness';
import { setPath, studyFolder, validStudy, writeStudy } from '../study/fixtures';
import { cerealbar } from './run';

jest.setTimeout(60_000);

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cerealbar-partner-words-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The fixture study (its description: "Play a game with another person.") with arms: its participants lead, the heuristic agent follows. */
function armsStudy(changes: Record<string, unknown> = {}): Record<string, unknown> {
  const data = setPath(setPath(validStudy(), 'roles', { newWorkersStartAs: 'leader', promotion: 'manual' }), 'arms', [{ id: 'h', agent: 'heuristic' }]);
  for (const [path, value] of Object.entries(changes)) setPath(data, path, value);
  return data;
}

const LINKS = ['--base-url', 'https://study.example.org'];

test('P-145: study init writes "a partner" into the description and consent form; with its arms put in, the study warns of nothing', async () => {
  const out = join(dir, 'init');
  expect((await cerealbar('study', 'init', '--id', 'pilot-4', '--out', out)).status).toBe(0);
  const yaml = readFileSync(join(out, 'study.yaml'), 'utf8');
  const study = loadStudyFile(join(out, 'study.yaml'));
  expect(study.description).toMatch(/^Play a short online game with a partner\./);
  expect(study.consentText).toContain('You will play an online game with a partner');
  for (const text of [study.description, study.consentText]) expect(text).not.toMatch(/another participant|another person/);
  // The researcher puts the commented arms in: participants lead, the arms follow.
  const withArms = yaml
    .replace(/newWorkersStartAs: either/, 'newWorkersStartAs: leader')
    .replace(/\n# arms:\n#   - id: heuristic\n#     agent: heuristic\n#     weight: 1\n/, '\narms:\n  - id: heuristic\n    agent: heuristic\n    weight: 1\n');
  expect(withArms).toContain('\narms:\n');
  writeFileSync(join(out, 'study.yaml'), withArms);
  expect(loadStudyFile(join(out, 'study.yaml')).arms).toHaveLength(1);
  expect(await cerealbar('study', 'links', '--study', join(out, 'study.yaml'), ...LINKS)).toMatchObject({ status: 0, stderr: '' });
});

test('P-145: study links warns, one line per text, of a study with arms whose texts make the partner a person; a study of pairs may say so', async () => {
  const folder = studyFolder(join(dir, 'study'));
  writeFileSync(join(folder, 'consent.md'), '# Consent\n\nYou will be paired with a real person for the game.\n');
  const run = await cerealbar('study', 'links', '--study', writeStudy(folder, armsStudy()), ...LINKS);
  expect(run.status).toBe(0);
  expect(run.stderr.split('\n').filter((line) => line.includes('partner is an agent'))).toEqual([
    'cerealbar: warning: study pilot-1: its description says "another person", but in a study with arms each participant\'s partner is an agent: say "a partner" there, as the study\'s pages do (docs/study-arms.md)',
    'cerealbar: warning: study pilot-1: its consent form says "real person", but in a study with arms each participant\'s partner is an agent: say "a partner" there, as the study\'s pages do (docs/study-arms.md)',
  ]);
  const pairs = await cerealbar('study', 'links', '--study', writeStudy(folder, setPath(validStudy(), 'roles', { newWorkersStartAs: 'either', promotion: 'manual' }), 'pairs.yaml'), ...LINKS);
  expect(pairs).toMatchObject({ status: 0, stderr: '' });
});

test('P-145: the words that make a partner a person, and those that do not', () => {
  const says = (description: string) => humanPartnerWarnings(loadStudyFile(writeStudy(studyFolder(join(dir, `s${Math.random()}`)), armsStudy({ description }))));
  for (const human of ['Play with another participant.', 'Play with other people online.', 'A fellow worker joins you.', 'Your human partner waits.', 'Play with ANOTHER  Person.']) {
    expect(says(human)).toHaveLength(1);
  }
  for (const neutral of ['Play a short online game with a partner.', 'One of you leads; the other follows.', 'Play with another player of the game.']) expect(says(neutral)).toEqual([]);
});

describe('serve', () => {
  let serve: ServeProcess | null = null;
  afterEach(() => stopServeProcess(serve));

  test('P-145: serve warns at start of a study with arms whose description makes the partner a person', async () => {
    serve = await startServeProcess(join(dir, 'data'), ['--study', writeStudy(studyFolder(join(dir, 'study')), armsStudy())]);
    await waitFor(() => serve!.output().includes('partner is an agent'), 'the warning', 10_000);
    expect(serve.output()).toContain('cerealbar: warning: study pilot-1: its description says "another person", but in a study with arms');
    expect(serve.output()).not.toContain('its consent form says');
  });
});
