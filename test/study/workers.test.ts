/**
 * The worker store: a study's participants by (study, participant id), the step each is at,
 * consent, the quiz marked on the server with its attempts, screening out, blocking, promotion,
 * and session tokens kept only as their hash.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SCHEMA_VERSION, SqliteWorkerStore, WORKERS_FILE } from '../../server/store/SqliteWorkerStore';
import { hashToken, SESSION_TTL_MS, WorkerError } from '../../server/store/workerChanges';
import { loadStudyFile } from '../../server/study/loadStudy';
import type { Study } from '../../shared/study/studyFile';
import { bonusFor } from '../../shared/study/bonus';
import { markQuiz, parseSessionBody, publicWorker, workerStep } from '../../shared/study/worker';
import { setPath, studyFolder, validStudy, writeStudy } from './fixtures';

let dir: string;
let store: SqliteWorkerStore;
let clock: number;
let study: Study;

const START = Date.parse('2026-03-01T10:00:00.000Z');
const PID = '5f0c1e2d3b4a59687766554a';
const ids = { participantId: PID, ids: { prolificStudyId: 'S1', prolificSessionId: 'SESS1' } };

function studyWith(changes: Record<string, unknown> = {}): Study {
  const data = validStudy();
  for (const [path, value] of Object.entries(changes)) setPath(data, path, value);
  const folder = studyFolder(join(dir, `study-${Math.random().toString(36).slice(2)}`));
  return loadStudyFile(writeStudy(folder, data));
}

/** A worker who has consented, read the rules and passed the follower's tutorial. */
function atQuiz(): void {
  store.startSession(study, ids);
  store.answerConsent(study.id, PID, true);
  store.readRules(study.id, PID);
  store.passTutorial(study.id, PID, 'follower');
}

function refusal(action: () => unknown): string {
  try {
    action();
  } catch (error) {
    if (error instanceof WorkerError) return error.code;
    throw error;
  }
  throw new Error('the action was not refused');
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cerealbar-workers-'));
  clock = START;
  store = SqliteWorkerStore.open(join(dir, 'data'), { now: () => clock });
  study = studyWith();
});

afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('sessions', () => {
  test('a first session creates the worker with the study\'s starting role; a later one finds it and records the new ids', () => {
    const first = store.startSession(study, ids);
    expect(first.worker).toMatchObject({
      studyId: 'pilot-1',
      participantId: PID,
      platform: 'prolific',
      platformIds: { prolificStudyId: 'S1', prolificSessionId: 'SESS1' },
      createdAt: '2026-03-01T10:00:00.000Z',
      role: 'follower',
      consentedAt: null,
      quiz: { attempts: 0, lastScore: null, passedAt: null },
      blocked: null,
      completion: null,
    });
    expect(workerStep(first.worker)).toBe('consent');
    store.answerConsent(study.id, PID, true);
    clock += 60_000;
    const again = store.startSession(study, { participantId: PID, ids: { prolificStudyId: 'S1', prolificSessionId: 'SESS2' } });
    expect(again.token).not.toBe(first.token);
    expect(again.worker.createdAt).toBe('2026-03-01T10:00:00.000Z');
    expect(again.worker.lastSeenAt).toBe('2026-03-01T10:01:00.000Z');
    expect(again.worker.platformIds.prolificSessionId).toBe('SESS2');
    // The returning worker resumes where they were.
    expect(workerStep(again.worker)).toBe('rules');
    expect(store.list(study.id)).toHaveLength(1);
  });

  test('a worker is keyed by study and participant id: the same id in another study is another worker', () => {
    const other = studyWith({ id: 'pilot-2' });
    store.startSession(study, ids);
    store.startSession(other, ids);
    store.answerConsent('pilot-2', PID, true);
    expect(store.get('pilot-1', PID)!.consentedAt).toBeNull();
    expect(store.get('pilot-2', PID)!.consentedAt).not.toBeNull();
  });

  test("'either' stays either; a leader study starts workers as leaders", () => {
    store.startSession(studyWith({ 'roles.newWorkersStartAs': 'either', 'roles.promotion': 'manual' }), ids);
    expect(store.get('pilot-1', PID)!.role).toBe('either');
    store.startSession(studyWith({ id: 'lead', 'roles.newWorkersStartAs': 'leader', 'roles.promotion': 'manual' }), ids);
    expect(store.get('lead', PID)!.role).toBe('leader');
  });

  test('a token is 256 random bits, stored only as its SHA-256, valid for its own study and until it expires', () => {
    const { token } = store.startSession(study, ids);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(store.workerForToken(study.id, token)!.participantId).toBe(PID);
    expect(store.workerForToken('pilot-2', token)).toBeNull();
    expect(store.workerForToken(study.id, `${token}x`)).toBeNull();
    store.close();
    const bytes = readFileSync(join(dir, 'data', WORKERS_FILE));
    expect(bytes.includes(Buffer.from(token))).toBe(false);
    const db = new Database(join(dir, 'data', WORKERS_FILE), { readonly: true });
    const hashes = db.prepare('SELECT token_hash FROM worker_sessions').pluck().all();
    db.close();
    expect(hashes).toEqual([hashToken(token)]);
    expect(hashToken(token)).toMatch(/^[0-9a-f]{64}$/);
    store = SqliteWorkerStore.open(join(dir, 'data'), { now: () => clock });
    clock += SESSION_TTL_MS - 1;
    expect(store.workerForToken(study.id, token)).not.toBeNull();
    clock += 1;
    expect(store.workerForToken(study.id, token)).toBeNull();
    // The expired session's hash goes when the next session starts.
    const { token: next } = store.startSession(study, ids);
    store.close();
    const left = new Database(join(dir, 'data', WORKERS_FILE), { readonly: true });
    expect(left.prepare('SELECT token_hash FROM worker_sessions').pluck().all()).toEqual([hashToken(next)]);
    left.close();
    store = SqliteWorkerStore.open(join(dir, 'data'), { now: () => clock });
  });

  test('the file carries its schema version; a read-only store reads it and a missing file is an error', () => {
    store.startSession(study, ids);
    const reader = SqliteWorkerStore.open(join(dir, 'data'), { readonly: true });
    expect(reader.list(study.id).map((w) => w.participantId)).toEqual([PID]);
    expect(() => reader.answerConsent(study.id, PID, true)).toThrow(/readonly/i);
    reader.close();
    expect(() => SqliteWorkerStore.open(join(dir, 'nothing'), { readonly: true })).toThrow(/does not exist/);
    const db = new Database(join(dir, 'data', WORKERS_FILE), { readonly: true });
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    db.close();
  });
});

describe('steps', () => {
  test('consent → rules → tutorial → quiz → play, each recorded with its time', () => {
    store.startSession(study, ids);
    const steps = [workerStep(store.get(study.id, PID)!)];
    clock += 1000;
    steps.push(workerStep(store.answerConsent(study.id, PID, true)));
    steps.push(workerStep(store.readRules(study.id, PID)));
    steps.push(workerStep(store.passTutorial(study.id, PID, 'follower')));
    const result = store.submitQuiz(study, PID, [0, 1, 1]);
    steps.push(workerStep(result.worker));
    expect(steps).toEqual(['consent', 'rules', 'tutorial', 'quiz', 'play']);
    const worker = store.get(study.id, PID)!;
    expect(worker.consentedAt).toBe('2026-03-01T10:00:01.000Z');
    expect(worker.tutorialPassedAt).toEqual({ leader: null, follower: '2026-03-01T10:00:01.000Z' });
    expect(worker.quiz).toEqual({ attempts: 1, lastScore: 3, passedAt: '2026-03-01T10:00:01.000Z' });
  });

  test('steps cannot be skipped, and nothing changes when one is refused', () => {
    store.startSession(study, ids);
    const before = store.get(study.id, PID);
    expect(refusal(() => store.readRules(study.id, PID))).toBe('WRONG_STEP');
    expect(refusal(() => store.passTutorial(study.id, PID, 'follower'))).toBe('WRONG_STEP');
    expect(refusal(() => store.submitQuiz(study, PID, [0, 1, 1]))).toBe('WRONG_STEP');
    store.answerConsent(study.id, PID, true);
    expect(refusal(() => store.passTutorial(study.id, PID, 'follower'))).toBe('WRONG_STEP');
    store.readRules(study.id, PID);
    expect(refusal(() => store.submitQuiz(study, PID, [0, 1, 1]))).toBe('WRONG_STEP');
    // A follower's tutorial is the follower's: the leader's is refused.
    expect(refusal(() => store.passTutorial(study.id, PID, 'leader'))).toBe('ROLE_MISMATCH');
    expect(store.get(study.id, PID)).toMatchObject({ ...before, consentedAt: expect.any(String), rulesReadAt: expect.any(String), tutorialPassedAt: { leader: null, follower: null } });
    expect(store.get(study.id, PID)!.quiz.attempts).toBe(0);
    expect(refusal(() => store.answerConsent(study.id, 'nobody', true))).toBe('NOT_FOUND');
  });

  test("a worker who may play either role passes both roles' tutorials", () => {
    study = studyWith({ 'roles.newWorkersStartAs': 'either', 'roles.promotion': 'manual' });
    store.startSession(study, ids);
    store.answerConsent(study.id, PID, true);
    store.readRules(study.id, PID);
    expect(workerStep(store.passTutorial(study.id, PID, 'leader'))).toBe('tutorial');
    expect(workerStep(store.passTutorial(study.id, PID, 'follower'))).toBe('quiz');
  });
});

describe('consent', () => {
  test('agreeing twice is the same as once; declining is final and idempotent', () => {
    store.startSession(study, ids);
    const agreed = store.answerConsent(study.id, PID, true);
    clock += 5000;
    expect(store.answerConsent(study.id, PID, true)).toEqual(agreed);
    expect(refusal(() => store.answerConsent(study.id, PID, false))).toBe('ALREADY_ANSWERED');

    store.startSession(study, { participantId: 'other', ids: {} });
    const declined = store.answerConsent(study.id, 'other', false);
    expect(workerStep(declined)).toBe('declined');
    clock += 5000;
    expect(store.answerConsent(study.id, 'other', false)).toEqual(declined);
    expect(refusal(() => store.answerConsent(study.id, 'other', true))).toBe('DECLINED');
    expect(refusal(() => store.readRules(study.id, 'other'))).toBe('DECLINED');
    expect(store.get(study.id, 'other')).toEqual(declined);
    // A declining worker gets no completion code: they return the study.
    expect(declined.completion).toBeNull();
  });
});

describe('the quiz', () => {
  test('is marked against the answers: the score, pass or fail, and which questions were wrong', () => {
    expect(markQuiz(study.quiz, [0, 1, 1])).toEqual({ score: 3, passed: true, wrong: [] });
    expect(markQuiz(study.quiz, [1, 1, 1])).toEqual({ score: 2, passed: true, wrong: [0] });
    expect(markQuiz(study.quiz, [1, 0, 1])).toEqual({ score: 1, passed: false, wrong: [0, 1] });
  });

  test('a failed attempt uses one up; failing the last screens the worker out with the screenedOut code', () => {
    atQuiz();
    const first = store.submitQuiz(study, PID, [1, 0, 1]);
    expect(first).toMatchObject({ passed: false, score: 1, wrong: [0, 1] });
    expect(first.worker.quiz).toEqual({ attempts: 1, lastScore: 1, passedAt: null });
    expect(publicWorker(study, first.worker).quiz.attemptsLeft).toBe(1);
    expect(workerStep(first.worker)).toBe('quiz');
    clock += 1000;
    const second = store.submitQuiz(study, PID, [1, 0, 0]);
    expect(second).toMatchObject({ passed: false, score: 0 });
    expect(workerStep(second.worker)).toBe('screenedOut');
    expect(second.worker.screenedOutAt).toBe('2026-03-01T10:00:01.000Z');
    expect(second.worker.completion).toEqual({ outcome: 'screenedOut', code: 'CSCREEN', issuedAt: '2026-03-01T10:00:01.000Z' });
    expect(publicWorker(study, second.worker).completion).toEqual({
      outcome: 'screenedOut',
      code: 'CSCREEN',
      url: 'https://app.prolific.com/submissions/complete?cc=CSCREEN',
      mturkSubmit: null,
    });
    // An extra attempt is refused and changes nothing.
    expect(refusal(() => store.submitQuiz(study, PID, [0, 1, 1]))).toBe('NO_ATTEMPTS_LEFT');
    expect(store.get(study.id, PID)).toEqual(second.worker);
  });

  test('a passed quiz cannot be taken again', () => {
    atQuiz();
    store.submitQuiz(study, PID, [0, 1, 0]);
    const passed = store.get(study.id, PID)!;
    expect(refusal(() => store.submitQuiz(study, PID, [0, 1, 1]))).toBe('QUIZ_PASSED');
    expect(store.get(study.id, PID)).toEqual(passed);
  });

  test('two store connections (two server processes) cannot use the same last attempt twice', () => {
    study = studyWith({ 'quiz.attempts': 1 });
    atQuiz();
    const other = SqliteWorkerStore.open(join(dir, 'data'), { now: () => clock });
    store.submitQuiz(study, PID, [1, 0, 0]);
    expect(refusal(() => other.submitQuiz(study, PID, [0, 1, 1]))).toBe('NO_ATTEMPTS_LEFT');
    other.close();
    expect(store.get(study.id, PID)!.quiz.attempts).toBe(1);
  });
});

describe('block and promote', () => {
  test('a blocked worker can do nothing more; blocking again keeps the first time and reason', () => {
    store.startSession(study, ids);
    const blocked = store.block(study.id, PID, 'spoke of pay in the chat');
    expect(blocked.blocked).toEqual({ at: '2026-03-01T10:00:00.000Z', reason: 'spoke of pay in the chat' });
    expect(workerStep(blocked)).toBe('blocked');
    clock += 1000;
    expect(store.block(study.id, PID, 'again')).toEqual(blocked);
    expect(refusal(() => store.answerConsent(study.id, PID, true))).toBe('BLOCKED');
    expect(store.get(study.id, PID)).toEqual(blocked);
    // A new session still finds the worker, blocked.
    expect(workerStep(store.startSession(study, ids).worker)).toBe('blocked');
    expect(refusal(() => store.block(study.id, 'nobody', null))).toBe('NOT_FOUND');
  });

  test("a promoted follower becomes a leader, who passes the leader's tutorial before playing again", () => {
    atQuiz();
    store.submitQuiz(study, PID, [0, 1, 1]);
    clock += 1000;
    const promoted = store.promote(study.id, PID);
    expect(promoted).toMatchObject({ role: 'leader', promotedAt: '2026-03-01T10:00:01.000Z' });
    expect(workerStep(promoted)).toBe('tutorial');
    expect(publicWorker(study, promoted).tutorialsLeft).toEqual(['leader']);
    expect(workerStep(store.passTutorial(study.id, PID, 'leader'))).toBe('play');
    clock += 1000;
    expect(store.promote(study.id, PID).promotedAt).toBe('2026-03-01T10:00:01.000Z');
  });

  test('a completion code is given once: the first ending stands, and a worker who has one is done', () => {
    atQuiz();
    store.submitQuiz(study, PID, [0, 1, 1]);
    store.recordGameStart(study.id, PID, 'g1', 'follower');
    const done = store.recordGameEnd(study, PID, 'g1', { reason: 'abandoned', score: 0, left: false });
    expect(done.completion).toMatchObject({ outcome: 'partnerLeft', code: 'CLEFT' });
    expect(workerStep(done)).toBe('done');
    store.recordGameStart(study.id, PID, 'g2', 'follower');
    expect(store.recordGameEnd(study, PID, 'g2', { reason: 'turns-exhausted', score: 3, left: false }).completion).toEqual(done.completion);
  });
});

/** A worker at the play step (the quiz passed). */
function atPlay(s: Study = study): void {
  store.startSession(s, ids);
  store.answerConsent(s.id, PID, true);
  store.readRules(s.id, PID);
  store.passTutorial(s.id, PID, 'follower');
  store.submitQuiz(s, PID, [0, 1, 1]);
}

describe('games', () => {
  test('P-102: gamesPerSession games played to their end give the completed code; the sums count every ended game', () => {
    study = studyWith({ gamesPerSession: 2, 'roles.promotion': 'manual' });
    atPlay();
    store.startWaiting(study.id, PID);
    expect(store.get(study.id, PID)!.waitingSince).toBe('2026-03-01T10:00:00.000Z');
    store.recordGameStart(study.id, PID, 'g1', 'follower');
    expect(store.get(study.id, PID)).toMatchObject({ waitingSince: null, games: { inProgress: 1, played: 0 } });
    clock += 90_000;
    store.recordGameEnd(study, PID, 'g1', { reason: 'turns-exhausted', score: 4, left: false });
    expect(workerStep(store.get(study.id, PID)!)).toBe('play');
    store.recordGameStart(study.id, PID, 'g2', 'follower');
    clock += 30_000;
    store.recordGameEnd(study, PID, 'g2', { reason: 'server-shutdown', score: 1, left: false });
    expect(workerStep(store.get(study.id, PID)!)).toBe('play');
    store.recordGameStart(study.id, PID, 'g3', 'follower');
    store.recordGameEnd(study, PID, 'g3', { reason: 'turns-exhausted', score: 2, left: false });
    const worker = store.get(study.id, PID)!;
    expect(worker.completion).toMatchObject({ outcome: 'completed', code: 'CDONE1' });
    expect(worker.games).toEqual({ played: 3, completed: 2, completedThisSession: 2, inProgress: 0, points: 7, seconds: 120 });
    expect(store.games(study.id, PID).map((game) => [game.gameId, game.endReason, game.score, game.seconds])).toEqual([
      ['g1', 'turns-exhausted', 4, 90],
      ['g2', 'server-shutdown', 1, 30],
      ['g3', 'turns-exhausted', 2, 0],
    ]);
    // Ending a game twice changes nothing.
    store.recordGameEnd(study, PID, 'g3', { reason: 'abandoned', score: 9, left: false });
    expect(store.get(study.id, PID)!.games.points).toBe(7);
  });

  test('P-102: the promotion rule needs enough completed games as follower and a high enough mean score', () => {
    study = studyWith({ 'roles.promotion': { afterGames: 2, minMeanScore: 3 }, gamesPerSession: 5 });
    atPlay();
    const game = (id: string, score: number) => {
      store.recordGameStart(study.id, PID, id, 'follower');
      store.recordGameEnd(study, PID, id, { reason: 'turns-exhausted', score, left: false });
      return store.get(study.id, PID)!;
    };
    expect(game('g1', 9).role).toBe('follower');
    expect(game('g2', 2).role).toBe('leader'); // mean 5.5
    const other = studyWith({ id: 'other', 'roles.promotion': { afterGames: 2, minMeanScore: 3 }, gamesPerSession: 5 });
    atPlay(other);
    store.recordGameStart(other.id, PID, 'h1', 'follower');
    store.recordGameEnd(other, PID, 'h1', { reason: 'turns-exhausted', score: 3, left: false });
    store.recordGameStart(other.id, PID, 'h2', 'follower');
    store.recordGameEnd(other, PID, 'h2', { reason: 'turns-exhausted', score: 2, left: false });
    expect(store.get(other.id, PID)).toMatchObject({ role: 'follower', promotedAt: null }); // mean 2.5
  });

  test('P-103: noPartner is refused before the wait is over, then given once', () => {
    study = studyWith({ 'time.waitForPartnerSeconds': 30 });
    atPlay();
    expect(refusal(() => store.claimNoPartner(study, PID))).toBe('WRONG_STEP');
    store.startWaiting(study.id, PID);
    clock += 20_000;
    expect(refusal(() => store.claimNoPartner(study, PID))).toBe('TOO_EARLY');
    clock += 8_000; // within the tolerance of the page's clock
    expect(store.claimNoPartner(study, PID).completion).toMatchObject({ outcome: 'noPartner', code: 'CNOPART' });
    expect(refusal(() => store.startWaiting(study.id, PID))).toBe('WRONG_STEP');
  });
});

describe('bonus', () => {
  test('P-102: bonusPerPoint times the points, rounded to the cent, at most maxBonus', () => {
    const pay = { base: 1, bonusPerPoint: 0.1, currency: 'GBP' };
    expect(bonusFor(pay, 0)).toBe(0);
    expect(bonusFor(pay, 7)).toBe(0.7);
    expect(bonusFor({ ...pay, bonusPerPoint: 0.005 }, 3)).toBe(0.02); // 1.5 cents, half up
    expect(bonusFor({ ...pay, bonusPerPoint: 0.07 }, 3)).toBe(0.21);
    expect(bonusFor({ ...pay, maxBonus: 0.5 }, 7)).toBe(0.5);
  });
});

describe('session bodies', () => {
  test('each platform sends its own ids; the first bad field is named', () => {
    expect(parseSessionBody(study, { PROLIFIC_PID: PID, STUDY_ID: 'S', SESSION_ID: 'X' })).toEqual({ ok: true, start: { participantId: PID, ids: { prolificStudyId: 'S', prolificSessionId: 'X' } } });
    expect(parseSessionBody(study, { PROLIFIC_PID: PID, STUDY_ID: 'S' })).toMatchObject({ ok: false, code: 'BAD_BODY', field: 'SESSION_ID', message: 'SESSION_ID is missing' });
    expect(parseSessionBody(study, { PROLIFIC_PID: 'a b', STUDY_ID: 'S', SESSION_ID: 'X' })).toMatchObject({ ok: false, field: 'PROLIFIC_PID' });
    expect(parseSessionBody(study, { PROLIFIC_PID: PID, STUDY_ID: 'S', SESSION_ID: 'X', extra: 1 })).toMatchObject({ ok: false, field: 'extra', message: 'unknown field extra' });

    const mturk = studyWith({ platform: { kind: 'mturk' }, 'pay.currency': 'USD' });
    const hit = { workerId: 'A1B2C3', assignmentId: 'ASG1', hitId: 'HIT1', turkSubmitTo: 'https://workersandbox.mturk.com' };
    expect(parseSessionBody(mturk, hit)).toMatchObject({ ok: true, start: { participantId: 'A1B2C3', ids: { assignmentId: 'ASG1', hitId: 'HIT1' } } });
    expect(parseSessionBody(mturk, { ...hit, assignmentId: 'ASSIGNMENT_ID_NOT_AVAILABLE' })).toMatchObject({ ok: false, code: 'MTURK_PREVIEW' });
    expect(parseSessionBody(mturk, { ...hit, turkSubmitTo: 'https://evil.example' })).toMatchObject({ ok: false, field: 'turkSubmitTo' });

    const lab = studyWith({ platform: { kind: 'lab', participantIdPattern: 'P[0-9]{3}' } });
    expect(parseSessionBody(lab, { participantId: ' P012 ' })).toEqual({ ok: true, start: { participantId: 'P012', ids: {} } });
    expect(parseSessionBody(lab, { participantId: 'P0123' })).toMatchObject({ ok: false, field: 'participantId', message: expect.stringMatching(/does not have the form/) });
  });
});
