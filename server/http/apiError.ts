/**
 * The HTTP API's error answer, the same on every route (P-65): `{error: {code, message}}`, with
 * more fields where a refusal has them (`field` for a bad body, `retryAfterSeconds`).
 */
import type { Response } from 'express';

export function sendApiError(res: Response, status: number, code: string, message: string, extra: Record<string, unknown> = {}): void {
  res.status(status).json({ error: { code, message, ...extra } });
}
