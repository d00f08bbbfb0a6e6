/**
 * Evaluation benchmarks: cascaded evaluation throughput with the oracle agent on one core and on
 * all cores, and the cost per step of the stdin/stdout agent protocol. `npm run bench:eval`.
 */
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { startFollower } from '../shared/agents/node/registry';
import type { AgentAction, FollowerAgent } from '../shared/agents/types';
import { loadRecording } from '../shared/eval/recording';
import { DEFAULT_EVAL_OPTIONS, runEpisode } from '../shared/eval/runner';
import { cascadedThroughput, selfPlayGames, writeLogFiles } from './figures';

const GAMES = 60;
const files = writeLogFiles(selfPlayGames(GAMES));

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
  const external = await startFollower(`node ${join(__dirname, '..', '..', 'bench', 'agents', 'turner.js')}`, { setting: 'logs' });
  const remote = await time(external);
  await external.close?.();
  return { steps: remote.steps, perStepMs: (remote.ms - local.ms) / remote.steps };
}

async function main() {
  const cores = availableParallelism();
  const one = await cascadedThroughput(files, 1);
  const all = await cascadedThroughput(files, cores);
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
