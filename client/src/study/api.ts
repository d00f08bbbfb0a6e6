/**
 * The study API as the participant's page calls it (docs/running-a-study.md, "The study API"):
 * one typed method per endpoint under /api/studies/<id>/, the session token sent as a bearer
 * token. A refusal is thrown as a StudyApiError with the server's code and message (and `field`,
 * `retryAfterSeconds` when given); a request that never got an answer has the code NETWORK.
 */
import type { SeatReservation } from '@colyseus/sdk';
import type { Role } from '../../../shared/engine/state';
import type { PublicStudy } from '../../../shared/study/studyFile';
import type { PublicWorker } from '../../../shared/study/worker';
import type { SessionBody } from './entry';

export class StudyApiError extends Error {
  constructor(
    /** The HTTP status; 0 when no answer came. */
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
    /** For TOO_EARLY and TOO_MANY_NEW_WORKERS: when to ask again. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'StudyApiError';
  }
}

export interface QuizResult {
  readonly passed: boolean;
  readonly score: number;
  readonly passMark: number;
  readonly attemptsLeft: number;
  /** The questions answered wrongly, counted from 0; null when the server does not say (no attempt is left, or it came too fast). */
  readonly wrong: readonly number[] | null;
  readonly worker: PublicWorker;
}

export class StudyApi {
  /** The session token, once a session is started (or taken back from the browser's storage). */
  token: string | null = null;

  constructor(readonly studyId: string) {}

  study(): Promise<PublicStudy> {
    return this.request('GET', 'public');
  }

  /**
   * A new session from the platform's ids; the token is kept for the next requests. `held`: the
   * token of this browser's last session, which vouches for a new submission or assignment of the
   * same worker (the server refuses a known participant's new one without it).
   */
  async startSession(ids: SessionBody, held: string | null = null): Promise<{ token: string; worker: PublicWorker }> {
    this.token = held;
    const answer = await this.request<{ token: string; worker: PublicWorker }>('POST', 'session', ids);
    this.token = answer.token;
    return answer;
  }

  me(): Promise<PublicWorker> {
    return this.workerFrom(this.request('GET', 'me'));
  }

  consent(agree: boolean): Promise<PublicWorker> {
    return this.workerFrom(this.request('POST', 'consent', { agree }));
  }

  readRules(): Promise<PublicWorker> {
    return this.workerFrom(this.request('POST', 'rules', { read: true }));
  }

  passTutorial(role: Role): Promise<PublicWorker> {
    return this.workerFrom(this.request('POST', 'tutorial', { role }));
  }

  submitQuiz(answers: readonly number[]): Promise<QuizResult> {
    return this.request('POST', 'quiz', { answers });
  }

  /** A seat in one of the study's games, chosen by the server. */
  async play(): Promise<SeatReservation> {
    return (await this.request<{ reservation: SeatReservation }>('POST', 'play', {})).reservation;
  }

  /** The noPartner ending, once the wait has run out (TOO_EARLY before). */
  noPartner(): Promise<PublicWorker> {
    return this.workerFrom(this.request('POST', 'no-partner', {}));
  }

  private async workerFrom(answer: Promise<{ worker: PublicWorker }>): Promise<PublicWorker> {
    return (await answer).worker;
  }

  private async request<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.token !== null && path !== 'public') headers.authorization = `Bearer ${this.token}`;
    let response: Response;
    try {
      response = await fetch(`/api/studies/${encodeURIComponent(this.studyId)}/${path}`, {
        method,
        headers,
        cache: 'no-store',
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
    } catch (error) {
      throw new StudyApiError(0, 'NETWORK', `no answer from the server (${error instanceof Error ? error.message : String(error)})`);
    }
    const answer: unknown = await response.json().catch(() => null);
    if (response.ok && answer !== null) return answer as T;
    const error: Record<string, unknown> = (answer as { error?: Record<string, unknown> } | null)?.error ?? {};
    const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
    throw new StudyApiError(
      response.status,
      text(error.code) ?? `HTTP_${response.status}`,
      text(error.message) ?? `the server answered ${response.status} ${response.statusText}`.trim(),
      text(error.field),
      typeof error.retryAfterSeconds === 'number' ? error.retryAfterSeconds : undefined,
    );
  }
}
