/**
 * The LLM agent, for either seat. Each time it is asked it renders its prompt template with the
 * observation, makes one chat call and answers the reply's whole plan. A reply that does not parse
 * or whose plan cannot be played is asked again once, with the parser's message; whatever still
 * gives no plan (that, a backend error, a timeout, a spent budget) is answered with the seat's
 * fallback: the follower passes (an empty plan: its turn runs out), the leader ends its turn when
 * it may, else passes. Every call, and every fallback, is a line in the episode's record file, and
 * is counted in `stats()`.
 */
import type OpenAI from 'openai';
import { APIConnectionError, APIError } from 'openai';
import type { ActContext, AgentIdentity, EpisodeStart } from '../../types';
import { causeOf, chat, chatClient, type ChatRequest } from './chat';
import type { LlmConfig } from './config';
import { CALL_RECORD_VERSION, CALL_STATUSES, KEY_PLACEHOLDER, RecordWriter, type CallRecord, type CallStatus } from './records';
import { parseReply, type ReplyAction, type ReplyCheck } from './reply';
import { fill, loadTemplate, render, type ChatMessage, type LlmRole, type PromptTemplate } from './templates';

/** What differs between the seats: the template's variables, the parser's check and the fallback. */
export interface Seat<O, A extends ReplyAction, R extends LlmRole = LlmRole> {
  readonly role: R;
  variables(observation: O): Record<string, string>;
  check(observation: O): ReplyCheck;
  fallback(observation: O): A[];
}

export interface LlmAgentOptions {
  readonly config: LlmConfig;
  /** Where the call records go: `<dir>/<episode id>.<role>.llm.ndjson`, one file per episode. */
  readonly recordDir: string;
  /** Where the key's variable is read (default process.env). */
  readonly env?: NodeJS.ProcessEnv;
  /** The first retry's wait when the server names none (tests make it short). */
  readonly retryBaseMs?: number;
  /** Where the preflight says what it could not check, in one line (default: standard error). */
  readonly notice?: (line: string) => void;
}

export interface LlmStats {
  /** Chat calls sent (budget lines are not sent). */
  readonly calls: number;
  /** Call records by status, budget included. */
  readonly byStatus: Readonly<Record<CallStatus, number>>;
  /** Observations answered with the fallback, and by the status of their last call. */
  readonly fallbacks: number;
  readonly fallbacksBy: Readonly<Partial<Record<CallStatus, number>>>;
  /** HTTP attempts beyond the first, over all calls. */
  readonly httpRetries: number;
  readonly tokens: { readonly prompt: number; readonly completion: number; readonly total: number };
  readonly latencyMs: { readonly total: number; readonly max: number };
  readonly episodes: number;
}

/** The agent cannot start: the endpoint cannot be reached, refuses the key or does not offer the model. */
export class LlmEndpointError extends Error {
  override name = 'LlmEndpointError';
}

/** The shortest API key taken: a shorter one cannot be real, and replacing its text in the records would alter what they hold. */
export const MIN_KEY_LENGTH = 8;

/** The agent cannot start: the key's variable holds something too short to be a key. */
export class LlmKeyError extends Error {
  override name = 'LlmKeyError';
}

/**
 * The agent stopped its run: `max-consecutive-failures` chat calls in a row got no reply (backend
 * errors, timeouts). Every later act throws it again, without a call.
 */
export class LlmFailingError extends Error {
  override name = 'LlmFailingError';
}

/** The statuses of a call that got no reply from the model: they count towards max-consecutive-failures. */
const FAILED_CALL_STATUSES: ReadonlySet<CallStatus> = new Set(['backend_error', 'timeout']);

export class LlmAgent<O, A extends ReplyAction, R extends LlmRole = LlmRole> {
  readonly name = 'llm';
  readonly role: R;
  readonly version: string;
  readonly identity: AgentIdentity;
  private writer: RecordWriter | null = null;
  private episode = '';
  /** Observations asked, chat calls sent and record lines written in this episode. */
  private observations = 0;
  private calls = 0;
  private lines = 0;
  /** Chat calls in a row, over the agent's life, that got no reply; and why the agent stopped, once it has. */
  private failuresInRow = 0;
  private stoppedBecause: string | null = null;
  private readonly counts = {
    calls: 0,
    byStatus: Object.fromEntries(CALL_STATUSES.map((status) => [status, 0])) as Record<CallStatus, number>,
    fallbacks: 0,
    fallbacksBy: {} as Partial<Record<CallStatus, number>>,
    httpRetries: 0,
    tokens: { prompt: 0, completion: 0, total: 0 },
    latencyMs: { total: 0, max: 0 },
    episodes: 0,
  };

  constructor(
    private readonly seat: Seat<O, A, R>,
    private readonly template: PromptTemplate,
    private readonly client: OpenAI,
    private readonly apiKey: string | null,
    private readonly options: LlmAgentOptions,
  ) {
    const { config } = options;
    this.role = seat.role;
    this.version = `prompt ${template.sha256.slice(0, 12)}`;
    this.identity = { name: this.name, version: this.version, spec: `llm ${config.model} at ${config.baseUrl}` };
  }

  /** The current episode's record file (null before the first reset). */
  get recordFile(): string | null {
    return this.writer?.path ?? null;
  }

  reset(start: EpisodeStart): void {
    this.writer?.close();
    const { config } = this.options;
    this.episode = start.episodeId;
    this.observations = 0;
    this.calls = 0;
    this.lines = 0;
    this.counts.episodes++;
    this.writer = RecordWriter.inDirectory(this.options.recordDir, start.episodeId, this.seat.role, this.apiKey);
    this.writer.write({
      kind: 'llm-header',
      v: CALL_RECORD_VERSION,
      episode: start.episodeId,
      role: this.seat.role,
      model: config.model,
      baseUrl: config.baseUrl,
      template: { path: this.template.path, sha256: this.template.sha256 },
      settings: {
        temperature: config.temperature,
        seed: config.seed ?? null,
        maxTokens: config.maxTokens ?? null,
        timeoutS: config.timeoutS,
        maxRetries: config.maxRetries,
        maxCalls: config.maxCalls,
        maxConsecutiveFailures: config.maxConsecutiveFailures,
        apiKeyEnv: config.apiKeyEnv,
      },
      time: new Date().toISOString(),
    });
  }

  async act(observation: O, context?: ActContext): Promise<A[]> {
    if (!this.writer) throw new Error(`the llm agent was asked to act before its episode began (reset)`);
    if (this.stoppedBecause) throw new LlmFailingError(this.stoppedBecause);
    const observationIndex = this.observations++;
    const check = this.seat.check(observation);
    let messages: ChatMessage[] = render(this.template, this.seat.variables(observation));
    const base = { kind: 'llm-call', role: this.seat.role, event: context?.event ?? null, observation: observationIndex, check } as const;
    for (const ask of [1, 2] as const) {
      if (this.calls >= this.options.config.maxCalls) {
        const fallback = this.seat.fallback(observation);
        this.record({ ...base, ask, request: null, reply: null, status: 'budget', actions: null, thought: null, error: `the budget of ${this.options.config.maxCalls} calls for ${this.episode} is spent`, attempts: [], latencyMs: 0, tokens: null, requestId: null, responseId: null, fallback: { actions: fallback } });
        return this.fellBack('budget', fallback);
      }
      this.calls++;
      const request = this.request(messages);
      const result = await chat(this.client, request, {
        timeoutMs: this.options.config.timeoutS * 1000,
        maxRetries: this.options.config.maxRetries,
        retryBaseMs: this.options.retryBaseMs,
        redact: (text) => this.redact(text),
      });
      const parsed = result.status === 'ok' ? parseReply(result.reply!, check) : null;
      const status: CallStatus = parsed ? parsed.status : (result.status as CallStatus);
      const plan = parsed?.status === 'ok' ? (parsed.actions as A[]) : null;
      this.failuresInRow = FAILED_CALL_STATUSES.has(status) ? this.failuresInRow + 1 : 0;
      const maxFailures = this.options.config.maxConsecutiveFailures;
      // The call that reaches the limit is on record, with no fallback: the run stops instead.
      const stops = this.failuresInRow >= maxFailures;
      const finalFailure = !plan && (ask === 2 || status === 'backend_error' || status === 'timeout');
      const fallback = finalFailure && !stops ? this.seat.fallback(observation) : null;
      this.record({
        ...base,
        ask,
        request,
        reply: result.reply,
        status,
        actions: parsed && parsed.status !== 'format_error' ? parsed.actions : null,
        thought: (parsed && parsed.status !== 'format_error' ? parsed.thought : undefined) ?? null,
        error: parsed && parsed.status !== 'ok' ? parsed.message : result.error,
        attempts: result.attempts,
        latencyMs: result.latencyMs,
        tokens: result.tokens,
        requestId: result.requestId,
        responseId: result.responseId,
        fallback: fallback ? { actions: fallback } : null,
      });
      if (plan) return plan;
      if (stops) {
        this.stoppedBecause = `the llm ${this.seat.role} stopped: ${maxFailures} chat calls in a row got no reply (max-consecutive-failures ${maxFailures}); the last: ${result.error}`;
        throw new LlmFailingError(this.stoppedBecause);
      }
      if (fallback) return this.fellBack(status, fallback);
      // The one re-ask: the reply, then the parser's message, in the template's correction.
      const why = parsed && parsed.status !== 'ok' ? parsed.message : '';
      messages = [...messages, { role: 'assistant', content: result.reply ?? '' }, { role: 'user', content: fill(this.template.correction, { error: why }) }];
    }
    throw new Error('unreachable: the second ask always ends the loop');
  }

  stats(): LlmStats {
    const c = this.counts;
    return { ...c, byStatus: { ...c.byStatus }, fallbacksBy: { ...c.fallbacksBy }, tokens: { ...c.tokens }, latencyMs: { ...c.latencyMs } };
  }

  close(): void {
    this.writer?.close();
    this.writer = null;
  }

  private request(messages: ChatMessage[]): ChatRequest {
    const { config } = this.options;
    return {
      model: config.model,
      messages,
      temperature: config.temperature,
      ...(config.seed !== undefined ? { seed: config.seed } : {}),
      ...(config.maxTokens !== undefined ? { max_tokens: config.maxTokens } : {}),
    };
  }

  private record(line: Omit<CallRecord, 'call' | 'time'>): void {
    const c = this.counts;
    c.byStatus[line.status]++;
    if (line.request) c.calls++;
    c.httpRetries += Math.max(0, line.attempts.length - 1);
    if (line.tokens) {
      c.tokens.prompt += line.tokens.prompt;
      c.tokens.completion += line.tokens.completion;
      c.tokens.total += line.tokens.total;
    }
    c.latencyMs.total += line.latencyMs;
    c.latencyMs.max = Math.max(c.latencyMs.max, line.latencyMs);
    const { kind, ...fields } = line;
    this.writer!.write({ kind, call: ++this.lines, ...fields, time: new Date().toISOString() });
  }

  private fellBack(status: CallStatus, fallback: A[]): A[] {
    this.counts.fallbacks++;
    this.counts.fallbacksBy[status] = (this.counts.fallbacksBy[status] ?? 0) + 1;
    return fallback;
  }

  private redact(text: string): string {
    return this.apiKey ? text.split(this.apiKey).join(KEY_PLACEHOLDER) : text;
  }
}

/** The key from its variable (unset or empty: none), the template loaded, the endpoint checked. */
export async function startLlmAgent<O, A extends ReplyAction, R extends LlmRole>(seat: Seat<O, A, R>, options: LlmAgentOptions): Promise<LlmAgent<O, A, R>> {
  const { config } = options;
  const apiKey = (options.env ?? process.env)[config.apiKeyEnv] || null;
  // Never the key itself, nor its length: only where it came from.
  if (apiKey !== null && apiKey.length < MIN_KEY_LENGTH) {
    throw new LlmKeyError(`${config.apiKeyEnv} holds fewer than ${MIN_KEY_LENGTH} characters, too short to be an API key: set it to the key, or unset it for an endpoint that needs none`);
  }
  const template = loadTemplate(seat.role, config.prompt);
  const client = chatClient(config.baseUrl, apiKey);
  const notice = options.notice ?? ((line: string) => void process.stderr.write(`${line}\n`));
  await preflight(client, config, (text) => (apiKey ? text.split(apiKey).join(KEY_PLACEHOLDER) : text), notice);
  return new LlmAgent(seat, template, client, apiKey, options);
}

/** How many of the offered models a refusal names, the nearest to the one asked first. */
const MODELS_NAMED = 12;

/**
 * GET /models before any game: an endpoint that cannot be reached, or refuses the key (401, 403),
 * stops the agent at once, and so does a list of models without the configured one. An endpoint
 * that answers with another error, or lists no models, is told in one line (`notice`) and passes:
 * the model is then not checked.
 */
export async function preflight(client: OpenAI, config: LlmConfig, redact: (text: string) => string, notice: (line: string) => void = () => {}): Promise<void> {
  let listed: unknown;
  try {
    listed = (await client.models.list({ timeout: config.timeoutS * 1000, maxRetries: 0 })).data;
  } catch (error) {
    if (error instanceof APIConnectionError) throw new LlmEndpointError(redact(`cannot reach ${config.baseUrl}: ${causeOf(error)}`));
    if (error instanceof APIError && (error.status === 401 || error.status === 403)) {
      throw new LlmEndpointError(redact(`${config.baseUrl} refused the key from ${config.apiKeyEnv} (HTTP ${error.status})`));
    }
    if (!(error instanceof APIError)) throw error;
    notice(redact(`${config.baseUrl} answered GET /models with HTTP ${error.status ?? 'error'}: the model ${JSON.stringify(config.model)} is not checked before the calls`));
    return;
  }
  const models = Array.isArray(listed) ? listed.flatMap((model: unknown) => (typeof (model as { id?: unknown } | null)?.id === 'string' ? [(model as { id: string }).id] : [])) : [];
  if (models.length === 0) {
    notice(redact(`${config.baseUrl} lists no models: the model ${JSON.stringify(config.model)} is not checked before the calls`));
    return;
  }
  // Some endpoints (Gemini's) list `models/<name>` and take `<name>` in a call.
  if (models.some((id) => id === config.model || id === `models/${config.model}`)) return;
  const nearest = [...new Set(models)].sort((a, b) => editDistance(a, config.model) - editDistance(b, config.model) || a.localeCompare(b));
  const named = nearest.slice(0, MODELS_NAMED).join(', ') + (nearest.length > MODELS_NAMED ? ` and ${nearest.length - MODELS_NAMED} more` : '');
  throw new LlmEndpointError(redact(`${config.baseUrl} does not offer the model ${JSON.stringify(config.model)}; it offers ${named}`));
}

/** Levenshtein's distance: the offered models nearest to a misspelt one come first. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row.push(Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1)));
    previous = row;
  }
  return previous[b.length];
}
