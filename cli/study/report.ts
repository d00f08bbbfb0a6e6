/**
 * `cerealbar study report`: a study's arms compared from its game logs. Each log whose header
 * names the study and an arm (`meta.arm`) is replayed, and its figures are summed by arm: draws
 * and games (intention to treat beside per protocol), how they ended, participants met, minutes
 * played and the bonus a minute, the agent seat's timeouts and the failures its seat recorded, the
 * score with a per-game and a per-participant bootstrap interval (and a warning where an interval
 * says little), instructions, the share followed (marked done), cancellations, the leader's
 * feedback, and an LLM arm's call failures from its call records; then each pair of arms'
 * difference in mean score with both intervals, a permutation p-value and Holm's adjustment, and
 * the games per arm a study needs. The arms' draws are the worker store's when it is given, else
 * the logs'. docs/study-arms.md ("The figures") defines every figure.
 */
import { existsSync } from 'node:fs';
import { bootstrapInterval, differenceInterval, mean, type BootstrapOptions, type Interval } from '../../shared/eval/bootstrap';
import { clusterBootstrapInterval, clusterDifferenceInterval } from '../../shared/eval/clusterBootstrap';
import { intervalWarning } from '../../shared/eval/intervalWarning';
import { holmAdjusted, permutationPValue } from '../../shared/eval/multipleComparisons';
import { findRecordFile, readRecords } from '../../shared/agents/node/llm/records';
import type { AgentIdentity } from '../../shared/agents/types';
import { replay } from '../../shared/log/replay';
import type { AgentSeatFailure, LogAgentSeat, LogEvent } from '../../shared/log/format';
import { armSeat, LLM_ARM_AGENT, type ArmMeta } from '../../shared/study/arms';
import { csvField } from '../../shared/study/csv';
import type { ArmTotals } from '../../shared/study/overview';
import type { Study } from '../../shared/study/studyFile';
import type { LogFile } from '../../server/study/gameLogs';
import { armOfDraw } from '../../server/study/arms';
import { detectableDifference, gamesPerArm, pilotVariance, PLANNED_POWER, type PilotVariance } from './sampleSize';

export const STUDY_REPORT_VERSION = 1;

/**
 * What the arm's seat recorded of its agent (the log's agentSeat lines, P-147): its failures by
 * reason (`error`: it threw; `refused`: the game refused its answers 10 times in a row; `late`: its
 * next turn began before it answered) and the instructions it marked done after the agent failed
 * on them twice in a row (P-140).
 */
export interface AgentFailureCounts {
  readonly error: number;
  readonly refused: number;
  readonly late: number;
  readonly markedDone: number;
}

/** One game of an arm, as its log (and its call records) tell it. */
export interface ArmGame {
  readonly gameId: string;
  readonly draw: number;
  /** The participant who played it: the worker id of its human seat in the header (`meta.players`), or null when none is named. */
  readonly workerId: string | null;
  /** The end's reason, or null for a game not ended (being played, or its process gone). */
  readonly endReason: string | null;
  readonly score: number;
  /** From the game's start to its end line (to its last event while not ended). */
  readonly minutes: number;
  /** Instructions the leader wrote. */
  readonly instructions: number;
  /** Instructions the follower marked done. */
  readonly done: number;
  /** Instructions the leader cancelled (each one of a cancel's). */
  readonly cancelled: number;
  readonly feedback: { readonly positive: number; readonly negative: number };
  /** Turns of the arm's seat that ran out: the server's `timeout` events for the seat the agent played. */
  readonly agentTimeouts: number;
  readonly agentFailures: AgentFailureCounts;
  /** The agent in the arm's seat as the header records it (`meta.agents`), or null when it does not. */
  readonly agent: AgentIdentity | null;
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
  /**
   * Draws of the arm (the intention-to-treat denominator): the worker store's count when the report
   * was given it (`drawSource`), else its games and its draws never started.
   */
  readonly draws: number;
  /**
   * The draw numbers of the arm (the study file's draw for the number) that have no log: their game
   * never started (the seat was never taken, or the agent could not start). Up to the study's last
   * draw in the worker store, else to its last logged draw.
   */
  readonly neverStarted: readonly number[];
  /** Games whose log names the arm (the per-protocol denominator). */
  readonly games: number;
  readonly ended: number;
  /** Ended because the turns ran out: played to the end. */
  readonly playedToEnd: number;
  /** Played to the end over the draws (intention to treat) and over the games (per protocol); null over none. */
  readonly playedToEndShare: { readonly ofDraws: number | null; readonly ofGames: number | null };
  /** Ended because a player left (or lost its connection for good). */
  readonly abandoned: number;
  /** Ended otherwise: interrupted, server-shutdown, storage-failed. */
  readonly otherEnds: number;
  /** Not ended yet (not counted in the figures below). */
  readonly notEnded: number;
  /** Participants met: the workers who played at least one of the arm's games. */
  readonly participants: number;
  /** The ended games' minutes, added up. */
  readonly minutesPlayed: number;
  /** The bonus the ended games earned (bonusPerPoint for each point, before a participant's maxBonus) per minute played, in the study's currency. */
  readonly bonusPerMinute: number | null;
  /** Turns of the arm's seat that ran out, over the ended games. */
  readonly agentTimeouts: number;
  /** What the arm's seat recorded of its agent, over the ended games. */
  readonly agentFailures: AgentFailureCounts;
  /** The agents that played the arm's seat (name, version, spec), each with its games: more than one means the agent changed during the study. */
  readonly agents: readonly (AgentIdentity & { readonly games: number })[];
  /** Over the ended games, however they ended; null (and no interval) with none. */
  readonly meanScore: number | null;
  /** The per-game bootstrap: the ended games resampled. */
  readonly scoreInterval: Interval | null;
  readonly scoreIntervalWarning: string | null;
  /** The cluster bootstrap: the arm's participants resampled, each with all its ended games. */
  readonly scoreIntervalByParticipant: Interval | null;
  readonly scoreIntervalByParticipantWarning: string | null;
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

/** The second arm's mean score minus the first's, with the per-game bootstrap interval. */
export interface ArmDifference {
  readonly arm: string;
  readonly minus: string;
  readonly meanDifference: number;
  readonly interval: Interval;
}

/** What else is known of a difference (the one of `differences` with the same arms, in the same order). */
export interface ArmComparison {
  readonly arm: string;
  readonly minus: string;
  /** The cluster bootstrap: the two arms' participants resampled together, each with its ended games in both. */
  readonly intervalByParticipant: Interval | null;
  /** The two-sided permutation p-value of the difference, and Holm's adjustment of it over every pair of arms. */
  readonly pValue: number;
  readonly holmPValue: number;
  /** Each arm's warning of its interval over games, named by the arm; null when neither has one. */
  readonly warning: string | null;
  /** Each arm's warning of its interval over participants, named by the arm; null when neither has one. */
  readonly warningByParticipant: string | null;
}

/** The study file the games were played under. */
export interface StudyFileIdentity {
  /** The SHA-256 the report names: the log headers' (the one most games have), else that of the study file the report was given. */
  readonly sha256: string | null;
  readonly source: 'log headers' | 'study file' | 'unknown';
  /** Each SHA-256 the headers' study record holds, with its games: more than one means the file changed during the study. */
  readonly inHeaders: readonly { readonly sha256: string; readonly games: number }[];
  /** The SHA-256 of the study file the report was given, as it was loaded (`fileSha256`); null when the study came without it. */
  readonly ofFileGiven: string | null;
}

/** The games per arm a study needs, planned from these games' variance (docs/study-arms.md, "How many games"). */
export interface SampleSizePlan extends PilotVariance {
  readonly power: number;
  /** Two-sided; divided by the pairs of arms compared (Holm's first, strictest step). */
  readonly alpha: number;
  /** The smallest true difference the smallest arm's ended games find at that power. */
  readonly detectableDifference: number | null;
  /** The games per arm each pair's observed difference would need, were it the true one. */
  readonly forDifferences: readonly { readonly arm: string; readonly minus: string; readonly difference: number; readonly gamesPerArm: number | null }[];
}

export interface StudyReport {
  readonly kind: 'study-arms';
  readonly version: typeof STUDY_REPORT_VERSION;
  readonly study: string;
  readonly studyFile: StudyFileIdentity;
  readonly createdAt: string;
  /** The seat the arms play. */
  readonly armSeat: 'leader' | 'follower';
  /** Where the arms' draws come from: the worker store's exact counts, or the logs (which know no draw after the last logged one). */
  readonly drawSource: 'worker store' | 'logs';
  /** The currency of the bonus a minute. */
  readonly currency: string;
  readonly bootstrap: BootstrapOptions & { readonly method: 'percentile' };
  readonly arms: readonly ArmSummary[];
  readonly differences: readonly ArmDifference[];
  readonly comparisons: readonly ArmComparison[];
  readonly sampleSize: SampleSizePlan;
  /** Games whose header's arm is not the one the study file draws for their draw number: the arms changed during the study. */
  readonly mismatchedDraws: readonly string[];
  /** Logs of the study whose arm the study file no longer names, or with no arm (games before arms). */
  readonly otherGames: readonly { readonly gameId: string; readonly arm: string | null }[];
}

/** What a log header records of its game's study: its id (`meta.study`) and the SHA-256 of the study file it was played under (`meta.studyFileSha256`, in headers that have it). */
function studyRecord(meta: Readonly<Record<string, unknown>>): { id: string; sha256: string | null } | null {
  if (typeof meta.study !== 'string') return null;
  return { id: meta.study, sha256: typeof meta.studyFileSha256 === 'string' ? meta.studyFileSha256 : null };
}

/** The worker id of the game's human seat (`meta.players`), or null. */
function participantOf(meta: Readonly<Record<string, unknown>>): string | null {
  const players = Array.isArray(meta.players) ? (meta.players as { kind?: unknown; workerId?: unknown }[]) : [];
  const worker = players.find((seat) => seat.kind === 'human' && typeof seat.workerId === 'string')?.workerId;
  return typeof worker === 'string' ? worker : null;
}

/** A game's agentSeat lines of the arm's seat, counted. */
function agentFailureCounts(lines: readonly LogAgentSeat[]): AgentFailureCounts {
  const failed = (reason: AgentSeatFailure) => lines.filter((line) => line.type === 'failed' && line.reason === reason).length;
  return { error: failed('error'), refused: failed('refused'), late: failed('late'), markedDone: lines.filter((line) => line.type === 'markedDone').length };
}

/** A game's figures from its log (replayed: a log that does not replay is an error naming it). */
function gameFigures(log: LogFile, arm: ArmMeta, seat: 'leader' | 'follower'): Omit<ArmGame, 'llmCalls' | 'llmFallbacks'> {
  const events: LogEvent[] = [];
  const result = replay(log.text, { allowOpen: true, onState: (_state, event) => void (event && events.push(event)) });
  const count = (type: string) => events.filter((event) => event.type === type).length;
  const signals = events.filter((event) => event.type === 'feedback').map((event) => (event.payload as { signal: string }).signal);
  const agents = log.header.meta.agents as Partial<Record<string, AgentIdentity>> | undefined;
  return {
    gameId: log.header.gameId,
    draw: arm.draw,
    workerId: participantOf(log.header.meta),
    endReason: result.end?.reason ?? null,
    score: result.final.score,
    minutes: (result.end?.t ?? events.at(-1)?.t ?? 0) / 60_000,
    instructions: count('instruction'),
    done: count('done'),
    cancelled: events.reduce((sum, event) => sum + (event.outcome.cancelled?.length ?? 0), 0),
    feedback: { positive: signals.filter((s) => s === 'positive').length, negative: signals.filter((s) => s === 'negative').length },
    agentTimeouts: events.filter((event) => event.type === 'timeout' && (event.payload as { role: string }).role === seat).length,
    agentFailures: agentFailureCounts(result.agentSeats.filter((line) => line.role === seat)),
    agent: agents?.[seat] ?? null,
  };
}

/** A game's call records by status and its fallbacks (read by the records module, which owns their format), or null when the file is not there. */
function callRecords(file: string): { byStatus: Record<string, number>; fallbacks: number } | null {
  if (!existsSync(file)) return null;
  const byStatus: Record<string, number> = {};
  let fallbacks = 0;
  for (const record of readRecords(file)) {
    if (record.kind !== 'llm-call') continue;
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

/** A game's cluster: its participant, or the game alone when its header names none. */
const clusterOf = (game: ArmGame) => game.workerId ?? `game ${game.gameId}`;

/** The games' scores by cluster (participant), in the clusters' order: the resampling depends on the games alone, not on the order they came in. */
function scoresByParticipant(games: readonly ArmGame[]): Map<string, number[]> {
  const clusters = new Map<string, number[]>();
  for (const game of games) clusters.set(clusterOf(game), [...(clusters.get(clusterOf(game)) ?? []), game.score]);
  return new Map([...clusters].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** The arms' warnings, each named by its arm, or null when none has one. */
function armsWarning(arms: readonly ArmSummary[], warning: (arm: ArmSummary) => string | null): string | null {
  const warnings = arms.filter((arm) => warning(arm) !== null).map((arm) => `${arm.id}: ${warning(arm)}`);
  return warnings.length === 0 ? null : warnings.join('; ');
}

/** The agents that played the games, each with its games, in the order first met. */
function agentsOf(games: readonly ArmGame[]): ArmSummary['agents'] {
  const tally = new Map<string, AgentIdentity & { games: number }>();
  for (const game of games) {
    if (!game.agent) continue;
    const key = JSON.stringify([game.agent.name, game.agent.version ?? null, game.agent.spec]);
    const entry = tally.get(key) ?? { ...game.agent, games: 0 };
    tally.set(key, { ...entry, games: entry.games + 1 });
  }
  return [...tally.values()];
}

function summarizeArm(study: Study, arm: NonNullable<Study['arms']>[number], games: readonly ArmGame[], neverStarted: readonly number[], drawn: number | null, bootstrap: BootstrapOptions): ArmSummary {
  const ended = games.filter((game) => game.endReason !== null);
  const scores = ended.map((game) => game.score);
  const byParticipant = [...scoresByParticipant(ended).values()];
  const instructions = sumOf(ended, (game) => game.instructions);
  const positive = sumOf(ended, (game) => game.feedback.positive);
  const negative = sumOf(ended, (game) => game.feedback.negative);
  const playedToEnd = ended.filter((game) => game.endReason === 'turns-exhausted').length;
  const minutesPlayed = sumOf(ended, (game) => game.minutes);
  const draws = drawn ?? games.length + neverStarted.length;
  const failures = (count: keyof AgentFailureCounts) => sumOf(ended, (game) => game.agentFailures[count]);
  return {
    id: arm.id,
    agent: arm.agent,
    weight: arm.weight,
    draws,
    neverStarted,
    games: games.length,
    ended: ended.length,
    playedToEnd,
    playedToEndShare: { ofDraws: ratio(playedToEnd, draws), ofGames: ratio(playedToEnd, games.length) },
    abandoned: ended.filter((game) => game.endReason === 'abandoned').length,
    otherEnds: ended.filter((game) => game.endReason !== 'turns-exhausted' && game.endReason !== 'abandoned').length,
    notEnded: games.length - ended.length,
    participants: new Set(games.map(clusterOf)).size,
    minutesPlayed,
    bonusPerMinute: ratio(study.pay.bonusPerPoint * sumOf(scores, (score) => score), minutesPlayed),
    agentTimeouts: sumOf(ended, (game) => game.agentTimeouts),
    agentFailures: { error: failures('error'), refused: failures('refused'), late: failures('late'), markedDone: failures('markedDone') },
    agents: agentsOf(games),
    meanScore: scores.length === 0 ? null : mean(scores),
    scoreInterval: bootstrapInterval(scores, bootstrap),
    scoreIntervalWarning: intervalWarning(scores),
    scoreIntervalByParticipant: clusterBootstrapInterval(byParticipant, bootstrap),
    // A participant's mean is what the cluster resampling sees: all alike, every resample's mean is the same.
    scoreIntervalByParticipantWarning: intervalWarning(byParticipant.map(mean), 'participants'),
    scores,
    instructionsPerGame: ratio(instructions, ended.length),
    followedShare: ratio(sumOf(ended, (game) => game.done), instructions),
    cancellationRate: ratio(sumOf(ended, (game) => game.cancelled), instructions),
    feedback: { positive, negative, negativePerPositive: ratio(negative, positive) },
    llm: arm.agent === LLM_ARM_AGENT ? summarizeLlm(ended) : null,
    gameList: games,
  };
}

/** Each pair of arms with ended games (the later minus the earlier, in the file's order): the difference, and what else is known of it. */
function comparePairs(summaries: readonly ArmSummary[], bootstrap: BootstrapOptions): { differences: ArmDifference[]; comparisons: ArmComparison[] } {
  const pairs = summaries.flatMap((first, i) => summaries.slice(i + 1).map((second) => [first, second] as const)).filter(([first, second]) => first.scores.length > 0 && second.scores.length > 0);
  const differences = pairs.map(([first, second]) => ({ arm: second.id, minus: first.id, meanDifference: second.meanScore! - first.meanScore!, interval: differenceInterval(first.scores, second.scores, bootstrap) }));
  const pValues = pairs.map(([first, second]) => permutationPValue(first.scores, second.scores, bootstrap)!);
  const holm = holmAdjusted(pValues);
  const comparisons = pairs.map(([first, second], i) => {
    const ofFirst = scoresByParticipant(first.gameList.filter((game) => game.endReason !== null));
    const ofSecond = scoresByParticipant(second.gameList.filter((game) => game.endReason !== null));
    const participants = [...new Set([...ofFirst.keys(), ...ofSecond.keys()])].sort();
    const clusters = participants.map((key) => ({ first: ofFirst.get(key) ?? [], second: ofSecond.get(key) ?? [] }));
    return {
      arm: second.id,
      minus: first.id,
      intervalByParticipant: clusterDifferenceInterval(clusters, bootstrap),
      pValue: pValues[i],
      holmPValue: holm[i],
      warning: armsWarning([first, second], (arm) => arm.scoreIntervalWarning),
      warningByParticipant: armsWarning([first, second], (arm) => arm.scoreIntervalByParticipantWarning),
    };
  });
  return { differences, comparisons };
}

/** Games per arm, planned from the arms' ended games for each observed difference and for the smallest arm's games so far. */
function planSampleSize(summaries: readonly ArmSummary[], differences: readonly ArmDifference[], level: number): SampleSizePlan {
  const pilot = pilotVariance(summaries.map((arm) => [...scoresByParticipant(arm.gameList.filter((game) => game.endReason !== null)).values()]));
  const alpha = (1 - level) / Math.max(1, differences.length);
  const { sd, designEffect } = pilot;
  const usable = sd !== null && sd > 0 && designEffect !== null;
  const smallest = Math.min(...summaries.map((arm) => arm.ended));
  return {
    ...pilot,
    power: PLANNED_POWER,
    alpha,
    detectableDifference: usable && smallest > 0 ? detectableDifference(smallest, sd, designEffect, alpha) : null,
    forDifferences: differences.map((d) => ({
      arm: d.arm,
      minus: d.minus,
      difference: d.meanDifference,
      gamesPerArm: usable && d.meanDifference !== 0 ? gamesPerArm(d.meanDifference, sd, designEffect, alpha) : null,
    })),
  };
}

/** The study file's SHA-256: as the headers record it, else that of the file the report was given. */
function studyFileIdentity(headerHashes: readonly (string | null)[], ofFileGiven: string | null): StudyFileIdentity {
  const counts = new Map<string, number>();
  for (const sha256 of headerHashes) if (sha256 !== null) counts.set(sha256, (counts.get(sha256) ?? 0) + 1);
  const inHeaders = [...counts].map(([sha256, games]) => ({ sha256, games })).sort((a, b) => b.games - a.games);
  if (inHeaders.length > 0) return { sha256: inHeaders[0].sha256, source: 'log headers', inHeaders, ofFileGiven };
  return { sha256: ofFileGiven, source: ofFileGiven === null ? 'unknown' : 'study file', inHeaders, ofFileGiven };
}

export interface StudyReportOptions {
  /**
   * The worker store's draws of the study by arm (WorkerStore.armTotals): each arm's draws, exactly
   * (the intention-to-treat denominators), and how many draws there were, so that draws after the
   * last logged one are known. Without them (null), draws are known from the logs alone.
   */
  readonly drawTotals?: readonly ArmTotals[] | null;
  readonly now?: Date;
}

/**
 * The study's report from its logs (those of other studies are left out). `recordsDir` is where
 * the LLM arms' call records are. The arms are in the study file's order. A study as loaded from
 * its file carries the file's SHA-256 (`fileSha256`), which the report names when no header does.
 */
export function studyReport(study: Study & { readonly fileSha256?: string }, logs: readonly LogFile[], recordsDir: string, bootstrap: BootstrapOptions, options: StudyReportOptions = {}): StudyReport {
  const { drawTotals, now = new Date() } = options;
  const arms = study.arms ?? [];
  const seat = armSeat(study);
  const byArm = new Map<string, ArmGame[]>(arms.map((arm) => [arm.id, []]));
  const otherGames: StudyReport['otherGames'][number][] = [];
  const headerHashes: (string | null)[] = [];
  const drawsLogged = new Set<number>();
  const mismatchedDraws: string[] = [];
  for (const log of logs) {
    const meta = log.header.meta as { arm?: ArmMeta };
    const record = studyRecord(log.header.meta);
    if (record?.id !== study.id) continue;
    headerHashes.push(record.sha256);
    if (meta.arm) drawsLogged.add(meta.arm.draw);
    const games = meta.arm ? byArm.get(meta.arm.id) : undefined;
    if (!games || !meta.arm) {
      otherGames.push({ gameId: log.header.gameId, arm: meta.arm?.id ?? null });
      continue;
    }
    if (armOfDraw(study.id, arms, meta.arm.draw).id !== meta.arm.id) mismatchedDraws.push(log.header.gameId);
    const figures = gameFigures(log, meta.arm, seat);
    const records = meta.arm.agent === LLM_ARM_AGENT ? callRecords(findRecordFile(recordsDir, figures.gameId, seat)) : null;
    games.push({ ...figures, llmCalls: records?.byStatus ?? null, llmFallbacks: records?.fallbacks ?? null });
  }
  // A draw without a log never started: the file says its arm. The store numbers its draws from 0
  // without gaps, so its count bounds them; the logs alone know them up to the last one logged.
  const drawCount = Math.max(sumOf(drawTotals ?? [], (arm) => arm.drawn), ...[...drawsLogged].map((d) => d + 1));
  const neverStarted = new Map<string, number[]>(arms.map((arm) => [arm.id, []]));
  for (let draw = 0; draw < drawCount; draw++) {
    if (!drawsLogged.has(draw)) neverStarted.get(armOfDraw(study.id, arms, draw).id)!.push(draw);
  }
  const drawn = (id: string) => (drawTotals ? (drawTotals.find((totals) => totals.arm === id)?.drawn ?? 0) : null);
  const summaries = arms.map((arm) => summarizeArm(study, arm, byArm.get(arm.id)!.sort((a, b) => a.draw - b.draw), neverStarted.get(arm.id)!, drawn(arm.id), bootstrap));
  const { differences, comparisons } = comparePairs(summaries, bootstrap);
  return {
    kind: 'study-arms',
    version: STUDY_REPORT_VERSION,
    study: study.id,
    studyFile: studyFileIdentity(headerHashes, study.fileSha256 ?? null),
    createdAt: now.toISOString(),
    armSeat: seat,
    drawSource: drawTotals ? 'worker store' : 'logs',
    currency: study.pay.currency,
    bootstrap: { ...bootstrap, method: 'percentile' },
    arms: summaries,
    differences,
    comparisons,
    sampleSize: planSampleSize(summaries, differences, bootstrap.level),
    mismatchedDraws,
    otherGames,
  };
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
const signed = (value: number) => `${value >= 0 ? '+' : ''}${value.toFixed(2)}`;
const range = (interval: Interval | null) => (interval ? `${shown(interval.low)} to ${shown(interval.high)}` : 'n/a');
const warned = (warning: string | null) => (warning ? ` [${warning}]` : '');

/** What an arm's seat recorded of its agent, in words (the table and the page). */
export function agentFailuresText(counts: AgentFailureCounts): string {
  return `errors ${counts.error}, refused ${counts.refused}, late ${counts.late}, instructions marked done ${counts.markedDone}`;
}

/** Where the draws come from, in words. */
export function drawSourceText(source: StudyReport['drawSource']): string {
  return source === 'worker store' ? "draws from the worker store's counts" : 'draws known from the logs, up to the last logged draw';
}

/** Where the study file's SHA-256 comes from, and whether the file given is the games' own. */
function studyFileLine(file: StudyFileIdentity): string {
  const from = { 'log headers': 'from the log headers', 'study file': 'of the study file given: no log header records one', unknown: 'not known: no log header records it, and the study was given without it' }[file.source];
  const changed = file.inHeaders.length > 1 ? `; the headers hold ${file.inHeaders.length} versions: ${file.inHeaders.map((v) => `${v.sha256.slice(0, 12)} (${v.games} games)`).join(', ')}` : '';
  const given = file.source === 'log headers' && file.ofFileGiven !== null && file.ofFileGiven !== file.sha256 ? `; the study file given is another (${file.ofFileGiven.slice(0, 12)})` : '';
  return `  study file sha256 ${file.sha256 ?? 'n/a'} (${from})${changed}${given}`;
}

function sampleSizeLine(report: StudyReport): string {
  const plan = report.sampleSize;
  const pairs = report.differences.length;
  const spread = `score SD ${shown(plan.sd)}, ICC ${shown(plan.icc)} over ${shown(plan.gamesPerParticipant, 1)} games a participant, design effect ${shown(plan.designEffect)}`;
  const smallest = Math.min(...report.arms.map((arm) => arm.ended));
  const found = plan.detectableDifference === null ? 'too little variance known to plan from' : `${smallest} games per arm find a difference of ${shown(plan.detectableDifference)}`;
  const needs = plan.forDifferences.map((d) => `${d.arm} - ${d.minus}'s ${signed(d.difference)} needs ${d.gamesPerArm ?? 'n/a'}`).join(', ');
  return `  sample size (${Math.round(plan.power * 100)}% power, two-sided alpha ${shown(plan.alpha, 4)}${pairs > 1 ? ` = ${shown(1 - report.bootstrap.level)} over ${pairs} pairs` : ''}): ${spread}; ${found}${needs ? `; games per arm: ${needs}` : ''}`;
}

/** The report as lines for the terminal. */
export function formatStudyReport(report: StudyReport): string {
  const level = Math.round(report.bootstrap.level * 100);
  const lines = [
    `Study ${report.study}: ${report.arms.length} arm(s) in the ${report.armSeat}'s seat; ${drawSourceText(report.drawSource)}; score intervals (${level}%): percentile bootstrap over games and over participants, ${report.bootstrap.resamples} resamples, seed ${report.bootstrap.seed}`,
    studyFileLine(report.studyFile),
  ];
  for (const arm of report.arms) {
    const llm = arm.llm ? `; ${arm.llm.records} LLM call records, ${sumOf(Object.values(arm.llm.failures), (n) => n)} failed` : '';
    const agents = arm.agents.map((agent) => `${agent.name}${agent.version ? ` ${agent.version}` : ''} (${agent.games} games)`).join(', ') || 'not recorded';
    lines.push(
      `  ${arm.id} (${arm.agent}, weight ${arm.weight}): ${arm.draws} draws, ${arm.neverStarted.length} never started; ${arm.games} games, ${arm.playedToEnd} played to the end ` +
        `(${shown(arm.playedToEndShare.ofDraws, 3)} of draws, ${shown(arm.playedToEndShare.ofGames, 3)} of games), ${arm.abandoned} abandoned; ${arm.participants} participants, ` +
        `${shown(arm.minutesPlayed, 1)} minutes, bonus ${shown(arm.bonusPerMinute, 3)} ${report.currency} a minute; mean score ${shown(arm.meanScore)} ` +
        `(${range(arm.scoreInterval)} over games${warned(arm.scoreIntervalWarning)}, ${range(arm.scoreIntervalByParticipant)} over participants${warned(arm.scoreIntervalByParticipantWarning)}); ` +
        `${shown(arm.instructionsPerGame, 1)} instructions a game, ${shown(arm.followedShare, 3)} followed, ${shown(arm.cancellationRate, 3)} cancelled; feedback ${arm.feedback.negative} negative to ${arm.feedback.positive} positive; ` +
        `agent ${agents}, ${arm.agentTimeouts} of its turns timed out, its seat's failures: ${agentFailuresText(arm.agentFailures)}${llm}`,
    );
  }
  report.differences.forEach((d, i) => {
    const c = report.comparisons[i];
    lines.push(
      `  ${d.arm} - ${d.minus}: ${signed(d.meanDifference)} points a game (${range(d.interval)} over games${warned(c.warning)}, ` +
        `${range(c.intervalByParticipant)} over participants${warned(c.warningByParticipant)}); permutation p ${shown(c.pValue, 4)}, Holm ${shown(c.holmPValue, 4)}`,
    );
  });
  lines.push(sampleSizeLine(report));
  if (report.mismatchedDraws.length > 0) lines.push(`  ${report.mismatchedDraws.length} game(s) whose arm is not the study file's draw for their number (the arms changed?): ${report.mismatchedDraws.join(' ')}`);
  if (report.otherGames.length > 0) lines.push(`  ${report.otherGames.length} game(s) of the study with no arm of the study file, not counted: ${report.otherGames.map((game) => game.gameId).join(' ')}`);
  return `${lines.join('\n')}\n`;
}
