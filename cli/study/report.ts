/**
 * `cerealbar study report`: a study's arms compared from its game logs. Each log whose header
 * names the study and an arm (`meta.arm`) is replayed, and its figures are summed by arm: games,
 * how they ended, the score with a bootstrap interval, instructions, the share followed (marked
 * done), cancellations, the leader's feedback, and an LLM arm's call failures from its call
 * records; then each pair of arms' difference in mean score with its interval.
 * docs/study-arms.md ("The figures") defines every figure.
 */
import { existsSync, readFileSync } from 'node:fs';
import { Draw, seedRng } from '../../shared/engine/rng';
import { bootstrapInterval, mean, quantile, type BootstrapOptions, type Interval } from '../../shared/eval/bootstrap';
import { findRecordFile } from '../../shared/agents/node/llm/records';
import { replay } from '../../shared/log/replay';
import type { LogEvent } from '../../shared/log/format';
import { armSeat, LLM_ARM_AGENT, type ArmMeta } from '../../shared/study/arms';
import { csvField } from '../../shared/study/csv';
import type { Study } from '../../shared/study/studyFile';
import type { LogFile } from '../../server/study/gameLogs';

export const STUDY_REPORT_VERSION = 1;

/** One game of an arm, as its log (and its call records) tell it. */
export interface ArmGame {
  readonly gameId: string;
  readonly draw: number;
  /** The end's reason, or null for a game not ended (being played, or its process gone). */
  readonly endReason: string | null;
  readonly score: number;
  /** Instructions the leader wrote. */
  readonly instructions: number;
  /** Instructions the follower marked done. */
  readonly done: number;
  /** Instructions the leader cancelled (each one of a cancel's). */
  readonly cancelled: number;
  readonly feedback: { readonly positive: number; readonly negative: number };
  /** An LLM arm's call records of this game by status; null for another arm, or when the game's records are not there. */
  readonly llmCalls: Readonly<Record<string, number>> | null;
  /** An LLM arm's observations answered with the fallback in this game; null as llmCalls. */
  readonly llmFallbacks: number | null;
}

/** An LLM arm's calls over its games. */
export interface ArmLlmSummary {
  /** Call records of the games whose records were found (each chat call and each spent-budget line). */
  readonly records: number;
  readonly byStatus: Readonly<Record<string, number>>;
  /** Records whose status is not ok, by status, and their share of the records (null with none). */
  readonly failures: Readonly<Record<string, number>>;
  readonly failureRate: number | null;
  /** Observations answered with the fallback. */
  readonly fallbacks: number;
  /** Games whose call records were not found (they are not counted above). */
  readonly gamesWithoutRecords: readonly string[];
}

export interface ArmSummary {
  readonly id: string;
  readonly agent: string;
  readonly weight: number;
  /** Games whose log names the arm. */
  readonly games: number;
  readonly ended: number;
  /** Ended because the turns ran out: played to the end. */
  readonly playedToEnd: number;
  /** Ended because a player left (or lost its connection for good). */
  readonly abandoned: number;
  /** Ended otherwise: interrupted, server-shutdown, storage-failed. */
  readonly otherEnds: number;
  /** Not ended yet (not counted in the figures below). */
  readonly notEnded: number;
  /** Over the ended games, however they ended; null (and no interval) with none. */
  readonly meanScore: number | null;
  readonly scoreInterval: Interval | null;
  readonly scores: readonly number[];
  readonly instructionsPerGame: number | null;
  /** Instructions marked done over instructions written, the ended games pooled. */
  readonly followedShare: number | null;
  /** Instructions cancelled over instructions written, the ended games pooled. */
  readonly cancellationRate: number | null;
  readonly feedback: { readonly positive: number; readonly negative: number; readonly negativePerPositive: number | null };
  /** Only for an LLM arm. */
  readonly llm: ArmLlmSummary | null;
  readonly gameList: readonly ArmGame[];
}

/** The second arm's mean score minus the first's. */
export interface ArmDifference {
  readonly arm: string;
  readonly minus: string;
  readonly meanDifference: number;
  readonly interval: Interval;
}

export interface StudyReport {
  readonly kind: 'study-arms';
  readonly version: typeof STUDY_REPORT_VERSION;
  readonly study: string;
  readonly createdAt: string;
  /** The seat the arms play. */
  readonly armSeat: 'leader' | 'follower';
  readonly bootstrap: BootstrapOptions & { readonly method: 'percentile' };
  readonly arms: readonly ArmSummary[];
  readonly differences: readonly ArmDifference[];
  /** Logs of the study whose arm the study file no longer names, or with no arm (games before arms). */
  readonly otherGames: readonly { readonly gameId: string; readonly arm: string | null }[];
}

/** A game's figures from its log (replayed: a log that does not replay is an error naming it). */
function gameFigures(log: LogFile, arm: ArmMeta): Omit<ArmGame, 'llmCalls' | 'llmFallbacks'> {
  const events: LogEvent[] = [];
  const result = replay(log.text, { allowOpen: true, onState: (_state, event) => void (event && events.push(event)) });
  const count = (type: string) => events.filter((event) => event.type === type).length;
  const signals = events.filter((event) => event.type === 'feedback').map((event) => (event.payload as { signal: string }).signal);
  return {
    gameId: log.header.gameId,
    draw: arm.draw,
    endReason: result.end?.reason ?? null,
    score: result.final.score,
    instructions: count('instruction'),
    done: count('done'),
    cancelled: events.reduce((sum, event) => sum + (event.outcome.cancelled?.length ?? 0), 0),
    feedback: { positive: signals.filter((s) => s === 'positive').length, negative: signals.filter((s) => s === 'negative').length },
  };
}

/** A game's call records by status and its fallbacks, or null when the file is not there. */
function callRecords(file: string): { byStatus: Record<string, number>; fallbacks: number } | null {
  if (!existsSync(file)) return null;
  const byStatus: Record<string, number> = {};
  let fallbacks = 0;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const record = JSON.parse(line) as { kind?: string; status?: string; fallback?: unknown };
    if (record.kind !== 'llm-call' || typeof record.status !== 'string') continue;
    byStatus[record.status] = (byStatus[record.status] ?? 0) + 1;
    if (record.fallback) fallbacks++;
  }
  return { byStatus, fallbacks };
}

const ratio = (part: number, whole: number) => (whole === 0 ? null : part / whole);
const sumOf = <T>(items: readonly T[], figure: (item: T) => number) => items.reduce((sum, item) => sum + figure(item), 0);

function summarizeLlm(games: readonly ArmGame[]): ArmLlmSummary {
  const byStatus: Record<string, number> = {};
  for (const game of games) for (const [status, n] of Object.entries(game.llmCalls ?? {})) byStatus[status] = (byStatus[status] ?? 0) + n;
  const failures = Object.fromEntries(Object.entries(byStatus).filter(([status]) => status !== 'ok'));
  const records = sumOf(Object.values(byStatus), (n) => n);
  return {
    records,
    byStatus,
    failures,
    failureRate: ratio(sumOf(Object.values(failures), (n) => n), records),
    fallbacks: sumOf(games, (game) => game.llmFallbacks ?? 0),
    gamesWithoutRecords: games.filter((game) => game.llmCalls === null).map((game) => game.gameId),
  };
}

function summarizeArm(arm: NonNullable<Study['arms']>[number], games: readonly ArmGame[], bootstrap: BootstrapOptions): ArmSummary {
  const ended = games.filter((game) => game.endReason !== null);
  const scores = ended.map((game) => game.score);
  const instructions = sumOf(ended, (game) => game.instructions);
  const positive = sumOf(ended, (game) => game.feedback.positive);
  const negative = sumOf(ended, (game) => game.feedback.negative);
  return {
    id: arm.id,
    agent: arm.agent,
    weight: arm.weight,
    games: games.length,
    ended: ended.length,
    playedToEnd: ended.filter((game) => game.endReason === 'turns-exhausted').length,
    abandoned: ended.filter((game) => game.endReason === 'abandoned').length,
    otherEnds: ended.filter((game) => game.endReason !== 'turns-exhausted' && game.endReason !== 'abandoned').length,
    notEnded: games.length - ended.length,
    meanScore: scores.length === 0 ? null : mean(scores),
    scoreInterval: bootstrapInterval(scores, bootstrap),
    scores,
    instructionsPerGame: ratio(instructions, ended.length),
    followedShare: ratio(sumOf(ended, (game) => game.done), instructions),
    cancellationRate: ratio(sumOf(ended, (game) => game.cancelled), instructions),
    feedback: { positive, negative, negativePerPositive: ratio(negative, positive) },
    llm: arm.agent === LLM_ARM_AGENT ? summarizeLlm(ended) : null,
    gameList: games,
  };
}

/**
 * The percentile bootstrap interval of mean(b) - mean(a) for independent samples: each resample
 * draws each arm's scores anew (with replacement, as many as it has), from one seeded generator.
 */
export function differenceInterval(a: readonly number[], b: readonly number[], options: BootstrapOptions): Interval {
  const draw = new Draw(seedRng(options.seed));
  const resampledMean = (values: readonly number[]) => {
    let sum = 0;
    for (let i = 0; i < values.length; i++) sum += values[draw.int(0, values.length - 1)];
    return sum / values.length;
  };
  const differences = Array.from({ length: options.resamples }, () => resampledMean(b) - resampledMean(a)).sort((x, y) => x - y);
  const tail = (1 - options.level) / 2;
  return { low: quantile(differences, tail), high: quantile(differences, 1 - tail) };
}

/**
 * The study's report from its logs (those of other studies are left out). `recordsDir` is where
 * the LLM arms' call records are. The arms are in the study file's order.
 */
export function studyReport(study: Study, logs: readonly LogFile[], recordsDir: string, bootstrap: BootstrapOptions, now = new Date()): StudyReport {
  const arms = study.arms ?? [];
  const seat = armSeat(study);
  const byArm = new Map<string, ArmGame[]>(arms.map((arm) => [arm.id, []]));
  const otherGames: StudyReport['otherGames'][number][] = [];
  for (const log of logs) {
    const meta = log.header.meta as { study?: unknown; arm?: ArmMeta } | undefined;
    if (meta?.study !== study.id) continue;
    const games = meta.arm ? byArm.get(meta.arm.id) : undefined;
    if (!games || !meta.arm) {
      otherGames.push({ gameId: log.header.gameId, arm: meta.arm?.id ?? null });
      continue;
    }
    const figures = gameFigures(log, meta.arm);
    const records = meta.arm.agent === LLM_ARM_AGENT ? callRecords(findRecordFile(recordsDir, figures.gameId, seat)) : null;
    games.push({ ...figures, llmCalls: records?.byStatus ?? null, llmFallbacks: records?.fallbacks ?? null });
  }
  const summaries = arms.map((arm) => summarizeArm(arm, byArm.get(arm.id)!.sort((a, b) => a.draw - b.draw), bootstrap));
  const differences: ArmDifference[] = [];
  summaries.forEach((first, i) =>
    summaries.slice(i + 1).forEach((second) => {
      if (first.scores.length === 0 || second.scores.length === 0) return;
      differences.push({ arm: second.id, minus: first.id, meanDifference: second.meanScore! - first.meanScore!, interval: differenceInterval(first.scores, second.scores, bootstrap) });
    }),
  );
  return { kind: 'study-arms', version: STUDY_REPORT_VERSION, study: study.id, createdAt: now.toISOString(), armSeat: seat, bootstrap: { ...bootstrap, method: 'percentile' }, arms: summaries, differences, otherGames };
}

/** A figure: an integer as it is, any other number to `digits` places; empty when undefined. Text goes through csvField alone (neutralised against formulas). */
const cell = (value: number | null | undefined, digits = 4) => csvField(value, value === null || value === undefined || Number.isInteger(value) ? undefined : digits);

export const ARM_CSV_COLUMNS = [
  'arm', 'agent', 'weight', 'games', 'ended', 'played_to_end', 'abandoned', 'other_ends', 'not_ended', 'mean_score', 'score_ci_low', 'score_ci_high',
  'instructions_per_game', 'followed_share', 'cancellation_rate', 'feedback_positive', 'feedback_negative', 'negative_per_positive',
  'llm_call_records', 'llm_call_failures', 'llm_failure_rate', 'llm_fallbacks',
] as const;

/** The per-arm table as CSV: a header line, then a line per arm (empty cells where a figure is undefined). */
export function armsCsv(report: StudyReport): string {
  const rows = report.arms.map((arm) => [
    csvField(arm.id), csvField(arm.agent), cell(arm.weight), cell(arm.games), cell(arm.ended), cell(arm.playedToEnd), cell(arm.abandoned), cell(arm.otherEnds), cell(arm.notEnded),
    cell(arm.meanScore), cell(arm.scoreInterval?.low), cell(arm.scoreInterval?.high),
    cell(arm.instructionsPerGame), cell(arm.followedShare), cell(arm.cancellationRate), cell(arm.feedback.positive), cell(arm.feedback.negative), cell(arm.feedback.negativePerPositive),
    cell(arm.llm?.records), cell(arm.llm && sumOf(Object.values(arm.llm.failures), (n) => n)), cell(arm.llm?.failureRate), cell(arm.llm?.fallbacks),
  ]);
  return [ARM_CSV_COLUMNS.join(','), ...rows.map((row) => row.join(','))].map((line) => `${line}\n`).join('');
}

/** The differences as CSV. */
export function differencesCsv(report: StudyReport): string {
  const rows = report.differences.map((d) => [csvField(d.arm), csvField(d.minus), cell(d.meanDifference), cell(d.interval.low), cell(d.interval.high)]);
  return [['arm', 'minus', 'mean_difference', 'ci_low', 'ci_high'].join(','), ...rows.map((row) => row.join(','))].map((line) => `${line}\n`).join('');
}

const shown = (value: number | null | undefined, digits = 2) => (value === null || value === undefined ? 'n/a' : value.toFixed(digits));

/** The report as lines for the terminal. */
export function formatStudyReport(report: StudyReport): string {
  const level = Math.round(report.bootstrap.level * 100);
  const lines = [`Study ${report.study}: ${report.arms.length} arm(s) in the ${report.armSeat}'s seat; score intervals: percentile bootstrap, ${report.bootstrap.resamples} resamples, seed ${report.bootstrap.seed}`];
  for (const arm of report.arms) {
    const ci = arm.scoreInterval ? ` (${level}% ${shown(arm.scoreInterval.low)} to ${shown(arm.scoreInterval.high)})` : '';
    const llm = arm.llm ? `; ${arm.llm.records} LLM call records, ${sumOf(Object.values(arm.llm.failures), (n) => n)} failed` : '';
    lines.push(
      `  ${arm.id} (${arm.agent}, weight ${arm.weight}): ${arm.games} games, ${arm.playedToEnd} played to the end, ${arm.abandoned} abandoned; mean score ${shown(arm.meanScore)}${ci}; ` +
        `${shown(arm.instructionsPerGame, 1)} instructions a game, ${shown(arm.followedShare, 3)} followed, ${shown(arm.cancellationRate, 3)} cancelled; feedback ${arm.feedback.negative} negative to ${arm.feedback.positive} positive${llm}`,
    );
  }
  for (const d of report.differences) lines.push(`  ${d.arm} - ${d.minus}: ${d.meanDifference >= 0 ? '+' : ''}${d.meanDifference.toFixed(2)} points a game (${level}% ${shown(d.interval.low)} to ${shown(d.interval.high)})`);
  if (report.otherGames.length > 0) lines.push(`  ${report.otherGames.length} game(s) of the study with no arm of the study file, not counted: ${report.otherGames.map((game) => game.gameId).join(' ')}`);
  return `${lines.join('\n')}\n`;
}
