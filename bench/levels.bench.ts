/**
 * A long run of the batched follower environment over a fixed set of kept levels, as a learner
 * that trains on K levels runs it: `npm run bench:levels` (optionally
 * `-- --envs 1024 --levels 4096 --rounds 12 --steps 500`).
 *
 * `bench:fast` times a short window right after every level has started once; here the batch goes
 * on for rounds of `--steps` steps with random actions, and each round prints its steps per CPU
 * second and the process's memory after a full garbage collection (run under `node
 * --expose-gc`; without it the figures include garbage). A kept level's caches (its distance
 * searches and its path planner's fields) grow as its games show new cards, so the memory a
 * learner must budget for K levels is the last rounds', not the first's.
 */
import { parseArgs } from 'node:util';
import { FOLLOWER_CODES } from '../shared/engine/actions';
import { Draw, seedRng } from '../shared/engine/rng';
import { FollowerBatch } from '../shared/env/batch/followerBatch';

const { values } = parseArgs({
  options: {
    envs: { type: 'string', default: '1024' },
    levels: { type: 'string', default: '4096' },
    rounds: { type: 'string', default: '12' },
    steps: { type: 'string', default: '500' },
  },
});
const envs = Number(values.envs);
const levels = Number(values.levels);
const rounds = Number(values.rounds);
const steps = Number(values.steps);
for (const [name, value] of Object.entries({ envs, levels, rounds, steps })) {
  if (!(Number.isInteger(value) && value >= 1)) throw new RangeError(`--${name} must be a positive integer, got ${JSON.stringify(values[name as keyof typeof values])}`);
}

/** The last round's figures recorded in docs/benchmarks.md (N = 1024, 4,096 levels, 12 rounds of 500 steps), to compare with. */
const RECORDED = { envs: 1024, levels: 4096, steps: 6_144_000, stepsPerCpuSecond: 189_211, kilobytesPerLevel: 156 };

const collect = (globalThis as { gc?: () => void }).gc;
const megabytes = (bytes: number): string => `${Math.round(bytes / 1e6).toLocaleString('en-US')} MB`;

collect?.();
/** What the process holds before the batch: its share of each round's resident memory is the rest. */
const before = process.memoryUsage().rss;
const batch = new FollowerBatch({ size: envs, reward: 'distance', keptStarts: levels, nextSeed: (_slot, previous) => (previous + envs) % levels });
batch.reset(Int32Array.from({ length: envs }, (_, slot) => slot % levels));
const draw = new Draw(seedRng(2024));
const actions = new Int32Array(envs);
console.log(`kept levels: N=${envs}, ${levels.toLocaleString('en-US')} levels, rounds of ${steps} steps, random actions, 'distance' rewards${collect ? '' : ' (no --expose-gc: memory includes garbage)'}`);
let last = { stepsPerCpuSecond: 0, kilobytesPerLevel: 0 };
for (let round = 1; round <= rounds; round++) {
  const start = process.cpuUsage();
  for (let t = 0; t < steps; t++) {
    for (let slot = 0; slot < envs; slot++) actions[slot] = draw.int(0, FOLLOWER_CODES.length - 1);
    batch.step(actions);
  }
  const cpu = process.cpuUsage(start);
  collect?.();
  const memory = process.memoryUsage();
  const rate = (envs * steps) / ((cpu.user + cpu.system) / 1e6);
  last = { stepsPerCpuSecond: rate, kilobytesPerLevel: (memory.rss - before) / levels / 1e3 };
  console.log(
    `round ${round}: ${(round * envs * steps).toLocaleString('en-US')} steps, ${Math.round(rate).toLocaleString('en-US')} steps per CPU s; ` +
      `heap ${megabytes(memory.heapUsed)}, arrays ${megabytes(memory.external)}, resident ${megabytes(memory.rss)} (${Math.round(last.kilobytesPerLevel)} KB per level above the ${megabytes(before)} before the batch)`,
  );
}
if (envs === RECORDED.envs && levels === RECORDED.levels && rounds * steps * envs === RECORDED.steps) {
  console.log(
    `against the recorded figures: ${(last.stepsPerCpuSecond / RECORDED.stepsPerCpuSecond).toFixed(2)}x the steps per CPU s (${RECORDED.stepsPerCpuSecond.toLocaleString('en-US')}), ` +
      `${(last.kilobytesPerLevel / RECORDED.kilobytesPerLevel).toFixed(2)}x the memory per level (${RECORDED.kilobytesPerLevel} KB)`,
  );
}
