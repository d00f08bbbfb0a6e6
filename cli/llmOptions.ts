/**
 * The `--llm-*` options, for any command that seats agents: `addLlmOptions(command)` adds them,
 * `startLlmFromOptions` starts the LLM agent they describe (config file under the options, the
 * template loaded, the endpoint checked) or stops the command with one line and exit 2.
 */
import { Option, type Command } from 'commander';
import { LlmAgent, LlmEndpointError, LlmKeyError } from '../shared/agents/node/llm/agent';
import { checkPartial, LLM_CONFIG_KEYS, LLM_DEFAULTS, LlmConfigError, readLlmConfigFile, resolveLlmConfig, type LlmConfig, type PartialLlmConfig } from '../shared/agents/node/llm/config';
import { startLlmFollower, startLlmLeader, type LlmFollower, type LlmLeader } from '../shared/agents/node/llm/seats';
import { TemplateError } from '../shared/agents/node/llm/templates';
import { FewShotError } from '../shared/agents/node/llm/fewShot';
import { loadRecording } from '../shared/eval/recording';
import { LLM_AGENT } from '../shared/agents/catalogue';
import type { LlmCounts } from '../shared/eval/llmSummary';
import type { Role } from '../shared/engine/state';
import { CliError } from './errors';
import { integerOption } from './options';

/** What commander gives for the options (camel-cased names). */
export interface LlmCliOptions {
  llmConfig?: string;
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
  llmPrompt?: string;
  llmRecords?: string;
  llmFewShotLogs?: string[];
  llmFewShotK?: number;
  llmFewShotSeed?: number;
  llmKeepHistory?: boolean;
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
    new Option('--llm-max-consecutive-failures <n>', `chat calls in a row without a reply (backend errors, timeouts) that stop the run, exit non-zero (default ${LLM_DEFAULTS.maxConsecutiveFailures})`).argParser(
      integerOption('--llm-max-consecutive-failures', 1, 1_000_000),
    ),
    new Option('--llm-prompt <file>', "a prompt template file (default: the role's template, shipped in shared/agents/prompts)"),
    new Option('--llm-few-shot-logs <paths...>', "logs of people's games (files or folders) the follower's worked examples are drawn from; never a game being evaluated"),
    new Option('--llm-few-shot-k <n>', `worked examples in the follower's prompt, drawn once per run (default ${LLM_DEFAULTS.fewShotK}: none)`).argParser(integerOption('--llm-few-shot-k', 0, 1000)),
    new Option('--llm-few-shot-seed <n>', `seed of the examples' draw (default ${LLM_DEFAULTS.fewShotSeed})`).argParser(integerOption('--llm-few-shot-seed', 0, 2 ** 31 - 1)),
    new Option('--llm-keep-history', "send the follower's earlier calls for its current instruction again, with the model's replies"),
    new Option('--llm-records <dir>', 'where the call records go, <game>.<role>.llm.ndjson (default: beside the game logs, else the current directory)'),
  ];
  for (const option of options) command.addOption(option);
  return command;
}

/** Whether any --llm-* option was given (they mean nothing without an llm agent). */
export function givesLlmOptions(options: LlmCliOptions): boolean {
  return Object.entries(options).some(([key, value]) => key.startsWith('llm') && value !== undefined);
}

/** The configuration the options describe, over the --llm-config file; a problem is a CliError (exit 2). */
export function llmConfigFromOptions(options: LlmCliOptions): LlmConfig {
  try {
    const fromFile: PartialLlmConfig = options.llmConfig ? readLlmConfigFile(options.llmConfig) : {};
    const given = {
      baseUrl: options.llmBaseUrl,
      model: options.llmModel,
      apiKeyEnv: options.llmApiKeyEnv,
      temperature: options.llmTemperature,
      seed: options.llmSeed,
      timeoutS: options.llmTimeoutS,
      maxRetries: options.llmMaxRetries,
      maxCalls: options.llmMaxCalls,
      maxTokens: options.llmMaxTokens,
      maxConsecutiveFailures: options.llmMaxConsecutiveFailures,
      prompt: options.llmPrompt,
      fewShotLogs: options.llmFewShotLogs,
      fewShotK: options.llmFewShotK,
      fewShotSeed: options.llmFewShotSeed,
      keepHistory: options.llmKeepHistory,
    };
    const defined = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined));
    return resolveLlmConfig(fromFile, checkPartial(defined, (key) => `--llm-${LLM_CONFIG_KEYS[key]}`));
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
export async function startLlmFromOptions(role: 'follower', options: LlmCliOptions, defaultRecordDir: string): Promise<LlmFollower>;
export async function startLlmFromOptions(role: 'leader', options: LlmCliOptions, defaultRecordDir: string): Promise<LlmLeader>;
export async function startLlmFromOptions(role: 'follower' | 'leader', options: LlmCliOptions, defaultRecordDir: string): Promise<LlmFollower | LlmLeader> {
  const config = llmConfigFromOptions(options);
  const fewShot = { readGame: loadRecording, excludeGames: options.evaluatedGames };
  const agentOptions = { config, recordDir: options.llmRecords ?? defaultRecordDir, notice: noticeOnce, fewShot };
  try {
    return role === 'leader' ? await startLlmLeader(agentOptions) : await startLlmFollower(agentOptions);
  } catch (error) {
    if (error instanceof TemplateError || error instanceof LlmEndpointError || error instanceof LlmKeyError || error instanceof FewShotError) throw new CliError(error.message);
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

/** How a command starts the LLM agent for a seat (the registry's `startLlm`): as the options say, its records in --llm-records, else `defaultRecordDir`. */
export function llmStarter(options: LlmCliOptions, defaultRecordDir: string): (role: Role) => Promise<LlmFollower | LlmLeader> {
  return (role) => (role === 'leader' ? startLlmFromOptions(role, options, defaultRecordDir) : startLlmFromOptions(role, options, defaultRecordDir));
}

/** --llm-* options with no seat played by the llm agent are a mistake: one line, exit 2. */
export function checkLlmOptionsUsed(options: LlmCliOptions, specs: readonly string[], seatOptions: string): void {
  if (givesLlmOptions(options) && !specs.includes(LLM_AGENT)) throw new CliError(`the --llm-* options are for the llm agent: give ${seatOptions} llm`);
}

/** A line for each seat the LLM agent played (its counts), for the end of a command's report. */
export function llmReport(agents: Readonly<Partial<Record<'leader' | 'follower', unknown>>>): string {
  return (['leader', 'follower'] as const)
    .flatMap((role) => (agents[role] instanceof LlmAgent ? [`${describeLlmStats(`llm ${role}`, (agents[role] as LlmFollower | LlmLeader).stats())}\n`] : []))
    .join('');
}

/** One line of an LLM agent's counts for a command's report: calls, statuses, fallbacks, tokens, latency. */
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
    `${stats.httpRetries} HTTP retries, ${stats.tokens.prompt} prompt + ${stats.tokens.completion} completion tokens, mean latency ${mean} ms`
  );
}
