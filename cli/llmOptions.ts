/**
 * The `--llm-*` options, for any command that seats agents: `addLlmOptions(command)` adds them,
 * `startLlmFromOptions` starts the LLM agent they describe (config file under the options, the
 * template loaded, the endpoint checked) or stops the command with one line and exit 2.
 */
import { Option, type Command } from 'commander';
import { LlmAgent, LlmEndpointError, LlmKeyError, RunSpend } from '../shared/agents/node/llm/agent';
import { checkPartial, IMAGE_DETAILS, LLM_CONFIG_KEYS, LLM_DEFAULTS, LlmConfigError, readLlmConfigFile, resolveLlmConfig, type LlmConfig, type PartialLlmConfig } from '../shared/agents/node/llm/config';
import { startLlmFollower, startLlmLeader, type LlmFollower, type LlmLeader } from '../shared/agents/node/llm/seats';
import { TemplateError } from '../shared/agents/node/llm/templates';
import { FewShotError } from '../shared/agents/node/llm/fewShot';
import { DEFAULT_IMAGE_DETAIL, DEFAULT_IMAGE_SIZE } from '../shared/agents/node/llm/images';
import { FrameRendererError } from '../shared/frames/node/renderer';
import { loadRecording } from '../shared/eval/recording';
import { catalogueEntry, LLM_AGENT } from '../shared/agents/catalogue';
import { formatCost, type LlmCounts } from '../shared/eval/llmSummary';
import { ROLES, type Role } from '../shared/engine/state';
import { CliError } from './errors';
import { integerOption } from './options';

/** What commander gives for the options (camel-cased names). */
export interface LlmCliOptions {
  llmConfig?: string;
  llmPricePerMillionInput?: number;
  llmPricePerMillionOutput?: number;
  /** Dollars the run's LLM calls may cost (selfplay and eval, addLlmRunOptions; serve's agents together, addLlmServerOptions). */
  llmMaxCost?: number;
  /** Chat calls a server's LLM agents may send together (serve only, addLlmServerOptions). */
  llmMaxCallsTotal?: number;
  llmBaseUrl?: string;
  llmModel?: string;
  llmApiKeyEnv?: string;
  llmTemperature?: number;
  llmSeed?: number;
  llmTimeoutS?: number;
  llmMaxRetries?: number;
  llmMaxCalls?: number;
  llmMaxTokens?: number;
  llmMaxConsecutiveFailures?: number;
  llmRpm?: number;
  llmTpm?: number;
  llmPrompt?: string;
  llmRecords?: string;
  llmFewShotLogs?: string[];
  llmFewShotK?: number;
  llmFewShotSeed?: number;
  llmKeepHistory?: boolean;
  /** Which llm seats are sent their frame as an image (config `images`, per seat). */
  llmImages?: ImageSeats;
  llmImageSize?: string;
  llmImageDetail?: string;
  /** Not an option: the ids of the games `eval --logs` evaluates, never drawn as worked examples. */
  evaluatedGames?: readonly string[];
}

function numberOption(name: string, min: number, max: number, minIncluded = true): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n > max || (minIncluded ? n < min : n <= min)) {
      throw new CliError(`${name} must be a number ${minIncluded ? `from ${min}` : `above ${min}`} up to ${max}, got ${JSON.stringify(value)}`);
    }
    return n;
  };
}

/** What `--llm-images` names: the seats whose llm agent is sent its frame. */
export const IMAGE_SEATS = ['follower', 'leader', 'both', 'none'] as const;
export type ImageSeats = (typeof IMAGE_SEATS)[number];

function imageSeatsOption(value: string): ImageSeats {
  if (!(IMAGE_SEATS as readonly string[]).includes(value)) throw new CliError(`--llm-images must be one of ${IMAGE_SEATS.join(', ')}, got ${JSON.stringify(value)}`);
  return value as ImageSeats;
}

/** Whether `--llm-images` sends a seat of `role` images; without a role (the run's settings alone), only `both` does. */
const seesImages = (seats: ImageSeats, role: Role | undefined): boolean => seats === 'both' || seats === role;

/** Adds the --llm-* options (no defaults here: a --llm-config file's values must show through). */
export function addLlmOptions(command: Command): Command {
  const options = [
    new Option('--llm-config <file>', 'a YAML file with the --llm-* settings (keys without --llm-); options given here win'),
    new Option('--llm-base-url <url>', `the OpenAI-compatible endpoint, up to its /v1 (default ${LLM_DEFAULTS.baseUrl})`),
    new Option('--llm-model <name>', 'the model to ask; required when a seat is played by the llm agent (--agent llm, --leader llm, --follower llm)'),
    new Option('--llm-api-key-env <var>', `the environment variable holding the API key (default ${LLM_DEFAULTS.apiKeyEnv}; unset: no key is sent)`),
    new Option('--llm-temperature <t>', `sampling temperature (default ${LLM_DEFAULTS.temperature})`).argParser(numberOption('--llm-temperature', 0, 2)),
    new Option('--llm-seed <n>', 'sampling seed sent to the endpoint').argParser(integerOption('--llm-seed', 0, 2 ** 31 - 1)),
    new Option('--llm-timeout-s <s>', `seconds an HTTP attempt may take (default ${LLM_DEFAULTS.timeoutS})`).argParser(numberOption('--llm-timeout-s', 0, 3600, false)),
    new Option('--llm-max-retries <n>', `retries of a 408, 409, 429, 5xx or lost connection (default ${LLM_DEFAULTS.maxRetries})`).argParser(integerOption('--llm-max-retries', 0, 10)),
    new Option('--llm-max-calls <n>', `chat calls allowed per game; then the agent falls back (default ${LLM_DEFAULTS.maxCalls})`).argParser(integerOption('--llm-max-calls', 1, 1_000_000)),
    new Option('--llm-max-tokens <n>', 'the longest reply, in tokens').argParser(integerOption('--llm-max-tokens', 1, 1_000_000)),
    new Option('--llm-price-per-million-input <dollars>', 'what a million prompt tokens cost, for the call records and reports (default: unknown)').argParser(numberOption('--llm-price-per-million-input', 0, 1_000_000)),
    new Option('--llm-price-per-million-output <dollars>', 'what a million completion tokens cost (default: unknown)').argParser(numberOption('--llm-price-per-million-output', 0, 1_000_000)),
    new Option('--llm-max-consecutive-failures <n>', `chat calls in a row without a reply (backend errors, timeouts) that stop the run, exit non-zero (default ${LLM_DEFAULTS.maxConsecutiveFailures})`).argParser(
      integerOption('--llm-max-consecutive-failures', 1, 1_000_000),
    ),
    new Option('--llm-rpm <n>', 'requests a minute to the endpoint, shared by every llm agent of the run (concurrent games included); default: no limit').argParser(integerOption('--llm-rpm', 1, 1_000_000)),
    new Option('--llm-tpm <n>', 'tokens a minute to the endpoint, likewise; default: no limit').argParser(integerOption('--llm-tpm', 1, 1_000_000_000)),
    new Option('--llm-prompt <file>', "a prompt template file (default: the role's template, shipped in shared/agents/prompts)"),
    new Option('--llm-few-shot-logs <paths...>', "logs of people's games (files or folders) the follower's worked examples are drawn from; never a game being evaluated"),
    new Option('--llm-few-shot-k <n>', `worked examples in the follower's prompt, drawn once per run (default ${LLM_DEFAULTS.fewShotK}: none)`).argParser(integerOption('--llm-few-shot-k', 0, 1000)),
    new Option('--llm-few-shot-seed <n>', `seed of the examples' draw (default ${LLM_DEFAULTS.fewShotSeed})`).argParser(integerOption('--llm-few-shot-seed', 0, 2 ** 31 - 1)),
    new Option('--llm-keep-history', "send the follower's earlier calls for its current instruction again, with the model's replies"),
    new Option('--llm-images <seats>', `send these llm seats their current frame, drawn from the seat's own view, as an image beside the text: one of ${IMAGE_SEATS.join(', ')} (default none)`).argParser(imageSeatsOption),
    new Option('--llm-image-size <WxH>', `the images' size in pixels (default ${DEFAULT_IMAGE_SIZE.width}x${DEFAULT_IMAGE_SIZE.height})`),
    new Option('--llm-image-detail <detail>', `the images' detail, how finely the model looks: one of ${IMAGE_DETAILS.join(', ')} (default ${DEFAULT_IMAGE_DETAIL})`),
    new Option('--llm-records <dir>', 'where the call records go, <game>.<role>.llm.ndjson (default: beside the game logs, else the current directory)'),
  ];
  for (const option of options) command.addOption(option);
  return command;
}

/** The option that bounds a whole run of games (selfplay, eval): what its LLM calls may cost. */
export function addLlmRunOptions(command: Command): Command {
  return command.addOption(
    new Option('--llm-max-cost <dollars>', "what the run's LLM calls may cost, every seat and game together (needs the prices); once reached no call is sent and the run stops, exit 1").argParser(
      numberOption('--llm-max-cost', 0, 1_000_000, false),
    ),
  );
}

/**
 * The options that bound what a server's LLM agent partners spend together, over all its games
 * (serve): each game's own --llm-max-calls bounds nothing once anyone may start games.
 */
export function addLlmServerOptions(command: Command): Command {
  const then = 'then a new game with the llm agent is refused, and one in play goes on without its calls';
  return command
    .addOption(
      new Option('--llm-max-calls-total <n>', `chat calls the llm agent partners of all games may send together while the server runs; ${then} (default: no limit)`).argParser(
        integerOption('--llm-max-calls-total', 1, 1_000_000_000),
      ),
    )
    .addOption(
      new Option('--llm-max-cost <dollars>', `what those calls may cost together, by the --llm-price-per-million-* prices (which it needs); ${then} (default: no limit)`).argParser(
        numberOption('--llm-max-cost', 0, 1_000_000, false),
      ),
    );
}

/** Whether any --llm-* option was given (they mean nothing without an llm agent). */
export function givesLlmOptions(options: LlmCliOptions): boolean {
  return Object.entries(options).some(([key, value]) => key.startsWith('llm') && value !== undefined);
}

/** What a seat has of its own: its role (the --llm-config file's section) and its own config file (`llm@FILE`). */
export interface LlmSeat {
  readonly role: Role;
  readonly file?: string;
}

/**
 * The configuration the options describe for `seat`, from the run's settings to the seat's own, each
 * over the one before: the defaults, the --llm-config file's top level, the --llm-* options, that
 * file's section for the seat's role, the seat's own file (its top level, then its section for the
 * role). Without a seat, the run's settings alone. A problem is a CliError (exit 2).
 */
export function llmConfigFromOptions(options: LlmCliOptions, seat?: LlmSeat): LlmConfig {
  try {
    const fromFile: PartialLlmConfig = options.llmConfig ? readLlmConfigFile(options.llmConfig) : {};
    const given = {
      baseUrl: options.llmBaseUrl,
      model: options.llmModel,
      apiKeyEnv: options.llmApiKeyEnv,
      pricePerMillionInput: options.llmPricePerMillionInput,
      pricePerMillionOutput: options.llmPricePerMillionOutput,
      temperature: options.llmTemperature,
      seed: options.llmSeed,
      timeoutS: options.llmTimeoutS,
      maxRetries: options.llmMaxRetries,
      maxCalls: options.llmMaxCalls,
      maxTokens: options.llmMaxTokens,
      maxConsecutiveFailures: options.llmMaxConsecutiveFailures,
      rpm: options.llmRpm,
      tpm: options.llmTpm,
      prompt: options.llmPrompt,
      fewShotLogs: options.llmFewShotLogs,
      fewShotK: options.llmFewShotK,
      fewShotSeed: options.llmFewShotSeed,
      keepHistory: options.llmKeepHistory,
      images: options.llmImages === undefined ? undefined : seesImages(options.llmImages, seat?.role),
      imageSize: options.llmImageSize,
      imageDetail: options.llmImageDetail,
    };
    const defined = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined));
    const own = !seat
      ? []
      : [...(options.llmConfig ? [readLlmConfigFile(options.llmConfig, seat.role)] : []), ...(seat.file ? [readLlmConfigFile(seat.file), readLlmConfigFile(seat.file, seat.role)] : [])];
    const config = resolveLlmConfig(fromFile, checkPartial(defined, (key) => `--llm-${LLM_CONFIG_KEYS[key]}`), ...own);
    // A limit on what the run spends needs each seat's cost: unknown prices would let it spend without count.
    if (options.llmMaxCost !== undefined && config.pricePerMillionInput === undefined) {
      throw new CliError(`--llm-max-cost needs the prices of every llm seat${seat ? `, and the ${seat.role} has none` : ''}: give price-per-million-input and price-per-million-output (--llm-config, or the --llm-price-per-million-* options)`);
    }
    return config;
  } catch (error) {
    if (error instanceof LlmConfigError) throw new CliError(error.message);
    throw error;
  }
}

/**
 * The LLM agent for `role`, started as the options say; its call records go to --llm-records, else
 * `defaultRecordDir`. Any reason it cannot start (configuration, template, worked examples,
 * endpoint, key) is one line and exit 2, before any game.
 */
export async function startLlmFromOptions(role: 'follower', options: LlmCliOptions, defaultRecordDir: string, run?: LlmRun): Promise<LlmFollower>;
export async function startLlmFromOptions(role: 'leader', options: LlmCliOptions, defaultRecordDir: string, run?: LlmRun): Promise<LlmLeader>;
export async function startLlmFromOptions(role: 'follower' | 'leader', options: LlmCliOptions, defaultRecordDir: string, run: LlmRun = {}): Promise<LlmFollower | LlmLeader> {
  const config = llmConfigFromOptions(options, { role, file: run.files?.[role] });
  const fewShot = { readGame: loadRecording, excludeGames: options.evaluatedGames };
  const agentOptions = { config, recordDir: options.llmRecords ?? defaultRecordDir, notice: noticeOnce, fewShot, spend: run.spend };
  try {
    return role === 'leader' ? await startLlmLeader(agentOptions) : await startLlmFollower(agentOptions);
  } catch (error) {
    if (error instanceof TemplateError || error instanceof LlmEndpointError || error instanceof LlmKeyError || error instanceof FewShotError || error instanceof FrameRendererError) {
      throw new CliError(error.message);
    }
    throw error;
  }
}

/** What the preflight could not check, on standard error, each line once (serve starts an agent for every game). */
const noticed = new Set<string>();
function noticeOnce(line: string): void {
  if (noticed.has(line)) return;
  noticed.add(line);
  process.stderr.write(`cerealbar: ${line}\n`);
}

/** What a run's LLM agents share beside the options, and what each seat has of its own. */
export interface LlmRun {
  /** What the run's calls have cost and may cost (--llm-max-cost), shared by every agent the run starts; absent: no limit. */
  readonly spend?: RunSpend | null;
  /** A seat's own config file (`llm@FILE`), by role. */
  readonly files?: Partial<Record<Role, string>>;
}

/**
 * The run's spend, limited by --llm-max-cost when it is given: one per run, that is per parsed
 * options, so that every LLM agent the run starts (one per slot with --concurrency) spends from it.
 */
export function runSpend(options: LlmCliOptions): RunSpend | null {
  if (!spends.has(options)) spends.set(options, options.llmMaxCost === undefined ? null : new RunSpend({ maxCost: options.llmMaxCost }));
  return spends.get(options)!;
}
const spends = new WeakMap<LlmCliOptions, RunSpend | null>();

/**
 * How a command starts the LLM agent for a seat (the registry's `startLlm`): as the options say, its
 * records in --llm-records, else `defaultRecordDir`; the agents it starts share `run`'s spend.
 */
export function llmStarter(options: LlmCliOptions, defaultRecordDir: string, run: LlmRun = { spend: runSpend(options) }): (role: Role) => Promise<LlmFollower | LlmLeader> {
  return (role) => (role === 'leader' ? startLlmFromOptions(role, options, defaultRecordDir, run) : startLlmFromOptions(role, options, defaultRecordDir, run));
}

/** A seat as a command names it: its agent and, for the llm agent, its own config file. */
export interface SeatSpec {
  readonly agent: string;
  readonly llmConfig?: string;
}

/**
 * A seat's spec: an agent, or `llm@FILE`, the llm agent with its own config file over the run's
 * settings. A built-in agent with `@FILE` is refused (only llm has settings); any other spec is a
 * program's command line, `@` and all.
 */
export function seatSpec(text: string): SeatSpec {
  const at = /^([\w.-]+)@(.*)$/s.exec(text);
  if (!at) return { agent: text };
  const [, agent, file] = at;
  if (agent === LLM_AGENT) {
    if (file.trim() === '') throw new CliError(`${JSON.stringify(text)}: give the llm seat's config file after the @, as in llm@configs/warm.yaml`);
    return { agent, llmConfig: file.trim() };
  }
  if (catalogueEntry(agent)) throw new CliError(`${JSON.stringify(text)}: a config file is for an llm seat only; ${agent} has no settings (give llm@FILE, or ${agent} alone)`);
  return { agent: text };
}

/** A seat as given, its config file included: how labels and run.json name it. */
export const seatLabel = (seat: SeatSpec): string => (seat.llmConfig === undefined ? seat.agent : `${seat.agent}@${seat.llmConfig}`);

/** The seats' own config files, by role (none for a seat without one): what their agents start with (`LlmRun.files`). */
export function seatFiles(seats: Readonly<Record<Role, SeatSpec>>): Partial<Record<Role, string>> {
  return Object.fromEntries((['leader', 'follower'] as const).flatMap((role) => (seats[role].llmConfig === undefined ? [] : [[role, seats[role].llmConfig]])));
}

/** The configuration of each seat the llm agent plays, by role, for run.json and --resume (none for the others). */
export function llmSeatConfigs(options: LlmCliOptions, seats: Readonly<Record<Role, SeatSpec>>): Partial<Record<Role, LlmConfig>> {
  const roles = (['leader', 'follower'] as const).filter((role) => seats[role].agent === LLM_AGENT);
  return Object.fromEntries(roles.map((role) => [role, llmConfigFromOptions(options, { role, file: seats[role].llmConfig })]));
}

/** The agents a command names for each seat (several in agent-vs-agent evaluation; none for a seat it does not play). */
export type SeatAgents = Readonly<Partial<Record<Role, readonly string[]>>>;

/**
 * --llm-* options with no seat played by the llm agent are a mistake, and so is --llm-images naming
 * a seat the llm agent does not play (`both`: every seat it plays): one line, exit 2.
 */
export function checkLlmOptionsUsed(options: LlmCliOptions, seats: SeatAgents, seatOptions: string): void {
  const llmSeats = ROLES.filter((role) => seats[role]?.includes(LLM_AGENT));
  if (givesLlmOptions(options) && llmSeats.length === 0) throw new CliError(`the --llm-* options are for the llm agent: give ${seatOptions} llm`);
  const images = options.llmImages;
  if ((images === 'leader' || images === 'follower') && !llmSeats.includes(images)) {
    throw new CliError(`--llm-images ${images}: the llm agent does not play the ${images} here (it plays the ${llmSeats.join(' and ')}); give --llm-images ${llmSeats.join(', ')}, both or none`);
  }
}

/** A line for each seat the LLM agent played (its counts), for the end of a command's report. */
export function llmReport(agents: Readonly<Partial<Record<'leader' | 'follower', unknown>>>): string {
  return (['leader', 'follower'] as const)
    .flatMap((role) => (agents[role] instanceof LlmAgent ? [`${describeLlmStats(`llm ${role}`, (agents[role] as LlmFollower | LlmLeader).stats())}\n`] : []))
    .join('');
}

/** One line of an LLM agent's counts for a command's report: calls, statuses, fallbacks, tokens, latency, cost. */
export function describeLlmStats(label: string, stats: LlmCounts): string {
  const statuses = Object.entries(stats.byStatus)
    .filter(([, n]) => n > 0)
    .map(([status, n]) => `${n} ${status}`)
    .join(', ');
  const fallbacks = Object.entries(stats.fallbacksBy)
    .map(([status, n]) => `${n} after ${status}`)
    .join(', ');
  const mean = stats.calls > 0 ? Math.round(stats.latencyMs.total / stats.calls) : 0;
  return (
    `${label}: ${stats.calls} calls (${statuses || 'none'}), ${stats.fallbacks} fallbacks${fallbacks ? ` (${fallbacks})` : ''}, ` +
    `${stats.httpRetries} HTTP retries, ${stats.tokens.prompt} prompt + ${stats.tokens.completion} completion tokens, mean latency ${mean} ms, cost ${formatCost(stats.cost)}`
  );
}
