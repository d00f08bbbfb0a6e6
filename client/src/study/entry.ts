/**
 * How a worker arrived at a study's page: the ids its platform put in the link (Prolific's
 * PROLIFIC_PID, STUDY_ID and SESSION_ID; MTurk's workerId, assignmentId, hitId and turkSubmitTo),
 * MTurk's preview of a HIT not yet accepted, or a lab, where the participant types an id. The ids
 * are checked with the server's own schemas, so a garbled link is reported on the page, naming
 * what is missing or wrong, before anything is recorded.
 */
import type { PlatformKind } from '../../../shared/study/studyFile';
import { labSessionSchema, MTURK_PREVIEW_ASSIGNMENT_ID, mturkSessionSchema, prolificSessionSchema } from '../../../shared/study/worker';

/** The body of `POST session`: the platform's ids, exactly the fields its schema takes. */
export type SessionBody = Readonly<Record<string, string>>;

export type StudyEntry =
  /** Prolific's or MTurk's ids, all present and well formed. */
  | { readonly kind: 'ids'; readonly body: SessionBody }
  /** A lab: the participant types the id the experimenter gives. */
  | { readonly kind: 'lab' }
  /** MTurk's preview of the HIT: nothing may be recorded. */
  | { readonly kind: 'mturkPreview' }
  /** A link without the platform's ids, or with garbled ones: `problem` says which, in words. */
  | { readonly kind: 'badLink'; readonly problem: string };

const PLATFORM_FIELDS = {
  prolific: prolificSessionSchema.shape,
  mturk: mturkSessionSchema.shape,
} as const;

/** The study's id in the page's path, /study/<id> (with or without a final slash); null when there is none. */
export function studyIdOf(pathname: string): string | null {
  const match = /^\/study\/([^/]+)\/?$/.exec(pathname);
  if (!match) return null;
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return null;
  }
}

export function readEntry(platform: PlatformKind, search: string): StudyEntry {
  if (platform === 'lab') return { kind: 'lab' };
  const query = new URLSearchParams(search);
  if (platform === 'mturk' && query.get('assignmentId') === MTURK_PREVIEW_ASSIGNMENT_ID) return { kind: 'mturkPreview' };
  const fields = PLATFORM_FIELDS[platform];
  const body: Record<string, string> = {};
  const missing: string[] = [];
  const wrong: string[] = [];
  for (const [name, schema] of Object.entries(fields)) {
    const value = query.get(name);
    if (value === null || value === '') {
      missing.push(name);
      continue;
    }
    const checked = schema.safeParse(value);
    if (checked.success) body[name] = value;
    else wrong.push(checked.error.issues[0].message);
  }
  if (missing.length === 0 && wrong.length === 0) return { kind: 'ids', body };
  const problems = [missing.length > 0 ? `The link is missing ${listed(missing)}.` : '', ...wrong.map((message) => `${message}.`)];
  return { kind: 'badLink', problem: problems.filter(Boolean).join(' ') };
}

/** The participant's id a session body names: what decides whether a kept session is this worker's. */
export function participantIdOf(body: SessionBody): string {
  return body.PROLIFIC_PID ?? body.workerId ?? body.participantId ?? '';
}

/** What is wrong with an id typed in a lab, in words, or null; the server checks it again. */
export function labIdProblem(typed: string, pattern: string | null): string | null {
  const checked = labSessionSchema(pattern ?? undefined).safeParse({ participantId: typed });
  if (checked.success) return null;
  return `${checked.error.issues[0].message.replace(/^participantId\b/, 'The id')}.`;
}

function listed(names: readonly string[]): string {
  return names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}
