/**
 * Measures the benchmarks share: a rate over wall and CPU time, the engine's figures on self-play
 * games, and cascaded evaluation's throughput with the oracle. `npm run bench`, `bench:eval` and
 * `bench:fast` print them.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeConfig, step } from '../shared/engine';
import type { GameState } from '../shared/engine/state';
import type { Action } from '../shared/engine/actions';
import { eventAction, type LogLine } from '../shared/log/format';
import { serializeLine, stateFromHeader } from '../shared/log/recorder';
import { generateMap } from '../shared/maps/generate';
import type { GameMap } from '../shared/engine/map';
import { playSelfPlayGame } from '../shared/selfplay/game';
import { DEFAULT_EVAL_OPTIONS, type EpisodeResult } from '../shared/eval/runner';
import { evaluateFiles, evaluateInWorkers } from '../cli/eval/evaluate';

/** Work units per second of wall time, and per second of this process's CPU time. */
export interface Rate {
  readonly wall: number;
  readonly cpu: number;
}

/**
 * Runs `body` repeatedly for at least `minMs`; returns the work units per second. The CPU-time
 * figure is the one to compare on a shared machine: others' load lengthens the wall time only.
 */
export function measure(minMs: number, body: () => number): Rate {
  let units = 0;
  const start = performance.now();
  const cpuStart = process.cpuUsage();
  let elapsed = 0;
  while (elapsed < minMs) {
    units += body();
    elapsed = performance.now() - start;
  }
  const cpu = process.cpuUsage(cpuStart);
  return { wall: (units * 1000) / elapsed, cpu: (units * 1e6) / (cpu.user + cpu.system) };
}

export const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

/** A self-play game as a benchmark uses it: its map, start state and actions (for step) and its log. */
export interface BenchGame {
  readonly map: GameMap;
  readonly start: GameState;
  readonly actions: readonly Action[];
  readonly text: string;
  readonly headerBytes: number;
  readonly score: number;
}

/** Self-play games on seeds 0 to count - 1, with their maps generated once. */
export function selfPlayGames(count: number): BenchGame[] {
  const config = makeConfig();
  return Array.from({ length: count }, (_, seed) => {
    const map = generateMap(seed);
    const lines: LogLine[] = [];
    playSelfPlayGame({ seed, map, config, startedAt: new Date(0) }, (line) => lines.push(line));
    const header = lines[0] as Extract<LogLine, { kind: 'header' }>;
    const events = lines.filter((l): l is Extract<LogLine, { kind: 'event' }> => l.kind === 'event');
    return {
      map,
      start: stateFromHeader(header),
      actions: events.map(eventAction),
      text: lines.map((l) => `${serializeLine(l)}\n`).join(''),
      headerBytes: Buffer.byteLength(serializeLine(header)) + 1,
      score: (lines[lines.length - 1] as Extract<LogLine, { kind: 'end' }>).score,
    };
  });
}

/** The games' actions applied with step(), nothing else: transitions per second. */
export function transitionRate(games: readonly BenchGame[], minMs: number): Rate {
  return measure(minMs, () => {
    let n = 0;
    for (const { start, actions } of games) {
      let state = start;
      for (const action of actions) {
        const result = step(state, action);
        if (!result.ok) throw new Error(`refused: ${result.error.code}`);
        state = result.state;
      }
      n += actions.length;
    }
    return n;
  });
}

/** Whole self-play games (scripted leader and follower, logs built in memory and dropped) per second, on the games' maps or on maps generated per game. */
export function selfPlayRate(games: readonly BenchGame[], minMs: number, generateMaps = false): Rate {
  const config = makeConfig();
  let next = 0;
  return measure(minMs, () => {
    const seed = next++ % games.length;
    playSelfPlayGame({ seed, map: generateMaps ? generateMap(seed) : games[seed].map, config }, () => {});
    return 1;
  });
}

/** The games' logs written to files in a fresh temporary folder, for the evaluation commands. */
export function writeLogFiles(games: readonly BenchGame[]): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'cerealbar-bench-'));
  return games.map((game, seed) => {
    const file = join(dir, `selfplay-${seed}.jsonl`);
    writeFileSync(file, game.text);
    return file;
  });
}

/** Instruction episodes: every instruction an agent executed, each cascade counting all of its own. */
const instructionEpisodes = (episodes: readonly EpisodeResult[]): number => episodes.reduce((n, e) => n + e.actions.filter((a) => a === 'DONE').length, 0);

/** Cascaded evaluation of the oracle over `files`, in this thread (workers 1) or in worker threads. */
export async function cascadedThroughput(files: readonly string[], workers: number): Promise<{ examples: number; instructions: number; seconds: number }> {
  const options = { ...DEFAULT_EVAL_OPTIONS, mode: 'cascaded' as const };
  const start = performance.now();
  const result = workers === 1 ? await evaluateFiles({ spec: 'oracle' }, files, options) : await evaluateInWorkers({ spec: 'oracle' }, files, options, workers);
  const seconds = (performance.now() - start) / 1000;
  return { examples: result.episodes.length, instructions: instructionEpisodes(result.episodes), seconds };
}
