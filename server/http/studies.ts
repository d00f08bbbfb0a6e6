/**
 * The study API, for a study's own pages (docs/running-a-study.md, "The study API"): what anyone
 * may read about a study (GET /api/studies/:id/public, no quiz answers, no completion codes), and
 * a worker's path through it, behind the worker's session token: the session, consent, the rules,
 * the tutorial, the quiz (marked here) and the worker's own state. No admin token: a participant's
 * browser asks. Errors have the API's shape, `{error: {code, message}}`, with `field` for a bad
 * body; a refused request changes nothing.
 *
 * The researcher's side (the workers table, block, promote) is in api.ts, behind the admin token.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import type { z } from 'zod';
import { DEFAULT_CONFIG, type GameConfig } from '../../shared/engine/config';
import { publicStudy, studyGameConfig, type Study } from '../../shared/study/studyFile';
import {
  consentBodySchema,
  emptyBodySchema,
  fieldOf,
  parseSessionBody,
  publicWorker,
  quizAttemptsLeft,
  quizBodySchema,
  rulesBodySchema,
  tutorialBodySchema,
  type WorkerRecord,
} from '../../shared/study/worker';
import type { Awaitable, WorkerStore } from '../store/types';
import { WorkerError, type WorkerErrorCode } from '../store/workerChanges';
import { GamePausedError, NoSeatError, type StudyGames } from '../study/studyGames';
import { BUSY_RETRY_AFTER_SECONDS } from '../../shared/protocol/messages';
import { sendApiError, sendRetryLater } from './apiError';
import { addressTag } from './clientAddress';
import { BODY_LIMIT_BYTES } from './guard';

/** The HTTP status of each refusal the worker store gives. */
export const WORKER_ERROR_STATUS: Record<WorkerErrorCode, number> = {
  NOT_FOUND: 404,
  BLOCKED: 403,
  WRONG_STEP: 409,
  ALREADY_ANSWERED: 409,
  DECLINED: 409,
  ROLE_MISMATCH: 409,
  QUIZ_PASSED: 409,
  NO_ATTEMPTS_LEFT: 409,
  TOO_EARLY: 409,
  ALREADY_SEATED: 409,
  SESSION_ELSEWHERE: 409,
  LIMITED_SESSION: 403,
  TOO_MANY_NEW_WORKERS: 429,
};

/**
 * A worker who reaches the quiz this soon after it first came has not read the rules or played
 * the tutorial: a program trying made-up ids. It is not told which answers were wrong.
 */
export const QUIZ_MARKS_AFTER_SECONDS = 60;

/** A refusal from the worker store as its answer; anything else is the caller's to handle. */
export function sendWorkerError(res: Response, error: unknown): boolean {
  if (!(error instanceof WorkerError)) return false;
  const { retryAfterSeconds } = error;
  if (retryAfterSeconds !== undefined && error.code === 'TOO_MANY_NEW_WORKERS') sendRetryLater(res, WORKER_ERROR_STATUS[error.code], error.code, error.message, retryAfterSeconds);
  else sendApiError(res, WORKER_ERROR_STATUS[error.code], error.code, error.message, retryAfterSeconds === undefined ? {} : { retryAfterSeconds });
  return true;
}

interface StudyRequest extends Request {
  study?: Study;
  worker?: WorkerRecord;
  /** The session's: no platform id vouched for it (visitChanges). */
  limited?: boolean;
}

export interface StudyRoutesOptions {
  readonly workers?: WorkerStore | null;
  readonly games?: StudyGames | null;
  /** The rules of the server's quick play, which a study without its own `game` plays by. */
  readonly quickPlay?: GameConfig;
  /** The key of the requesters' address tags (clientAddress.ts): the same in every process of a server (the admin token). */
  readonly addressKey: string;
}

export function mountStudyRoutes(app: express.Application, studies: ReadonlyMap<string, Study>, options: StudyRoutesOptions): void {
  const { workers = null, games = null, quickPlay = DEFAULT_CONFIG, addressKey } = options;
  const addressOf = (req: Request) => addressTag(req.ip ?? req.socket.remoteAddress, addressKey);
  const router = express.Router();
  const findStudy = (req: StudyRequest, res: Response, next: NextFunction) => {
    const study = studies.get(req.params.id as string);
    if (!study) return sendApiError(res, 404, 'NOT_FOUND', `no study ${JSON.stringify(req.params.id)}`);
    req.study = study;
    next();
  };

  router.get('/:id/public', findStudy, (req: StudyRequest, res) => {
    // Participants see a study as the server started with it; a browser may keep it briefly.
    res.setHeader('Cache-Control', 'no-cache');
    res.json(publicStudy(req.study!, req.study!.game ? studyGameConfig(req.study!.game) : quickPlay));
  });

  // A worker's own routes: personal data (platform ids), so no cache keeps an answer.
  const noStore = (_req: Request, res: Response, next: NextFunction) => {
    res.setHeader('Cache-Control', 'no-store');
    next();
  };
  const withStore = (_req: Request, res: Response, next: NextFunction) => {
    if (!workers) return sendApiError(res, 503, 'NO_WORKER_STORE', 'this server keeps no worker records');
    next();
  };
  const body = express.json({ limit: BODY_LIMIT_BYTES, type: () => true });
  const post = [noStore, findStudy, withStore, body];
  const withToken = async (req: StudyRequest, res: Response, next: NextFunction) => {
    const token = bearerToken(req.get('authorization'));
    if (token === null) {
      res.setHeader('WWW-Authenticate', 'Bearer');
      return sendApiError(res, 401, 'UNAUTHORIZED', 'send the session token as "Authorization: Bearer <token>" (POST /api/studies/:id/session gives one)');
    }
    const session = await workers!.sessionForToken(req.study!.id, token);
    if (!session) return sendApiError(res, 401, 'SESSION_UNKNOWN', 'the session token is unknown or has expired: start a new session');
    req.worker = session.worker;
    req.limited = session.limited;
    next();
  };

  router.post('/:id/session', ...post, async (req: StudyRequest, res) => {
    const study = req.study!;
    const parsed = parseSessionBody(study, req.body);
    if (!parsed.ok) return sendApiError(res, 400, parsed.code, parsed.message, { field: parsed.field });
    const existed = (await workers!.get(study.id, parsed.start.participantId)) !== null;
    // The page's last token, if it kept one, vouches for a new submission or assignment of the same worker.
    const held = bearerToken(req.get('authorization')) ?? undefined;
    try {
      const { token, worker } = await workers!.startSession(study, parsed.start, { token: held, addressTag: addressOf(req) });
      res.status(existed ? 200 : 201).json({ token, worker: publicWorker(study, worker) });
    } catch (error) {
      if (!sendWorkerError(res, error)) throw error;
    }
  });

  router.post('/:id/consent', ...post, withToken, async (req: StudyRequest, res) => {
    const answer = checked(res, consentBodySchema, req.body);
    if (answer) await act(res, req.study!, () => workers!.answerConsent(req.study!.id, req.worker!.participantId, answer.agree, req.limited));
  });

  router.post('/:id/rules', ...post, withToken, async (req: StudyRequest, res) => {
    if (checked(res, rulesBodySchema, req.body)) await act(res, req.study!, () => workers!.readRules(req.study!.id, req.worker!.participantId));
  });

  router.post('/:id/tutorial', ...post, withToken, async (req: StudyRequest, res) => {
    const answer = checked(res, tutorialBodySchema, req.body);
    if (answer) await act(res, req.study!, () => workers!.passTutorial(req.study!.id, req.worker!.participantId, answer.role));
  });

  router.post('/:id/quiz', ...post, withToken, async (req: StudyRequest, res) => {
    const study = req.study!;
    const answer = checked(res, quizBodySchema(study.quiz), req.body);
    if (!answer) return;
    try {
      const result = await workers!.submitQuiz(study, req.worker!.participantId, answer.answers, req.limited);
      const attemptsLeft = quizAttemptsLeft(study.quiz, result.worker);
      // Which answers were wrong helps only a worker who may try again; a made-up id in a hurry would collect them.
      const hasty = workers!.now() - Date.parse(result.worker.createdAt) < QUIZ_MARKS_AFTER_SECONDS * 1000;
      res.json({
        passed: result.passed,
        score: result.score,
        passMark: study.quiz.passMark,
        attemptsLeft,
        wrong: attemptsLeft > 0 && !hasty ? result.wrong : null,
        worker: publicWorker(study, result.worker),
      });
    } catch (error) {
      if (!sendWorkerError(res, error)) throw error;
    }
  });

  router.post('/:id/play', ...post, withToken, async (req: StudyRequest, res) => {
    if (!checked(res, emptyBodySchema, req.body)) return;
    try {
      // withStore let the request through, so there are workers and studies, hence games.
      res.json({ reservation: await games!.seat(req.study!, req.worker!, addressOf(req)) });
    } catch (error) {
      if (sendWorkerError(res, error)) return;
      // The worker's last game may still go on (its server stalled): the page waits and asks again (P-156).
      if (error instanceof GamePausedError) return sendRetryLater(res, 409, 'GAME_PAUSED', error.message, BUSY_RETRY_AFTER_SECONDS);
      if (!(error instanceof NoSeatError)) throw error;
      // No process takes a new game now (all busy, or restarting): the page waits and asks again.
      if (error.noProcessTakesGames) return sendNoNewGames(res);
      process.stderr.write(`study api: ${error.message}\n`);
      sendApiError(res, 503, 'NO_SEAT', `${error.message}; please try again in a moment`);
    }
  });

  router.post('/:id/no-partner', ...post, withToken, async (req: StudyRequest, res) => {
    if (checked(res, emptyBodySchema, req.body)) await act(res, req.study!, () => games!.claimNoPartner(req.study!, req.worker!.participantId));
  });

  router.get('/:id/me', noStore, findStudy, withStore, withToken, (req: StudyRequest, res) => {
    res.json({ worker: publicWorker(req.study!, req.worker!) });
  });

  router.use(handleStudyError);
  app.use('/api/studies', router);
}

/** What a worker's page is told when no process takes a new game now: it keeps the worker's place and asks again (P-153). */
export const NO_NEW_GAMES_MESSAGE = 'many people are playing right now: your page will look for a game again in a few seconds, so keep it open';

export function sendNoNewGames(res: Response): void {
  sendRetryLater(res, 503, 'BUSY', NO_NEW_GAMES_MESSAGE, BUSY_RETRY_AFTER_SECONDS);
}

/** The body parsed by `schema`, or null once a 400 naming the field is sent. */
function checked<T extends z.ZodType>(res: Response, schema: T, body: unknown): z.output<T> | null {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  sendApiError(res, 400, 'BAD_BODY', issue.message, { field: fieldOf(issue) });
  return null;
}

async function act(res: Response, study: Study, action: () => Awaitable<WorkerRecord>): Promise<void> {
  try {
    res.json({ worker: publicWorker(study, await action()) });
  } catch (error) {
    if (!sendWorkerError(res, error)) throw error;
  }
}

export function bearerToken(header: string | undefined): string | null {
  const match = header?.match(/^Bearer +(\S+)\s*$/i);
  return match ? match[1] : null;
}

/** A body that is not JSON or too big, and any fault of ours (which the client never sees). */
function handleStudyError(error: unknown, req: Request, res: Response, next: NextFunction): void {
  const status = (error as { status?: unknown })?.status;
  const clientStatus = typeof status === 'number' && status >= 400 && status < 500 ? status : null;
  if (clientStatus === null) process.stderr.write(`study api: ${req.method} ${req.originalUrl} failed: ${(error as Error)?.stack ?? String(error)}\n`);
  if (res.headersSent) return next(error);
  if (clientStatus === 413) return sendApiError(res, 413, 'PAYLOAD_TOO_LARGE', `the request body is over ${BODY_LIMIT_BYTES} bytes`);
  if (clientStatus !== null) return sendApiError(res, 400, 'BAD_JSON', 'the request body is not JSON');
  sendApiError(res, 500, 'INTERNAL', 'internal error');
}
