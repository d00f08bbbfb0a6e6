/**
 * A study's workers, kept in a database's rows (WorkerDatabase, workerRows.ts): SqliteWorkerStore
 * and PgWorkerStore are this store on their database. What each change decides is in
 * workerChanges.ts; here is, once for both, what each change reads and writes. Every change is one
 * transaction that holds the worker's row while it decides from it and writes what it decided, so
 * two processes (or two requests) cannot both use a worker's last quiz attempt.
 */
import type { Role } from '../../shared/engine/state';
import type { ArmTotals } from '../../shared/study/overview';
import type { StudyFile } from '../../shared/study/studyFile';
import type { SessionStart, WorkerGame, WorkerRecord } from '../../shared/study/worker';
import type { SessionProof, WorkerSession, WorkerStore } from './types';
import {
  blockChanges,
  CHANGEABLE,
  consentChanges,
  emptyRow,
  gameEndChanges,
  hashToken,
  HOUR_MS,
  idColumns,
  MAX_SESSIONS_KEPT,
  MINUTE_MS,
  newToken,
  noPartnerChanges,
  promoteChanges,
  quizChanges,
  refuseNewWorker,
  refuseUnlessAtPlay,
  rulesChanges,
  SESSION_TTL_MS,
  sessionKey,
  startingRole,
  startWaitingChanges,
  stopWaitingChanges,
  tutorialChanges,
  visitChanges,
  VOUCH_TTL_MS,
  WorkerError,
  workerGame,
  workerRecord,
  type ArmDraw,
  type Changes,
  type GameEnd,
  type QuizResult,
  type StudyGameTotals,
  type WorkerRowWithGames,
} from './workerChanges';
import { answer, type Answer, type SessionRow, type Steps, type WorkerDatabase, type WorkerRows } from './workerRows';

export class RowWorkerStore<Later extends boolean> implements WorkerStore {
  constructor(
    private readonly db: WorkerDatabase<Later>,
    /** The clock of every time the store writes (tests inject one). */
    readonly now: () => number,
  ) {}

  close(): Answer<Later, void> {
    return this.db.close();
  }

  get(studyId: string, participantId: string): Answer<Later, WorkerRecord | null> {
    return this.db.read(function* (rows) {
      const row = yield* answer(rows.worker(studyId, participantId));
      return row ? workerRecord(row) : null;
    });
  }

  /** A study's workers, oldest first. */
  list(studyId: string): Answer<Later, WorkerRecord[]> {
    return this.db.read(function* (rows) {
      return (yield* answer(rows.workers(studyId))).map(workerRecord);
    });
  }

  /**
   * Starts a visit: finds the worker (or creates it, with the study's starting role, within the
   * study's admission limits), lets it in as `proof` vouches for it (visitChanges), and returns a
   * new session token. The token is returned here only.
   */
  startSession(study: StudyFile, start: SessionStart, proof: SessionProof = {}): Answer<Later, WorkerSession & { token: string }> {
    const { time, now } = this;
    const token = newToken();
    const ids = idColumns(start.ids);
    const session = { token_hash: hashToken(token), study_id: study.id, participant_id: start.participantId, created_at: time(), expires_at: time(SESSION_TTL_MS) };
    return this.db.transaction(function* (rows) {
      const vouched = proof.token === undefined ? null : yield* answer(rows.vouchedParticipant(hashToken(proof.token), study.id, time(-VOUCH_TTL_MS)));
      // New workers of a study are admitted one at a time, so that its limits count every one.
      yield* answer(rows.lockStudy(study.id, 'new workers'));
      yield* answer(rows.lockWorker(study.id, start.participantId));
      const existing = yield* answer(rows.worker(study.id, start.participantId));
      let limited = false;
      if (existing) {
        const visit = visitChanges(existing, ids, { heldToken: vouched === start.participantId }, session.created_at);
        yield* write(rows, study.id, start.participantId, visit.changes);
        limited = visit.limited;
      } else {
        const address = proof.addressTag ?? null;
        refuseNewWorker(study, yield* answer(rows.recentWorkers(study.id, address, time(-HOUR_MS), time(-MINUTE_MS))), now());
        const fresh = emptyRow(study.id, start.participantId, study.platform.kind, startingRole(study), session.created_at);
        yield* answer(rows.insertWorker({ ...fresh, ...ids, created_address: address }));
      }
      // Sessions go as new ones come once they no longer vouch; a worker keeps its latest few of each kind, so that strangers' limited ones never push out its own.
      yield* answer(rows.dropSessions(time(-VOUCH_TTL_MS)));
      const row: SessionRow = { ...session, prolific_session_id: ids.prolific_session_id, assignment_id: ids.assignment_id, hit_id: ids.hit_id, limited: limited ? 1 : 0 };
      yield* answer(rows.insertSession(row));
      yield* answer(rows.trimSessions(row, MAX_SESSIONS_KEPT));
      return { token, worker: yield* record(rows, study.id, start.participantId), limited };
    });
  }

  /** The session a token belongs to, for this study, while the token lasts; null otherwise. */
  sessionForToken(studyId: string, token: string): Answer<Later, WorkerSession | null> {
    const at = this.time();
    return this.db.read(function* (rows) {
      const session = yield* answer(rows.session(hashToken(token), studyId, at));
      const worker = session ? yield* answer(rows.worker(studyId, session.participant_id)) : null;
      return session && worker ? { worker: workerRecord(worker), limited: session.limited === 1 } : null;
    });
  }

  answerConsent(studyId: string, participantId: string, agree: boolean, limited = false): Answer<Later, WorkerRecord> {
    return this.change(studyId, participantId, (worker) => consentChanges(worker, agree, this.time(), limited));
  }

  readRules(studyId: string, participantId: string): Answer<Later, WorkerRecord> {
    return this.change(studyId, participantId, (worker) => rulesChanges(worker, this.time()));
  }

  passTutorial(studyId: string, participantId: string, role: Role): Answer<Later, WorkerRecord> {
    return this.change(studyId, participantId, (worker) => tutorialChanges(worker, role, this.time()));
  }

  submitQuiz(study: StudyFile, participantId: string, answers: readonly number[], limited = false): Answer<Later, QuizResult> {
    const { time } = this;
    return this.db.transaction(function* (rows) {
      const { changes, marking } = quizChanges(study, yield* heldRow(rows, study.id, participantId), answers, time(), limited);
      yield* write(rows, study.id, participantId, changes);
      return { ...marking, worker: yield* record(rows, study.id, participantId) };
    });
  }

  block(studyId: string, participantId: string, reason: string | null): Answer<Later, WorkerRecord> {
    return this.change(studyId, participantId, (worker) => blockChanges(worker, reason, this.time()));
  }

  promote(studyId: string, participantId: string): Answer<Later, WorkerRecord> {
    return this.change(studyId, participantId, (worker) => promoteChanges(worker, this.time()));
  }

  startWaiting(studyId: string, participantId: string): Answer<Later, WorkerRecord> {
    return this.change(studyId, participantId, (row) => startWaitingChanges(row, this.time()));
  }

  stopWaiting(studyId: string, participantId: string, startedBy?: number): Answer<Later, WorkerRecord> {
    return this.change(studyId, participantId, (row) => stopWaitingChanges(row, startedBy));
  }

  /** A game with the worker in it started: its wait is over and the game is counted from now. */
  recordGameStart(studyId: string, participantId: string, gameId: string, role: Role, armDraw?: number): Answer<Later, WorkerRecord> {
    const { time } = this;
    return this.db.transaction(function* (rows) {
      const row = yield* heldRow(rows, studyId, participantId);
      yield* answer(rows.insertGame(studyId, participantId, gameId, role, sessionKey(row), time()));
      if (armDraw !== undefined) yield* answer(rows.drawStarted(studyId, participantId, armDraw, gameId));
      yield* write(rows, studyId, participantId, { waiting_since: null });
      return yield* record(rows, studyId, participantId);
    });
  }

  recordGameEnd(study: StudyFile, participantId: string, gameId: string, end: GameEnd): Answer<Later, WorkerRecord> {
    const { time } = this;
    return this.db.transaction(function* (rows) {
      yield* heldRow(rows, study.id, participantId);
      const at = time();
      yield* answer(rows.endGame(study.id, participantId, gameId, end, at));
      // Decided from the row that counts the game.
      const counted = (yield* answer(rows.worker(study.id, participantId)))!;
      yield* write(rows, study.id, participantId, gameEndChanges(study, counted, end, at));
      return yield* record(rows, study.id, participantId);
    });
  }

  claimNoPartner(study: StudyFile, participantId: string): Answer<Later, WorkerRecord> {
    return this.change(study.id, participantId, (row) => noPartnerChanges(study, row, this.now(), this.time()));
  }

  /**
   * The study's games as its workers' records count them (each game once): how many, how many
   * are being played, and the mean final score and length of the ended ones.
   */
  gameTotals(studyId: string): Answer<Later, StudyGameTotals> {
    return this.db.read(function* (rows) {
      const row = yield* answer(rows.gameTotals(studyId));
      return { games: row.games, live: row.live, meanScore: row.mean_score, meanSeconds: row.mean_seconds === null ? null : Math.round(row.mean_seconds * 10) / 10 };
    });
  }

  drawArm(studyId: string, participantId: string, armOf: (draw: number) => string): Answer<Later, ArmDraw> {
    const { time } = this;
    return this.db.transaction(function* (rows) {
      refuseUnlessAtPlay(yield* heldRow(rows, studyId, participantId));
      yield* answer(rows.lockStudy(studyId, 'arm draws'));
      const unused = yield* answer(rows.unusedDraw(studyId, participantId));
      if (unused) return unused;
      const draw = yield* answer(rows.nextDraw(studyId));
      const drawn = { draw, armId: armOf(draw) };
      yield* answer(rows.insertDraw(studyId, participantId, drawn, time()));
      return drawn;
    });
  }

  armTotals(studyId: string): Answer<Later, ArmTotals[]> {
    return this.db.read(function* (rows) {
      return yield* answer(rows.armTotals(studyId));
    });
  }

  /** The games a worker played (and plays), oldest first. */
  games(studyId: string, participantId: string): Answer<Later, WorkerGame[]> {
    return this.db.read(function* (rows) {
      return (yield* answer(rows.games(studyId, participantId))).map(workerGame);
    });
  }

  /** The store's clock as ISO 8601, `offsetMs` from now (an arrow, for the steps to call). */
  private readonly time = (offsetMs = 0): string => new Date(this.now() + offsetMs).toISOString();

  /** Holds and reads the worker's row, and writes what `decide` returns, in one transaction. */
  private change(studyId: string, participantId: string, decide: (worker: WorkerRowWithGames) => Changes): Answer<Later, WorkerRecord> {
    return this.db.transaction(function* (rows) {
      yield* write(rows, studyId, participantId, decide(yield* heldRow(rows, studyId, participantId)));
      return yield* record(rows, studyId, participantId);
    });
  }
}

/** The worker's row, held until the transaction ends. */
function* heldRow(rows: WorkerRows, studyId: string, participantId: string): Steps<WorkerRowWithGames> {
  yield* answer(rows.lockWorker(studyId, participantId));
  const row = yield* answer(rows.worker(studyId, participantId));
  if (!row) throw new WorkerError('NOT_FOUND', `no worker ${JSON.stringify(participantId)} in study ${studyId}`);
  return row;
}

/** Writes the changes decided, if any, to the worker's row. */
function* write(rows: WorkerRows, studyId: string, participantId: string, changes: Changes): Steps<void> {
  const columns = Object.keys(changes);
  for (const column of columns) if (!CHANGEABLE.has(column)) throw new Error(`not a worker column: ${column}`);
  if (columns.length > 0) yield* answer(rows.updateWorker(studyId, participantId, changes));
}

/** The worker's record as the transaction leaves it. */
function* record(rows: WorkerRows, studyId: string, participantId: string): Steps<WorkerRecord> {
  return workerRecord((yield* answer(rows.worker(studyId, participantId)))!);
}
