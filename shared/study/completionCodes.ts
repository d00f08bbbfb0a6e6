/**
 * Completion codes that give each other away. A participant learns the code of its own ending (a
 * screened-out one learns the screenedOut code in minutes): if the codes share a stem, or are made
 * from the public study id, that one code tells the others, the completed code among them, and
 * whoever guesses it can claim pay. The codes of a study should be random and independent, as
 * `study init` writes them; `serve` warns of codes that look derived.
 */
import { COMPLETION_OUTCOMES, type CompletionOutcome } from './studyFile';

/** Two codes sharing this many characters at the start, or at the end, look made from one stem. */
export const DERIVED_CODE_OVERLAP = 4;

/** A study id shorter than this is too short to look for in a code (it would be found by chance). */
const MIN_ID_IN_CODE = 4;

function sharedStart(a: string, b: string): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n += 1;
  return n;
}

function sharedEnd(a: string, b: string): number {
  let n = 0;
  while (n < a.length && n < b.length && a[a.length - 1 - n] === b[b.length - 1 - n]) n += 1;
  return n;
}

/**
 * Why a study's completion codes look derived, in words, or null when they do not: a code holding
 * the study id (with or without its dashes), or two codes sharing their first or last
 * DERIVED_CODE_OVERLAP characters or more (case is ignored, as a person typing a code would).
 */
export function derivedCodesProblem(study: { readonly id: string; readonly completionCodes: Readonly<Record<CompletionOutcome, string>> }): string | null {
  const codes = COMPLETION_OUTCOMES.map((outcome) => ({ outcome, code: study.completionCodes[outcome].toUpperCase() }));
  const ids = [...new Set([study.id, study.id.replace(/-/g, '')].map((id) => id.toUpperCase()))].filter((id) => id.length >= MIN_ID_IN_CODE);
  const found: string[] = [];
  for (const { outcome, code } of codes) {
    if (ids.some((id) => code.includes(id))) found.push(`the ${outcome} code contains the study id`);
  }
  for (let i = 0; i < codes.length; i += 1) {
    for (let j = i + 1; j < codes.length; j += 1) {
      const [a, b] = [codes[i], codes[j]];
      const start = sharedStart(a.code, b.code);
      const end = sharedEnd(a.code, b.code);
      if (start >= DERIVED_CODE_OVERLAP) found.push(`${a.outcome} and ${b.outcome} begin alike (${JSON.stringify(study.completionCodes[a.outcome].slice(0, start))})`);
      else if (end >= DERIVED_CODE_OVERLAP) found.push(`${a.outcome} and ${b.outcome} end alike (${JSON.stringify(study.completionCodes[a.outcome].slice(-end))})`);
    }
  }
  if (found.length === 0) return null;
  const more = found.length > 2 ? `, and ${found.length - 2} more` : '';
  return `its completion codes look derived (${found.slice(0, 2).join('; ')}${more}): whoever learns one code (a screened-out participant learns theirs) could work out the others, the completed code among them, and claim pay. Create four random, unrelated codes (cerealbar study init writes some) and put them in the study file and, on Prolific, on the study's page`;
}
