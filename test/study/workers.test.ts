/**
 * The SQLite worker store: the tests every worker store passes (workerContract.ts), then what is
 * its own (the file: token hashes, schema version, read-only opening); and the pure parts of a
 * worker's life cycle (quiz marking, bonuses, session bodies).
 */
import Database from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SCHEMA_VERSION, SqliteWorkerStore, WORKERS_FILE } from '../../server/store/SqliteWorkerStore';
import { hashToken, SESSION_TTL_MS, VOUCH_TTL_MS } from '../../server/store/workerChanges';
import type { Study } from '../../shared/study/studyFile';
import { bonusFor } from '../../shared/study/bonus';
import { markQuiz, parseSessionBody, seatVerdict } from '../../shared/study/worker';
import { describeWorkerStore, ids, PID, START, studyIn } from './workerContract';

describeWorkerStore('every worker store, on SQLite', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'cerealbar-workers-'));
  return {
    open: async (now) => SqliteWorkerStore.open(dataDir, { now }),
    remove: async () => rmSync(dataDir, { recursive: true, force: true }),
  };
});

let dir: string;
let store: SqliteWorkerStore;
let clock: number;
let study: Study;

const studyWith = (changes: Record<string, unknown> = {}) => studyIn(dir, changes);

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

describe('the SQLite file', () => {
  test('a token is stored only as its SHA-256; an expired one lets no request in, and goes once it vouches no more (P-132)', () => {
    const { token } = store.startSession(study, ids);
    expect(store.sessionForToken(study.id, token)!.worker.participantId).toBe(PID);
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
    expect(store.sessionForToken(study.id, token)).not.toBeNull();
    clock += 1;
    expect(store.sessionForToken(study.id, token)).toBeNull();
    // Expired, it still vouches for its worker's next submission, until VOUCH_TTL_MS; then its hash goes when the next session starts.
    expect(store.startSession(study, { ...ids, ids: { ...ids.ids, prolificSessionId: 'SESS2' } }, { token }).limited).toBe(false);
    clock += VOUCH_TTL_MS;
    const { token: next } = store.startSession(study, { ...ids, ids: { ...ids.ids, prolificSessionId: 'SESS2' } });
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

describe('quiz marking', () => {
  test('is marked against the answers: the score, pass or fail, and which questions were wrong', () => {
    expect(markQuiz(study.quiz, [0, 1, 1])).toEqual({ score: 3, passed: true, wrong: [] });
    expect(markQuiz(study.quiz, [1, 1, 1])).toEqual({ score: 2, passed: true, wrong: [0] });
    expect(markQuiz(study.quiz, [1, 0, 1])).toEqual({ score: 1, passed: false, wrong: [0, 1] });
  });

});

describe('a waiting seat', () => {
  test('P-114: a worker keeps its seat at the play step in its role (either, in both); promoted, its role changed; at an ending, its session has ended', () => {
    expect(seatVerdict('play', 'follower', 'follower')).toBe('plays');
    expect(seatVerdict('play', 'either', 'leader')).toBe('plays');
    expect(seatVerdict('play', 'either', 'follower')).toBe('plays');
    expect(seatVerdict('tutorial', 'leader', 'follower')).toBe('roleChanged');
    expect(seatVerdict('play', 'leader', 'follower')).toBe('roleChanged');
    for (const step of ['done', 'declined', 'screenedOut', 'blocked'] as const) expect(seatVerdict(step, 'follower', 'follower')).toBe('ended');
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
