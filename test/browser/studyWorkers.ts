/**
 * Study workers made ready through the study API, for browser tests that start a page at a later
 * step: the API call, and a worker taken through consent, the rules, its tutorials and the quiz.
 */
import { ADMIN_TOKEN, participantAddress } from './harness';

/** The address each prepared worker's session token calls from (participantAddress). */
const addresses = new Map<string, string>();

/**
 * A request to the server's API (`path` under /api/); its JSON answer, or an error naming the refusal.
 * `from`: the participant's address, as a reverse proxy passes it on; a prepared worker's own by default.
 */
export async function api(url: string, path: string, body?: unknown, token: string | null = ADMIN_TOKEN, from = token === null ? undefined : addresses.get(token)): Promise<any> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(from !== undefined && { 'x-forwarded-for': from }) };
  if (token) headers.authorization = `Bearer ${token}`;
  const response = await fetch(`${url}/api/${path}`, { method: body === undefined ? 'GET' : 'POST', headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const answer = await response.json();
  if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

export interface Preparation {
  /** The tutorials passed, in order (a follower's by default). */
  readonly tutorials?: readonly ('leader' | 'follower')[];
  /** The researcher promotes the worker to leader after the rules (its tutorial is then the leader's). */
  readonly promote?: boolean;
  /** Up to the quiz (not taken), or past it (passed). */
  readonly upTo?: 'quiz' | 'play';
  /** The researcher's token, for the promotion. */
  readonly adminToken?: string;
}

/**
 * A worker of `studyId` with the platform's `ids`, taken through its steps by the API; its session
 * token. Given several urls (the processes of one server), each request goes to the next in turn.
 */
export async function preparedWorker(url: string | readonly string[], studyId: string, ids: Record<string, string>, preparation: Preparation = {}): Promise<string> {
  const urls = typeof url === 'string' ? [url] : url;
  let calls = 0;
  const from = participantAddress();
  const call = (path: string, body: unknown, token?: string | null) => api(urls[calls++ % urls.length], `studies/${studyId}/${path}`, body, token, from);
  const { token, worker } = await call('session', ids, null);
  addresses.set(token, from);
  await call('consent', { agree: true }, token);
  await call('rules', { read: true }, token);
  if (preparation.promote) await call(`workers/${worker.participantId}/promote`, {}, preparation.adminToken);
  for (const role of preparation.tutorials ?? [preparation.promote ? 'leader' : 'follower']) await call('tutorial', { role }, token);
  if ((preparation.upTo ?? 'play') === 'play') await call('quiz', { answers: [0, 1, 1] }, token);
  return token;
}
