/**
 * A lab's participant ids are typed, not vouched for by a platform: whoever types one first is that
 * participant, and a later visit with it is a limited session (server/store/workerChanges.ts,
 * visitChanges). Ids a stranger can guess (P001, P002, ...) let one take participants' places, so
 * `study links` says how many ids the study's pattern allows. The count is read from the pattern
 * itself for the usual forms (literals, classes, \d, \w and counted repeats); a pattern with
 * groups or alternatives is not counted.
 */
import type { StudyFile } from './studyFile';

/** Fewer ids than this (about 2^32) can be tried by a program in a day. */
export const GUESSABLE_IDS = 2 ** 32;

/** The fewest ids a pattern's shortest match allows, as a number (log2 summed), or null when the pattern has groups or alternatives. */
export function labIdCount(pattern: string): number | null {
  let bits = 0;
  let i = 0;
  while (i < pattern.length) {
    const atom = readAtom(pattern, i);
    if (atom === null) return null;
    i = atom.end;
    const repeat = readRepeat(pattern, i);
    i = repeat.end;
    bits += repeat.min * Math.log2(atom.size);
  }
  return 2 ** bits;
}

/** What `study links` says of a lab study's ids; null for other platforms and for ids no one can guess. */
export function labIdWarning(study: StudyFile): string | null {
  if (study.platform.kind !== 'lab') return null;
  const advice = 'give each participant a random id of 8 or more letters and digits, and set participantIdPattern to match it (as [A-Z0-9]{8})';
  const pattern = study.platform.participantIdPattern;
  if (pattern === undefined) return `lab ids: any typed id is accepted, and whoever types a participant's id first takes that participant's place; ${advice}`;
  const count = labIdCount(pattern);
  if (count === null || count >= GUESSABLE_IDS) return null;
  return `lab ids: the pattern ${pattern} allows about ${Math.round(count).toLocaleString('en-US')} ids, which anyone can try in turn to take participants' places; ${advice}`;
}

const CLASS_SIZES: Record<string, number> = { d: 10, w: 63, s: 6, D: 85, W: 32, S: 89 };
/** Printable ASCII, the characters a lab id may have. */
const PRINTABLE = 94;

function readAtom(pattern: string, i: number): { size: number; end: number } | null {
  const char = pattern[i];
  if (char === '(' || char === ')' || char === '|') return null;
  if (char === '^' || char === '$') return { size: 1, end: i + 1 };
  if (char === '.') return { size: PRINTABLE, end: i + 1 };
  if (char === '\\') return { size: CLASS_SIZES[pattern[i + 1]] ?? 1, end: i + 2 };
  if (char !== '[') return { size: 1, end: i + 1 };
  const close = pattern.indexOf(']', i + 2);
  if (close < 0) return null;
  const body = pattern.slice(i + 1, close);
  const negated = body.startsWith('^');
  let size = 0;
  for (let j = negated ? 1 : 0; j < body.length; j++) {
    if (body[j] === '\\') {
      size += CLASS_SIZES[body[j + 1]] ?? 1;
      j++;
    } else if (body[j + 1] === '-' && j + 2 < body.length) {
      size += Math.max(1, body.charCodeAt(j + 2) - body.charCodeAt(j) + 1);
      j += 2;
    } else size += 1;
  }
  return { size: negated ? Math.max(1, PRINTABLE - size) : Math.max(1, size), end: close + 1 };
}

/** The least number of times the atom before `i` repeats, and where the quantifier ends. */
function readRepeat(pattern: string, i: number): { min: number; end: number } {
  const char = pattern[i];
  if (char === '?' || char === '*') return { min: 0, end: i + 1 + (pattern[i + 1] === '?' ? 1 : 0) };
  if (char === '+') return { min: 1, end: i + 1 + (pattern[i + 1] === '?' ? 1 : 0) };
  const counted = char === '{' ? /^\{(\d+)(,\d*)?\}\??/.exec(pattern.slice(i)) : null;
  if (counted) return { min: Number(counted[1]), end: i + counted[0].length };
  return { min: 1, end: i };
}
