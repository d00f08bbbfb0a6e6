/** Aggregating episode results into a report, and printing it as a terminal table. */
import { METRIC_NAMES } from './metrics';
import type { EpisodeResult, EvalOptions } from './runner';

export const REPORT_VERSION = 1;

export interface EvalReport {
  readonly version: typeof REPORT_VERSION;
  readonly agent: string;
  readonly options: EvalOptions;
  readonly createdAt: string;
  readonly logs: readonly string[];
  /** Logs that could not be evaluated (they do not replay), with the reason. */
  readonly skippedLogs: readonly { readonly file: string; readonly error: string }[];
  readonly aggregates: Record<string, number | null>;
  readonly episodes: readonly EpisodeResult[];
}

const mean = (values: readonly number[]): number | null =>
  values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0) / values.length;

/** Means over episodes; path metrics skip non-finite values (unreachable cells). */
export function aggregate(episodes: readonly EpisodeResult[]): Record<string, number | null> {
  const out: Record<string, number | null> = {
    episodes: episodes.length,
    agentErrors: episodes.filter((e) => e.error).length,
    actionLimitReached: mean(episodes.map((e) => (e.limitReached ? 1 : 0))),
  };
  const single = episodes.flatMap((e) => (e.single ? [e.single] : []));
  if (single.length > 0) {
    out.cardAccuracy = mean(single.map((s) => s.cardAccuracy));
    out.exactEnvAccuracy = mean(single.map((s) => s.exactEnvAccuracy));
    out.relaxedEnvAccuracy = mean(single.map((s) => s.relaxedEnvAccuracy));
    out.sequenceAccuracy = mean(single.map((s) => s.sequenceAccuracy));
    for (const name of METRIC_NAMES) {
      out[name] = mean(single.map((s) => s.metrics[name]).filter(Number.isFinite));
    }
  }
  const cascaded = episodes.flatMap((e) => (e.cascaded ? [e.cascaded] : []));
  if (cascaded.length > 0) {
    out.proportionFollowed = mean(cascaded.map((c) => c.proportionFollowed));
    out.proportionPoints = mean(cascaded.flatMap((c) => (c.proportionPoints === null ? [] : [c.proportionPoints])));
    out.episodesWithPoints = cascaded.filter((c) => c.proportionPoints !== null).length;
  }
  return out;
}

/** The aggregates as an aligned two-column table. */
export function formatTable(report: EvalReport): string {
  const rows = Object.entries(report.aggregates).map(([name, value]) => [
    name,
    value === null ? 'n/a' : Number.isInteger(value) ? String(value) : value.toFixed(4),
  ]);
  const width = Math.max(...rows.map(([name]) => name.length));
  const title = `${report.agent}, ${report.options.mode} evaluation, ${report.episodes.length} episodes from ${report.logs.length} logs`;
  const lines = rows.map(([name, value]) => `  ${name.padEnd(width)}  ${value.padStart(9)}`);
  const skipped = report.skippedLogs.map((s) => `  skipped ${s.file}: ${s.error}`);
  return [title, ...lines, ...skipped].join('\n');
}
