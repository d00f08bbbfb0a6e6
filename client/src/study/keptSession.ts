/**
 * The study session this browser holds, one per study (`cerealbar.study.<id>` in localStorage),
 * so that a refresh or a closed tab comes back without a new session: the worker's id, the session
 * token, the ids it was started with (a link with other ids, such as a new MTurk assignment, starts
 * a new session), and when the current wait for a partner began (so a refresh keeps its clock).
 * Unreadable or refused storage is as if nothing were kept.
 */
import type { SessionBody } from './entry';

export interface KeptSession {
  readonly participantId: string;
  readonly token: string;
  /** The body `POST session` was sent: the platform's ids, or a lab's typed id. */
  readonly ids: SessionBody;
  /** Milliseconds since the epoch, from this browser's clock; absent when not waiting. */
  readonly waitStartedAt?: number;
}

const keyOf = (studyId: string) => `cerealbar.study.${studyId}`;

export function loadSession(studyId: string): KeptSession | null {
  try {
    const kept = JSON.parse(localStorage.getItem(keyOf(studyId)) ?? 'null') as Partial<KeptSession> | null;
    if (!kept || typeof kept.participantId !== 'string' || typeof kept.token !== 'string' || !isIds(kept.ids)) return null;
    const waitStartedAt = typeof kept.waitStartedAt === 'number' ? kept.waitStartedAt : undefined;
    return { participantId: kept.participantId, token: kept.token, ids: kept.ids, ...(waitStartedAt !== undefined && { waitStartedAt }) };
  } catch {
    return null;
  }
}

export function saveSession(studyId: string, session: KeptSession): void {
  try {
    localStorage.setItem(keyOf(studyId), JSON.stringify(session));
  } catch {
    // Not kept: a refresh then starts a new session from the link, as without storage.
  }
}

export function forgetSession(studyId: string): void {
  try {
    localStorage.removeItem(keyOf(studyId));
  } catch {
    // Nothing was kept.
  }
}

/** True when two session bodies name the same ids (the same worker, in the same visit). */
export function sameIds(a: SessionBody, b: SessionBody): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}

function isIds(value: unknown): value is SessionBody {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((id) => typeof id === 'string');
}
