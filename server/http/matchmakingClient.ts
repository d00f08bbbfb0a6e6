/**
 * Who a matchmaking request comes from, for the limits on agent games per client
 * (rooms/agentGames.ts): the keyed hash of its address (clientAddress.ts), read as the study API
 * reads it (express's `trust proxy`: X-Forwarded-For only from the proxies it trusts). Colyseus
 * hands the room's onAuth the request's headers but not its socket, so the tag travels in a header
 * that this server sets on every matchmaking request, and removes from every request that brings
 * one of its own.
 */
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import type { AuthContext } from '@colyseus/core';
import type express from 'express';
import { addressTag } from './clientAddress';

export const CLIENT_TAG_HEADER = 'x-cerealbar-client';

/** What a request whose address is unknown counts as: all such requests together, as one client. */
export const UNKNOWN_CLIENT = 'unknown';

/**
 * Puts the tag of each matchmaking request's address in its CLIENT_TAG_HEADER, ahead of every
 * request listener of `http`; `app` is the server's express app, whose `trust proxy` says whom to
 * believe, and `key` the tags' key.
 */
export function tagMatchmakingClients(http: HttpServer, app: express.Application, key: string): void {
  const listeners = http.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  http.removeAllListeners('request');
  http.on('request', (req: IncomingMessage, res: ServerResponse) => {
    delete req.headers[CLIENT_TAG_HEADER];
    if (req.url?.startsWith('/matchmake/')) req.headers[CLIENT_TAG_HEADER] = addressTag(requestAddress(app, req), key) ?? UNKNOWN_CLIENT;
    for (const listener of listeners) listener.call(http, req, res);
  });
}

/** The address express's `req.ip` names for `req` (its getter reads only the app's settings, the headers and the socket). */
function requestAddress(app: express.Application, req: IncomingMessage): string | undefined {
  const requests = (app as unknown as { request: object }).request;
  return Reflect.get(requests, 'ip', { app, headers: req.headers, socket: req.socket }) as string | undefined;
}

/** The client tag of the matchmaking request the room's onAuth is asked about. */
export function clientTagOf(context: AuthContext | undefined): string {
  return context?.headers.get(CLIENT_TAG_HEADER) ?? UNKNOWN_CLIENT;
}
