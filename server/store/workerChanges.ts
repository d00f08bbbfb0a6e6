/**
 * A study worker's record as every worker store keeps it, whatever its database: the row, the
 * sums over its games, and what each change decides from the row as it is. The store
 * (RowWorkerStore, on SQLite or PostgreSQL) only reads and writes rows, in one transaction per change.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Role } from '../../shared/engine/state';
import type { EndReason } from '../../shared/log/format';
import type { CompletionOutcome, PlatformKind, StudyFile } from '../../shared/study/studyFile';
import {
  markQuiz,
  quizAttemptsLeft,
  tutorialsNeeded,
  workerStep,
  type PlatformIds,
  type QuizMarking,
  type WorkerGame,
  type WorkerRecord,
  type WorkerRole,
} from '../../shared/study/worker';

/** How long a session token lasts; a worker who comes back later starts a new session from the platform's link. */
export const SESSION_TTL_MS = 24 * 60 * 60 * 1000;

/** Bytes of randomness in a session token (256 bits). */
export const TOKEN_BYTES = 32;

/**
 * How long a session's token vouches for its worker's next session (a new Prolific submission or
 * MTurk assignment from the same browser, VisitProof), long after it stops letting requests in.
 */
export const VOUCH_TTL_MS = 90 * 24 * 60 * 60 * 1000;

/** Sessions kept per worker, of each kind (limited or not): a new one drops the oldest of its kind beyond these. */
export const MAX_SESSIONS_KEPT = 10;

/** Why an action was refused; the HTTP layer turns the code into a status. */
export type WorkerErrorCode =
  | 'NOT_FOUND'
  | 'BLOCKED'
  | 'WRONG_STEP'
  | 'ALREADY_ANSWERED'
  | 'DECLINED'
  | 'ROLE_MISMATCH'
  | 'QUIZ_PASSED'
  | 'NO_ATTEMPTS_LEFT'
  | 'TOO_EARLY'
  | 'ALREADY_SEATED'
  | 'SESSION_ELSEWHERE'
  | 'LIMITED_SESSION'
  | 'TOO_MANY_NEW_WORKERS';

export class WorkerError extends Error {
  constructor(
    readonly code: WorkerErrorCode,
    message: string,
    /** For TOO_EARLY and TOO_MANY_NEW_WORKERS: when to ask again. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'WorkerError';
  }
}

export interface QuizResult extends QuizMarking {
  readonly worker: WorkerRecord;
}

export interface WorkerRow {
  readonly study_id: string;
  readonly participant_id: string;
  readonly platform: PlatformKind;
  readonly prolific_study_id: string | null;
  readonly prolific_session_id: string | null;
  readonly assignment_id: string | null;
  readonly hit_id: string | null;
  readonly turk_submit_to: string | null;
  readonly created_at: string;
  readonly last_seen_at: string;
  readonly consented_at: string | null;
  readonly declined_at: string | null;
  readonly rules_read_at: string | null;
  readonly leader_tutorial_at: string | null;
  readonly follower_tutorial_at: string | null;
  readonly quiz_attempts: number;
  readonly quiz_last_score: number | null;
  readonly quiz_passed_at: string | null;
  readonly screened_out_at: string | null;
  readonly role: WorkerRole;
  readonly promoted_at: string | null;
  readonly blocked_at: string | null;
  readonly block_reason: string | null;
  readonly completion_outcome: CompletionOutcome | null;
  readonly completion_code: string | null;
  readonly completion_at: string | null;
  readonly completion_session: string | null;
  readonly waiting_since: string | null;
  /** A keyed hash of the address the worker was first seen from (never the address itself); null when unknown. */
  readonly created_address: string | null;
}

/** A worker's row with the sums of its games (the select adds them). */
export interface WorkerRowWithGames extends WorkerRow {
  readonly games_played: number;
  readonly games_completed: number;
  readonly games_completed_in_session: number;
  readonly games_open: number;
  readonly points: number;
  readonly seconds: number;
  readonly follower_games_completed: number;
  readonly follower_points: number;
}

/** The columns a change may set: anything but the key. */
export type Changes = Partial<Omit<WorkerRow, 'study_id' | 'participant_id'>>;

/** How a game a worker played ended, for that worker. */
export interface GameEnd {
  readonly reason: EndReason;
  readonly score: number;
  /** True when this worker's leaving (or expulsion) ended the game. */
  readonly left: boolean;
}

/** A study's games, counted once each from its workers' records. */
export interface StudyGameTotals {
  readonly games: number;
  /** Started and not ended. */
  readonly live: number;
  /** Over the ended games; null when none has ended. */
  readonly meanScore: number | null;
  readonly meanSeconds: number | null;
}

/** A study's draw of an arm for a worker's next game (WorkerStore.drawArm). */
export interface ArmDraw {
  /** The study's draws are numbered from 0, each number handed out once. */
  readonly draw: number;
  readonly armId: string;
}


/** How much earlier than the wait's end a worker's page may ask for the noPartner code (clocks differ a little). */
export const WAIT_TOLERANCE_MS = 2000;

/**
 * The visit a completion code belongs to: Prolific's SESSION_ID or MTurk's assignmentId; '' in a
 * lab. A worker who comes back with another one (a new MTurk assignment) may play again.
 */
export function sessionKey(row: Pick<WorkerRow, 'prolific_session_id' | 'assignment_id'>): string {
  return row.prolific_session_id ?? row.assignment_id ?? '';
}

/** The row's sums over its games, as extra columns (cast, so that both databases give numbers). */
export const WITH_GAMES = `
  SELECT w.*,
    (SELECT CAST(COUNT(*) AS INTEGER) FROM worker_games g WHERE g.study_id = w.study_id AND g.participant_id = w.participant_id AND g.ended_at IS NOT NULL) AS games_played,
    (SELECT CAST(COUNT(*) AS INTEGER) FROM worker_games g WHERE g.study_id = w.study_id AND g.participant_id = w.participant_id AND g.end_reason = 'turns-exhausted') AS games_completed,
    (SELECT CAST(COUNT(*) AS INTEGER) FROM worker_games g WHERE g.study_id = w.study_id AND g.participant_id = w.participant_id AND g.end_reason = 'turns-exhausted'
       AND g.session_key = COALESCE(w.prolific_session_id, w.assignment_id, '')) AS games_completed_in_session,
    (SELECT CAST(COUNT(*) AS INTEGER) FROM worker_games g WHERE g.study_id = w.study_id AND g.participant_id = w.participant_id AND g.ended_at IS NULL) AS games_open,
    (SELECT CAST(COALESCE(SUM(score), 0) AS INTEGER) FROM worker_games g WHERE g.study_id = w.study_id AND g.participant_id = w.participant_id AND g.ended_at IS NOT NULL) AS points,
    (SELECT CAST(COALESCE(SUM(seconds), 0) AS DOUBLE PRECISION) FROM worker_games g WHERE g.study_id = w.study_id AND g.participant_id = w.participant_id AND g.ended_at IS NOT NULL) AS seconds,
    (SELECT CAST(COUNT(*) AS INTEGER) FROM worker_games g WHERE g.study_id = w.study_id AND g.participant_id = w.participant_id AND g.end_reason = 'turns-exhausted' AND g.role = 'follower') AS follower_games_completed,
    (SELECT CAST(COALESCE(SUM(score), 0) AS INTEGER) FROM worker_games g WHERE g.study_id = w.study_id AND g.participant_id = w.participant_id AND g.end_reason = 'turns-exhausted' AND g.role = 'follower') AS follower_points
  FROM workers w`;

export const CHANGEABLE = new Set<string>([
  'platform', 'prolific_study_id', 'prolific_session_id', 'assignment_id', 'hit_id', 'turk_submit_to', 'last_seen_at',
  'consented_at', 'declined_at', 'rules_read_at', 'leader_tutorial_at', 'follower_tutorial_at', 'quiz_attempts',
  'quiz_last_score', 'quiz_passed_at', 'screened_out_at', 'role', 'promoted_at', 'blocked_at', 'block_reason',
  'completion_outcome', 'completion_code', 'completion_at', 'completion_session', 'waiting_since',
]);

export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** The role a new worker gets from the study: roles.newWorkersStartAs ('either' stays either). */
export function startingRole(study: StudyFile): WorkerRole {
  return study.roles.newWorkersStartAs;
}

// ---------------------------------------------------------------------------------------------
// What each change of a worker's record decides, from the row as it is (every store runs these
// inside a transaction that holds the row)

/** Records consent (agree) or its refusal, which is final. The same answer again changes nothing. */
export function consentChanges(worker: WorkerRow, agree: boolean, at: string, limited = false): Changes {
  refuseBlocked(worker);
  if (agree ? worker.consented_at !== null : worker.declined_at !== null) return {};
  if (worker.declined_at !== null) throw new WorkerError('DECLINED', 'consent was declined, which is final: return the study on your platform');
  if (worker.consented_at !== null) throw new WorkerError('ALREADY_ANSWERED', 'consent was already given');
  if (!agree) refuseInLimitedSession(limited, 'consent can be declined');
  return agree ? { consented_at: at } : { declined_at: at };
}

/** Records that the worker read the rules (after consent); again changes nothing. */
export function rulesChanges(worker: WorkerRow, at: string): Changes {
  refuseAtEnding(worker);
  if (worker.consented_at === null) throw new WorkerError('WRONG_STEP', 'the consent form comes first');
  return worker.rules_read_at === null ? { rules_read_at: at } : {};
}

/** Records a tutorial passed, for a role the worker plays (after the rules); again changes nothing. */
export function tutorialChanges(worker: WorkerRow, role: Role, at: string): Changes {
  refuseAtEnding(worker);
  if (worker.consented_at === null || worker.rules_read_at === null) throw new WorkerError('WRONG_STEP', 'the consent form and the rules come before the tutorial');
  if (!tutorialsNeeded(worker.role).includes(role)) throw new WorkerError('ROLE_MISMATCH', `this worker plays ${worker.role}, not ${role}`);
  const column = role === 'leader' ? 'leader_tutorial_at' : 'follower_tutorial_at';
  return worker[column] === null ? { [column]: at } : {};
}

/**
 * Marks one attempt at the quiz (answers already checked against its shape). A pass records
 * quizPassedAt; failing the last attempt screens the worker out, with the screenedOut code.
 */
export function quizChanges(study: StudyFile, row: WorkerRowWithGames, answers: readonly number[], at: string, limited = false): { changes: Changes; marking: QuizMarking } {
  const current = workerRecord(row);
  refuseBlocked(row);
  if (row.quiz_passed_at !== null) throw new WorkerError('QUIZ_PASSED', 'the quiz is already passed');
  if (row.screened_out_at !== null || quizAttemptsLeft(study.quiz, current) === 0) throw new WorkerError('NO_ATTEMPTS_LEFT', 'no attempts at the quiz are left');
  refuseAtEnding(row);
  if (workerStep(current) !== 'quiz') throw new WorkerError('WRONG_STEP', `the quiz comes after the consent form, the rules and the tutorial (this worker is at ${workerStep(current)})`);
  if (quizAttemptsLeft(study.quiz, current) === 1) refuseInLimitedSession(limited, "the quiz's last attempt can be taken");
  const marking = markQuiz(study.quiz, answers);
  const attempts = row.quiz_attempts + 1;
  const changes: Changes = { quiz_attempts: attempts, quiz_last_score: marking.score };
  if (marking.passed) return { marking, changes: { ...changes, quiz_passed_at: at } };
  if (attempts >= study.quiz.attempts) return { marking, changes: { ...changes, screened_out_at: at, ...completionChanges(study, row, 'screenedOut', at) } };
  return { marking, changes };
}

/** Blocks a worker: every later action is refused. Blocking again keeps the first time and reason. */
export function blockChanges(worker: WorkerRow, reason: string | null, at: string): Changes {
  return worker.blocked_at === null ? { blocked_at: at, block_reason: reason } : {};
}

/**
 * Makes a worker a leader (who then needs the leader's tutorial before playing); a leader stays as
 * they are. A worker it sends to that tutorial waits for a partner no more.
 */
export function promoteChanges(worker: WorkerRow, at: string): Changes {
  if (worker.role === 'leader') return {};
  return { role: 'leader', promoted_at: at, ...(worker.leader_tutorial_at === null && stopWaitingChanges(worker)) };
}

/** A request to play (its wait for a partner, or its arm draw) comes only from a worker at the play step. */
export function refuseUnlessAtPlay(row: WorkerRowWithGames): void {
  refuseAtEnding(row);
  const step = workerStep(workerRecord(row));
  if (step !== 'play') throw new WorkerError('WRONG_STEP', `a game comes after the consent form, the rules, the tutorial and the quiz (this worker is at ${step})`);
}

/** A worker at the play step asks for a game: its wait for a partner starts (again) now. */
export function startWaitingChanges(row: WorkerRowWithGames, at: string): Changes {
  refuseUnlessAtPlay(row);
  return { waiting_since: at };
}

/** How far the server's clocks may differ between its processes, when they compare times (stopWaitingChanges). */
export const CLOCK_TOLERANCE_MS = 1500;

/**
 * The worker's wait ended without a game (it left the game it waited in, or no seat was found).
 * `startedBy`: only a wait that started by then (epoch ms) ends; a later one, from a request to play
 * made meanwhile, goes on.
 */
export function stopWaitingChanges(row: WorkerRow, startedBy?: number): Changes {
  if (row.waiting_since === null) return {};
  if (startedBy !== undefined && Date.parse(row.waiting_since) > startedBy + CLOCK_TOLERANCE_MS) return {};
  return { waiting_since: null };
}

/**
 * A game with the worker in it ended (`row` counts it already). A game played to its end may
 * complete the session (after gamesPerSession of them) and promote a follower (the study's rule);
 * a game the partner left gives the partnerLeft code. A game the server ended (shut down, could
 * not save) gives no code: the worker may play another, or leave with noPartner after waiting.
 */
export function gameEndChanges(study: StudyFile, row: WorkerRowWithGames, end: GameEnd, at: string): Changes {
  const changes: Changes = { ...promotionChanges(study, row, at) };
  if (end.reason === 'turns-exhausted' && row.games_completed_in_session >= study.gamesPerSession) Object.assign(changes, completionChanges(study, row, 'completed', at));
  if (end.reason === 'abandoned' && !end.left) Object.assign(changes, completionChanges(study, row, 'partnerLeft', at));
  return changes;
}

/**
 * Which of a worker's games a game's end may still be recorded for: an open one, or one recovery
 * ended as `interrupted` while its machine was only stalled (a pause longer than its lease): that
 * machine takes the game back and its real end replaces the guess. Any other end stands.
 */
export const ENDING_STANDS_OPEN = "(ended_at IS NULL OR end_reason = 'interrupted')";

/** The noPartner code, for a worker whose wait (from its last request to play) has run out. */
export function noPartnerChanges(study: StudyFile, row: WorkerRowWithGames, now: number, at: string): Changes {
  refuseAtEnding(row);
  if (row.games_open > 0) throw new WorkerError('WRONG_STEP', 'this worker is in a game');
  if (row.waiting_since === null) throw new WorkerError('WRONG_STEP', 'this worker is not waiting for a partner');
  const waitEnds = Date.parse(row.waiting_since) + study.time.waitForPartnerSeconds * 1000;
  const early = waitEnds - WAIT_TOLERANCE_MS - now;
  if (early > 0) throw new WorkerError('TOO_EARLY', `the wait for a partner is not over: ask again in ${Math.ceil(early / 1000)} s`, Math.ceil(early / 1000));
  return { ...completionChanges(study, row, 'noPartner', at), waiting_since: null };
}

/**
 * What vouches for a returning worker's visit besides the participant id it names, which anyone
 * who learned the id could send (docs/security.md, "A study and strangers").
 */
export interface VisitProof {
  /**
   * The request carried a token of this same worker (the page keeps its last one), from a session
   * that was not limited, made within VOUCH_TTL_MS: a live one or one expired since.
   */
  readonly heldToken: boolean;
}

/**
 * A returning worker's visit: let in as its platform vouches for it, or refused. The platform's
 * own link again (the same Prolific SESSION_ID or MTurk assignment, which only that worker was
 * given) resumes its session, changing nothing; a page that holds one of the worker's tokens
 * (VisitProof) may also bring a new submission or assignment. A lab's typed id again, which no
 * platform vouches for, starts a `limited` session that changes nothing either and cannot end
 * the worker's part (decline consent, use the quiz's last attempt). Anything else is another's
 * session, refused: the ids it brings (a made-up assignment) never reach the worker's record.
 */
export function visitChanges(existing: WorkerRow, ids: ReturnType<typeof idColumns>, proof: VisitProof, at: string): { changes: Changes; limited: boolean } {
  const key = sessionKey(ids);
  if (key !== '' && key === sessionKey(existing)) return { changes: { last_seen_at: at }, limited: false };
  if (proof.heldToken) return { changes: returnChanges(existing, ids, at), limited: false };
  if (existing.platform === 'lab') return { changes: { last_seen_at: at }, limited: true };
  throw new WorkerError(
    'SESSION_ELSEWHERE',
    existing.platform === 'prolific'
      ? 'this Prolific id already takes part in this study in another submission: open the study from the link Prolific gave you for it, in the browser you started in'
      : "this worker id already took part in this study from another browser: take this study's HITs in the browser where you took your first (its page keeps your place), or return this HIT",
  );
}

/** Refuses, in a limited session (visitChanges), a step that would end the worker's part. */
export function refuseInLimitedSession(limited: boolean, what: string): void {
  if (limited) throw new WorkerError('LIMITED_SESSION', `${what} only from the browser where this participant started, or from the link the platform gave them`);
}

/** New workers a study has seen lately: from one address in the past hour, from anywhere in the past minute. */
export interface RecentWorkers {
  readonly fromAddress: number;
  /** The oldest of those, ISO 8601; null when none. */
  readonly oldestFromAddress: string | null;
  readonly lastMinute: number;
  readonly oldestLastMinute: string | null;
}

export const HOUR_MS = 60 * 60 * 1000;
export const MINUTE_MS = 60 * 1000;

/** Refuses a new worker beyond the study's admission limits, with when to try again. */
export function refuseNewWorker(study: StudyFile, recent: RecentWorkers, now: number): void {
  const { newWorkersPerAddressPerHour: perAddress, newWorkersPerMinute: perMinute } = study.admission;
  const retry = (oldest: string | null, window: number) => Math.max(1, Math.ceil(((oldest === null ? now : Date.parse(oldest)) + window - now) / 1000));
  if (perAddress !== null && recent.fromAddress >= perAddress) {
    const seconds = retry(recent.oldestFromAddress, HOUR_MS);
    throw new WorkerError('TOO_MANY_NEW_WORKERS', `too many new participants from this network joined this study in the past hour: try again in ${Math.ceil(seconds / 60)} min`, seconds);
  }
  if (recent.lastMinute >= perMinute) {
    const seconds = retry(recent.oldestLastMinute, MINUTE_MS);
    throw new WorkerError('TOO_MANY_NEW_WORKERS', `many participants are joining this study right now: try again in ${seconds} s`, seconds);
  }
}

/** A returning worker's new visit: its platform ids, and a new session's chance to play again. */
export function returnChanges(existing: WorkerRow, ids: ReturnType<typeof idColumns>, at: string): Changes {
  const changes: Changes = { ...definedOnly(ids), last_seen_at: at };
  const key = sessionKey(ids);
  // A new MTurk assignment (or Prolific submission) is a new session: who finished one may play another.
  if (existing.completion_outcome !== null && existing.completion_outcome !== 'screenedOut' && key !== '' && key !== existing.completion_session) {
    Object.assign(changes, { completion_outcome: null, completion_code: null, completion_at: null, completion_session: null });
  }
  return changes;
}

/** A new session token: returned to the worker once, kept only as its hash. */
export function newToken(): string {
  return randomBytes(TOKEN_BYTES).toString('base64url');
}

/** The code of an ending, unless the worker has one already (the first ending stands). */
export function completionChanges(study: StudyFile, row: WorkerRow, outcome: CompletionOutcome, at: string): Changes {
  if (row.completion_code !== null) return {};
  return { completion_outcome: outcome, completion_code: study.completionCodes[outcome], completion_at: at, completion_session: sessionKey(row) };
}

/** A follower whom the study's rule promotes: enough completed games as follower, with a high enough mean score. */
export function promotionChanges(study: StudyFile, row: WorkerRowWithGames, at: string): Changes {
  const rule = study.roles.promotion;
  if (rule === 'manual' || row.role !== 'follower' || row.blocked_at !== null) return {};
  const games = row.follower_games_completed;
  if (games < rule.afterGames || row.follower_points / games < rule.minMeanScore) return {};
  return { role: 'leader', promoted_at: at };
}

export function refuseBlocked(worker: WorkerRow): void {
  if (worker.blocked_at !== null) throw new WorkerError('BLOCKED', 'this worker is blocked from the study');
}

/** Blocked, declined, screened out or done: nothing more to record. */
export function refuseAtEnding(worker: WorkerRow): void {
  refuseBlocked(worker);
  if (worker.declined_at !== null) throw new WorkerError('DECLINED', 'consent was declined, which is final');
  if (worker.screened_out_at !== null) throw new WorkerError('WRONG_STEP', 'this worker was screened out by the quiz');
  if (worker.completion_code !== null) throw new WorkerError('WRONG_STEP', 'this worker has finished the study');
}

export function idColumns(ids: PlatformIds) {
  return {
    prolific_study_id: ids.prolificStudyId ?? null,
    prolific_session_id: ids.prolificSessionId ?? null,
    assignment_id: ids.assignmentId ?? null,
    hit_id: ids.hitId ?? null,
    turk_submit_to: ids.turkSubmitTo ?? null,
  };
}

export function definedOnly<T extends Record<string, unknown>>(values: T): Partial<T> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== null)) as Partial<T>;
}

export function emptyRow(studyId: string, participantId: string, platform: PlatformKind, role: WorkerRole, at: string): WorkerRow {
  return {
    study_id: studyId,
    participant_id: participantId,
    platform,
    prolific_study_id: null,
    prolific_session_id: null,
    assignment_id: null,
    hit_id: null,
    turk_submit_to: null,
    created_at: at,
    last_seen_at: at,
    consented_at: null,
    declined_at: null,
    rules_read_at: null,
    leader_tutorial_at: null,
    follower_tutorial_at: null,
    quiz_attempts: 0,
    quiz_last_score: null,
    quiz_passed_at: null,
    screened_out_at: null,
    role,
    promoted_at: null,
    blocked_at: null,
    block_reason: null,
    completion_outcome: null,
    completion_code: null,
    completion_at: null,
    completion_session: null,
    waiting_since: null,
    created_address: null,
  };
}

export interface WorkerGameRow {
  readonly game_id: string;
  readonly role: Role;
  readonly session_key: string;
  readonly started_at: string;
  readonly ended_at: string | null;
  readonly end_reason: EndReason | null;
  readonly score: number;
  readonly seconds: number;
  readonly left_game: number;
}

export function workerGame(row: WorkerGameRow): WorkerGame {
  return {
    gameId: row.game_id,
    role: row.role,
    startedAt: row.started_at,
    endedAt: row.ended_at,
    endReason: row.end_reason,
    score: row.score,
    seconds: Math.round(row.seconds * 10) / 10,
    left: row.left_game === 1,
  };
}

export function workerRecord(row: WorkerRowWithGames): WorkerRecord {
  const platformIds: PlatformIds = {
    ...(row.prolific_study_id !== null && { prolificStudyId: row.prolific_study_id }),
    ...(row.prolific_session_id !== null && { prolificSessionId: row.prolific_session_id }),
    ...(row.assignment_id !== null && { assignmentId: row.assignment_id }),
    ...(row.hit_id !== null && { hitId: row.hit_id }),
    ...(row.turk_submit_to !== null && { turkSubmitTo: row.turk_submit_to }),
  };
  return {
    studyId: row.study_id,
    participantId: row.participant_id,
    platform: row.platform,
    platformIds,
    createdAt: row.created_at,
    lastSeenAt: row.last_seen_at,
    consentedAt: row.consented_at,
    declinedAt: row.declined_at,
    rulesReadAt: row.rules_read_at,
    tutorialPassedAt: { leader: row.leader_tutorial_at, follower: row.follower_tutorial_at },
    quiz: { attempts: row.quiz_attempts, lastScore: row.quiz_last_score, passedAt: row.quiz_passed_at },
    screenedOutAt: row.screened_out_at,
    role: row.role,
    promotedAt: row.promoted_at,
    blocked: row.blocked_at === null ? null : { at: row.blocked_at, reason: row.block_reason },
    completion:
      row.completion_outcome === null || row.completion_code === null || row.completion_at === null
        ? null
        : { outcome: row.completion_outcome, code: row.completion_code, issuedAt: row.completion_at },
    waitingSince: row.waiting_since,
    games: {
      played: row.games_played,
      completed: row.games_completed,
      completedThisSession: row.games_completed_in_session,
      inProgress: row.games_open,
      points: row.points,
      seconds: Math.round(row.seconds * 10) / 10,
    },
  };
}
