/** Study files for the tests: a valid one as data, and folders holding it with its Markdown. */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';

export const CONSENT = '# Consent\n\nYou agree to play a game.\n';

/** A valid study with every section written out (Prolific, GBP). */
export function validStudy(): Record<string, unknown> {
  return {
    id: 'pilot-1',
    title: 'A game',
    description: 'Play a game with another person.',
    consent: 'consent.md',
    rules: { file: 'rules.md' },
    pay: { base: 4.5, bonusPerPoint: 0.1, maxBonus: 3, currency: 'GBP' },
    time: { waitForPartnerSeconds: 300, sessionMinutes: 30 },
    quiz: {
      questions: [
        { prompt: 'Who sees the whole map?', choices: ['The leader', 'The follower'], answer: 0, explanation: 'The leader does.' },
        { prompt: 'How many cards make a set?', choices: ['2', '3', '4'], answer: 1 },
        { prompt: 'Who writes instructions?', choices: ['The follower', 'The leader', 'Nobody'], answer: 1 },
      ],
      passMark: 2,
      attempts: 2,
    },
    roles: { newWorkersStartAs: 'follower', promotion: { afterGames: 3, minMeanScore: 2 } },
    completionCodes: { completed: 'CDONE1', noPartner: 'CNOPART', partnerLeft: 'CLEFT', screenedOut: 'CSCREEN' },
    platform: { kind: 'prolific' },
  };
}

/** A folder (a fresh temporary one by default) with consent.md, rules.md and empty.md. */
export function studyFolder(dir = mkdtempSync(join(tmpdir(), 'cerealbar-study-'))): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'consent.md'), CONSENT);
  writeFileSync(join(dir, 'rules.md'), 'Be kind.\n');
  writeFileSync(join(dir, 'empty.md'), '  \n');
  return dir;
}

/** Writes `data` as YAML (or JSON, by the name's extension) into `dir`; returns the file's path. */
export function writeStudy(dir: string, data: unknown, name = 'study.yaml'): string {
  const path = join(dir, name);
  writeFileSync(path, name.endsWith('.json') ? JSON.stringify(data, null, 2) : stringify(data));
  return path;
}

/** Sets `value` at a dotted path (`quiz.questions.2.answer`); `undefined` deletes the field. */
export function setPath(data: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const keys = path.split('.');
  let node = data as Record<string, unknown>;
  for (const key of keys.slice(0, -1)) node = node[key] as Record<string, unknown>;
  const last = keys[keys.length - 1];
  if (value === undefined) delete node[last];
  else node[last] = value;
  return data;
}
