/**
 * The HTTP rules every request meets, ahead of Colyseus's matchmaking route and of the express
 * routes: a small body limit, no body with a prototype key (`__proto__`, `constructor`,
 * `prototype`) at any depth, matchmaking bodies with only the fields their method takes,
 * cross-origin reads only for the origins an operator allows, and a Content-Security-Policy on
 * every answer, with the sites that may frame the pages.
 */
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import { posix } from 'node:path';
import { matchMaker, type ServerError } from '@colyseus/core';
import express, { type NextFunction, type Request, type Response } from 'express';
import { agentSeatAsked, BUSY_RETRY_AFTER_SECONDS, BUSY_STATUS, joinOptionsSchema } from '../../shared/protocol/messages';
import { BUSY_MESSAGE } from '../admission';
import { refuseClientJoinFields } from '../rooms/listing';
import { sendApiError } from './apiError';
import { refuseBadPath } from './badPath';

/** A join's options are a few short strings; nothing sent to the server is bigger. */
export const BODY_LIMIT_BYTES = 4096;

/** Keys no request body may have, at any depth: they reach an object's prototype (P-123). */
export const PROTOTYPE_KEYS: readonly string[] = ['__proto__', 'constructor', 'prototype'];

/** The first prototype key in a parsed JSON body, at any depth, with where it is (`a.0.__proto__`), or null. */
export function prototypeKeyIn(body: unknown): { key: string; at: string } | null {
  const pending: [unknown, string][] = [[body, '']];
  while (pending.length > 0) {
    const [value, at] = pending.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    for (const key of Object.keys(value)) {
      const path = at === '' ? key : `${at}.${key}`;
      if (PROTOTYPE_KEYS.includes(key)) return { key, at: path };
      pending.push([(value as Record<string, unknown>)[key], path]);
    }
  }
  return null;
}

function prototypeKeyMessage(found: { key: string; at: string }): string {
  return `the request body has a key named ${JSON.stringify(found.key)} (at ${found.at}): keys named __proto__, constructor or prototype are refused`;
}

/** The matchmaking methods whose body is a join's options (Colyseus's controller exposes these and `reconnect`). */
const JOIN_METHODS: readonly string[] = ['joinOrCreate', 'create', 'join', 'joinById'];
/** What a reconnection's body holds (the SDK's `reconnect`). */
const RECONNECT_FIELDS: readonly string[] = ['reconnectionToken'];

/**
 * The refusal of a matchmaking body with a field its method does not take, or null: a join's
 * options are the join schema's fields (refuseClientJoinFields, which leaves what is not an object
 * to the schema), a reconnection's its token, a string.
 */
function refuseMatchmakeFields(method: string, body: unknown): Pick<ServerError, 'code' | 'message'> | null {
  if (JOIN_METHODS.includes(method)) return refuseClientJoinFields(body);
  if (method !== 'reconnect') return null;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { code: 400, message: 'a reconnection\'s body is a JSON object: {"reconnectionToken": "..."}' };
  const unknown = Object.keys(body).find((key) => !RECONNECT_FIELDS.includes(key));
  if (unknown !== undefined) return { code: 400, message: `unknown reconnect option ${JSON.stringify(unknown)}: a reconnection takes only ${RECONNECT_FIELDS.join(', ')}` };
  if (typeof (body as Record<string, unknown>).reconnectionToken !== 'string') return { code: 400, message: 'reconnectionToken must be a string' };
  return null;
}

export interface HttpPolicy {
  /** Origins (scheme://host[:port]) whose pages may call the server; the server's own origin needs none. */
  readonly corsOrigins?: readonly string[];
  /** CSP sources that may frame the pages (a crowdsourcing site's, for a study); 'self' when none are given. */
  readonly frameAncestors?: readonly string[];
  /** Sites the pages' forms may post to besides the server itself (MTurk's submit endpoint). */
  readonly formActions?: readonly string[];
}

/** MTurk's sites (the worker sites and the sandbox): they frame a HIT's pages, and take its form's POST. */
export const MTURK_SOURCES: readonly string[] = ['https://*.mturk.com'];

/**
 * The policy for a server that runs an MTurk study: MTurk may frame the pages (with whatever the
 * operator allowed, or the server itself) and the completion page may post to MTurk.
 */
export function withMturk(policy: HttpPolicy): HttpPolicy {
  const framing = policy.frameAncestors && policy.frameAncestors.length > 0 ? policy.frameAncestors : ["'self'"];
  return {
    ...policy,
    frameAncestors: [...new Set([...framing, ...MTURK_SOURCES])],
    formActions: [...new Set([...(policy.formActions ?? []), ...MTURK_SOURCES])],
  };
}

const ORIGIN = /^https?:\/\/[a-z0-9.-]+(:\d{1,5})?$/i;
/** A CSP host source (https://*.example.com, https://example.com:8443) or 'self' / 'none'. */
const FRAME_SOURCE = /^('self'|'none'|https?:\/\/(\*\.)?[a-z0-9.-]+(:\d{1,5})?)$/i;

/** The origins, or an error naming the first that is not exactly scheme://host[:port]. */
export function checkCorsOrigins(origins: readonly string[]): string | null {
  const bad = origins.find((origin) => !ORIGIN.test(origin));
  return bad === undefined ? null : `${JSON.stringify(bad)} is not an origin: write it as scheme://host[:port], as in https://study.example.org`;
}

export function checkFrameAncestors(sources: readonly string[]): string | null {
  const bad = sources.find((source) => !FRAME_SOURCE.test(source));
  return bad === undefined ? null : `${JSON.stringify(bad)} is not a frame source: write 'self', 'none' or scheme://host[:port], as in https://app.prolific.com or https://*.mturk.com`;
}

export function contentSecurityPolicy(frameAncestors: readonly string[], formActions: readonly string[] = []): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    // The page's icon is a data: URL.
    "img-src 'self' data:",
    // 'self' covers the game's websocket on the same host and port.
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    ["form-action 'self'", ...formActions].join(' '),
    `frame-ancestors ${frameAncestors.length > 0 ? frameAncestors.join(' ') : "'self'"}`,
  ].join('; ');
}

/**
 * Checks the policy, and returns what puts it in front of every request listener of a server.
 * Colyseus answers matchmaking in a listener of its own placed ahead of express when it starts
 * listening, so that is the one place that precedes both; the matchmaking body and the API's are
 * parsed and checked there (Colyseus, and express's body parsers after it, take an already
 * parsed req.body as it is).
 */
/**
 * `draining()`: the server takes no new games (it is about to stop): matchmaking answers 503,
 * but a player may still reconnect to its game in play. `refusesNewGame()`: no process has room
 * for a new game now (admission.ts; it counts the refusal).
 */
export function httpGuard(policy: HttpPolicy, draining: () => boolean = () => false, refusesNewGame: () => boolean = () => false): (http: HttpServer) => void {
  const problem = checkCorsOrigins(policy.corsOrigins ?? []) ?? checkFrameAncestors(policy.frameAncestors ?? []) ?? checkFrameAncestors(policy.formActions ?? []);
  if (problem) throw new Error(problem);
  const csp = contentSecurityPolicy(policy.frameAncestors ?? [], policy.formActions ?? []);
  const gate = express();
  gate.disable('x-powered-by');
  gate.use((_req, res, next) => {
    res.setHeader('Content-Security-Policy', csp);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    // Study links carry crowdsourcing ids in their query: no other site may see them.
    res.setHeader('Referrer-Policy', 'same-origin');
    next();
  });
  // A path that does not decode is refused here, ahead of matchmaking and of every route (P-130).
  gate.use(refuseBadPath);
  gate.use('/matchmake', (req, res, next) => {
    retryAfterOn503(res);
    if (draining() && !req.path.startsWith('/reconnect/')) return sendMatchmakeError(res, 503, 'the server is restarting and takes no new games; try again in a minute');
    next();
  });
  gate.use('/matchmake', express.json({ limit: BODY_LIMIT_BYTES, type: () => true }));
  gate.use('/matchmake', (error: unknown, _req: Request, res: Response, next: NextFunction) => {
    const status = (error as { status?: number }).status ?? 500;
    if (status === 413) return sendMatchmakeError(res, 413, `the request body is over ${BODY_LIMIT_BYTES} bytes`);
    if (status >= 400 && status < 500) return sendMatchmakeError(res, status, 'the request body is not a JSON object');
    next(error);
  });
  // Before any room or handler reads it: no prototype key anywhere, no field its method does not take (P-123, P-124).
  gate.use('/matchmake', (req, res, next) => {
    const found = prototypeKeyIn(req.body);
    if (found) return sendMatchmakeError(res, 400, prototypeKeyMessage(found));
    // Colyseus reads the method from the URL it normalises: one not in its plain form (/./, //) could name another method than this check reads.
    if (posix.normalize(req.path) !== req.path) return sendMatchmakeError(res, 400, 'the matchmaking path must be plain: no ".", ".." or empty segments');
    const method = /^\/([^/]+)\//.exec(req.path)?.[1] ?? '';
    const refused = refuseMatchmakeFields(method, req.body);
    if (refused) return sendMatchmakeError(res, refused.code, refused.message);
    // A join that always makes a new game is refused here when no process has room: cheaply, as a busy server needs (P-153).
    if (JOIN_METHODS.includes(method) && alwaysNewGame(req.body) && refusesNewGame()) return sendMatchmakeError(res, BUSY_STATUS, BUSY_MESSAGE);
    next();
  });
  // The API's bodies (the study API's, the admin's) are read here too, so that no route sees one
  // with a prototype key; each route checks its own fields (strict schemas), in the API's shape.
  gate.use('/api', express.json({ limit: BODY_LIMIT_BYTES, type: () => true }));
  gate.use('/api', (error: unknown, _req: Request, res: Response, next: NextFunction) => {
    const status = (error as { status?: number }).status ?? 500;
    if (status === 413) return refuseApiRequest(res, 413, 'PAYLOAD_TOO_LARGE', `the request body is over ${BODY_LIMIT_BYTES} bytes`);
    if (status >= 400 && status < 500) return refuseApiRequest(res, 400, 'BAD_JSON', 'the request body is not JSON');
    next(error);
  });
  gate.use('/api', (req, res, next) => {
    const found = prototypeKeyIn(req.body);
    if (found) return refuseApiRequest(res, 400, 'BAD_BODY', prototypeKeyMessage(found), { field: found.at });
    next();
  });
  return (http) => {
    allowCorsOrigins(policy.corsOrigins ?? []);
    const listeners = http.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
    http.removeAllListeners('request');
    http.on('request', (req: IncomingMessage, res: ServerResponse) => {
      // An express app called with a callback hands the request on instead of ending it.
      gate(req as Request, res as Response, (error?: unknown) => {
        if (error) {
          res.statusCode = 500;
          return res.end();
        }
        for (const listener of listeners) listener.call(http, req, res);
      });
    });
  };
}

/**
 * Every 503 of matchmaking (a busy or restarting server: Colyseus answers the matchmaker's refusals
 * itself, without headers) says when to ask again, so that a page or a client library waits instead
 * of asking at once.
 */
function retryAfterOn503(res: ServerResponse): void {
  const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
  res.writeHead = ((status: number, ...rest: unknown[]) => {
    if (status === 503 && !res.hasHeader('Retry-After')) res.setHeader('Retry-After', String(BUSY_RETRY_AFTER_SECONDS));
    return writeHead(status, ...rest);
  }) as ServerResponse['writeHead'];
}

/** Whether a join's options ask for a game of its own (a new private game, or the server's agent as partner), which no waiting game takes. */
function alwaysNewGame(body: unknown): boolean {
  const asked = joinOptionsSchema.safeParse(body);
  return asked.success && (asked.data.private === true || agentSeatAsked(asked.data) !== null);
}

/** Matchmaking errors in Colyseus's own shape, which its SDK reads. */
function sendMatchmakeError(res: Response, status: number, message: string): void {
  res.status(status).json({ code: status, error: message });
}

/** An API error from the gate, which no cache keeps (the API's routes set their own caching). */
function refuseApiRequest(res: Response, status: number, code: string, message: string, extra: Record<string, unknown> = {}): void {
  res.setHeader('Cache-Control', 'no-store');
  sendApiError(res, status, code, message, extra);
}

/**
 * Colyseus sets its CORS headers on every HTTP answer and by default reflects any origin, with
 * credentials; its controller is where that is configured.
 */
function allowCorsOrigins(origins: readonly string[]): void {
  const allowed = new Set(origins.map((origin) => origin.toLowerCase()));
  matchMaker.controller.DEFAULT_CORS_HEADERS = {
    'Access-Control-Allow-Headers': 'Content-Type, Authorization',
    'Access-Control-Allow-Methods': 'GET, POST',
    'Access-Control-Max-Age': '600',
    Vary: 'Origin',
    // Its type lists Allow-Origin and Allow-Credentials, which must be left out here: getCorsHeaders adds them for allowed origins only.
  } as unknown as typeof matchMaker.controller.DEFAULT_CORS_HEADERS;
  matchMaker.controller.getCorsHeaders = (headers: Headers): Record<string, string> => {
    const origin = headers.get('origin');
    // The SDK sends its matchmaking requests with credentials.
    return origin && allowed.has(origin.toLowerCase()) ? { 'Access-Control-Allow-Origin': origin, 'Access-Control-Allow-Credentials': 'true' } : {};
  };
}
