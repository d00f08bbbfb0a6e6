/**
 * A request path with a %-escape that does not decode (`/api/studies/%ff/public`) is the
 * request's fault, and is answered as such on every route, before any route sees it (P-130):
 * 400 `BAD_PATH`, never an error about something else (a body) and never a page with a stack.
 */
import type { NextFunction, Request, Response } from 'express';
import { sendApiError } from './apiError';

export const BAD_PATH_MESSAGE = 'the request path has a bad %-escape';

/** Whether the path's %-escapes decode (as express decodes a route's parameters and static files' names). */
export function pathDecodes(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

export function sendBadPath(res: Response): void {
  sendApiError(res, 400, 'BAD_PATH', BAD_PATH_MESSAGE);
}

/** Express middleware: answers a path that does not decode with 400 BAD_PATH. */
export function refuseBadPath(req: Request, res: Response, next: NextFunction): void {
  if (pathDecodes(req.path)) return next();
  sendBadPath(res);
}
