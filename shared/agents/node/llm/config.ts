/**
 * How the LLM agent reaches its model: the `--llm-*` options, or the same keys in a YAML file
 * (`--llm-config`). The file's keys are the options' names without `--llm-` (`base-url`, `model`,
 * ...; `images` is true or false where `--llm-images` names seats); options given on the command
 * line win over the file's top level, and a seat's own section of the file (`leader:`,
 * `follower:`) wins over both. The API key itself is never part of the
 * configuration: only the name of the environment variable that holds it.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { parseFrameSize, type FrameSize } from '../../../frames/frame';
import type { LlmRole } from './templates';

/** The `detail` an image part may ask for (the OpenAI chat format's): how finely the model looks, and what the image costs. */
export const IMAGE_DETAILS = ['low', 'high', 'auto'] as const;
export type ImageDetail = (typeof IMAGE_DETAILS)[number];

export interface LlmConfig {
  /** The OpenAI-compatible endpoint, up to and including its `/v1`. */
  readonly baseUrl: string;
  readonly model: string;
  /** The name of the environment variable holding the API key (unset or empty: no key is sent). */
  readonly apiKeyEnv: string;
  readonly temperature: number;
  /** Sent when given; servers that honour it make replies reproducible. */
  readonly seed?: number;
  /** Per HTTP attempt. */
  readonly timeoutS: number;
  /** Further attempts after a 408, 409, 429, 5xx or a lost connection. */
  readonly maxRetries: number;
  /** Chat calls allowed per episode (a game, live or in self-play); then every turn falls back. */
  readonly maxCalls: number;
  /** A prompt template file; absent: the role's default template. */
  readonly prompt?: string;
  /** Log files or folders the follower's worked examples are drawn from (fewShot.ts); needed when fewShotK is above 0. */
  readonly fewShotLogs?: readonly string[];
  /** Worked examples in the follower's prompt, drawn once per run (0: none, the prompt as without the feature). */
  readonly fewShotK: number;
  /** The seed of that draw. */
  readonly fewShotSeed: number;
  /** Send the follower's earlier calls for its current instruction again, with the model's replies (history.ts). */
  readonly keepHistory: boolean;
  /** The reply's length limit, in tokens, when given. */
  readonly maxTokens?: number;
  /** Chat calls in a row that got no reply (backend errors, timeouts) after which the agent stops the run. */
  readonly maxConsecutiveFailures: number;
  /** Dollars a million prompt tokens and a million completion tokens cost; absent: the cost is unknown (never taken as free). */
  readonly pricePerMillionInput?: number;
  readonly pricePerMillionOutput?: number;
  /** Requests a minute to the endpoint, over every agent of the process asking it for the model (rateLimit.ts); absent: no limit. */
  readonly rpm?: number;
  /** Tokens a minute, likewise. */
  readonly tpm?: number;
  /** Send the seat's current frame, drawn from its own view, as an image beside the text (images.ts); absent: off. */
  readonly images?: boolean;
  /** The frame's size in pixels, when images are on (absent: DEFAULT_IMAGE_SIZE). */
  readonly imageSize?: FrameSize;
  /** The image part's `detail`, when images are on (absent: DEFAULT_IMAGE_DETAIL). */
  readonly imageDetail?: ImageDetail;
}

export const LLM_DEFAULTS = {
  baseUrl: 'https://api.openai.com/v1',
  apiKeyEnv: 'OPENAI_API_KEY',
  temperature: 0,
  timeoutS: 20,
  maxRetries: 2,
  maxCalls: 200,
  maxConsecutiveFailures: 20,
  fewShotK: 0,
  fewShotSeed: 0,
  keepHistory: false,
} as const;

/** The configuration's keys as written in a YAML file and, prefixed with `--llm-`, as options. */
export const LLM_CONFIG_KEYS = {
  baseUrl: 'base-url',
  model: 'model',
  apiKeyEnv: 'api-key-env',
  temperature: 'temperature',
  seed: 'seed',
  timeoutS: 'timeout-s',
  maxRetries: 'max-retries',
  maxCalls: 'max-calls',
  prompt: 'prompt',
  fewShotLogs: 'few-shot-logs',
  fewShotK: 'few-shot-k',
  fewShotSeed: 'few-shot-seed',
  keepHistory: 'keep-history',
  maxTokens: 'max-tokens',
  maxConsecutiveFailures: 'max-consecutive-failures',
  pricePerMillionInput: 'price-per-million-input',
  pricePerMillionOutput: 'price-per-million-output',
  rpm: 'rpm',
  tpm: 'tpm',
  images: 'images',
  imageSize: 'image-size',
  imageDetail: 'image-detail',
} as const satisfies Record<keyof LlmConfig, string>;

const httpUrl = z
  .string()
  .refine((text) => /^https?:\/\/[^\s/]/.test(text) && URL.canParse(text), 'must be an http:// or https:// URL')
  // A password in the URL would be written wherever the URL is: the key goes in its variable.
  .refine((text) => !URL.canParse(text) || (!new URL(text).username && !new URL(text).password), 'must not hold a user or password (give the key with --llm-api-key-env)');

/** Every key optional: a file, or the options, may give any part of the configuration. */
export const partialLlmConfigSchema = z.strictObject({
  baseUrl: httpUrl.optional(),
  model: z.string().trim().min(1, 'must not be empty').optional(),
  apiKeyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be the name of an environment variable').optional(),
  temperature: z.number().min(0).max(2).optional(),
  seed: z.number().int().min(0).max(2 ** 31 - 1).optional(),
  timeoutS: z.number().gt(0).max(3600).optional(),
  maxRetries: z.number().int().min(0).max(10).optional(),
  maxCalls: z.number().int().min(1).max(1_000_000).optional(),
  prompt: z.string().min(1).optional(),
  // One log or folder may be written alone; the configuration holds a list.
  fewShotLogs: z.preprocess((value) => (typeof value === 'string' ? [value] : value), z.array(z.string().min(1, 'must not be empty')).min(1, 'must name a log file or folder')).optional(),
  fewShotK: z.number().int().min(0).max(1000).optional(),
  fewShotSeed: z.number().int().min(0).max(2 ** 31 - 1).optional(),
  keepHistory: z.boolean().optional(),
  maxTokens: z.number().int().min(1).max(1_000_000).optional(),
  maxConsecutiveFailures: z.number().int().min(1).max(1_000_000).optional(),
  pricePerMillionInput: z.number().min(0, 'must not be negative').max(1_000_000).optional(),
  pricePerMillionOutput: z.number().min(0, 'must not be negative').max(1_000_000).optional(),
  rpm: z.number().int().min(1).max(1_000_000).optional(),
  tpm: z.number().int().min(1).max(1_000_000_000).optional(),
  images: z.boolean().optional(),
  imageSize: z
    .string()
    .transform((text, context) => {
      const size = parseFrameSize(text);
      if ('problem' in size) context.addIssue({ code: 'custom', message: size.problem });
      return size as FrameSize;
    })
    .optional(),
  imageDetail: z.enum(IMAGE_DETAILS, { message: `must be one of ${IMAGE_DETAILS.join(', ')}` }).optional(),
});
export type PartialLlmConfig = z.infer<typeof partialLlmConfigSchema>;

export class LlmConfigError extends Error {
  override name = 'LlmConfigError';
}

/** The sections of a config file that hold one seat's own settings, over the file's top level. */
export const LLM_SEAT_SECTIONS: readonly LlmRole[] = ['leader', 'follower'];

/**
 * The file's configuration, with its keys renamed to the config's: its top level, or with `section`
 * that seat's section alone (`leader:`, `follower:`; empty when the file has none). Every part of the
 * file is checked either way; any problem is one line naming the file.
 */
export function readLlmConfigFile(path: string, section?: LlmRole): PartialLlmConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new LlmConfigError(`${path}: cannot read: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
  }
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (error) {
    throw new LlmConfigError(`${path}: not valid YAML: ${(error as Error).message.split('\n')[0]}`);
  }
  const { sections, keys } = splitSections(mapping(data, path));
  const seats = new Map(Object.entries(sections).map(([role, value]) => [role, configKeys(mapping(value, `${path}: ${role}`), path, role)]));
  const top = configKeys(keys, path);
  return section ? (seats.get(section) ?? {}) : top;
}

function mapping(data: unknown, where: string): Record<string, unknown> {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new LlmConfigError(`${where}: must be a mapping of keys (${Object.values(LLM_CONFIG_KEYS).join(', ')})`);
  return data as Record<string, unknown>;
}

/** A file's top level: the seats' sections apart from the keys. */
function splitSections(data: Record<string, unknown>): { sections: Record<string, unknown>; keys: Record<string, unknown> } {
  const sections: Record<string, unknown> = {};
  const keys: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(data)) ((LLM_SEAT_SECTIONS as readonly string[]).includes(name) ? sections : keys)[name] = value;
  return { sections, keys };
}

/** The keys of the file's top level, or of its `section`, renamed to the config's and checked. */
function configKeys(data: Record<string, unknown>, path: string, section?: string): PartialLlmConfig {
  const byFileKey = new Map<string, keyof LlmConfig>(Object.entries(LLM_CONFIG_KEYS).map(([key, fileKey]) => [fileKey, key as keyof LlmConfig]));
  const at = section ? `${section}.` : '';
  const renamed: Record<string, unknown> = {};
  for (const [fileKey, value] of Object.entries(data)) {
    if (/api.?key$/i.test(fileKey)) throw new LlmConfigError(`${path}: ${at}${fileKey}: the key itself never goes in a file; name the variable that holds it with api-key-env`);
    const key = byFileKey.get(fileKey);
    const known = [...byFileKey.keys(), ...(section ? [] : LLM_SEAT_SECTIONS.map((role) => `${role} (a section)`))];
    if (!key) throw new LlmConfigError(`${path}: ${section ? `${section}: ` : ''}unknown key ${JSON.stringify(fileKey)} (known: ${known.join(', ')})`);
    renamed[key] = value;
  }
  return checkPartial(renamed, (key) => `${path}: ${at}${LLM_CONFIG_KEYS[key]}`);
}

/** The options' values checked with the same rules as a file's. */
export function checkPartial(values: Record<string, unknown>, where: (key: keyof LlmConfig) => string): PartialLlmConfig {
  const result = partialLlmConfigSchema.safeParse(values);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const key = issue.path[0] as keyof LlmConfig | undefined;
  throw new LlmConfigError(`${key ? where(key) : 'the LLM configuration'}: ${issue.message}`);
}

/** The file's values under the options', then the defaults; the model must be given somewhere. */
export function resolveLlmConfig(...layers: PartialLlmConfig[]): LlmConfig {
  const merged: PartialLlmConfig = {};
  for (const layer of layers) for (const [key, value] of Object.entries(layer)) if (value !== undefined) Object.assign(merged, { [key]: value });
  if (merged.model === undefined) throw new LlmConfigError('the LLM agent needs a model: give --llm-model, or model in the --llm-config file');
  const prices = pricesProblem(merged);
  if (prices) throw new LlmConfigError(prices);
  return { ...LLM_DEFAULTS, ...merged, model: merged.model };
}

/** A call's cost needs both prices: one without the other is a mistake, not half a price. */
export function pricesProblem(config: PartialLlmConfig): string | null {
  if ((config.pricePerMillionInput === undefined) === (config.pricePerMillionOutput === undefined)) return null;
  const [given, missing] = config.pricePerMillionInput === undefined ? ['output', 'input'] : ['input', 'output'];
  return `price-per-million-${given} is given without price-per-million-${missing}: give both prices, or neither (the cost is then unknown)`;
}
