/**
 * A stub OpenAI-compatible server for tests (node:http on port 0, never the network): it answers
 * POST /v1/chat/completions with scripted replies, one per request in order (the last one repeats),
 * and GET /v1/models with one model (or the models given, or an HTTP error). A reply may be a
 * completion's text, an HTTP error (429, 500, ...), a body that is not JSON, or a hang (no answer
 * until the stub closes). With `key`, requests without `Authorization: Bearer <key>` get a 401.
 * Every request is logged.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type StubReply =
  | string
  | { readonly content: string; readonly promptTokens?: number; readonly completionTokens?: number }
  | { readonly status: number; readonly body?: string; readonly retryAfter?: string }
  | { readonly raw: string }
  | { readonly hang: true };

export interface LoggedRequest {
  readonly method: string;
  readonly path: string;
  /** Whether an Authorization header came, and whether it held the stub's key. */
  readonly authorized: boolean;
  readonly authorization: string | undefined;
  /** The headers that name an OpenAI organization or project, if any came. */
  readonly organization: string | undefined;
  readonly project: string | undefined;
  readonly body: unknown;
  /** The x-request-id this stub answered with (chat calls answered with a completion only). */
  readonly requestId: string | null;
}

export interface StubLlm {
  /** The base URL, up to and including /v1. */
  readonly url: string;
  readonly requests: LoggedRequest[];
  /** The chat-completion requests only. */
  chatRequests(): LoggedRequest[];
  /** Replaces the script (the request counter restarts). */
  script(replies: readonly StubReply[]): void;
  close(): Promise<void>;
}

export const STUB_MODEL = 'stub-model';

export interface StubOptions {
  /** The replies, one per chat request in order; the last one repeats. */
  readonly replies?: readonly StubReply[];
  /** Instead of `replies`: the reply to the n-th chat request (0, 1, ...), from its body. */
  readonly respond?: (body: ChatBody, n: number) => StubReply;
  readonly key?: string;
  /** How long each chat completion takes to answer, as a remote model's latency (default none). */
  readonly delayMs?: number;
  /** What GET /v1/models answers: the ids listed (default [STUB_MODEL]), or an HTTP error. */
  readonly models?: readonly string[] | { readonly status: number };
}

/** What the stub reads of a chat request. A message with an image has parts for content (`messageText` reads its text). */
export interface ChatBody {
  readonly model: string;
  readonly messages: readonly { readonly role: string; readonly content: string }[];
}

/** A message's text: its content, or its text parts when it carries an image. */
export function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  return (content as readonly { type: string; text?: string }[]).flatMap((part) => (part.type === 'text' ? [part.text!] : [])).join('\n');
}

export async function startStubLlm(options: StubOptions = {}): Promise<StubLlm> {
  let replies: readonly StubReply[] = options.replies ?? ['{"actions": []}'];
  let chats = 0;
  const requests: LoggedRequest[] = [];
  const hanging = new Set<ServerResponse>();

  const server = createServer(async (req, res) => {
    const text = await readBody(req);
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      // logged as text
    }
    const authorization = req.headers.authorization;
    const authorized = options.key === undefined || authorization === `Bearer ${options.key}`;
    const path = (req.url ?? '').split('?')[0];
    const organization = req.headers['openai-organization'] as string | undefined;
    const project = req.headers['openai-project'] as string | undefined;
    const log = (requestId: string | null) => requests.push({ method: req.method ?? '', path, authorized, authorization, organization, project, body, requestId });
    if (!authorized) {
      log(null);
      return json(res, 401, { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', code: 'invalid_api_key' } });
    }
    if (req.method === 'GET' && path === '/v1/models') {
      log(null);
      const models = options.models ?? [STUB_MODEL];
      if ('status' in models) return json(res, models.status, { error: { message: `injected HTTP ${models.status}` } });
      return json(res, 200, { object: 'list', data: models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'stub' })) });
    }
    if (req.method !== 'POST' || path !== '/v1/chat/completions') {
      log(null);
      return json(res, 404, { error: { message: `no route ${req.method} ${path}` } });
    }
    const n = chats++;
    const reply = options.respond ? options.respond(body as ChatBody, n) : replies[Math.min(n, replies.length - 1)];
    const requestId = `req-${n + 1}`;
    if (typeof reply === 'object' && 'hang' in reply) {
      log(null);
      hanging.add(res);
      return;
    }
    if (typeof reply === 'object' && 'status' in reply) {
      log(null);
      const headers: Record<string, string> = { 'content-type': 'application/json', ...(reply.retryAfter !== undefined ? { 'retry-after': reply.retryAfter } : {}) };
      res.writeHead(reply.status, headers).end(reply.body ?? JSON.stringify({ error: { message: `injected HTTP ${reply.status}` } }));
      return;
    }
    if (typeof reply === 'object' && 'raw' in reply) {
      log(requestId);
      res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': requestId }).end(reply.raw);
      return;
    }
    const content = typeof reply === 'string' ? reply : reply.content;
    const promptTokens = typeof reply === 'object' ? (reply.promptTokens ?? 100) : 100;
    const completionTokens = typeof reply === 'object' ? (reply.completionTokens ?? 10) : 10;
    log(requestId);
    if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
    res.setHeader('x-request-id', requestId);
    json(res, 200, {
      id: `chatcmpl-${n + 1}`,
      object: 'chat.completion',
      created: 0,
      model: (body as { model?: string } | null)?.model ?? STUB_MODEL,
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    chatRequests: () => requests.filter((r) => r.path === '/v1/chat/completions'),
    script(next) {
      replies = next;
      chats = 0;
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (text += chunk));
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}

function json(res: ServerResponse, status: number, data: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(data));
}

/** The images a chat request carried, in order: each PNG (decoded from its data URL) and its `detail`. */
export function imagesOf(body: unknown): { readonly png: Buffer; readonly detail: string }[] {
  const parts = (body as ChatBody).messages.flatMap((message) => (Array.isArray(message.content) ? (message.content as { type: string; image_url?: { url: string; detail: string } }[]) : []));
  return parts.flatMap((part) => (part.type === 'image_url' ? [{ png: Buffer.from(part.image_url!.url.replace(/^data:image\/png;base64,/, ''), 'base64'), detail: part.image_url!.detail }] : []));
}

/** The actions the request's (last) observation allows, from its text ("Actions allowed now: MF, RR, DONE."). */
export function legalActionsOf(body: ChatBody): string[] {
  const user = body.messages.filter((m) => m.role === 'user').map((m) => messageText(m.content)).join('\n');
  const lines = user.match(/^Actions allowed now: (.*)\.$/gm)!;
  return lines[lines.length - 1].replace(/^Actions allowed now: /, '').replace(/\.$/, '').split(', ');
}

/**
 * A follower's reply that depends on the request alone, so that a game or an episode played twice,
 * or in another order, goes the same way: one legal action chosen by a hash of the prompt (DONE a
 * quarter of the time it is allowed), with token counts from the same hash.
 */
export function followerByContent(body: ChatBody): StubReply {
  const user = body.messages.filter((m) => m.role === 'user').map((m) => messageText(m.content)).join('\n');
  const legal = legalActionsOf(body);
  let hash = 0;
  for (let i = 0; i < user.length; i++) hash = (Math.imul(hash, 31) + user.charCodeAt(i)) >>> 0;
  const action = hash % 4 === 0 && legal.includes('DONE') ? 'DONE' : legal[hash % legal.length];
  return { content: JSON.stringify({ actions: [action] }), promptTokens: 50 + (hash % 50), completionTokens: 5 };
}

