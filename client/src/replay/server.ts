/**
 * The game server's token-protected API (docs/protocol.md): the list of logged games and their
 * logs, and the request the admin page makes its own with. The admin token lives in
 * sessionStorage only, so it is gone when the tab closes.
 */
import type { Role } from '../../../shared/engine/state';
import type { EndReason } from '../../../shared/log/format';

const TOKEN_KEY = 'cerealbar.adminToken';
const PAGE_SIZE = 50;

/** Who sat in a seat: a person (`human`) or the server's scripted follower (`bot`), and the crowdsourcing worker id it came with. */
export interface SeatSummary {
  readonly role: Role;
  readonly kind: 'human' | 'bot';
  readonly workerId?: string;
}

export interface GameSummary {
  readonly gameId: string;
  readonly pool: string;
  readonly seats: readonly SeatSummary[];
  readonly score: number;
  readonly startedAt: string;
  readonly endedAt: string | null;
  readonly endReason: EndReason | null;
}

export interface GamePage {
  readonly games: readonly GameSummary[];
  /** Where the next page starts, or null when this was the last. */
  readonly nextOffset: number | null;
}

/** A request that failed, in words for the page. `badToken` when the server refused the token. */
export class ServerError extends Error {
  override name = 'ServerError';
  constructor(
    message: string,
    readonly badToken = false,
    /** The server has no such game (404). */
    readonly notFound = false,
  ) {
    super(message);
  }
}

export function storedToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function storeToken(token: string | null): void {
  if (token) sessionStorage.setItem(TOKEN_KEY, token);
  else sessionStorage.removeItem(TOKEN_KEY);
}

export async function listGames(token: string, offset = 0): Promise<GamePage> {
  const response = await request(`/api/games?limit=${PAGE_SIZE}&offset=${offset}`, token);
  const body = (await response.json()) as { games: GameSummary[] };
  return { games: body.games, nextOffset: body.games.length === PAGE_SIZE ? offset + PAGE_SIZE : null };
}

export async function fetchLog(token: string, gameId: string): Promise<string> {
  const response = await request(`/api/games/${encodeURIComponent(gameId)}/log`, token);
  return response.text();
}

/** A request to the token-protected API (the replay viewer's and the admin page's); its failure in words. */
export async function request(path: string, token: string, init: { method?: 'GET' | 'POST'; body?: unknown } = {}): Promise<Response> {
  let response: Response;
  try {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    response = await fetch(path, { method: init.method ?? 'GET', headers, cache: 'no-store', body: init.body === undefined ? undefined : JSON.stringify(init.body) });
  } catch (error) {
    throw new ServerError(`Could not reach the game server (${(error as Error).message}).`);
  }
  if (response.ok) return response;
  const message = await errorMessage(response);
  if (response.status === 401) throw new ServerError(`The server needs the admin token (401: ${message}).`, true);
  if (response.status === 403) throw new ServerError(`The server refused this token (403: ${message}).`, true);
  if (response.status === 404) throw new ServerError(`Not found on the server (404: ${message}).`, false, true);
  throw new ServerError(`The server answered ${response.status}: ${message}.`);
}

/** The API's `{error: {message}}`, or the status text when the body is something else. */
async function errorMessage(response: Response): Promise<string> {
  try {
    const body = (await response.json()) as { error?: { message?: unknown } };
    if (typeof body.error?.message === 'string') return body.error.message;
  } catch {
    // Not JSON: a proxy or an older server.
  }
  return response.statusText || 'no details';
}
