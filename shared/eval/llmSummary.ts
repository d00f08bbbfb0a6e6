/**
 * An LLM seat's counts over a run, for the reports of agent-vs-agent evaluation and of evaluation
 * over logs: calls, statuses, fallbacks, tokens, latency, cost, and where its call records are.
 */

/** What an LLM agent counts (its `stats()`), as far as the reports use it. */
export interface LlmCounts {
  readonly calls: number;
  readonly byStatus: Readonly<Record<string, number>>;
  readonly fallbacks: number;
  readonly fallbacksBy: Readonly<Record<string, number | undefined>>;
  readonly httpRetries: number;
  readonly tokens: { readonly prompt: number; readonly completion: number; readonly total: number };
  readonly latencyMs: { readonly total: number; readonly max: number };
  /** Dollars, the sum of the calls' known costs; null when none is known (no prices). */
  readonly cost: number | null;
}

/** What an LLM seat ran with, as its call records' header says (the key's variable only, never a key). */
export interface LlmSeatSettings {
  readonly model: string;
  readonly baseUrl: string;
  readonly template: { readonly path: string; readonly sha256: string };
  /** Sampling and limits: temperature, seed, max tokens, timeout, retries, calls, consecutive failures, the key's variable. */
  readonly settings: Readonly<Record<string, unknown>>;
}

export interface LlmSummary {
  /** Null when the seat made no call record (it never had to act). */
  readonly settings: LlmSeatSettings | null;
  /** Chat calls sent (a spent budget sends none). */
  readonly calls: number;
  /** Call records by status, `ok` included. */
  readonly byStatus: Readonly<Record<string, number>>;
  /** The records that gave no plan: every status but `ok`, with its count (none: empty). */
  readonly failures: Readonly<Record<string, number>>;
  readonly fallbacks: number;
  readonly fallbacksBy: Readonly<Record<string, number>>;
  readonly httpRetries: number;
  readonly tokens: { readonly prompt: number; readonly completion: number; readonly total: number };
  /** Per call record: the mean over the records (budget lines count 0 ms) and the longest. */
  readonly latencyMs: { readonly mean: number | null; readonly max: number; readonly total: number };
  /** Dollars, from the tokens the server counted at the seat's prices; null when no call's cost is known (no prices): never 0 for unknown. */
  readonly cost: number | null;
  /** Where its call records are, relative to the report. */
  readonly records: string;
}

/** An LLM seat's counts for a report; `records` is where its call records went. */
export function summarizeLlm(counts: LlmCounts, settings: LlmSeatSettings | null, records: string): LlmSummary {
  const lines = Object.values(counts.byStatus).reduce((sum, n) => sum + n, 0);
  const failures = Object.fromEntries(Object.entries(counts.byStatus).filter(([status, n]) => status !== 'ok' && n > 0));
  const fallbacksBy = Object.fromEntries(Object.entries(counts.fallbacksBy).filter((entry): entry is [string, number] => (entry[1] ?? 0) > 0));
  return {
    settings,
    calls: counts.calls,
    byStatus: { ...counts.byStatus },
    failures,
    fallbacks: counts.fallbacks,
    fallbacksBy,
    httpRetries: counts.httpRetries,
    tokens: { ...counts.tokens },
    latencyMs: { mean: lines === 0 ? null : counts.latencyMs.total / lines, max: counts.latencyMs.max, total: counts.latencyMs.total },
    cost: counts.cost,
    records,
  };
}

/** A cost per unit (game, episode): null stays unknown. */
export const costPer = (cost: number | null, units: number): number | null => (cost === null || units === 0 ? null : cost / units);

/** Dollars for tables and pages; an unknown cost says so rather than 0. */
export const formatCost = (dollars: number | null): string => (dollars === null ? 'unknown' : `$${dollars.toFixed(4)}`);

/** A seat's cost and its cost per game or episode: `$0.0123 ($0.0062 a game)`, or `unknown`. */
export const describeCost = (cost: number | null, perUnit: number | null, unit: 'a game' | 'an episode'): string =>
  cost === null ? 'unknown' : `${formatCost(cost)} (${formatCost(perUnit)} ${unit})`;

/** An LLM seat's settings in one line, for tables and reports: two runs that differ in any setting read differently. */
export function describeLlmSettings(seat: LlmSeatSettings): string {
  const settings = Object.entries(seat.settings)
    .filter(([key]) => key !== 'apiKeyEnv')
    .map(([key, value]) => `${key} ${value === null ? 'unset' : String(value)}`)
    .join(', ');
  return `${seat.model} at ${seat.baseUrl}; ${settings}; prompt ${seat.template.path} (sha256 ${seat.template.sha256.slice(0, 12)})`;
}
