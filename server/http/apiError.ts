/**
 * The HTTP API's error answer, the same on every route (P-65): `{error: {code, message}}`, with
 * more fields where a refusal has them (`field` for a bad body, `retryAfterSeconds`).
 */
import type { Response } from 'express';

export function sendApiError(res: Response, status: number, code: string, message: string, extra: Record<string, unknown> = {}): void {
  res.status(status).json({ error: { code, message, ...extra } });
}

/** A refusal to be asked again later: the Retry-After header, and `retryAfterSeconds` for the pages. */
export function sendRetryLater(res: Response, status: number, code: string, message: string, retryAfterSeconds: number): void {
  res.setHeader('Retry-After', String(retryAfterSeconds));
  sendApiError(res, status, code, message, { retryAfterSeconds });
}
