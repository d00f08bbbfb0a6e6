/**
 * The call records: one JSON line per chat call, in `<episode>.<role>.llm.ndjson` (the episode being
 * the game's id, the name of its log), after one header line. The suffix is not a game log's
 * `.jsonl`, so that a folder holding both reads as logs alone (`DIR/*.jsonl`); this module is the
 * one owner of the names, the older `.llm.jsonl` included. The images a call sent are files in a
 * folder beside (`<episode>.<role>.llm.images/<sha256>.png`), never data in a line.
 * docs/log-format.md ("LLM call records") describes every field. The API key is never among them:
 * the writer replaces it in any line, as a last guard.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { FrameCamera } from '../../../frames/frame';
import type { ChatRequest, ChatResult } from './chat';
import type { ImageDetail, LlmConfig } from './config';
import type { LlmRole } from './templates';
import type { ReplyAction, ReplyCheck } from './reply';

export const CALL_RECORD_VERSION = 1;

/** What stands for the API key wherever it would have been written. */
export const KEY_PLACEHOLDER = '[the API key]';

export const CALL_STATUSES = ['ok', 'format_error', 'illegal', 'empty_plan', 'backend_error', 'timeout', 'budget', 'cost_limit'] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];

export interface RecordHeader {
  readonly kind: 'llm-header';
  readonly v: typeof CALL_RECORD_VERSION;
  readonly episode: string;
  readonly role: LlmRole;
  readonly model: string;
  readonly baseUrl: string;
  readonly template: { readonly path: string; readonly sha256: string };
  /** The worked examples every call of the run carries (fewShot.ts), when few-shot-k is above 0, in the prompt's order. */
  readonly fewShotExamples?: readonly ExampleRef[];
  readonly settings: {
    readonly temperature: number;
    readonly seed: number | null;
    readonly maxTokens: number | null;
    /** When few-shot-k is above 0: the logs the examples are drawn from (as given), K and the draw's seed. */
    readonly fewShotLogs?: readonly string[];
    readonly fewShotK?: number;
    readonly fewShotSeed?: number;
    /** When keep-history is on (history.ts): earlier calls for the instruction are sent again, at most this many messages. */
    readonly keepHistory?: true;
    readonly historyMaxMessages?: number;
    readonly timeoutS: number;
    readonly maxRetries: number;
    readonly maxCalls: number;
    /** Calls in a row without a reply after which the run stops (absent in records written before it). */
    readonly maxConsecutiveFailures?: number;
    /** Dollars a million prompt and completion tokens; null: unknown (absent in records written before prices). */
    readonly pricePerMillionInput?: number | null;
    readonly pricePerMillionOutput?: number | null;
    /** Requests and tokens a minute, when limited (rateLimit.ts). */
    readonly rpm?: number;
    readonly tpm?: number;
    /** When images are on (images.ts): each observation's message carries the seat's frame, so drawn (`320x240`, `png`). */
    readonly images?: true;
    readonly imageSize?: string;
    readonly imageDetail?: ImageDetail;
    readonly imageCamera?: FrameCamera;
    readonly imageFormat?: 'png';
    /** The variable's name only. */
    readonly apiKeyEnv: string;
  };
  readonly time: string;
}

/** A worked example, by the game it comes from (its log header's gameId) and the instruction's id in that game. */
export interface ExampleRef {
  readonly gameId: string;
  readonly instructionId: number;
}

/** An image a request carried: a file beside the records, its data URL in the request replaced by the file's path. */
export interface ImageRef {
  readonly sha256: string;
  /** Relative to the record file's folder: `<episode>.<role>.llm.images/<sha256>.png`. */
  readonly file: string;
  readonly width: number;
  readonly height: number;
  readonly camera: FrameCamera;
}

/**
 * The plan the agent answered before was not played to its end in the turn it was made for: the
 * host said where the game stood (`ActContext.event`), and the events since are fewer than the plan.
 */
export interface PlanCut {
  /** The line of the call whose plan it was. */
  readonly call: number;
  /** The index in that plan of the first action not played, and that action. */
  readonly at: number;
  readonly action: ReplyAction;
  /** True when the game refused the action; false when the host dropped the plan's rest unplayed, its situation having changed. */
  readonly refused: boolean;
  /** What was allowed instead (the parser's words), or what changed (`instruction 3 -> instruction 4`). */
  readonly reason: string;
}

/** One call on record: what was asked, what came back over HTTP (the chat's result), and what the agent made of it. */
export interface CallRecord extends Omit<ChatResult, 'status' | 'error'> {
  readonly kind: 'llm-call';
  /** 1, 2, ... in the episode: budget lines included. */
  readonly call: number;
  readonly role: LlmRole;
  /** The log event the answer's first action would be, when the host said; else null. */
  readonly event: number | null;
  /** Which observation of the episode (0, 1, ...) the call answers. */
  readonly observation: number;
  /** On an observation's first line only, when the plan before it was cut short. */
  readonly planCut?: PlanCut;
  /** With keep-history: how many messages of earlier calls for the same instruction the request carries (0 on its first call). */
  readonly history?: number;
  /** 1 for the first ask of an observation, 2 for the re-ask after an unusable reply. */
  readonly ask: 1 | 2;
  /** The request's body (model, messages, settings), each image's data URL replaced by its file; null when it was not sent (`budget`). */
  readonly request: ChatRequest | null;
  /** With images on, the images the request carried, in order (absent when it carried none). */
  readonly images?: readonly ImageRef[];
  /** What the parser checked the reply against. */
  readonly check: ReplyCheck;
  readonly status: CallStatus;
  /** The plan parsed (for `illegal`, the plan that was refused); null when nothing parsed. */
  readonly actions: readonly ReplyAction[] | null;
  readonly thought: string | null;
  /** Why the call did not give a plan: the parser's message, the backend's error; null when ok. */
  readonly error: string | null;
  /** On the last call for an observation that gave no plan: what the agent played instead. */
  readonly fallback: { readonly actions: readonly ReplyAction[] } | null;
  /** Dollars, from the tokens the server counted and the header's prices; null when either is unknown (absent in records written before prices). */
  readonly cost?: number | null;
  readonly time: string;
}

export type RecordLine = RecordHeader | CallRecord;

/** What call lines add up to: an agent's `stats()`, and what a reader recomputes from record files. */
export interface CallCounts {
  /** Chat calls sent (budget lines are not sent). */
  readonly calls: number;
  /** Call lines by status, budget included. */
  readonly byStatus: Readonly<Record<CallStatus, number>>;
  /** Observations answered with the fallback, and by the status of their last call. */
  readonly fallbacks: number;
  readonly fallbacksBy: Readonly<Partial<Record<CallStatus, number>>>;
  /** HTTP attempts beyond the first, over all calls. */
  readonly httpRetries: number;
  readonly tokens: { readonly prompt: number; readonly completion: number; readonly total: number };
  readonly latencyMs: { readonly total: number; readonly max: number };
  /** Dollars: the sum of the lines' known costs (as `tokens` is of the counted tokens); null when no line's cost is known. */
  readonly cost: number | null;
}

/** The counts before any call. */
export const NO_CALLS: CallCounts = {
  calls: 0,
  byStatus: Object.fromEntries(CALL_STATUSES.map((status) => [status, 0])) as Record<CallStatus, number>,
  fallbacks: 0,
  fallbacksBy: {},
  httpRetries: 0,
  tokens: { prompt: 0, completion: 0, total: 0 },
  latencyMs: { total: 0, max: 0 },
  cost: null,
};

/** `counts` and one more call line: the one place that says what a line counts for (`lines.reduce(countCall, NO_CALLS)`). */
export function countCall(counts: CallCounts, call: CallRecord): CallCounts {
  const { tokens, latencyMs, status } = call;
  return {
    calls: counts.calls + (call.request ? 1 : 0),
    byStatus: { ...counts.byStatus, [status]: (counts.byStatus[status] ?? 0) + 1 },
    fallbacks: counts.fallbacks + (call.fallback ? 1 : 0),
    fallbacksBy: call.fallback ? { ...counts.fallbacksBy, [status]: (counts.fallbacksBy[status] ?? 0) + 1 } : counts.fallbacksBy,
    httpRetries: counts.httpRetries + Math.max(0, call.attempts.length - 1),
    tokens: tokens ? { prompt: counts.tokens.prompt + tokens.prompt, completion: counts.tokens.completion + tokens.completion, total: counts.tokens.total + tokens.total } : counts.tokens,
    latencyMs: { total: counts.latencyMs.total + latencyMs, max: Math.max(counts.latencyMs.max, latencyMs) },
    cost: call.cost == null ? counts.cost : (counts.cost ?? 0) + call.cost,
  };
}

/** A call's cost in dollars: the tokens the server counted at the prices a million; null when either is unknown. */
export function callCost(tokens: CallRecord['tokens'], prices: Pick<LlmConfig, 'pricePerMillionInput' | 'pricePerMillionOutput'>): number | null {
  const { pricePerMillionInput: input, pricePerMillionOutput: output } = prices;
  if (!tokens || input === undefined || output === undefined) return null;
  return (tokens.prompt * input + tokens.completion * output) / 1_000_000;
}

/** The suffix of a record file: not `.jsonl`, which names game logs. */
export const RECORD_SUFFIX = '.llm.ndjson';

/** The suffix record files had before (version 1 records written until then), which a glob of logs matched. */
export const OLDER_RECORD_SUFFIX = '.llm.jsonl';

const fileStem = (episodeId: string, role: LlmRole) => `${episodeId.replace(/[^A-Za-z0-9._#-]/g, '_')}.${role}`;

/** The record file of an episode: the episode id with anything but letters, digits, `._#-` made `_`. */
export function recordFileName(episodeId: string, role: LlmRole): string {
  return `${fileStem(episodeId, role)}${RECORD_SUFFIX}`;
}

/**
 * Whether a file's name is a call record's, of today's runs or older ones (`<episode>.leader.llm.jsonl`,
 * `<episode>.follower.llm.jsonl`): what a folder of game logs leaves out.
 */
export function isRecordFileName(name: string): boolean {
  return name.endsWith(RECORD_SUFFIX) || /\.(leader|follower)\.llm\.jsonl$/.test(name);
}

/** An episode's record file in `dir`: today's name, or the older one when only that is there (a run from before). */
export function findRecordFile(dir: string, episodeId: string, role: LlmRole): string {
  const file = join(dir, recordFileName(episodeId, role));
  const older = join(dir, `${fileStem(episodeId, role)}${OLDER_RECORD_SUFFIX}`);
  return !existsSync(file) && existsSync(older) ? older : file;
}

/** The suffix of the folder beside a record file that holds its calls' images. */
export const IMAGES_SUFFIX = '.llm.images';

/** The images folder of a record file: `<episode>.<role>.llm.images` beside `<episode>.<role>.llm.ndjson`. */
export function imagesFolderOf(recordFile: string): string {
  return `${recordFile.replace(/\.llm\.(ndjson|jsonl)$/, '')}${IMAGES_SUFFIX}`;
}

/** Removes what an episode left in `dir`: its record file and its images (a game that did not finish). */
export function removeRecords(dir: string, episodeId: string, role: LlmRole): void {
  const file = findRecordFile(dir, episodeId, role);
  rmSync(file, { force: true });
  rmSync(imagesFolderOf(file), { recursive: true, force: true });
}

/** Writes one episode's lines as they happen (synchronously: a crash keeps every line written before it), and its images. */
export class RecordWriter {
  private fd: number;
  private readonly imagesFolder: string;

  constructor(
    readonly path: string,
    private readonly secret: string | null,
  ) {
    // Its owner's only, as every file of a data directory (they hold what participants wrote).
    this.fd = openSync(path, 'w', 0o600);
    // The lines start again: the images of an earlier writing of the episode are none of theirs.
    this.imagesFolder = imagesFolderOf(path);
    rmSync(this.imagesFolder, { recursive: true, force: true });
  }

  static inDirectory(dir: string, episodeId: string, role: LlmRole, secret: string | null): RecordWriter {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return new RecordWriter(join(dir, recordFileName(episodeId, role)), secret);
  }

  write(line: RecordLine): void {
    // The last guard: whatever brought the key here (a server echoing it in a reply), it is not
    // written. Inside the line's strings only: the line's names and numbers are never touched.
    writeSync(this.fd, `${JSON.stringify(this.secret ? redactStrings(line, this.secret) : line)}\n`);
  }

  /**
   * Keeps an image beside the lines, once: its name is its sha256, so a frame sent again (a re-ask,
   * a view unchanged) is one file. Written whole or not at all. Its path, relative to the lines' folder.
   */
  saveImage(bytes: Buffer, sha256: string, extension: string): string {
    mkdirSync(this.imagesFolder, { recursive: true, mode: 0o700 });
    const file = join(this.imagesFolder, `${sha256}.${extension}`);
    if (!existsSync(file)) {
      writeFileSync(`${file}.part`, bytes, { mode: 0o600 });
      renameSync(`${file}.part`, file);
    }
    return join(basename(this.imagesFolder), basename(file));
  }

  close(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }
}

/** `value` with `secret` replaced by KEY_PLACEHOLDER inside every string it holds, at any depth; nothing else changes. */
export function redactStrings<T>(value: T, secret: string): T {
  if (typeof value === 'string') return (value.includes(secret) ? value.split(secret).join(KEY_PLACEHOLDER) : value) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => redactStrings(item, secret)) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, redactStrings(item as unknown, secret)])) as T;
  }
  return value;
}

/** A record file's lines; a line that is not a record is an error naming the file and line. */
export function readRecords(path: string): RecordLine[] {
  const lines = readFileSync(path, 'utf8').split('\n');
  const records: RecordLine[] = [];
  for (const [index, line] of lines.entries()) {
    if (line.trim() === '') continue;
    let data: unknown;
    try {
      data = JSON.parse(line);
    } catch {
      throw new Error(`${path}:${index + 1}: not a JSON line`);
    }
    const kind = (data as { kind?: unknown } | null)?.kind;
    if (kind !== 'llm-header' && kind !== 'llm-call') throw new Error(`${path}:${index + 1}: not an LLM call record (kind ${JSON.stringify(kind)})`);
    records.push(data as RecordLine);
  }
  return records;
}
