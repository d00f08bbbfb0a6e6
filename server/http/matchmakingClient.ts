/**
 * Who a matchmaking request comes from, for the limits on agent games per client
 * (rooms/agentGames.ts): the keyed hash of its address (clientAddress.ts), read as the study API
 * reads it (express's `trust proxy`: X-Forwarded-For only from the proxies it trusts), and an id
 * of the request, so that what the room's onAuth admitted for it is known until it is answered.
 * Colyseus hands onAuth the request's headers but not its socket, so both travel in headers that
 * this server sets on every matchmaking request, and removes from every request that brings its own.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { AuthContext } from '@colyseus/core';
import type express from 'express';
import { addressTag } from './clientAddress';

export const CLIENT_TAG_HEADER = 'x-cerealbar-client';
export const REQUEST_ID_HEADER = 'x-cerealbar-request';

/** What a request whose address is unknown counts as: all such requests together, as one client. */
export const UNKNOWN_CLIENT = 'unknown';

/** A matchmaking request as the room's onAuth sees it. */
export interface MatchmakingRequest {
  /** The keyed hash of its address, or UNKNOWN_CLIENT. */
  readonly client: string;
  /** Its id, until `answered` is called with it; null for a join that came with none. */
  readonly id: string | null;
}

/**
 * Puts the tag of each matchmaking request's address and an id of its own in its headers, ahead of
 * every request listener of `http`, and calls `answered` with the id once its answer is sent (or
 * its connection is gone). `app` is the server's express app, whose `trust proxy` says whom to
 * believe; `key` is the tags' key.
 */
export function tagMatchmakingRequests(http: HttpServer, app: express.Application, key: string, answered: (id: string) => void): void {
  const listeners = http.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  http.removeAllListeners('request');
  http.on('request', (req: IncomingMessage, res: ServerResponse) => {
    delete req.headers[CLIENT_TAG_HEADER];
    delete req.headers[REQUEST_ID_HEADER];
    if (req.url?.startsWith('/matchmake/')) {
      const id = randomUUID();
      req.headers[CLIENT_TAG_HEADER] = addressTag(requestAddress(app, req), key) ?? UNKNOWN_CLIENT;
      req.headers[REQUEST_ID_HEADER] = id;
      res.once('close', () => answered(id));
    }
    for (const listener of listeners) listener.call(http, req, res);
  });
}

/** The address express's `req.ip` names for `req` (its getter reads only the app's settings, the headers and the socket). */
function requestAddress(app: express.Application, req: IncomingMessage): string | undefined {
  const requests = (app as unknown as { request: object }).request;
  return Reflect.get(requests, 'ip', { app, headers: req.headers, socket: req.socket }) as string | undefined;
}

/** The matchmaking request the room's onAuth is asked about. */
export function matchmakingRequestOf(context: AuthContext | undefined): MatchmakingRequest {
  return { client: context?.headers.get(CLIENT_TAG_HEADER) ?? UNKNOWN_CLIENT, id: context?.headers.get(REQUEST_ID_HEADER) ?? null };
}
