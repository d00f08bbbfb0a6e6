/**
 * Evaluation benchmarks: cascaded evaluation throughput with the oracle agent on one core and on
 * all cores, and the cost per step of the stdin/stdout agent protocol. `npm run bench:eval`.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAgent } from '../shared/agents/node/registry';
import type { AgentAction, FollowerAgent } from '../shared/agents/types';
import { makeConfig } from '../shared/engine/config';
import { loadRecording } from '../shared/eval/recording';
import { DEFAULT_EVAL_OPTIONS, runEpisode, type EpisodeResult } from '../shared/eval/runner';
import type { LogLine } from '../shared/log/format';
import { serializeLine } from '../shared/log/recorder';
import { generateMap } from '../shared/maps/generate';
import { playSelfPlayGame } from '../shared/selfplay/game';
import { evaluateFiles, evaluateInWorkers } from '../cli/eval/evaluate';

const GAMES = 60;
const dir = mkdtempSync(join(tmpdir(), 'cerealbar-eval-bench-'));
const files = Array.from({ length: GAMES }, (_, seed) => {
  const lines: LogLine[] = [];
  playSelfPlayGame({ seed, map: generateMap(seed), config: makeConfig() }, (line) => lines.push(line));
  const file = join(dir, `selfplay-${seed}.jsonl`);
  writeFileSync(file, lines.map((l) => `${serializeLine(l)}\n`).join(''));
  return file;
});

/** Instruction episodes: every instruction an agent executed, each cascade counting all of its own. */
const instructionEpisodes = (episodes: readonly EpisodeResult[]) => episodes.reduce((n, e) => n + e.actions.filter((a) => a === 'DONE').length, 0);

async function cascadedThroughput(workers: number) {
  const options = { ...DEFAULT_EVAL_OPTIONS, mode: 'cascaded' as const };
  const start = performance.now();
  const result = workers === 1 ? await evaluateFiles({ spec: 'oracle' }, files, options) : await evaluateInWorkers({ spec: 'oracle' }, files, options, workers, () => {});
  const seconds = (performance.now() - start) / 1000;
  return { examples: result.episodes.length, instructions: instructionEpisodes(result.episodes), seconds };
}

/** The benchmark's turner, in process. */
function inProcessTurner(): FollowerAgent {
  let turns = 0;
  return { name: 'turner', reset: () => {}, act: (): AgentAction => (++turns % 10 === 0 ? 'DONE' : 'RR') };
}

async function protocolOverhead() {
  const recording = loadRecording(readFileSync(files[0], 'utf8'));
  const time = async (agent: FollowerAgent) => {
    const start = performance.now();
    let steps = 0;
    for (let i = 0; i < recording.instructions.length; i++) steps += (await runEpisode(agent, recording, i, DEFAULT_EVAL_OPTIONS)).actions.length;
    return { ms: performance.now() - start, steps };
  };
  const local = await time(inProcessTurner());
  const external = await createAgent(`node ${join(__dirname, '..', '..', 'bench', 'agents', 'turner.js')}`);
  const remote = await time(external);
  await external.close?.();
  return { steps: remote.steps, perStepMs: (remote.ms - local.ms) / remote.steps };
}

async function main() {
  const cores = availableParallelism();
  const one = await cascadedThroughput(1);
  const all = await cascadedThroughput(cores);
  const protocol = await protocolOverhead();
  console.log(`cerealbar evaluation benchmark: cascaded evaluation of the oracle over ${GAMES} self-play games, Node ${process.version}`);
  console.table({
    'cascaded examples': one.examples,
    'instruction episodes (all cascades)': one.instructions,
    'instruction episodes / s, 1 core': Math.round(one.instructions / one.seconds),
    [`instruction episodes / s, ${cores} cores`]: Math.round(all.instructions / all.seconds),
    'cascaded examples / s, 1 core': Math.round(one.examples / one.seconds),
    [`cascaded examples / s, ${cores} cores`]: Math.round(all.examples / all.seconds),
    'agent protocol overhead per step (ms)': protocol.perStepMs.toFixed(3),
    'protocol steps measured': protocol.steps,
  });
}

void main();
