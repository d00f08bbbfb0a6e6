/**
 * What a study's own texts say of the partner. In a study with arms each participant's partner is
 * an agent, and the pages say only "a partner" (docs/study-arms.md): a title, description, consent
 * form or rules that promise another participant would tell participants something untrue.
 */
import type { Study } from '../../shared/study/studyFile';

/** Words that make the partner a person: "another participant", "other people", "a real person", "a human partner". */
const HUMAN_PARTNER = /\b(?:another|other|fellow)\s+(?:participants?|persons?|people|humans?|workers?)\b|\breal\s+(?:person|people|humans?)\b|\bhuman\s+(?:partners?|players?)\b/i;

/** One warning for each of a study with arms' texts that makes the partner a person, naming its words; none for a study of pairs. */
export function humanPartnerWarnings(study: Study): string[] {
  if (!study.arms) return [];
  const texts: [string, string | null][] = [
    ['title', study.title],
    ['description', study.description],
    ['consent form', study.consentText],
    ['rules', study.rulesText],
  ];
  return texts.flatMap(([name, text]) => {
    const words = text?.match(HUMAN_PARTNER)?.[0];
    return words === undefined
      ? []
      : [`study ${study.id}: its ${name} says "${words}", but in a study with arms each participant's partner is an agent: say "a partner" there, as the study's pages do (docs/study-arms.md)`];
  });
}
