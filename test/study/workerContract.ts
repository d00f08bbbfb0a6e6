/**
 * What every kind of worker store does, through the WorkerStore interface: a study's participants
 * by (study, participant id), the step each is at, consent, the quiz marked with its attempts,
 * screening out, blocking, promotion, games and their endings. The same tests run on
 * SqliteWorkerStore (test/study/workers.test.ts) and PgWorkerStore (test/scale/pgStore.test.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WorkerStore } from '../../server/store/types';
import { WorkerError } from '../../server/store/workerChanges';
import { loadStudyFile } from '../../server/study/loadStudy';
import type { Study } from '../../shared/study/studyFile';
import { publicWorker, workerStep } from '../../shared/study/worker';
import { setPath, studyFolder, validStudy, writeStudy } from './fixtures';

export const START = Date.parse('2026-03-01T10:00:00.000Z');
export const PID = '5f0c1e2d3b4a59687766554a';
export const ids = { participantId: PID, ids: { prolificStudyId: 'S1', prolificSessionId: 'SESS1' } };

/** Where worker stores keep their records (a data directory, a database). */
export interface WorkerPlace {
  /** A store on the place, as a server process opens it, with the clock given. */
  open(now: () => number): Promise<WorkerStore>;
  remove(): Promise<void>;
}

/** The study file of validStudy() with `changes`, in a folder under `dir`. */
export function studyIn(dir: string, changes: Record<string, unknown> = {}): Study {
  const data = validStudy();
  for (const [path, value] of Object.entries(changes)) setPath(data, path, value);
  const folder = studyFolder(join(dir, `study-${Math.random().toString(36).slice(2)}`));
  return loadStudyFile(writeStudy(folder, data));
}

/** The WorkerError an action is refused with (it fails the test if it is not refused). */
async function thrown(action: () => unknown): Promise<WorkerError> {
  try {
    await action();
  } catch (error) {
    if (error instanceof WorkerError) return error;
    throw error;
  }
  throw new Error('the action was not refused');
}

/** The code of the WorkerError an action is refused with (it fails the test if it is not refused). */
async function refusal(action: () => unknown): Promise<string> {
  return (await thrown(action)).code;
}

export function describeWorkerStore(kind: string, newPlace: () => Promise<WorkerPlace>): void {
  describe(kind, () => {
    let dir: string;
    let place: WorkerPlace;
    let store: WorkerStore;
    let clock: number;
    let study: Study;
    const studyWith = (changes: Record<string, unknown> = {}) => studyIn(dir, changes);

    beforeEach(async () => {
      dir = mkdtempSync(join(tmpdir(), 'cerealbar-worker-contract-'));
      clock = START;
      place = await newPlace();
      store = await place.open(() => clock);
      study = studyWith();
    });

    afterEach(async () => {
      await store.close();
      await place.remove();
      rmSync(dir, { recursive: true, force: true });
    });

    /** A worker (PID unless another is named) who has consented, read the rules and passed the follower's tutorial. */
    async function atQuiz(s: Study = study, pid = PID): Promise<void> {
      await store.startSession(s, pid === PID ? ids : { participantId: pid, ids: { prolificStudyId: 'S1', prolificSessionId: `SESS-${pid}` } });
      await store.answerConsent(s.id, pid, true);
      await store.readRules(s.id, pid);
      await store.passTutorial(s.id, pid, 'follower');
    }

    /** A worker at the play step (the quiz passed). */
    async function atPlay(s: Study = study, pid = PID): Promise<void> {
      await atQuiz(s, pid);
      await store.submitQuiz(s, pid, [0, 1, 1]);
    }

    test('a token is 256 random bits, valid for its own study and until it expires', async () => {
      const { token } = await store.startSession(study, ids);
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect((await store.sessionForToken(study.id, token))!.worker.participantId).toBe(PID);
      expect(await store.sessionForToken('pilot-2', token)).toBeNull();
      expect(await store.sessionForToken(study.id, `${token}x`)).toBeNull();
      clock += 24 * 60 * 60 * 1000 - 1;
      expect(await store.sessionForToken(study.id, token)).not.toBeNull();
      clock += 1;
      expect(await store.sessionForToken(study.id, token)).toBeNull();
    });

    describe('sessions', () => {
      test("a first session creates the worker with the study's starting role; a later one finds it and records the new ids", async () => {
        const first = await store.startSession(study, ids);
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
        await store.answerConsent(study.id, PID, true);
        clock += 60_000;
        // Another submission, from the page that kept the first session's token.
        const again = await store.startSession(study, { participantId: PID, ids: { prolificStudyId: 'S1', prolificSessionId: 'SESS2' } }, { token: first.token });
        expect(again.token).not.toBe(first.token);
        expect(again.worker.createdAt).toBe('2026-03-01T10:00:00.000Z');
        expect(again.worker.lastSeenAt).toBe('2026-03-01T10:01:00.000Z');
        expect(again.worker.platformIds.prolificSessionId).toBe('SESS2');
        // The returning worker resumes where they were.
        expect(workerStep(again.worker)).toBe('rules');
        expect(await store.list(study.id)).toHaveLength(1);
    });

      test('a worker is keyed by study and participant id: the same id in another study is another worker', async () => {
        const other = studyWith({ id: 'pilot-2' });
        await store.startSession(study, ids);
        await store.startSession(other, ids);
        await store.answerConsent('pilot-2', PID, true);
        expect((await store.get('pilot-1', PID))!.consentedAt).toBeNull();
        expect((await store.get('pilot-2', PID))!.consentedAt).not.toBeNull();
    });

      test("'either' stays either; a leader study starts workers as leaders", async () => {
        await store.startSession(studyWith({ 'roles.newWorkersStartAs': 'either', 'roles.promotion': 'manual' }), ids);
        expect((await store.get('pilot-1', PID))!.role).toBe('either');
        await store.startSession(studyWith({ id: 'lead', 'roles.newWorkersStartAs': 'leader', 'roles.promotion': 'manual' }), ids);
        expect((await store.get('lead', PID))!.role).toBe('leader');
    });
    });

    describe('P-132: returning visits', () => {
      const mturk = (assignmentId: string) => ({ participantId: 'A1WORKER', ids: { assignmentId, hitId: 'H1', turkSubmitTo: 'https://www.mturk.com' } });

      test("P-132: the platform's own link again (the same SESSION_ID) resumes the session; the ids it names change nothing", async () => {
        const first = await store.startSession(study, ids);
        await store.answerConsent(study.id, PID, true);
        clock += 1000;
        const again = await store.startSession(study, { participantId: PID, ids: { prolificStudyId: 'OTHER', prolificSessionId: 'SESS1' } });
        expect(again.limited).toBe(false);
        expect(again.worker.platformIds).toEqual(first.worker.platformIds);
        expect(workerStep(again.worker)).toBe('rules');
        // Both tokens work: two browsers of one worker.
        expect((await store.sessionForToken(study.id, first.token))!.worker.participantId).toBe(PID);
        expect((await store.sessionForToken(study.id, again.token))!.limited).toBe(false);
      });

      test('P-132: a participant id with a made-up SESSION_ID is refused, and the worker stays as it was', async () => {
        await store.startSession(study, ids);
        await store.answerConsent(study.id, PID, true);
        const before = await store.get(study.id, PID);
        clock += 1000;
        const stranger = { participantId: PID, ids: { prolificStudyId: 'S1', prolificSessionId: 'MADEUP' } };
        expect(await refusal(() => store.startSession(study, stranger))).toBe('SESSION_ELSEWHERE');
        // A token of another worker vouches for nothing.
        const other = await store.startSession(study, { participantId: 'someone-else', ids: { prolificStudyId: 'S1', prolificSessionId: 'SESS9' } });
        expect(await refusal(() => store.startSession(study, stranger, { token: other.token }))).toBe('SESSION_ELSEWHERE');
        expect(await store.get(study.id, PID)).toEqual(before);
      });

      test('P-132: a recorded completion is not undone by a made-up submission', async () => {
        study = studyWith({ 'time.waitForPartnerSeconds': 30 });
        await atPlay();
        await store.startWaiting(study.id, PID);
        clock += 30_000;
        const done = await store.claimNoPartner(study, PID);
        expect(await refusal(() => store.startSession(study, { participantId: PID, ids: { prolificStudyId: 'S1', prolificSessionId: 'SESS2' } }))).toBe('SESSION_ELSEWHERE');
        expect((await store.get(study.id, PID))!.completion).toEqual(done.completion);
      });

      test("P-132: on MTurk a new assignment is a new session from the page that kept the worker's token, even expired; a made-up one never reaches the record", async () => {
        study = studyWith({ platform: { kind: 'mturk' }, 'pay.currency': 'USD' });
        const first = await store.startSession(study, mturk('AS1'));
        expect(await refusal(() => store.startSession(study, mturk('AS2')))).toBe('SESSION_ELSEWHERE');
        await store.answerConsent(study.id, 'A1WORKER', true);
        await store.readRules(study.id, 'A1WORKER');
        await store.passTutorial(study.id, 'A1WORKER', 'follower');
        await store.submitQuiz(study, 'A1WORKER', [0, 1, 1]);
        await store.recordGameStart(study.id, 'A1WORKER', 'g1', 'follower');
        await store.recordGameEnd(study, 'A1WORKER', 'g1', { reason: 'turns-exhausted', score: 3, left: false });
        const done = (await store.get(study.id, 'A1WORKER'))!;
        expect(done.completion?.outcome).toBe('completed');
        // A stranger with the worker id and a made-up assignment, after the completion too: nothing changes.
        expect(await refusal(() => store.startSession(study, mturk('MADEUP')))).toBe('SESSION_ELSEWHERE');
        expect(await store.get(study.id, 'A1WORKER')).toEqual(done);
        // Two days later, the page that kept the first token takes a new HIT: a new session at the play step.
        clock += 2 * 24 * 60 * 60 * 1000;
        const second = await store.startSession(study, mturk('AS2'), { token: first.token });
        expect(second.limited).toBe(false);
        expect(second.worker).toMatchObject({ completion: null, platformIds: { assignmentId: 'AS2' } });
        expect(workerStep(second.worker)).toBe('play');
        // The first assignment's link resumes nothing of another's: it is not the worker's session now.
        expect(await refusal(() => store.startSession(study, mturk('AS1')))).toBe('SESSION_ELSEWHERE');
      });

      test("P-132: a lab's typed id again starts a limited session, whose token vouches for nothing; strangers' sessions never push out the participant's own", async () => {
        study = studyWith({ platform: { kind: 'lab' } });
        const lab = { participantId: 'P007', ids: {} };
        const first = await store.startSession(study, lab);
        expect(first.limited).toBe(false);
        const limited: string[] = [];
        for (let i = 0; i < 11; i++) {
          clock += 1;
          const again = await store.startSession(study, lab, { token: limited[limited.length - 1] });
          expect(again.limited).toBe(true);
          limited.push(again.token);
        }
        expect((await store.sessionForToken(study.id, first.token))!.limited).toBe(false);
        expect(await store.sessionForToken(study.id, limited[0])).toBeNull();
        for (const token of limited.slice(1)) expect((await store.sessionForToken(study.id, token))!.limited).toBe(true);
        // The participant's own page vouches: its new session is not limited.
        expect((await store.startSession(study, lab, { token: first.token })).limited).toBe(false);
      });

      test('P-133: a limited session cannot decline consent or use the last attempt at the quiz; nothing changes', async () => {
        study = studyWith({ platform: { kind: 'lab' } });
        const lab = { participantId: 'P007', ids: {} };
        await store.startSession(study, lab);
        const { limited } = await store.startSession(study, lab);
        expect(await refusal(() => store.answerConsent(study.id, 'P007', false, limited))).toBe('LIMITED_SESSION');
        expect((await store.get(study.id, 'P007'))!.declinedAt).toBeNull();
        await store.answerConsent(study.id, 'P007', true, limited);
        await store.readRules(study.id, 'P007');
        await store.passTutorial(study.id, 'P007', 'follower');
        expect((await store.submitQuiz(study, 'P007', [1, 0, 0], limited)).passed).toBe(false);
        const before = await store.get(study.id, 'P007');
        expect(await refusal(() => store.submitQuiz(study, 'P007', [1, 0, 0], limited))).toBe('LIMITED_SESSION');
        expect(await store.get(study.id, 'P007')).toEqual(before);
        // The first session's page may.
        expect(workerStep((await store.submitQuiz(study, 'P007', [1, 0, 0])).worker)).toBe('screenedOut');
      });

      test('P-134: new workers beyond the per-address and per-minute limits are refused with when to try again; none is made', async () => {
        study = studyWith({ admission: { newWorkersPerAddressPerHour: 2, newWorkersPerMinute: 3 } });
        const session = (n: number) => ({ participantId: `W${n}`, ids: { prolificStudyId: 'S1', prolificSessionId: `SE${n}` } });
        await store.startSession(study, session(1), { addressTag: 'home' });
        clock += 10_000;
        await store.startSession(study, session(2), { addressTag: 'home' });
        expect(await thrown(() => store.startSession(study, session(3), { addressTag: 'home' }))).toMatchObject({ code: 'TOO_MANY_NEW_WORKERS', retryAfterSeconds: 3590 });
        // Returning workers are not new.
        await store.startSession(study, session(1), { addressTag: 'home' });
        await store.startSession(study, session(3), { addressTag: 'office' });
        expect(await thrown(() => store.startSession(study, session(4), { addressTag: 'cafe' }))).toMatchObject({ code: 'TOO_MANY_NEW_WORKERS', retryAfterSeconds: 50 });
        expect((await store.list(study.id)).map((worker) => worker.participantId)).toEqual(['W1', 'W2', 'W3']);
        clock += 60_000;
        await store.startSession(study, session(4), { addressTag: 'cafe' });
        clock += 3600_000;
        await store.startSession(study, session(5), { addressTag: 'home' });
        expect(await store.list(study.id)).toHaveLength(5);
      });
    });

    describe('steps', () => {
      test('consent → rules → tutorial → quiz → play, each recorded with its time', async () => {
        await store.startSession(study, ids);
        const steps = [workerStep((await store.get(study.id, PID))!)];
        clock += 1000;
        steps.push(workerStep(await store.answerConsent(study.id, PID, true)));
        steps.push(workerStep(await store.readRules(study.id, PID)));
        steps.push(workerStep(await store.passTutorial(study.id, PID, 'follower')));
        const result = await store.submitQuiz(study, PID, [0, 1, 1]);
        steps.push(workerStep(result.worker));
        expect(steps).toEqual(['consent', 'rules', 'tutorial', 'quiz', 'play']);
        const worker = (await store.get(study.id, PID))!;
        expect(worker.consentedAt).toBe('2026-03-01T10:00:01.000Z');
        expect(worker.tutorialPassedAt).toEqual({ leader: null, follower: '2026-03-01T10:00:01.000Z' });
        expect(worker.quiz).toEqual({ attempts: 1, lastScore: 3, passedAt: '2026-03-01T10:00:01.000Z' });
    });

      test('steps cannot be skipped, and nothing changes when one is refused', async () => {
        await store.startSession(study, ids);
        const before = await store.get(study.id, PID);
        expect(await refusal(() => store.readRules(study.id, PID))).toBe('WRONG_STEP');
        expect(await refusal(() => store.passTutorial(study.id, PID, 'follower'))).toBe('WRONG_STEP');
        expect(await refusal(() => store.submitQuiz(study, PID, [0, 1, 1]))).toBe('WRONG_STEP');
        await store.answerConsent(study.id, PID, true);
        expect(await refusal(() => store.passTutorial(study.id, PID, 'follower'))).toBe('WRONG_STEP');
        await store.readRules(study.id, PID);
        expect(await refusal(() => store.submitQuiz(study, PID, [0, 1, 1]))).toBe('WRONG_STEP');
        // A follower's tutorial is the follower's: the leader's is refused.
        expect(await refusal(() => store.passTutorial(study.id, PID, 'leader'))).toBe('ROLE_MISMATCH');
        expect(await store.get(study.id, PID)).toMatchObject({ ...before, consentedAt: expect.any(String), rulesReadAt: expect.any(String), tutorialPassedAt: { leader: null, follower: null } });
        expect((await store.get(study.id, PID))!.quiz.attempts).toBe(0);
        expect(await refusal(() => store.answerConsent(study.id, 'nobody', true))).toBe('NOT_FOUND');
    });

      test("a worker who may play either role passes both roles' tutorials", async () => {
        study = studyWith({ 'roles.newWorkersStartAs': 'either', 'roles.promotion': 'manual' });
        await store.startSession(study, ids);
        await store.answerConsent(study.id, PID, true);
        await store.readRules(study.id, PID);
        expect(workerStep(await store.passTutorial(study.id, PID, 'leader'))).toBe('tutorial');
        expect(workerStep(await store.passTutorial(study.id, PID, 'follower'))).toBe('quiz');
    });
    });

    describe('consent', () => {
      test('agreeing twice is the same as once; declining is final and idempotent', async () => {
        await store.startSession(study, ids);
        const agreed = await store.answerConsent(study.id, PID, true);
        clock += 5000;
        expect(await store.answerConsent(study.id, PID, true)).toEqual(agreed);
        expect(await refusal(() => store.answerConsent(study.id, PID, false))).toBe('ALREADY_ANSWERED');

        await store.startSession(study, { participantId: 'other', ids: {} });
        const declined = await store.answerConsent(study.id, 'other', false);
        expect(workerStep(declined)).toBe('declined');
        clock += 5000;
        expect(await store.answerConsent(study.id, 'other', false)).toEqual(declined);
        expect(await refusal(() => store.answerConsent(study.id, 'other', true))).toBe('DECLINED');
        expect(await refusal(() => store.readRules(study.id, 'other'))).toBe('DECLINED');
        expect(await store.get(study.id, 'other')).toEqual(declined);
        // A declining worker gets no completion code: they return the study.
        expect(declined.completion).toBeNull();
    });
    });

    describe('the quiz', () => {
      test('a failed attempt uses one up; failing the last screens the worker out with the screenedOut code', async () => {
        await atQuiz();
        const first = await store.submitQuiz(study, PID, [1, 0, 1]);
        expect(first).toMatchObject({ passed: false, score: 1, wrong: [0, 1] });
        expect(first.worker.quiz).toEqual({ attempts: 1, lastScore: 1, passedAt: null });
        expect(publicWorker(study, first.worker).quiz.attemptsLeft).toBe(1);
        expect(workerStep(first.worker)).toBe('quiz');
        clock += 1000;
        const second = await store.submitQuiz(study, PID, [1, 0, 0]);
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
        expect(await refusal(() => store.submitQuiz(study, PID, [0, 1, 1]))).toBe('NO_ATTEMPTS_LEFT');
        expect(await store.get(study.id, PID)).toEqual(second.worker);
    });

      test('a passed quiz cannot be taken again', async () => {
        await atQuiz();
        await store.submitQuiz(study, PID, [0, 1, 0]);
        const passed = (await store.get(study.id, PID))!;
        expect(await refusal(() => store.submitQuiz(study, PID, [0, 1, 1]))).toBe('QUIZ_PASSED');
        expect(await store.get(study.id, PID)).toEqual(passed);
    });

      test('two store connections (two server processes) cannot use the same last attempt twice', async () => {
        study = studyWith({ 'quiz.attempts': 1 });
        await atQuiz();
        const other = await place.open(() => clock);
        await store.submitQuiz(study, PID, [1, 0, 0]);
        expect(await refusal(() => other.submitQuiz(study, PID, [0, 1, 1]))).toBe('NO_ATTEMPTS_LEFT');
        await other.close();
        expect((await store.get(study.id, PID))!.quiz.attempts).toBe(1);
    });
    });

    describe('block and promote', () => {
      test('a blocked worker can do nothing more; blocking again keeps the first time and reason', async () => {
        await store.startSession(study, ids);
        const blocked = await store.block(study.id, PID, 'spoke of pay in the chat');
        expect(blocked.blocked).toEqual({ at: '2026-03-01T10:00:00.000Z', reason: 'spoke of pay in the chat' });
        expect(workerStep(blocked)).toBe('blocked');
        clock += 1000;
        expect(await store.block(study.id, PID, 'again')).toEqual(blocked);
        expect(await refusal(() => store.answerConsent(study.id, PID, true))).toBe('BLOCKED');
        expect(await store.get(study.id, PID)).toEqual(blocked);
        // A new session still finds the worker, blocked.
        expect(workerStep((await store.startSession(study, ids)).worker)).toBe('blocked');
        expect(await refusal(() => store.block(study.id, 'nobody', null))).toBe('NOT_FOUND');
    });

      test("a promoted follower becomes a leader, who passes the leader's tutorial before playing again", async () => {
        await atQuiz();
        await store.submitQuiz(study, PID, [0, 1, 1]);
        expect((await store.startWaiting(study.id, PID)).waitingSince).not.toBeNull();
        clock += 1000;
        const promoted = await store.promote(study.id, PID);
        // Sent to the leader's tutorial, it waits for a partner no more.
        expect(promoted).toMatchObject({ role: 'leader', promotedAt: '2026-03-01T10:00:01.000Z', waitingSince: null });
        expect(workerStep(promoted)).toBe('tutorial');
        expect(publicWorker(study, promoted).tutorialsLeft).toEqual(['leader']);
        expect(workerStep(await store.passTutorial(study.id, PID, 'leader'))).toBe('play');
        clock += 1000;
        expect((await store.promote(study.id, PID)).promotedAt).toBe('2026-03-01T10:00:01.000Z');
    });

      test('a completion code is given once: the first ending stands, and a worker who has one is done', async () => {
        await atQuiz();
        await store.submitQuiz(study, PID, [0, 1, 1]);
        await store.recordGameStart(study.id, PID, 'g1', 'follower');
        const done = await store.recordGameEnd(study, PID, 'g1', { reason: 'abandoned', score: 0, left: false });
        expect(done.completion).toMatchObject({ outcome: 'partnerLeft', code: 'CLEFT' });
        expect(workerStep(done)).toBe('done');
        await store.recordGameStart(study.id, PID, 'g2', 'follower');
        expect((await store.recordGameEnd(study, PID, 'g2', { reason: 'turns-exhausted', score: 3, left: false })).completion).toEqual(done.completion);
    });
    });

    describe('games', () => {
      test('P-102: gamesPerSession games played to their end give the completed code; the sums count every ended game', async () => {
        study = studyWith({ gamesPerSession: 2, 'roles.promotion': 'manual' });
        await atPlay();
        await store.startWaiting(study.id, PID);
        expect((await store.get(study.id, PID))!.waitingSince).toBe('2026-03-01T10:00:00.000Z');
        await store.recordGameStart(study.id, PID, 'g1', 'follower');
        expect(await store.get(study.id, PID)).toMatchObject({ waitingSince: null, games: { inProgress: 1, played: 0 } });
        clock += 90_000;
        await store.recordGameEnd(study, PID, 'g1', { reason: 'turns-exhausted', score: 4, left: false });
        expect(workerStep((await store.get(study.id, PID))!)).toBe('play');
        await store.recordGameStart(study.id, PID, 'g2', 'follower');
        clock += 30_000;
        await store.recordGameEnd(study, PID, 'g2', { reason: 'server-shutdown', score: 1, left: false });
        expect(workerStep((await store.get(study.id, PID))!)).toBe('play');
        await store.recordGameStart(study.id, PID, 'g3', 'follower');
        await store.recordGameEnd(study, PID, 'g3', { reason: 'turns-exhausted', score: 2, left: false });
        const worker = (await store.get(study.id, PID))!;
        expect(worker.completion).toMatchObject({ outcome: 'completed', code: 'CDONE1' });
        expect(worker.games).toEqual({ played: 3, completed: 2, completedThisSession: 2, inProgress: 0, points: 7, seconds: 120 });
        expect((await store.games(study.id, PID)).map((game) => [game.gameId, game.endReason, game.score, game.seconds])).toEqual([
          ['g1', 'turns-exhausted', 4, 90],
          ['g2', 'server-shutdown', 1, 30],
          ['g3', 'turns-exhausted', 2, 0],
        ]);
        // Ending a game twice changes nothing.
        await store.recordGameEnd(study, PID, 'g3', { reason: 'abandoned', score: 9, left: false });
        expect((await store.get(study.id, PID))!.games.points).toBe(7);
        // But a game recovery closed as interrupted, whose stalled machine took it back, ends as it really did.
        await store.recordGameStart(study.id, PID, 'g4', 'follower');
        await store.recordGameEnd(study, PID, 'g4', { reason: 'interrupted', score: 1, left: false });
        await store.recordGameEnd(study, PID, 'g4', { reason: 'turns-exhausted', score: 5, left: false });
        expect((await store.games(study.id, PID)).at(-1)).toMatchObject({ gameId: 'g4', endReason: 'turns-exhausted', score: 5 });
        expect((await store.get(study.id, PID))!.games).toMatchObject({ played: 4, completed: 3, points: 12 });
    });

      test('P-102: the promotion rule needs enough completed games as follower and a high enough mean score', async () => {
        study = studyWith({ 'roles.promotion': { afterGames: 2, minMeanScore: 3 }, gamesPerSession: 5 });
        await atPlay();
        const game = async (id: string, score: number) => {
          await store.recordGameStart(study.id, PID, id, 'follower');
          await store.recordGameEnd(study, PID, id, { reason: 'turns-exhausted', score, left: false });
          return (await store.get(study.id, PID))!;
        };
        expect((await game('g1', 9)).role).toBe('follower');
        expect((await game('g2', 2)).role).toBe('leader'); // mean 5.5
        const other = studyWith({ id: 'other', 'roles.promotion': { afterGames: 2, minMeanScore: 3 }, gamesPerSession: 5 });
        await atPlay(other);
        await store.recordGameStart(other.id, PID, 'h1', 'follower');
        await store.recordGameEnd(other, PID, 'h1', { reason: 'turns-exhausted', score: 3, left: false });
        await store.recordGameStart(other.id, PID, 'h2', 'follower');
        await store.recordGameEnd(other, PID, 'h2', { reason: 'turns-exhausted', score: 2, left: false });
        expect(await store.get(other.id, PID)).toMatchObject({ role: 'follower', promotedAt: null }); // mean 2.5
    });

      test('P-137: a lapsed reservation ends only a wait that started by the time it was made', async () => {
        await atPlay();
        await store.startWaiting(study.id, PID);
        // A request to play made after the reservation: its wait goes on.
        expect((await store.stopWaiting(study.id, PID, START - 10_000)).waitingSince).not.toBeNull();
        expect((await store.stopWaiting(study.id, PID, START)).waitingSince).toBeNull();
      });

      test('P-103: noPartner is refused before the wait is over, then given once', async () => {
        study = studyWith({ 'time.waitForPartnerSeconds': 30 });
        await atPlay();
        expect(await refusal(() => store.claimNoPartner(study, PID))).toBe('WRONG_STEP');
        await store.startWaiting(study.id, PID);
        clock += 20_000;
        expect(await refusal(() => store.claimNoPartner(study, PID))).toBe('TOO_EARLY');
        clock += 8_000; // within the tolerance of the page's clock
        expect((await store.claimNoPartner(study, PID)).completion).toMatchObject({ outcome: 'noPartner', code: 'CNOPART' });
        expect(await refusal(() => store.startWaiting(study.id, PID))).toBe('WRONG_STEP');
    });

      test("P-144: an arm's draws are numbered once each across store connections, a worker keeps the draw no game started with, and draws are counted by how the games went", async () => {
        const pids = ['w0', 'w1', 'w2', 'w3', 'w4'];
        for (const pid of pids) await atPlay(study, pid);
        const other = await place.open(() => clock);
        const asked: number[] = [];
        const armOf = (draw: number) => {
          asked.push(draw);
          return draw % 3 === 2 ? 'b' : 'a';
        };
        // Two processes drawing at once never hand out one number twice.
        const draws = await Promise.all(pids.map((pid, i) => (i % 2 === 0 ? store : other).drawArm(study.id, pid, armOf)));
        await other.close();
        expect(draws.map((d) => d.draw).sort()).toEqual([0, 1, 2, 3, 4]);
        expect(asked.sort()).toEqual([0, 1, 2, 3, 4]);
        for (const d of draws) expect(d.armId).toBe(armOf(d.draw));
        const drawOf = new Map(draws.map((d, i) => [d.draw, pids[i]]));
        // Asking again before a game started with its draw, a worker keeps the draw: no number is used.
        expect(await store.drawArm(study.id, drawOf.get(3)!, armOf)).toEqual({ draw: 3, armId: 'a' });
        // Only a worker at the play step gets a draw.
        await store.startSession(study, { participantId: 'new', ids: { prolificStudyId: 'S1', prolificSessionId: 'SESS-new' } });
        expect(await refusal(() => store.drawArm(study.id, 'new', armOf))).toBe('WRONG_STEP');
        // Another study counts from 0 on its own.
        const second = studyWith({ id: 'pilot-2' });
        await atPlay(second);
        expect(await store.drawArm(second.id, PID, () => 'a')).toEqual({ draw: 0, armId: 'a' });
        // Draw 0 (a) is played to the end, 1 (a) abandoned by its worker, 2 (b) is being played, 3 and 4 never started.
        await store.recordGameStart(study.id, drawOf.get(0)!, 'g0', 'leader', 0);
        await store.recordGameEnd(study, drawOf.get(0)!, 'g0', { reason: 'turns-exhausted', score: 4, left: false });
        await store.recordGameStart(study.id, drawOf.get(1)!, 'g1', 'leader', 1);
        await store.recordGameEnd(study, drawOf.get(1)!, 'g1', { reason: 'abandoned', score: 1, left: true });
        await store.recordGameStart(study.id, drawOf.get(2)!, 'g2', 'leader', 2);
        // Once a game started with its draw, the worker's next game is the study's next draw (5, b).
        expect(await store.drawArm(study.id, drawOf.get(1)!, armOf)).toEqual({ draw: 5, armId: 'b' });
        expect(await store.armTotals(study.id)).toEqual([
          { arm: 'a', drawn: 4, games: 2, live: 0, ended: 1, abandoned: 1 },
          { arm: 'b', drawn: 2, games: 1, live: 1, ended: 0, abandoned: 0 },
        ]);
        expect(await store.armTotals('no-such-study')).toEqual([]);
      });
    });
  });
}
