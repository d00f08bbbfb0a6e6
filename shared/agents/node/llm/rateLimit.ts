/**
 * Requests and tokens a minute to an endpoint, shared by every LLM agent of the process that asks
 * the same endpoint for the same model (games played at once each have their own agent): each HTTP
 * attempt waits until the last 60 s hold fewer than `rpm` requests and fewer than `tpm` tokens.
 * Tokens are known only once a reply counts them, so an attempt in flight counts what its request
 * may cost at most (its prompt's characters / 4, an image as IMAGE_TOKENS, plus `max_tokens` or
 * 1,000), and its reply's count replaces that estimate. The server's own `retry-after` is honoured by the chat client
 * besides.
 */

/** The window the limits are over. */
const WINDOW_MS = 60_000;
/** A reply's tokens when the request sets no `max_tokens`: an estimate for the wait only. */
const UNBOUNDED_REPLY_TOKENS = 1_000;
/**
 * An image's tokens, for the wait only: above what providers count for a frame up to 1024 x 1024
 * at high detail (OpenAI some 765, Anthropic some 1,400 at most). Its data URL's characters, counted
 * as text, would be tens of thousands.
 */
export const IMAGE_TOKENS = 1_500;

export interface RateLimits {
  /** Requests a minute (HTTP attempts, retries included); absent: no limit. */
  readonly rpm?: number;
  /** Prompt and completion tokens a minute; absent: no limit. */
  readonly tpm?: number;
}

interface Spent {
  readonly at: number;
  tokens: number;
}

/** What the estimate reads of a request (a ChatRequest): its messages' text and images, and its reply's limit. */
interface Estimated {
  readonly messages: readonly { readonly content: string | readonly ({ readonly type: 'text'; readonly text: string } | { readonly type: 'image_url' })[] }[];
  readonly max_tokens?: number;
}

/** A request's largest cost in tokens before it is sent: its text's characters / 4, its images, and its reply's limit. */
export function estimatedTokens(request: Estimated): number {
  const parts = request.messages.flatMap(({ content }) => (typeof content === 'string' ? [{ type: 'text' as const, text: content }] : content));
  const characters = parts.reduce((sum, part) => sum + (part.type === 'text' ? JSON.stringify(part.text).length : 0), 0);
  const images = parts.filter((part) => part.type === 'image_url').length;
  return Math.ceil(characters / 4) + images * IMAGE_TOKENS + (request.max_tokens ?? UNBOUNDED_REPLY_TOKENS);
}

export class RateLimiter {
  private readonly spent: Spent[] = [];
  /** Attempts wait in order of arrival. */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    readonly limits: RateLimits,
    private readonly now: () => number = Date.now,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  ) {}

  /** Waits for room for one request of `tokens` (estimated); returns how to settle it with the tokens the reply counted. */
  async take(tokens: number): Promise<(counted: number | null) => void> {
    const turn = this.queue.then(() => this.waitForRoom(tokens));
    this.queue = turn.then(
      () => undefined,
      () => undefined,
    );
    const entry = await turn;
    return (counted) => {
      if (counted !== null) entry.tokens = counted;
    };
  }

  private async waitForRoom(tokens: number): Promise<Spent> {
    const { rpm, tpm } = this.limits;
    for (;;) {
      const now = this.now();
      while (this.spent.length > 0 && this.spent[0].at <= now - WINDOW_MS) this.spent.shift();
      const requestsFull = rpm !== undefined && this.spent.length >= rpm;
      const used = this.spent.reduce((sum, entry) => sum + entry.tokens, 0);
      // A request larger than the whole limit goes alone, into an empty window, rather than never.
      const tokensFull = tpm !== undefined && this.spent.length > 0 && used + tokens > tpm;
      if (!requestsFull && !tokensFull) {
        const entry = { at: now, tokens };
        this.spent.push(entry);
        return entry;
      }
      await this.sleep(Math.max(1, this.spent[0].at + WINDOW_MS - now));
    }
  }
}

const shared = new Map<string, RateLimiter>();

/** The process's limiter for `endpoint` and `model` with these limits; null when there are none. */
export function sharedRateLimiter(endpoint: string, model: string, limits: RateLimits): RateLimiter | null {
  if (limits.rpm === undefined && limits.tpm === undefined) return null;
  const key = JSON.stringify([endpoint, model, limits.rpm ?? null, limits.tpm ?? null]);
  let limiter = shared.get(key);
  if (!limiter) shared.set(key, (limiter = new RateLimiter(limits)));
  return limiter;
}
