/**
 * The LLM agent, for either seat. Each time it is asked it renders its prompt template with the
 * observation, makes one chat call and answers the reply's whole plan. A reply that does not parse,
 * whose plan cannot be played or whose plan is empty is asked again once, with the parser's
 * message; whatever still gives no plan (that, a backend error, a timeout, a spent budget) is
 * answered with the seat's fallback: the follower passes (an empty plan: its turn runs out), the
 * leader ends its turn when it may, else passes. Every call, and every fallback, is a line in the
 * episode's record file, and is counted in `stats()`; so is a plan the game cut short, on the next
 * call's line. With images on, each observation's message carries the seat's frame (images.ts).
 */
import type OpenAI from 'openai';
import { APIConnectionError, APIError } from 'openai';
import { AgentRunStopped, type ActContext, type AgentIdentity, type EpisodeStart } from '../../types';
import { MOVES } from '../../../engine/actions';
import { FrameRendererError } from '../../../frames/node/renderer';
import { causeOf, chat, chatClient, type ChatRequest, type ChatResult, type RequestMessage } from './chat';
import { sharedRateLimiter } from './rateLimit';
import type { LlmConfig } from './config';
import { CALL_RECORD_VERSION, callCost, countCall, KEY_PLACEHOLDER, NO_CALLS, RecordWriter, type CallCounts, type CallRecord, type CallStatus, type ImageRef, type PlanCut } from './records';
import { illegality, parseReply, type ParsedReply, type ReplyAction, type ReplyCheck } from './reply';
import { fewShotFor, type FewShot, type FewShotSource } from './fewShot';
import { Conversation } from './history';
import { drawImage, IMAGE_FORMAT, imageHeaderSettings, imageSettings, replaceImage, sharedFrameRenderer, withImage, type ImageSettings, type SeatImage } from './images';
import { fill, loadTemplate, render, type LlmRole, type PromptTemplate } from './templates';

/** What the agent itself reads of either seat's observation: the steps left in the turn, which each move costs one of. */
export interface SeatObservation {
  readonly stepsLeft: number;
}

/** What differs between the seats: the template's variables, the parser's check, what a plan is made for, and the fallback. */
export interface Seat<O extends SeatObservation, A extends ReplyAction, R extends LlmRole = LlmRole> {
  readonly role: R;
  variables(observation: O): Record<string, string>;
  check(observation: O): ReplyCheck;
  /** The situation a plan is made in, as the hosts' plan players name it: they drop a plan's rest when it changes. */
  situation(observation: O): string;
  /** The partner's events in the seat's turn so far that the observation tells of (the leader's feedback, to a follower). */
  heard(observation: O): number;
  fallback(observation: O): A[];
  /** What a kept conversation (keep-history) lasts for: the follower's instruction; absent: the seat keeps none. */
  conversation?(observation: O): string;
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
  /** What the run's LLM calls have cost and how many were sent, shared by all its agents, and the most they may (absent: no limit). */
  readonly spend?: RunSpend | null;
  /** How the worked examples of few-shot-k are read from logs; without it, few-shot-k above 0 is refused. */
  readonly fewShot?: FewShotSource;
}

/** The agent's call lines over its life, counted, and its episodes. */
export interface LlmStats extends CallCounts {
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
export class LlmFailingError extends AgentRunStopped {
  override name = 'LlmFailingError';
}

/** The agent stopped its run: the run's calls reached a limit of its spend (its max cost). Every later act throws it again, without a call. */
export class LlmCostLimitError extends AgentRunStopped {
  override name = 'LlmCostLimitError';
}

/**
 * The agent stopped its run: its image could not be drawn (the frame renderer failed, after its own
 * retry). Games played on without the image the settings name would not be the ones asked for.
 */
export class LlmImageError extends AgentRunStopped {
  override name = 'LlmImageError';
}

/** What a spend's limits are, each left out when there is none. */
export interface SpendLimits {
  /** Dollars the calls may cost. */
  readonly maxCost?: number;
  /** Chat calls that may be sent. */
  readonly maxCalls?: number;
}

/**
 * What a run's LLM calls have cost in dollars and how many were sent, over every agent it started
 * (both seats, every pair, games played at once), and the most they may (`--llm-max-cost`; a
 * server's `--llm-max-calls-total` too). Once a limit is reached no agent sends another call: the
 * run stops, as it does when the endpoint stops answering, rather than score games its model did
 * not play. A call's cost is known only when it returns, so the last calls (those on their way at
 * once) may go past the max cost; a call is counted as it is sent, so the calls never go past theirs.
 */
export class RunSpend {
  private dollars = 0;
  private sent = 0;
  private readonly watchers: (() => void)[] = [];

  /** `whose`: whose calls they are, in the words that say a limit was reached. */
  constructor(
    readonly limits: SpendLimits,
    private readonly whose = "the run's",
  ) {}

  get spent(): number {
    return this.dollars;
  }

  get calls(): number {
    return this.sent;
  }

  /** The limit reached, in words, or null while calls may be sent. */
  get limitReached(): string | null {
    const { maxCost, maxCalls } = this.limits;
    if (maxCost !== undefined && this.dollars >= maxCost) return `${this.whose} LLM calls have cost $${this.dollars.toFixed(4)}, which reaches its max cost of $${maxCost}`;
    if (maxCalls !== undefined && this.sent >= maxCalls) return `${this.whose} LLM calls number ${this.sent}, which reaches its max of ${maxCalls} calls`;
    return null;
  }

  get reached(): boolean {
    return this.limitReached !== null;
  }

  /** The largest share of a limit used so far (1: reached). */
  get used(): number {
    const { maxCost, maxCalls } = this.limits;
    return Math.max(maxCost === undefined ? 0 : this.dollars / maxCost, maxCalls === undefined ? 0 : this.sent / maxCalls);
  }

  /** A call is being sent. */
  sending(): void {
    this.sent += 1;
    this.changed();
  }

  add(cost: number | null): void {
    this.dollars += cost ?? 0;
    this.changed();
  }

  /** Calls `watcher` after each call sent and each cost added. */
  watch(watcher: () => void): void {
    this.watchers.push(watcher);
  }

  private changed(): void {
    for (const watcher of this.watchers) watcher();
  }
}

/** The statuses of a call that got no reply from the model: they count towards max-consecutive-failures. */
const FAILED_CALL_STATUSES: ReadonlySet<CallStatus> = new Set(['backend_error', 'timeout']);

const MOVE_CODES: ReadonlySet<ReplyAction> = new Set(MOVES);

/** One ask of an observation: what was sent (null: the budget is spent, nothing was), what came back, and the reply read. */
interface Exchange {
  readonly request: ChatRequest | null;
  /** The chat's result but its status, which is the call's (`status`). */
  readonly answer: Omit<ChatResult, 'status'>;
  readonly status: CallStatus;
  /** Null when no reply came. */
  readonly parsed: ParsedReply | null;
}

/** The fields an observation's call lines share (the plan cut only on its first). */
interface Asked {
  readonly event: number | null;
  readonly observation: number;
  readonly check: ReplyCheck;
  readonly planCut: PlanCut | null;
  /** With keep-history: the messages of earlier calls the requests carry. */
  readonly history?: number;
  /** With images: the frame the observation's message carries. */
  readonly image: SeatImage | null;
}

/** Where the seat stands in its turn, as far as a plan's progress shows in it. */
interface Moment {
  readonly situation: string;
  readonly heard: number;
  readonly stepsLeft: number;
}

/** A plan answered while the host told the events: enough to see at the next ask how far it got. */
interface AnsweredPlan extends Moment {
  readonly call: number;
  readonly actions: readonly ReplyAction[];
  readonly event: number;
}

export class LlmAgent<O extends SeatObservation, A extends ReplyAction, R extends LlmRole = LlmRole> {
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
  private stopped: AgentRunStopped | null = null;
  /** The plan last answered in this episode, when the host told the event it was asked at. */
  private lastPlan: AnsweredPlan | null = null;
  private counts = NO_CALLS;
  private episodes = 0;
  private readonly conversation: Conversation<O>;
  /** Null when images are off; else how they are drawn, what `{{image}}` says, and the episode's scene (a new one each reset). */
  private readonly images: ImageSettings | null;
  private readonly imageNote: string;
  private world = '';

  constructor(
    private readonly seat: Seat<O, A, R>,
    private readonly template: PromptTemplate,
    private readonly client: OpenAI,
    private readonly apiKey: string | null,
    private readonly options: LlmAgentOptions,
    private readonly fewShot: FewShot,
  ) {
    const { config } = options;
    this.conversation = new Conversation(config.keepHistory ? seat.conversation : undefined);
    this.images = imageSettings(config, seat.role);
    this.imageNote = this.images && template.image ? `\n\n${template.image}` : '';
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
    this.lastPlan = null;
    this.conversation.clear();
    this.episodes++;
    // A scene only ever adds the cells it is shown: each agent's each episode has its own.
    this.world = `${start.episodeId}:${this.seat.role}:${++worlds}`;
    this.writer = RecordWriter.inDirectory(this.options.recordDir, start.episodeId, this.seat.role, this.apiKey);
    this.writer.write({
      kind: 'llm-header',
      v: CALL_RECORD_VERSION,
      episode: start.episodeId,
      role: this.seat.role,
      model: config.model,
      baseUrl: config.baseUrl,
      template: { path: this.template.path, sha256: this.template.sha256 },
      ...(this.fewShot.examples && { fewShotExamples: this.fewShot.examples }),
      settings: {
        temperature: config.temperature,
        seed: config.seed ?? null,
        maxTokens: config.maxTokens ?? null,
        ...this.fewShot.settings,
        ...this.conversation.settings,
        timeoutS: config.timeoutS,
        maxRetries: config.maxRetries,
        maxCalls: config.maxCalls,
        maxConsecutiveFailures: config.maxConsecutiveFailures,
        pricePerMillionInput: config.pricePerMillionInput ?? null,
        pricePerMillionOutput: config.pricePerMillionOutput ?? null,
        ...(config.rpm !== undefined && { rpm: config.rpm }),
        ...(config.tpm !== undefined && { tpm: config.tpm }),
        ...imageHeaderSettings(this.images),
        apiKeyEnv: config.apiKeyEnv,
      },
      time: new Date().toISOString(),
    });
  }

  async act(observation: O, context?: ActContext): Promise<A[]> {
    if (!this.writer) throw new Error(`the llm agent was asked to act before its episode began (reset)`);
    if (this.stopped) throw this.stopped;
    const check = this.seat.check(observation);
    const event = context?.event;
    const variables = { ...this.seat.variables(observation), examples: this.fewShot.text, image: this.imageNote };
    const { messages: rendered, carried } = this.conversation.around(observation, render(this.template, variables));
    const image = await this.imageNow(context);
    const messages: RequestMessage[] = image ? withImage(rendered, image) : rendered;
    const asked: Asked = {
      event: event ?? null,
      observation: this.observations++,
      check,
      planCut: this.planCut(observation, check, event),
      ...(carried !== null && { history: carried }),
      image,
    };
    let exchange = await this.exchange(messages, check);
    let ask: 1 | 2 = 1;
    if (exchange.parsed && exchange.parsed.status !== 'ok') {
      // The one re-ask: the reply, then the parser's message, in the template's correction.
      this.record(asked, ask, exchange, null);
      const correction = fill(this.template.correction, { error: exchange.parsed.message });
      exchange = await this.exchange([...messages, { role: 'assistant', content: exchange.answer.reply ?? '' }, { role: 'user', content: correction }], check);
      ask = 2;
    }
    const plan = exchange.parsed?.status === 'ok' ? (exchange.parsed.actions as A[]) : null;
    // The call that reaches a limit is on record, with no fallback: the run stops instead.
    const stop = this.stop(exchange);
    const fallback = plan || stop ? null : this.seat.fallback(observation);
    this.record(asked, ask, exchange, fallback);
    this.conversation.keep(exchange.request?.messages, exchange.answer.reply);
    this.lastPlan = plan && event !== undefined ? { call: this.lines, actions: plan, event, ...this.moment(observation) } : null;
    if (stop) throw (this.stopped = stop);
    return plan ?? fallback!;
  }

  /**
   * The seat's frame now, drawn from the view the host gives (`context.frame`, read before anything
   * is awaited: the host's view moves on after the answer); null when images are off, or when no
   * call can be sent (the budget or the run's cost is spent).
   */
  private async imageNow(context: ActContext | undefined): Promise<SeatImage | null> {
    if (!this.images || this.unsendable()) return null;
    if (!context?.frame) throw new Error(`the llm ${this.seat.role} sends images, but its host gave it no view to draw (ActContext.frame)`);
    const view = context.frame();
    try {
      return await drawImage(view, this.world, this.images);
    } catch (error) {
      if (!(error instanceof FrameRendererError)) throw error;
      throw (this.stopped = new LlmImageError(`the llm ${this.seat.role} stopped: its image could not be drawn: ${error.message}`));
    }
  }

  /** Why the run stops after this exchange, if it does: the run's max cost, or too many calls in a row without a reply. */
  private stop({ status, answer }: Exchange): AgentRunStopped | null {
    const stopped = `the llm ${this.seat.role} stopped`;
    if (status === 'cost_limit') return new LlmCostLimitError(`${stopped}: ${answer.error}`);
    const maxFailures = this.options.config.maxConsecutiveFailures;
    if (this.failuresInRow < maxFailures) return null;
    return new LlmFailingError(`${stopped}: ${maxFailures} chat calls in a row got no reply (max-consecutive-failures ${maxFailures}); the last: ${answer.error}`);
  }

  stats(): LlmStats {
    return { ...this.counts, episodes: this.episodes };
  }

  close(): void {
    this.writer?.close();
    this.writer = null;
  }

  private request(messages: RequestMessage[]): ChatRequest {
    const { config } = this.options;
    return {
      model: config.model,
      messages,
      temperature: config.temperature,
      ...(config.seed !== undefined ? { seed: config.seed } : {}),
      ...(config.maxTokens !== undefined ? { max_tokens: config.maxTokens } : {}),
    };
  }

  /** The exchange that sends nothing, when the run's max cost is reached or the episode's budget spent; else null. */
  private unsendable(): Exchange | null {
    const { config, spend } = this.options;
    const spent = spend?.limitReached;
    if (spent) return unsent('cost_limit', spent);
    if (this.calls >= config.maxCalls) return unsent('budget', `the budget of ${config.maxCalls} calls for ${this.episode} is spent`);
    return null;
  }

  /** One chat call, or none when the run's max cost is reached or the episode's budget spent; its reply read against `check`. */
  private async exchange(messages: RequestMessage[], check: ReplyCheck): Promise<Exchange> {
    const unsent = this.unsendable();
    if (unsent) return unsent;
    const { config } = this.options;
    this.calls++;
    this.options.spend?.sending();
    const request = this.request(messages);
    const { status, ...answer } = await chat(this.client, request, {
      timeoutMs: config.timeoutS * 1000,
      maxRetries: config.maxRetries,
      retryBaseMs: this.options.retryBaseMs,
      redact: (text) => this.redact(text),
      limiter: sharedRateLimiter(config.baseUrl, config.model, { rpm: config.rpm, tpm: config.tpm }),
    });
    this.failuresInRow = FAILED_CALL_STATUSES.has(status) ? this.failuresInRow + 1 : 0;
    const parsed = answer.reply === null ? null : parseReply(answer.reply, check);
    return { request, answer, status: parsed?.status ?? status, parsed };
  }

  /**
   * How far the plan answered before got, when the host tells the events. Between two asks in one
   * turn only the plan's own actions are logged, each move costing a step, and what the seat heard
   * of its partner: fewer of the plan's events than its actions, the steps agreeing, mean the plan
   * was cut at the first action not played, which the game refused (it is not allowed now) or the
   * host dropped (the plan's situation changed). Across a turn's end (other events, the steps
   * renewed) nothing is said: the turn's end drops a plan by itself.
   */
  private planCut(observation: O, check: ReplyCheck, event: number | undefined): PlanCut | null {
    const plan = this.lastPlan;
    if (!plan || event === undefined) return null;
    const now = this.moment(observation);
    const played = event - plan.event - (now.heard - plan.heard);
    if (played < 0 || played >= plan.actions.length) return null;
    const moves = plan.actions.slice(0, played).filter((action) => MOVE_CODES.has(action)).length;
    if (plan.stepsLeft - moves !== now.stepsLeft) return null;
    const cut = { call: plan.call, at: played, action: plan.actions[played] };
    if (now.situation !== plan.situation) return { ...cut, refused: false, reason: `${plan.situation} -> ${now.situation}` };
    const refusal = illegality([cut.action], check);
    return refusal ? { ...cut, refused: true, reason: refusal } : null;
  }

  private moment(observation: O): Moment {
    return { situation: this.seat.situation(observation), heard: this.seat.heard(observation), stepsLeft: observation.stepsLeft };
  }

  /** The call's line, counted and written: the one place a call record is made. */
  private record(asked: Asked, ask: 1 | 2, { request, answer, status, parsed }: Exchange, fallback: readonly A[] | null): void {
    const { planCut, image, ...shared } = asked;
    const { reply, error, ...http } = answer;
    const read = parsed && parsed.status !== 'format_error' ? parsed : null;
    const sent = request && image ? this.imageOnRecord(request, image) : null;
    const line: CallRecord = {
      kind: 'llm-call',
      call: ++this.lines,
      role: this.seat.role,
      ...shared,
      ...(planCut && ask === 1 ? { planCut } : {}),
      ask,
      request: sent?.request ?? request,
      ...(sent && { images: [sent.image] }),
      reply,
      status,
      actions: read ? read.actions : null,
      thought: read?.thought ?? null,
      error: parsed && parsed.status !== 'ok' ? parsed.message : error,
      ...http,
      fallback: fallback ? { actions: fallback } : null,
      cost: callCost(answer.tokens, this.options.config),
      time: new Date().toISOString(),
    };
    this.options.spend?.add(line.cost ?? null);
    this.counts = countCall(this.counts, line);
    this.writer!.write(line);
  }

  /** The request as the records keep it: the image a file beside them, its data URL replaced by the file's path. */
  private imageOnRecord(request: ChatRequest, image: SeatImage): { request: ChatRequest; image: ImageRef } {
    const file = this.writer!.saveImage(image.png, image.sha256, IMAGE_FORMAT);
    const messages = replaceImage(request.messages, image, { ...image.part, image_url: { ...image.part.image_url, url: file } });
    return { request: { ...request, messages }, image: { sha256: image.sha256, file, width: image.size.width, height: image.size.height, camera: image.camera } };
  }

  private redact(text: string): string {
    return this.apiKey ? text.split(this.apiKey).join(KEY_PLACEHOLDER) : text;
  }
}

/** Scenes named so far in the process: each agent's each episode draws in its own. */
let worlds = 0;

/** An ask that sent nothing (`budget`, `cost_limit`), and why. */
function unsent(status: CallStatus, error: string): Exchange {
  return { request: null, status, parsed: null, answer: { reply: null, error, attempts: [], latencyMs: 0, tokens: null, requestId: null, responseId: null } };
}

/** The key from its variable (unset or empty: none), the template loaded, the endpoint checked. */
export async function startLlmAgent<O extends SeatObservation, A extends ReplyAction, R extends LlmRole>(seat: Seat<O, A, R>, options: LlmAgentOptions): Promise<LlmAgent<O, A, R>> {
  const { config } = options;
  const apiKey = (options.env ?? process.env)[config.apiKeyEnv] || null;
  // Never the key itself, nor its length: only where it came from.
  if (apiKey !== null && apiKey.length < MIN_KEY_LENGTH) {
    throw new LlmKeyError(`${config.apiKeyEnv} holds fewer than ${MIN_KEY_LENGTH} characters, too short to be an API key: set it to the key, or unset it for an endpoint that needs none`);
  }
  const template = loadTemplate(seat.role, config.prompt);
  const client = chatClient(config.baseUrl, apiKey);
  const notice = options.notice ?? ((line: string) => void process.stderr.write(`${line}\n`));
  // Before the endpoint is asked: examples that cannot be drawn stop the command without a call.
  const fewShot = fewShotFor(seat.role, template, config, options.fewShot, notice);
  if (config.keepHistory && !seat.conversation) notice(`keep-history: the llm ${seat.role} keeps no conversation (it is a follower's, by instruction)`);
  await preflight(client, config, (text) => (apiKey ? text.split(apiKey).join(KEY_PLACEHOLDER) : text), notice);
  // Images need the frame renderer: one that cannot start stops the agent now, not at its first call.
  if (imageSettings(config, seat.role)) await sharedFrameRenderer();
  return new LlmAgent(seat, template, client, apiKey, options, fewShot);
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
