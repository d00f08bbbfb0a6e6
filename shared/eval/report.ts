/** Aggregating episode results into a report, and printing it as a terminal table. */
import { METRIC_NAMES } from './metrics';
import type { EpisodeResult, EvalOptions } from './runner';
import type { LlmSummary } from './llmSummary';

/** 2: `undefinedCounts`, `options.cascade`, and proportions of points no longer clipped at 1. */
export const REPORT_VERSION = 2;

export interface EvalReport {
  readonly version: typeof REPORT_VERSION;
  readonly agent: string;
  /** The options the run used, the cascade convention included. */
  readonly options: EvalOptions;
  readonly createdAt: string;
  readonly logs: readonly string[];
  /** Logs that could not be evaluated (they do not replay), with the reason. */
  readonly skippedLogs: readonly { readonly file: string; readonly error: string }[];
  /** Instructions of the logs that the recorded leader cancelled: not examples, neither followed nor failed (docs/evaluation.md, E-37). */
  readonly instructionsCancelled: number;
  /** Means over episodes (only over episodes where the score is defined), and counts. */
  readonly aggregates: Record<string, number | null>;
  /**
   * For every mean in `aggregates`: how many episodes had no defined value for that score
   * (Infinity, NaN, or null), and were therefore left out of its mean. 0 when none were.
   */
  readonly undefinedCounts: Record<string, number>;
  readonly episodes: readonly EpisodeResult[];
  /** When the LLM agent was evaluated: its counts over the run (its call records, one file per episode, are in `records`). */
  readonly llm?: LlmSummary & { readonly tokensPerEpisode: number; readonly costPerEpisode: number | null };
}

/** A value a mean can use: a finite number. Infinity, NaN and null are undefined. */
const isDefined = (value: number | null): value is number => value !== null && Number.isFinite(value);

const mean = (values: readonly number[]): number | null =>
  values.length === 0 ? null : values.reduce((sum, value) => sum + value, 0) / values.length;

/** Each score averaged over episodes, with its value in every episode of the matching mode. */
function scoreColumns(episodes: readonly EpisodeResult[]): [name: string, values: (number | null)[]][] {
  const columns: [string, (number | null)[]][] = [['actionLimitReached', episodes.map((e) => (e.limitReached ? 1 : 0))]];
  const single = episodes.flatMap((e) => (e.single ? [e.single] : []));
  if (single.length > 0) {
    for (const name of ['cardAccuracy', 'exactEnvAccuracy', 'relaxedEnvAccuracy', 'sequenceAccuracy'] as const) {
      columns.push([name, single.map((s) => s[name])]);
    }
    for (const name of METRIC_NAMES) columns.push([name, single.map((s) => s.metrics[name])]);
  }
  const cascaded = episodes.flatMap((e) => (e.cascaded ? [e.cascaded] : []));
  if (cascaded.length > 0) {
    columns.push(['proportionFollowed', cascaded.map((c) => c.proportionFollowed)]);
    columns.push(['proportionPoints', cascaded.map((c) => c.proportionPoints)]);
  }
  return columns;
}

/**
 * Means over episodes. A score that is undefined in an episode (a path metric that is infinite
 * because a path leaves the reachable cells, a proportion of points when the recorded game scored
 * nothing) is left out of that score's mean and counted in `undefinedCounts`.
 */
export function aggregate(episodes: readonly EpisodeResult[]): Record<string, number | null> {
  const out: Record<string, number | null> = {
    episodes: episodes.length,
    agentErrors: episodes.filter((e) => e.error).length,
  };
  for (const [name, values] of scoreColumns(episodes)) out[name] = mean(values.filter(isDefined));
  const cascaded = episodes.flatMap((e) => (e.cascaded ? [e.cascaded] : []));
  if (cascaded.length > 0) out.episodesWithPoints = cascaded.filter((c) => c.proportionPoints !== null).length;
  return out;
}

/** For every mean of `aggregate`: the episodes whose value was undefined (left out of the mean). */
export function countUndefined(episodes: readonly EpisodeResult[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, values] of scoreColumns(episodes)) out[name] = values.filter((value) => !isDefined(value)).length;
  return out;
}

/** How the report's evaluation was run, in words: the mode and, in cascaded mode, the convention. */
export function describeMode(options: EvalOptions): string {
  if (options.mode !== 'cascaded') return `${options.mode} evaluation`;
  const cascade = options.cascade ?? 'stop-at-first-failure';
  return `cascaded evaluation (${cascade === 'continue' ? 'continue after failures, not the paper' : 'stop at first failure'})`;
}

/**
 * Cascaded mode: what the proportion of points is out of, in words (docs/evaluation.md, E-13);
 * null in single mode.
 */
export function describePointsPossible(episodes: readonly EpisodeResult[]): string | null {
  const cascaded = episodes.flatMap((e) => (e.cascaded ? [e.cascaded] : []));
  if (cascaded.length === 0) return null;
  const possible = cascaded.reduce((sum, c) => sum + c.pointsPossible, 0);
  const scored = cascaded.reduce((sum, c) => sum + c.pointsScored, 0);
  const none = cascaded.filter((c) => c.proportionPoints === null).length;
  return (
    `${scored} points scored of ${possible} possible over ${cascaded.length} examples. The points possible for an example are the points ` +
    `the recorded game made from its first follower step to the game's end, the instruction the game ended on included` +
    (none > 0 ? `; ${none} examples had none, so no proportion.` : '.')
  );
}

/**
 * The aggregates as an aligned table. A mean that left episodes out (their value was undefined)
 * says how many; no note means none were.
 */
export function formatTable(report: EvalReport): string {
  const rows = Object.entries(report.aggregates).map(([name, value]) => {
    const left = report.undefinedCounts[name] ?? 0;
    return [
      name,
      value === null ? 'n/a' : Number.isInteger(value) ? String(value) : value.toFixed(4),
      left > 0 ? `  (${left} of ${report.episodes.length} episodes undefined, not in the mean)` : '',
    ];
  });
  const width = Math.max(...rows.map(([name]) => name.length));
  const title = `${report.agent}, ${describeMode(report.options)}, ${report.episodes.length} episodes from ${report.logs.length} logs; rules: ${describeProfiles(report.episodes)}`;
  const lines = rows.map(([name, value, note]) => `  ${name.padEnd(width)}  ${value.padStart(9)}${note}`);
  const points = describePointsPossible(report.episodes);
  const cancelled = report.instructionsCancelled > 0 ? [`  ${describeCancelled(report.instructionsCancelled)}`] : [];
  const skipped = report.skippedLogs.map((s) => `  skipped ${s.file}: ${s.error}`);
  return [title, ...lines, ...(points ? [`  ${points}`] : []), ...cancelled, ...skipped].join('\n');
}

/** The instructions the recorded leaders cancelled, in words (E-37). */
export function describeCancelled(count: number): string {
  return `${count} instruction${count === 1 ? '' : 's'} cancelled by the recorded leader: not examples, neither followed nor failed.`;
}

/** The rules profiles of the games the episodes come from, with how many of those games each: "cb2 (14 games)". */
export function describeProfiles(episodes: readonly EpisodeResult[]): string {
  const games = new Map<string, Set<string>>();
  for (const episode of episodes) {
    const set = games.get(episode.profile) ?? new Set<string>();
    set.add(episode.gameId);
    games.set(episode.profile, set);
  }
  if (games.size === 0) return 'none';
  return [...games].map(([profile, ids]) => `${profile} (${ids.size} game${ids.size === 1 ? '' : 's'})`).join(', ');
}
