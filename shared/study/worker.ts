/**
 * A study's participant ("worker") as the study API sees one: the record's fields, the step a
 * worker is at (computed from the record, so a returning worker resumes where they were), the
 * quiz's marking, the request bodies of the study API, and what a worker's own pages may see.
 * Pure: the store (server/store/WorkerStore.ts) keeps the records; the pages can use the types.
 */
import { z } from 'zod';
import { ROLES, type Role } from '../engine/state';
import type { EndReason } from '../log/format';
import { bonusFor } from './bonus';
import { completionUrl, type CompletionOutcome, type PlatformKind, type StudyFile } from './studyFile';

// ---------------------------------------------------------------------------------------------
// The record

/** The role a worker may play: a seat's role, or either (a study whose new workers start as either). */
export type WorkerRole = Role | 'either';

/** The ids a platform gave a worker's latest visit, as given. */
export interface PlatformIds {
  /** Prolific's STUDY_ID and SESSION_ID. */
  readonly prolificStudyId?: string;
  readonly prolificSessionId?: string;
  /** MTurk's assignmentId, hitId and turkSubmitTo. */
  readonly assignmentId?: string;
  readonly hitId?: string;
  readonly turkSubmitTo?: string;
}

/** One worker of one study. Times are ISO 8601 UTC with milliseconds; null when it has not happened. */
export interface WorkerRecord {
  readonly studyId: string;
  /** Prolific's PROLIFIC_PID, MTurk's workerId, or the id a lab participant typed. */
  readonly participantId: string;
  readonly platform: PlatformKind;
  readonly platformIds: PlatformIds;
  readonly createdAt: string;
  /** The latest session (visit) started. */
  readonly lastSeenAt: string;
  readonly consentedAt: string | null;
  readonly declinedAt: string | null;
  readonly rulesReadAt: string | null;
  readonly tutorialPassedAt: { readonly leader: string | null; readonly follower: string | null };
  readonly quiz: { readonly attempts: number; readonly lastScore: number | null; readonly passedAt: string | null };
  readonly screenedOutAt: string | null;
  readonly role: WorkerRole;
  readonly promotedAt: string | null;
  readonly blocked: { readonly at: string; readonly reason: string | null } | null;
  readonly completion: { readonly outcome: CompletionOutcome; readonly code: string; readonly issuedAt: string } | null;
  /** Since the worker's latest request to play, while it waits for a partner; null otherwise. */
  readonly waitingSince: string | null;
  /** Sums over the worker's games in the study (the game logs hold the games themselves). */
  readonly games: WorkerGames;
}

export interface WorkerGames {
  /** Games that have ended, for any reason. */
  readonly played: number;
  /** Games played to their end (all turns used). */
  readonly completed: number;
  /** Of those, in the worker's current session (Prolific submission, MTurk assignment). */
  readonly completedThisSession: number;
  /** Games started and not yet ended. */
  readonly inProgress: number;
  /** The final scores of the ended games, added up: what the bonus is paid on. */
  readonly points: number;
  /** Time in ended games. */
  readonly seconds: number;
}

/** One game a worker played, as the worker store keeps it. */
export interface WorkerGame {
  readonly gameId: string;
  readonly role: Role;
  readonly startedAt: string;
  readonly endedAt: string | null;
  readonly endReason: EndReason | null;
  readonly score: number;
  readonly seconds: number;
  /** True when this worker's leaving ended the game. */
  readonly left: boolean;
}

// ---------------------------------------------------------------------------------------------
// Steps

/** Where a worker is, in order; the last four are endings. */
export const WORKER_STEPS = ['consent', 'rules', 'tutorial', 'quiz', 'play', 'done', 'declined', 'screenedOut', 'blocked'] as const;
export type WorkerStep = (typeof WORKER_STEPS)[number];

/** The tutorials a worker must pass: its role's, or both for a worker who may play either. */
export function tutorialsNeeded(role: WorkerRole): Role[] {
  return role === 'either' ? [...ROLES] : [role];
}

/** The tutorials still to pass. A promoted worker needs the leader's tutorial again to play. */
export function tutorialsLeft(worker: WorkerRecord): Role[] {
  return tutorialsNeeded(worker.role).filter((role) => worker.tutorialPassedAt[role] === null);
}

/** The step a worker is at. Endings first: blocked, declined, screened out, done. */
export function workerStep(worker: WorkerRecord): WorkerStep {
  if (worker.blocked) return 'blocked';
  if (worker.declinedAt !== null) return 'declined';
  if (worker.screenedOutAt !== null) return 'screenedOut';
  if (worker.completion !== null) return 'done';
  if (worker.consentedAt === null) return 'consent';
  if (worker.rulesReadAt === null) return 'rules';
  // The quiz follows the first tutorial; a tutorial for a later role (after a promotion) comes before play.
  if (tutorialsLeft(worker).length > 0) return 'tutorial';
  if (worker.quiz.passedAt === null) return 'quiz';
  return 'play';
}

/**
 * Whether a worker at `step`, of `workerRole`, may take its seat of `seatRole` in a game waiting
 * for a partner: it plays it; its session has ended; or its role changed, so that it has the
 * leader's tutorial to pass first or plays the other seat now (a promotion while it waited).
 * The server decides it from the record, the worker's page from the step and role it is given.
 */
export type SeatVerdict = 'plays' | 'ended' | 'roleChanged';

export function seatVerdict(step: WorkerStep, workerRole: WorkerRole, seatRole: Role): SeatVerdict {
  if (step === 'play') return workerRole === 'either' || workerRole === seatRole ? 'plays' : 'roleChanged';
  // A worker who reached the play step goes back to the tutorial only when promoted; else it is at an ending.
  return step === 'tutorial' ? 'roleChanged' : 'ended';
}

// ---------------------------------------------------------------------------------------------
// Codes to check before approving

/** A game shorter than this let its players play nothing (a partner who left at once). */
export const MIN_PLAYED_SECONDS = 60;

/**
 * Why a worker's completion code was earned without a game played, for the researcher to check
 * before approving it (docs/running-a-study.md, "Before approving"); null when a game was played
 * (or the code is a screening out). `games`: the worker's, as the worker store lists them.
 */
export function completionWithoutPlay(worker: WorkerRecord, games: readonly WorkerGame[]): string | null {
  const { completion } = worker;
  if (completion === null) return null;
  if (completion.outcome === 'noPartner') return 'no game played: waited for a partner';
  if (completion.outcome !== 'partnerLeft') return null;
  const ended = games.filter((game) => game.endedAt !== null && game.endedAt <= completion.issuedAt);
  const last = ended[ended.length - 1];
  if (last === undefined) return 'no game played';
  return last.seconds < MIN_PLAYED_SECONDS ? `no game played: the partner left ${Math.round(last.seconds)} s into game ${last.gameId}` : null;
}

// ---------------------------------------------------------------------------------------------
// The quiz

export interface QuizMarking {
  readonly score: number;
  readonly passed: boolean;
  /** The questions answered wrongly, counted from 0 (never the right answers). */
  readonly wrong: number[];
}

/** Marks answers already checked against the quiz's shape (quizAnswersSchema). */
export function markQuiz(quiz: StudyFile['quiz'], answers: readonly number[]): QuizMarking {
  const wrong = quiz.questions.flatMap((question, i) => (answers[i] === question.answer ? [] : [i]));
  const score = quiz.questions.length - wrong.length;
  return { score, passed: score >= quiz.passMark, wrong };
}

export function quizAttemptsLeft(quiz: StudyFile['quiz'], worker: WorkerRecord): number {
  if (worker.quiz.passedAt !== null) return 0;
  return Math.max(0, quiz.attempts - worker.quiz.attempts);
}

// ---------------------------------------------------------------------------------------------
// What a worker's pages see

export interface PublicWorker {
  readonly studyId: string;
  readonly participantId: string;
  readonly step: WorkerStep;
  readonly role: WorkerRole;
  /** The tutorials still to pass (the tutorial step lasts while this is not empty). */
  readonly tutorialsLeft: Role[];
  readonly quiz: { readonly attempts: number; readonly attemptsLeft: number; readonly lastScore: number | null; readonly passMark: number; readonly passed: boolean };
  readonly games: { readonly played: number; readonly completed: number; readonly completedThisSession: number };
  /** The bonus so far, on the points of the worker's ended games (shared/study/bonus.ts). */
  readonly earnings: { readonly base: number; readonly bonus: number; readonly currency: string };
  /**
   * The completion code once the worker has one, with where it goes: Prolific's completion URL, or
   * the MTurk form's action and assignment (the page posts the assignment there); null elsewhere.
   */
  readonly completion: {
    readonly outcome: CompletionOutcome;
    readonly code: string;
    readonly url: string | null;
    readonly mturkSubmit: { readonly action: string; readonly assignmentId: string } | null;
  } | null;
}

/** MTurk's endpoint for an ExternalQuestion's answers, under the worker's turkSubmitTo. */
export const MTURK_SUBMIT_PATH = '/mturk/externalSubmit';

function mturkSubmit(worker: WorkerRecord): { action: string; assignmentId: string } | null {
  const { turkSubmitTo, assignmentId } = worker.platformIds;
  if (worker.platform !== 'mturk' || turkSubmitTo === undefined || assignmentId === undefined) return null;
  return { action: `${turkSubmitTo.replace(/\/$/, '')}${MTURK_SUBMIT_PATH}`, assignmentId };
}

export function publicWorker(study: StudyFile, worker: WorkerRecord): PublicWorker {
  return {
    studyId: worker.studyId,
    participantId: worker.participantId,
    step: workerStep(worker),
    role: worker.role,
    tutorialsLeft: tutorialsLeft(worker),
    quiz: {
      attempts: worker.quiz.attempts,
      attemptsLeft: quizAttemptsLeft(study.quiz, worker),
      lastScore: worker.quiz.lastScore,
      passMark: study.quiz.passMark,
      passed: worker.quiz.passedAt !== null,
    },
    games: { played: worker.games.played, completed: worker.games.completed, completedThisSession: worker.games.completedThisSession },
    earnings: { base: study.pay.base, bonus: bonusFor(study.pay, worker.games.points), currency: study.pay.currency },
    completion:
      worker.completion === null
        ? null
        : {
            outcome: worker.completion.outcome,
            code: worker.completion.code,
            url: completionUrl(study, worker.completion.outcome),
            mturkSubmit: mturkSubmit(worker),
          },
  };
}

// ---------------------------------------------------------------------------------------------
// Request bodies

/** MTurk's assignmentId while a worker previews a HIT: no worker yet, nothing is recorded. */
export const MTURK_PREVIEW_ASSIGNMENT_ID = 'ASSIGNMENT_ID_NOT_AVAILABLE';

const platformId = (name: string) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? `${name} is missing` : `${name} must be a string`) })
    .min(1, `${name} must not be empty`)
    .max(100, `${name} must be at most 100 characters`)
    .regex(/^[A-Za-z0-9_-]+$/, `${name} must be letters, digits, _ and - only`);

const strict = <T extends z.core.$ZodLooseShape>(shape: T) =>
  z.strictObject(shape, { error: (issue) => (issue.code === 'unrecognized_keys' ? `unknown field ${issue.keys.join(', ')}` : 'the body must be a JSON object') });

/** MTurk's own sites (the sandbox's too): where an assignment is submitted, so no other site is accepted. */
const TURK_SUBMIT_TO = /^https:\/\/(www|workersandbox)\.mturk\.com\/?$/;

export const prolificSessionSchema = strict({
  PROLIFIC_PID: platformId('PROLIFIC_PID'),
  STUDY_ID: platformId('STUDY_ID'),
  SESSION_ID: platformId('SESSION_ID'),
});

export const mturkSessionSchema = strict({
  workerId: platformId('workerId'),
  assignmentId: platformId('assignmentId'),
  hitId: platformId('hitId'),
  turkSubmitTo: z
    .string({ error: (issue) => (issue.input === undefined ? 'turkSubmitTo is missing' : 'turkSubmitTo must be a string') })
    .regex(TURK_SUBMIT_TO, 'turkSubmitTo must be https://www.mturk.com or https://workersandbox.mturk.com'),
});

export const MAX_LAB_ID_LENGTH = 100;

/** A lab's typed id: trimmed, visible characters, matching the study's participantIdPattern whole. */
export function labSessionSchema(pattern: string | undefined) {
  const whole = pattern === undefined ? null : new RegExp(`^(?:${pattern})$`, 'u');
  return strict({
    participantId: z
      .string({ error: (issue) => (issue.input === undefined ? 'participantId is missing' : 'participantId must be a string') })
      .trim()
      .min(1, 'participantId must not be empty')
      .max(MAX_LAB_ID_LENGTH, `participantId must be at most ${MAX_LAB_ID_LENGTH} characters`)
      .regex(/^[\x21-\x7e]+$/, 'participantId must be visible ASCII characters, no spaces')
      .refine((id) => whole === null || whole.test(id), `participantId does not have the form this study's ids have (${pattern ?? ''})`),
  });
}

/** A session's platform ids, from the body its platform's pages send. */
export interface SessionStart {
  readonly participantId: string;
  readonly ids: PlatformIds;
}

export type SessionParse = { ok: true; start: SessionStart } | { ok: false; code: 'BAD_BODY' | 'MTURK_PREVIEW'; field: string; message: string };

export function parseSessionBody(study: StudyFile, body: unknown): SessionParse {
  const { platform } = study;
  if (platform.kind === 'mturk' && isObject(body) && body.assignmentId === MTURK_PREVIEW_ASSIGNMENT_ID) {
    return { ok: false, code: 'MTURK_PREVIEW', field: 'assignmentId', message: 'this is the HIT\'s preview: accept the HIT to take part (nothing was recorded)' };
  }
  if (platform.kind === 'prolific') {
    const parsed = prolificSessionSchema.safeParse(body);
    if (!parsed.success) return badBody(parsed.error);
    const { PROLIFIC_PID, STUDY_ID, SESSION_ID } = parsed.data;
    return { ok: true, start: { participantId: PROLIFIC_PID, ids: { prolificStudyId: STUDY_ID, prolificSessionId: SESSION_ID } } };
  }
  if (platform.kind === 'mturk') {
    const parsed = mturkSessionSchema.safeParse(body);
    if (!parsed.success) return badBody(parsed.error);
    const { workerId, assignmentId, hitId, turkSubmitTo } = parsed.data;
    return { ok: true, start: { participantId: workerId, ids: { assignmentId, hitId, turkSubmitTo } } };
  }
  const parsed = labSessionSchema(platform.participantIdPattern).safeParse(body);
  if (!parsed.success) return badBody(parsed.error);
  return { ok: true, start: { participantId: parsed.data.participantId, ids: {} } };
}

export const consentBodySchema = strict({ agree: z.boolean({ error: 'agree must be true or false' }) });

/** The body of a request that carries nothing (play, no-partner): an empty object. */
export const emptyBodySchema = strict({});

export const rulesBodySchema = strict({ read: z.literal(true, { error: 'read must be true' }) });

export const tutorialBodySchema = strict({ role: z.enum(ROLES, { error: `role must be one of ${ROLES.join(', ')}` }) });

export function quizBodySchema(quiz: StudyFile['quiz']) {
  const n = quiz.questions.length;
  return strict({
    answers: z
      .array(z.number({ error: 'each answer must be a choice number, counted from 0' }).int('each answer must be a whole number: a choice counted from 0'), {
        error: 'answers must be an array of choice numbers, counted from 0',
      })
      .length(n, `answers must have one answer for each of the ${n} questions`)
      .superRefine((answers, ctx) => {
        answers.forEach((answer, i) => {
          const choices = quiz.questions[i].choices.length;
          if (answer < 0 || answer >= choices) {
            ctx.addIssue({ code: 'custom', path: [i], message: `answers.${i}: question ${i} has choices 0 to ${choices - 1}` });
          }
        });
      }),
  });
}

export const blockBodySchema = strict({
  reason: z.string({ error: 'reason must be a string' }).trim().max(500, 'reason must be at most 500 characters').optional(),
});

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function badBody(error: z.ZodError): SessionParse {
  const issue = error.issues[0];
  return { ok: false, code: 'BAD_BODY', field: fieldOf(issue), message: issue.message };
}

/** The field an issue is about: the unknown key, or its path (`answers.2`); `body` for the whole. */
export function fieldOf(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') return issue.keys[0];
  return issue.path.length > 0 ? issue.path.map(String).join('.') : 'body';
}
