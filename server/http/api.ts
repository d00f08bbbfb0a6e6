/**
 * The HTTP API for whoever runs studies: a health check, and behind a bearer token the game index
 * and each game's log. Every /api answer is JSON (the log download excepted), errors included:
 * `{error: {code, message}}`.
 */
import { timingSafeEqual } from 'node:crypto';
import type { GameMetrics } from '../metrics';
import express, { type NextFunction, type Request, type Response } from 'express';
import { z } from 'zod';
import type { Study } from '../../shared/study/studyFile';
import { blockBodySchema, emptyBodySchema, fieldOf, workerStep, type WorkerRecord } from '../../shared/study/worker';
import { GameRoom } from '../rooms/GameRoom';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT, isSafeGameId } from '../store/checks';
import type { Awaitable, GameFilter, GameRecord, GameStore } from '../store/types';
import type { WorkerStore } from '../store/types';
import { poolLogs, StudyOfGame } from '../study/gameLogs';
import { BONUS_FORMATS, bonusCsv, bonusSheet, type BonusFormat } from '../../shared/study/bonusSheet';
import { studyOverview } from '../../shared/study/overview';
import { armSeat } from '../../shared/study/arms';
import { streamLogsArchive } from './logsArchive';
import { sendBadPath } from './badPath';
import { sendApiError } from './apiError';
import { BODY_LIMIT_BYTES } from './guard';
import { sendWorkerError } from './studies';

export interface ApiDeps {
  readonly store: GameStore;
  readonly adminToken: string;
  /** The studies the server runs and their workers: the researcher's side of the study API. */
  readonly studies?: readonly Study[];
  readonly workers?: WorkerStore | null;
  /** The server's metrics: served at /metrics with the admin token. */
  readonly metrics?: GameMetrics;
}

export function mountApi(app: express.Application, deps: ApiDeps): void {
  const startedAt = Date.now();
  app.get('/healthz', (_req, res) => {
    res.json({ ok: true, uptimeSeconds: Math.floor((Date.now() - startedAt) / 1000) });
  });

  const metrics = deps.metrics;
  if (metrics) {
    // The operator's: counts of games and players are not for everyone to read.
    app.get('/metrics', requireAdminToken(deps.adminToken), (_req, res, next) => {
      metrics.text().then((text) => res.type(metrics.contentType).send(text), next);
    });
  }

  const api = express.Router();
  api.use(requireAdminToken(deps.adminToken));
  // Bodies (a block's reason) are small; one is read only up to the limit, never into memory whole.
  api.use(express.json({ limit: BODY_LIMIT_BYTES, type: () => true }));
  api.get('/games', (req, res) => listGames(deps.store, req, res));
  api.get('/games/:id', (req, res) => getGame(deps.store, req.params.id, res));
  api.get('/games/:id/log', (req, res) => downloadLog(deps.store, req.params.id, res));
  mountWorkerAdmin(api, deps);
  api.use((_req, res) => sendApiError(res, 404, 'NOT_FOUND', 'no such API endpoint'));
  api.use(handleError);
  app.use('/api', api);
}

// ---------------------------------------------------------------------------------------------
// Authorization

function requireAdminToken(adminToken: string): express.RequestHandler {
  const expected = Buffer.from(adminToken, 'utf8');
  return (req, res, next) => {
    // Game data is personal data (crowdsourcing ids): no cache may keep it.
    res.setHeader('Cache-Control', 'no-store');
    const presented = bearerToken(req.get('authorization'));
    if (presented === null) {
      res.setHeader('WWW-Authenticate', 'Bearer');
      return sendApiError(res, 401, 'UNAUTHORIZED', 'send the admin token as "Authorization: Bearer <token>"');
    }
    if (!tokensMatch(Buffer.from(presented, 'utf8'), expected)) return sendApiError(res, 403, 'FORBIDDEN', 'the token is not the admin token');
    next();
  };
}

function bearerToken(header: string | undefined): string | null {
  const match = header?.match(/^Bearer +(\S+)\s*$/i);
  return match ? match[1] : null;
}

/** Constant time for tokens of the right length, so the response time tells nothing about the token. */
function tokensMatch(presented: Buffer, expected: Buffer): boolean {
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}

// ---------------------------------------------------------------------------------------------
// The game index

/** Query values arrive as strings (an array when a parameter is repeated, which is refused). */
const digits = (name: string) => z.string({ error: `${name} must be given once` }).regex(/^\d{1,15}$/, `${name} must be a non-negative integer`).transform(Number);

const time = (name: string) =>
  z.union([z.iso.date(), z.iso.datetime({ offset: true })], {
    error: `${name} must be an ISO 8601 date (2026-01-31) or date and time with a zone (2026-01-31T12:00:00Z)`,
  });

const listQuerySchema = z
  .strictObject(
    {
      from: time('from').optional(),
      to: time('to').optional(),
      pool: z.string({ error: 'pool must be given once' }).min(1, 'pool must not be empty').optional(),
      minScore: digits('minScore').optional(),
      limit: digits('limit')
        .pipe(z.number().min(1, 'limit must be at least 1').max(MAX_LIST_LIMIT, `limit must be at most ${MAX_LIST_LIMIT}`))
        .optional(),
      offset: digits('offset').optional(),
    },
    { error: (issue) => (issue.code === 'unrecognized_keys' ? `unknown parameter ${issue.keys.join(', ')}` : undefined) },
  )
  .transform((query) => ({
    ...query,
    from: query.from === undefined ? undefined : startOf(query.from),
    to: query.to === undefined ? undefined : endOf(query.to),
  }))
  .refine((query) => query.from === undefined || query.to === undefined || query.from <= query.to, {
    error: 'from must not be later than to',
    path: ['from'],
  });

const isDateOnly = (value: string) => value.length === 10;

/** A date alone means from its first millisecond (UTC). */
function startOf(value: string): string {
  return isDateOnly(value) ? `${value}T00:00:00.000Z` : new Date(value).toISOString();
}

/** A date alone means up to its last millisecond (UTC), since the bounds are inclusive. */
function endOf(value: string): string {
  return isDateOnly(value) ? `${value}T23:59:59.999Z` : new Date(value).toISOString();
}

/** The parameter an issue is about: the unknown key, or the field it was found in. */
function parameterOf(issue: z.core.$ZodIssue): string {
  if (issue.code === 'unrecognized_keys') return issue.keys[0];
  return String(issue.path[0] ?? 'query');
}

async function listGames(store: GameStore, req: Request, res: Response): Promise<void> {
  const parsed = listQuerySchema.safeParse(req.query);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return sendApiError(res, 400, 'BAD_QUERY', issue.message, { parameter: parameterOf(issue) });
  }
  const filter: GameFilter = { ...parsed.data, limit: parsed.data.limit ?? DEFAULT_LIST_LIMIT, offset: parsed.data.offset ?? 0 };
  res.json({ games: (await store.listGames(filter)).map(publicRecord), limit: filter.limit, offset: filter.offset });
}

/** A game as the API shows it: the log's URL (never where a store keeps it). */
function publicRecord(record: GameRecord): GameRecord & { logUrl: string } {
  const { logPath: _serverPath, ...rest } = record as GameRecord & { logPath?: string };
  return { ...rest, logUrl: `/api/games/${record.gameId}/log` };
}

async function findGame(store: GameStore, gameId: string, res: Response): Promise<GameRecord | null> {
  // An unsafe id cannot name a game; refusing it first keeps it out of every path.
  const record = isSafeGameId(gameId) ? await store.getGame(gameId) : null;
  if (!record) sendApiError(res, 404, 'NOT_FOUND', `no game ${JSON.stringify(gameId)}`);
  return record;
}

async function getGame(store: GameStore, gameId: string, res: Response): Promise<void> {
  const record = await findGame(store, gameId, res);
  if (record) res.json(publicRecord(record));
}

async function downloadLog(store: GameStore, gameId: string, res: Response): Promise<void> {
  if (!(await findGame(store, gameId, res))) return;
  let text: string | null;
  try {
    text = await store.readLog(gameId);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    text = null;
  }
  if (text === null) return sendApiError(res, 404, 'NOT_FOUND', `the log of game ${gameId} is missing`);
  // A Buffer, so that express adds no charset to the type the log format names.
  res.attachment(`${gameId}.jsonl`).set('Content-Type', 'application/x-ndjson').send(Buffer.from(text, 'utf8'));
}

// ---------------------------------------------------------------------------------------------
// A study's games

const studyGamesQuerySchema = z.strictObject(
  {
    limit: digits('limit')
      .pipe(z.number().min(1, 'limit must be at least 1').max(MAX_LIST_LIMIT, `limit must be at most ${MAX_LIST_LIMIT}`))
      .optional(),
  },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? `unknown parameter ${issue.keys.join(', ')}` : undefined) },
);


// ---------------------------------------------------------------------------------------------
// A study's workers

/** A worker as the researcher sees it: the whole record, with the step it is at. */
function adminWorker(worker: WorkerRecord): WorkerRecord & { step: ReturnType<typeof workerStep> } {
  return { ...worker, step: workerStep(worker) };
}

function mountWorkerAdmin(api: express.Router, deps: ApiDeps): void {
  const studies = new Map((deps.studies ?? []).map((study) => [study.id, study]));
  const find = (req: Request, res: Response): { study: Study; workers: WorkerStore } | null => {
    const study = studies.get(req.params.id as string);
    if (!study) {
      sendApiError(res, 404, 'NOT_FOUND', `no study ${JSON.stringify(req.params.id)}`);
      return null;
    }
    if (!deps.workers) {
      sendApiError(res, 503, 'NO_WORKER_STORE', 'this server keeps no worker records');
      return null;
    }
    return { study, workers: deps.workers };
  };
  api.get('/studies', async (_req, res) => {
    if (!deps.workers) return sendApiError(res, 503, 'NO_WORKER_STORE', 'this server keeps no worker records');
    const workers = deps.workers;
    const overviews = [];
    for (const study of studies.values()) overviews.push(studyOverview(study, await workers.list(study.id), await workers.gameTotals(study.id), workers.now(), await workers.armTotals(study.id)));
    res.json({ studies: overviews });
  });
  api.get('/studies/:id/bonuses.csv', async (req, res) => {
    const found = find(req, res);
    if (!found) return;
    const format = req.query.format;
    if (typeof format !== 'string' || !(BONUS_FORMATS as readonly string[]).includes(format)) {
      return sendApiError(res, 400, 'BAD_QUERY', `format must be ${BONUS_FORMATS.join(' or ')}`, { field: 'format' });
    }
    const { games } = await poolLogs(deps.store, found.study.pool);
    res.type('text/csv').attachment(`${found.study.id}-bonuses-${format}.csv`).send(bonusCsv(bonusSheet(found.study, games, format as BonusFormat), format as BonusFormat, found.study.title));
  });
  api.get('/studies/:id/logs.tar.gz', async (req, res) => {
    const found = find(req, res);
    if (!found) return;
    const logs = (await poolLogs(deps.store, found.study.pool)).games.filter((game) => game.header.meta.study === found.study.id);
    res.type('application/gzip').attachment(`${found.study.id}-logs.tar.gz`);
    await streamLogsArchive(logs.map((game) => ({ name: `${game.header.gameId}.jsonl`, text: game.text })), res);
  });
  // The study's own games: those whose log's header names the study, as the bonus sheet and the
  // archive count them. A game of the pool made otherwise (quick play in the study's pool, with a
  // worker's id) is not the study's, whoever it names as its players (P-127).
  const studyOfGame = new StudyOfGame(deps.store);
  api.get('/studies/:id/games', async (req, res) => {
    const study = studies.get(req.params.id as string);
    if (!study) return sendApiError(res, 404, 'NOT_FOUND', `no study ${JSON.stringify(req.params.id)}`);
    const parsed = studyGamesQuerySchema.safeParse(req.query);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return sendApiError(res, 400, 'BAD_QUERY', issue.message, { parameter: parameterOf(issue) });
    }
    const limit = parsed.data.limit ?? MAX_LIST_LIMIT;
    const games: GameRecord[] = [];
    for (let offset = 0; games.length < limit; offset += MAX_LIST_LIMIT) {
      const page = await deps.store.listGames({ pool: study.pool, limit: MAX_LIST_LIMIT, offset });
      for (const game of page) if (games.length < limit && (await studyOfGame.of(game.gameId)) === study.id) games.push(game);
      if (page.length < MAX_LIST_LIMIT) break;
    }
    res.json({ study: study.id, games: games.map(publicRecord), limit });
  });
  api.get('/studies/:id/workers', async (req, res) => {
    const found = find(req, res);
    if (found) res.json({ study: found.study.id, workers: (await found.workers.list(found.study.id)).map(adminWorker) });
  });
  const change = async (req: Request, res: Response, action: (workers: WorkerStore, studyId: string, participantId: string) => Awaitable<WorkerRecord>) => {
    const found = find(req, res);
    if (!found) return;
    let worker: WorkerRecord;
    try {
      worker = await action(found.workers, found.study.id, req.params.participantId as string);
    } catch (error) {
      if (!sendWorkerError(res, error)) throw error;
      return;
    }
    // A game the worker waits in, on any process, checks its seat again: a promoted or blocked
    // worker's page moves on at once and its seat is free. The change stands if that fails.
    await GameRoom.recheckWorkerSeats(worker.studyId, worker.participantId).catch((error: unknown) => {
      process.stderr.write(`api: study ${worker.studyId}: the seat of worker ${worker.participantId} could not be checked again: ${(error as Error)?.message ?? String(error)}\n`);
    });
    res.json({ worker: adminWorker(worker) });
  };
  api.post('/studies/:id/workers/:participantId/block', async (req, res) => {
    const parsed = blockBodySchema.safeParse(req.body ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return sendApiError(res, 400, 'BAD_BODY', issue.message, { field: fieldOf(issue) });
    }
    await change(req, res, (workers, studyId, participantId) => workers.block(studyId, participantId, parsed.data.reason || null));
  });
  api.post('/studies/:id/workers/:participantId/promote', async (req, res) => {
    // It carries nothing: a body with any field is refused, as every API body with a field its route does not take.
    const parsed = emptyBodySchema.safeParse(req.body ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return sendApiError(res, 400, 'BAD_BODY', issue.message, { field: fieldOf(issue) });
    }
    const study = studies.get(req.params.id as string);
    // In a study whose arms lead, a leader would have no game: its participants stay followers.
    if (study?.arms && armSeat(study) === 'leader') {
      return sendApiError(res, 409, 'ROLE_MISMATCH', `study ${study.id}'s agents play the leader (its arms): its participants stay followers, so none is promoted`);
    }
    await change(req, res, (workers, studyId, participantId) => workers.promote(studyId, participantId));
  });
}

// ---------------------------------------------------------------------------------------------
// Errors

/** Express calls a handler with four parameters for errors; none of them reaches the client. */
function handleError(error: unknown, req: Request, res: Response, next: NextFunction): void {
  const status = clientErrorStatus(error);
  if (status === null) process.stderr.write(`api: ${req.method} ${req.originalUrl} failed: ${(error as Error)?.stack ?? String(error)}\n`);
  if (res.headersSent) return next(error); // express closes the connection
  if (status === 413) return sendApiError(res, 413, 'PAYLOAD_TOO_LARGE', `the request body is over ${BODY_LIMIT_BYTES} bytes`);
  // The server's gate refuses such a path first (P-130); the API mounted alone says the same.
  if (error instanceof URIError) return sendBadPath(res);
  if (status !== null) return sendApiError(res, status, 'BAD_REQUEST', 'the request is malformed');
  sendApiError(res, 500, 'INTERNAL', 'internal error');
}

/** Express marks the request's own faults (an undecodable %-escape in the path) with a 4xx status. */
function clientErrorStatus(error: unknown): number | null {
  const status = (error as { status?: unknown })?.status;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : null;
}
