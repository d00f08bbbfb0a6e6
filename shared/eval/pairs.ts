/**
 * Agent-vs-agent evaluation: pairs of a leader agent and a follower agent play whole games on
 * the same seeds (game i on seed + i, its map generated from that seed), and each pair's games
 * are summed up from their logs: the score with a bootstrap interval, instructions per game, the
 * share of instructions the follower marked DONE, the follower's steps per instruction, and the
 * LLM agents' counts. Pairs after the first are compared with the first seed by seed.
 * docs/evaluation.md ("Agent-vs-agent evaluation") defines every figure.
 */
import { DEFAULT_CONFIG, type GameConfig } from '../engine/config';
import type { Role } from '../engine/state';
import type { AgentIdentity, FollowerAgent, LeaderAgent } from '../agents/types';
import type { LogLine } from '../log/format';
import { serializeLine } from '../log/recorder';
import { generateMap } from '../maps/generate';
import { playAgentGame } from '../agents/agentGame';
import { bootstrapInterval, mean, type BootstrapOptions, type Interval } from './bootstrap';
import { intervalWarning } from './intervalWarning';
import { loadRecording } from './recording';
import { describeCost, describeLlmSettings, type LlmSummary } from './llmSummary';

/** An LLM seat's counts over a pair's games. */
export type LlmSeatSummary = LlmSummary & { readonly tokensPerGame: number; readonly costPerGame: number | null };

export const PAIRS_REPORT_VERSION = 1;

/** One game of a pair, as its log tells it (and the refusals, which a log does not hold). */
export interface PairGame {
  readonly seed: number;
  readonly gameId: string;
  /** The log's file name, relative to the report. */
  readonly log: string;
  readonly score: number;
  /** Instructions the leader wrote. */
  readonly instructions: number;
  /** Instructions the follower marked DONE. */
  readonly done: number;
  /** The follower's moves (DONE not counted) while an instruction it marked DONE was current. */
  readonly stepsOnDone: number;
  /** Events in the log (accepted actions and timeouts). */
  readonly events: number;
  readonly refused: Readonly<Record<Role, number>>;
  /** Turns the host passed for an agent refused too often in one turn. */
  readonly refusalPasses: Readonly<Record<Role, number>>;
}


export interface PairSummary {
  readonly games: number;
  readonly meanScore: number;
  readonly scoreInterval: Interval;
  /** What the interval cannot say (fewer than 10 games, constant scores), or null. */
  readonly intervalWarning: string | null;
  readonly minScore: number;
  readonly maxScore: number;
  readonly instructionsPerGame: number;
  /** Instructions marked DONE over instructions written, all games pooled; null when none were written. */
  readonly doneShare: number | null;
  /** The follower's moves per instruction it marked DONE, all games pooled; null when none was. */
  readonly stepsPerInstruction: number | null;
  readonly refused: Readonly<Record<Role, number>>;
  readonly refusalPasses: Readonly<Record<Role, number>>;
}

export interface PairResult {
  /** 1, 2, ... in the order the pairs were given. */
  readonly index: number;
  /** `<leader spec>:<follower spec>`, as given. */
  readonly label: string;
  readonly leader: AgentIdentity;
  readonly follower: AgentIdentity;
  /** Each llm seat's own config file (`llm@FILE`), as given; empty when none has one. */
  readonly configs: Readonly<Partial<Record<Role, string>>>;
  /** The pair's directory (its logs and call records), relative to the report. */
  readonly dir: string;
  readonly summary: PairSummary;
  /** Only for the seats an LLM agent played. */
  readonly llm: Partial<Record<Role, LlmSeatSummary>>;
  readonly games: readonly PairGame[];
}

/** A pair's scores minus the first pair's, seed by seed (the games share their seeds and maps). */
export interface PairDifference {
  readonly pair: number;
  readonly against: number;
  readonly meanDifference: number;
  readonly interval: Interval;
  /** What the interval cannot say (fewer than 10 seeds, the same difference on every seed), or null. */
  readonly intervalWarning: string | null;
  /** Seeds where the pair scored more, the same, less than the first. */
  readonly wins: number;
  readonly ties: number;
  readonly losses: number;
}

export interface PairsReport {
  readonly kind: 'agent-pairs';
  readonly version: typeof PAIRS_REPORT_VERSION;
  readonly createdAt: string;
  readonly games: number;
  /** Game i of every pair is played on seed + i. */
  readonly seed: number;
  /** Times each seed is played (`games` × `repeat` games a pair). */
  readonly repeat: number;
  readonly bootstrap: BootstrapOptions & { readonly method: 'percentile' };
  readonly pairs: readonly PairResult[];
  readonly differences: readonly PairDifference[];
}

export interface PairToPlay {
  readonly leader: LeaderAgent;
  readonly follower: FollowerAgent;
  readonly agents: { readonly leader: AgentIdentity; readonly follower: AgentIdentity };
}

/** A game to play: its seed (its map) and its id, the same in every pair. */
export interface PlannedGame {
  readonly seed: number;
  readonly gameId: string;
}

/**
 * A pair's games in order: the seeds from `seed`, `games` of them, each `repeat` times in a row. The
 * ids are the same in every pair, so that agents seeded from them draw alike: `eval-<seed>`, or
 * `eval-<seed>-r<k>` (k from 1) when each seed is played more than once.
 */
export function plannedGames(seed: number, games: number, repeat = 1): PlannedGame[] {
  return Array.from({ length: games }, (_, i) => seed + i).flatMap((s) =>
    Array.from({ length: repeat }, (_, k) => ({ seed: s, gameId: repeat === 1 ? `eval-${s}` : `eval-${s}-r${k + 1}` })),
  );
}

/**
 * Plays the pair's games `toPlay` and hands each game's log text to `save` (which returns its
 * file name); the figures are read back from that text. Each of `slots` (the pair's agents,
 * started once per slot) plays one game at a time, taking the next game in order: with one slot the
 * games are played in order, with K slots K at once. The games come back in the order of `toPlay`
 * (those played, when `stop` stopped them early).
 */
export async function playPairGames(
  slots: readonly PairToPlay[],
  options: {
    readonly toPlay: readonly PlannedGame[];
    readonly config?: GameConfig;
    /** Asked before each game: true stops the slots from taking more (the games under way end). */
    readonly stop?: () => boolean;
    /** Told as each game begins. */
    readonly onStart?: (gameId: string) => void;
  },
  save: (gameId: string, text: string) => string,
  onGame: (game: PairGame) => void = () => {},
): Promise<PairGame[]> {
  const games = new Map<string, PairGame>();
  let next = 0;
  let failed = false;
  const playSlot = async (pair: PairToPlay): Promise<void> => {
    // A failed game stops the slots from taking more: the error is the run's.
    while (!failed && !options.stop?.() && next < options.toPlay.length) {
      const { seed, gameId } = options.toPlay[next++];
      options.onStart?.(gameId);
      const lines: LogLine[] = [];
      let result;
      try {
        result = await playAgentGame({ seed, map: generateMap(seed), config: options.config ?? DEFAULT_CONFIG, gameId, ...pair }, (line) => lines.push(line));
      } catch (error) {
        failed = true;
        throw new Error(`game ${seed}: ${(error as Error).message}`);
      }
      const text = lines.map((line) => `${serializeLine(line)}\n`).join('');
      const log = save(gameId, text);
      const game: PairGame = { seed, gameId, log, ...gameFigures(text), refused: result.refused, refusalPasses: result.refusalPasses };
      games.set(gameId, game);
      onGame(game);
    }
  };
  const outcomes = await Promise.allSettled(slots.map(playSlot));
  const failure = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  if (failure) throw failure.reason;
  // Stopped early, only the games played.
  return options.toPlay.flatMap((planned) => games.get(planned.gameId) ?? []);
}

/** A game's figures, from its log: the final score, the instructions written and done, the follower's steps on those done. */
export function gameFigures(logText: string): Pick<PairGame, 'score' | 'instructions' | 'done' | 'stepsOnDone' | 'events'> {
  const recording = loadRecording(logText);
  return {
    score: recording.states[recording.states.length - 1].score,
    instructions: recording.events.filter((event) => event.type === 'instruction').length,
    done: recording.instructions.length,
    stepsOnDone: recording.instructions.reduce((sum, instruction) => sum + instruction.actions.filter((action) => action !== 'DONE').length, 0),
    events: recording.events.length,
  };
}

const sumOf = (games: readonly PairGame[], figure: (game: PairGame) => number) => games.reduce((sum, game) => sum + figure(game), 0);
const bySeat = (games: readonly PairGame[], figure: (game: PairGame) => Readonly<Record<Role, number>>): Record<Role, number> => ({
  leader: sumOf(games, (game) => figure(game).leader),
  follower: sumOf(games, (game) => figure(game).follower),
});

export function summarizePair(games: readonly PairGame[], bootstrap: BootstrapOptions): PairSummary {
  if (games.length === 0) throw new Error('a pair with no games has no summary');
  const scores = games.map((game) => game.score);
  const instructions = sumOf(games, (game) => game.instructions);
  const done = sumOf(games, (game) => game.done);
  return {
    games: games.length,
    meanScore: mean(scores),
    scoreInterval: bootstrapInterval(scores, bootstrap)!,
    intervalWarning: intervalWarning(scores),
    minScore: Math.min(...scores),
    maxScore: Math.max(...scores),
    instructionsPerGame: instructions / games.length,
    doneShare: instructions === 0 ? null : done / instructions,
    stepsPerInstruction: done === 0 ? null : sumOf(games, (game) => game.stepsOnDone) / done,
    refused: bySeat(games, (game) => game.refused),
    refusalPasses: bySeat(games, (game) => game.refusalPasses),
  };
}


/** Each pair after the first against the first, on the games both played (the same seed, and repeat, by their id). */
export function compareWithFirst(pairs: readonly Pick<PairResult, 'index' | 'games'>[], bootstrap: BootstrapOptions): PairDifference[] {
  if (pairs.length < 2) return [];
  const [first, ...others] = pairs;
  const baseline = new Map(first.games.map((game) => [game.gameId, game.score]));
  return others.map((pair) => {
    const differences = pair.games.filter((game) => baseline.has(game.gameId)).map((game) => game.score - baseline.get(game.gameId)!);
    return {
      pair: pair.index,
      against: first.index,
      meanDifference: mean(differences),
      interval: bootstrapInterval(differences, bootstrap)!,
      intervalWarning: intervalWarning(differences, 'seeds'),
      wins: differences.filter((d) => d > 0).length,
      ties: differences.filter((d) => d === 0).length,
      losses: differences.filter((d) => d < 0).length,
    };
  });
}

const fixed = (value: number | null, digits: number) => (value === null ? 'n/a' : value.toFixed(digits));

/** Each pair's games: `8 games each on seeds 1 to 8`, or with --repeat `24 games each: seeds 1 to 8, 3 times each`. */
export function describeGames(report: Pick<PairsReport, 'games' | 'seed' | 'repeat'>): string {
  const seeds = `seeds ${report.seed} to ${report.seed + report.games - 1}`;
  return report.repeat > 1 ? `${report.games * report.repeat} games each: ${seeds}, ${report.repeat} times each` : `${report.games} games each on ${seeds}`;
}

/** What pairs are compared on: seeds, or with --repeat games (a seed and a repeat). */
export const comparedUnit = (report: Pick<PairsReport, 'repeat'>): string => (report.repeat > 1 ? 'games' : 'seeds');

/** A seat's agent, with its own config file when it has one: the rows of two configurations read apart. */
export const seatName = (pair: Pick<PairResult, 'leader' | 'follower' | 'configs'>, role: Role): string =>
  pair.configs[role] === undefined ? pair[role].name : `${pair[role].name}@${pair.configs[role]}`;

/** The report as a terminal table: a line per pair, then the differences and the LLM seats' counts. */
export function formatPairsTable(report: PairsReport): string {
  const b = report.bootstrap;
  const head = ['pair', 'leader', 'follower', 'games', 'mean score', `${Math.round(b.level * 100)}% interval`, 'instr/game', 'DONE share', 'steps/instr'];
  const rows = report.pairs.map((p) => {
    const s = p.summary;
    return [String(p.index), seatName(p, 'leader'), seatName(p, 'follower'), String(s.games), fixed(s.meanScore, 2), `${fixed(s.scoreInterval.low, 2)} to ${fixed(s.scoreInterval.high, 2)}`, fixed(s.instructionsPerGame, 1), fixed(s.doneShare, 3), fixed(s.stepsPerInstruction, 2)];
  });
  const widths = head.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column].length)));
  const line = (cells: string[]) => `  ${cells.map((cell, column) => (column <= 2 ? cell.padEnd(widths[column]) : cell.padStart(widths[column]))).join('  ')}`;
  const out = [
    `agent-vs-agent evaluation: ${report.pairs.length} pair${report.pairs.length === 1 ? '' : 's'}, ${describeGames(report)}; ` +
      `score intervals: percentile bootstrap, ${b.resamples} resamples, seed ${b.seed}`,
    line(head),
    ...rows.map(line),
  ];
  for (const p of report.pairs) if (p.summary.intervalWarning) out.push(`  pair ${p.index}: the interval is not to be trusted: ${p.summary.intervalWarning}`);
  for (const d of report.differences) {
    out.push(`  pair ${d.pair} - pair ${d.against}: ${d.meanDifference >= 0 ? '+' : ''}${d.meanDifference.toFixed(2)} points a game (${fixed(d.interval.low, 2)} to ${fixed(d.interval.high, 2)}); more on ${d.wins} ${comparedUnit(report)}, the same on ${d.ties}, less on ${d.losses}${d.intervalWarning ? `; the interval is not to be trusted: ${d.intervalWarning}` : ''}`);
  }
  for (const p of report.pairs) {
    for (const role of ['leader', 'follower'] as const) {
      const llm = p.llm[role];
      if (!llm) continue;
      const failures = Object.entries(llm.failures).map(([status, n]) => `${n} ${status}`).join(', ');
      out.push(
        `  pair ${p.index} llm ${role}: ${llm.calls} calls, failures ${failures || 'none'}, ${llm.fallbacks} fallbacks, ` +
          `${llm.tokens.prompt} prompt + ${llm.tokens.completion} completion tokens, mean latency ${fixed(llm.latencyMs.mean, 0)} ms (max ${Math.round(llm.latencyMs.max)}), ` +
          `cost ${describeCost(llm.cost, llm.costPerGame, 'a game')}`,
      );
      if (llm.settings) out.push(`    ${describeLlmSettings(llm.settings)}`);
    }
  }
  return out.join('\n');
}
