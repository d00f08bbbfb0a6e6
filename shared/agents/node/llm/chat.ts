/**
 * One chat call to an OpenAI-compatible endpoint through the `openai` package, with our own retry
 * loop (the package's is turned off) so that every HTTP attempt, its status and its time are on
 * record. Retried: 408, 409, 429, 5xx and lost connections, after the server's `retry-after`
 * (capped) or an exponential wait. Not retried: a timeout (the time is spent), other 4xx.
 */
import OpenAI, { APIConnectionError, APIError } from 'openai';
import type { ChatCompletion, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ImageDetail } from './config';
import type { ChatRole } from './templates';
import { estimatedTokens, type RateLimiter } from './rateLimit';

/** One HTTP attempt of a call: its status (null when no response came) and how long it took. */
export interface Attempt {
  readonly status: number | null;
  readonly ms: number;
  readonly error?: string;
}

export interface TextPart {
  readonly type: 'text';
  readonly text: string;
}

/** An image in the OpenAI chat format: a data URL (`data:image/png;base64,...`), and how finely the model is to look. */
export interface ImagePart {
  readonly type: 'image_url';
  readonly image_url: { readonly url: string; readonly detail: ImageDetail };
}

/** A message as sent: text, or text and an image (the observation's message when images are on). */
export interface RequestMessage {
  readonly role: ChatRole;
  readonly content: string | readonly (TextPart | ImagePart)[];
}

export interface ChatRequest {
  readonly model: string;
  readonly messages: readonly RequestMessage[];
  readonly temperature: number;
  readonly seed?: number;
  readonly max_tokens?: number;
}

export interface ChatResult {
  readonly status: 'ok' | 'backend_error' | 'timeout';
  /** The model's text, exactly as received (ok only); null when none came. */
  readonly reply: string | null;
  readonly error: string | null;
  /** Every HTTP attempt, retries included. */
  readonly attempts: readonly Attempt[];
  /** From the request to the last byte of the last attempt, retries and their waits included. */
  readonly latencyMs: number;
  readonly tokens: { readonly prompt: number; readonly completion: number; readonly total: number } | null;
  /** The response's `x-request-id` header, and its `id`. */
  readonly requestId: string | null;
  readonly responseId: string | null;
  /**
   * What the response says of how it was made, each only when the endpoint gave it: the choice's
   * `finish_reason` (`length`: the reply was cut at max_tokens), the response's `model` (the model
   * that answered, often a dated version of the one asked) and its `system_fingerprint`.
   */
  readonly finishReason?: string;
  readonly responseModel?: string;
  readonly systemFingerprint?: string;
}

export interface ChatOptions {
  readonly timeoutMs: number;
  readonly maxRetries: number;
  /** The first retry's wait when the server gives none; doubled each time, capped at MAX_RETRY_WAIT_MS. */
  readonly retryBaseMs?: number;
  /** Removes the API key from any text that is kept (error messages). */
  readonly redact: (text: string) => string;
  /** The requests and tokens a minute shared with the process's other agents of the endpoint; each attempt waits for room. */
  readonly limiter?: RateLimiter | null;
}

export const DEFAULT_RETRY_BASE_MS = 500;
export const MAX_RETRY_WAIT_MS = 10_000;
const RETRIED_STATUSES = new Set([408, 409, 429]);

/**
 * The client for `baseUrl`. With no key, no Authorization header is sent (local servers need none).
 * Nothing else comes from the environment: the package would otherwise read OPENAI_ADMIN_KEY,
 * OPENAI_ORG_ID and OPENAI_PROJECT_ID by itself, and send them.
 */
export function chatClient(baseUrl: string, apiKey: string | null): OpenAI {
  return new OpenAI({
    baseURL: baseUrl,
    apiKey: apiKey ?? 'no-key',
    adminAPIKey: null,
    organization: null,
    project: null,
    webhookSecret: null,
    ...(apiKey ? {} : { defaultHeaders: { Authorization: null } }),
    maxRetries: 0,
    // Nothing of the package's own logging: what matters is in the call records.
    logLevel: 'off',
  });
}

export async function chat(client: OpenAI, request: ChatRequest, options: ChatOptions): Promise<ChatResult> {
  let started = performance.now();
  const attempts: Attempt[] = [];
  const done = (result: Omit<ChatResult, 'attempts' | 'latencyMs'>): ChatResult => ({ ...result, attempts, latencyMs: Math.round(performance.now() - started) });
  const failure = (status: 'backend_error' | 'timeout', error: string, made: Provenance = {}) =>
    done({ status, reply: null, error: options.redact(error), tokens: null, requestId: null, responseId: null, ...made });
  for (let attempt = 0; ; attempt++) {
    const settle = options.limiter ? await options.limiter.take(estimatedTokens(request)) : () => {};
    // The wait for the first attempt's turn is the rate limit's, not the endpoint's latency.
    if (attempt === 0) started = performance.now();
    const attemptStarted = performance.now();
    const took = () => Math.round(performance.now() - attemptStarted);
    // Our own timer, over the headers and the body: the package's timeout error is not told apart
    // from other connection errors in every runtime.
    const timer = new AbortController();
    const timeout = setTimeout(() => timer.abort(), options.timeoutMs);
    try {
      const { data, response, request_id } = await client.chat.completions
        .create({ ...request, messages: [...request.messages] as ChatCompletionMessageParam[] }, { signal: timer.signal, timeout: options.timeoutMs + 60_000, maxRetries: 0 })
        .withResponse();
      attempts.push({ status: response.status, ms: took() });
      const completion = (data ?? {}) as Partial<typeof data>;
      const content = completion.choices?.[0]?.message?.content;
      // A refusal by a content filter, for one, comes without a message: its finish_reason says so.
      if (typeof content !== 'string') return failure('backend_error', 'the response is not a chat completion with a message', provenance(completion));
      const usage = completion.usage;
      settle(usage?.total_tokens ?? null);
      return done({
        status: 'ok',
        reply: content,
        error: null,
        tokens: usage ? { prompt: usage.prompt_tokens, completion: usage.completion_tokens, total: usage.total_tokens } : null,
        requestId: request_id ?? null,
        responseId: typeof completion.id === 'string' ? completion.id : null,
        ...provenance(completion),
      });
    } catch (error) {
      if (timer.signal.aborted) {
        attempts.push({ status: null, ms: took(), error: 'timeout' });
        return failure('timeout', `no answer within ${options.timeoutMs / 1000} s`);
      }
      if (!(error instanceof APIError)) {
        // The answer came but could not be read (a body that is not JSON): the server's fault, not retried.
        attempts.push({ status: 200, ms: took(), error: options.redact(messageOf(error)) });
        return failure('backend_error', `the response cannot be read: ${messageOf(error)}`);
      }
      const status = error instanceof APIConnectionError ? null : (error.status ?? null);
      // A request the server answered with an error used no tokens; one lost on the way may have.
      if (status !== null) settle(0);
      const why = status === null ? `cannot reach the endpoint: ${causeOf(error)}` : `HTTP ${status}: ${error.message}`;
      attempts.push({ status, ms: took(), error: options.redact(why) });
      if (!(status === null || RETRIED_STATUSES.has(status) || status >= 500) || attempt >= options.maxRetries) {
        return failure('backend_error', attempt > 0 ? `${why} (after ${attempt + 1} attempts)` : why);
      }
      await sleep(retryWait(error.headers, attempt, options.retryBaseMs ?? DEFAULT_RETRY_BASE_MS));
    } finally {
      clearTimeout(timeout);
    }
  }
}

type Provenance = Pick<ChatResult, 'finishReason' | 'responseModel' | 'systemFingerprint'>;

/** The response's finish_reason, model and system_fingerprint, each kept only when it is a string (servers send null or nothing). */
function provenance(completion: Partial<ChatCompletion>): Provenance {
  const given = { finishReason: completion.choices?.[0]?.finish_reason, responseModel: completion.model, systemFingerprint: completion.system_fingerprint };
  return Object.fromEntries(Object.entries(given).filter(([, value]) => typeof value === 'string')) as Provenance;
}

/** The server's `retry-after-ms` or `retry-after` (seconds), else base * 2^attempt; at most MAX_RETRY_WAIT_MS. */
export function retryWait(headers: Headers | undefined, attempt: number, baseMs: number): number {
  const ms = Number(headers?.get('retry-after-ms') ?? NaN);
  const seconds = Number(headers?.get('retry-after') ?? NaN);
  const asked = Number.isFinite(ms) ? ms : Number.isFinite(seconds) ? seconds * 1000 : baseMs * 2 ** attempt;
  return Math.min(Math.max(asked, 0), MAX_RETRY_WAIT_MS);
}

/** The lowest cause's message: "connect ECONNREFUSED 127.0.0.1:9" rather than "Connection error.". */
export function causeOf(error: unknown): string {
  let cause = error;
  while (hasCause(cause)) cause = cause.cause;
  return messageOf(cause);
}

// Errors from Node's own fetch may come from another realm (a test runner's sandbox), where
// `instanceof Error` is false: read them by shape.
function hasCause(error: unknown): error is { cause: unknown } {
  return typeof error === 'object' && error !== null && 'cause' in error && typeof error.cause === 'object' && error.cause !== null;
}

function messageOf(error: unknown): string {
  const message = typeof error === 'object' && error !== null && 'message' in error ? String(error.message) : String(error);
  return message.split('\n')[0];
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
