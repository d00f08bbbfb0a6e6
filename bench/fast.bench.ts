/**
 * The fast path beside today's path, in one run: `npm run bench:fast` (optionally
 * `-- --envs 1024 --steps 100 --games 1000 --levels 4096`).
 *
 * - Speed: N FollowerEnvs and a FollowerBatch of N play the same seeds (environment i plays i,
 *   then i + N, ...: the batch's next-step autoreset, mirrored on the FollowerEnv side) with the
 *   same uniformly random actions for `--steps` steps each, on one core (the first resets are not
 *   timed; the autoresets are). Each side folds every step's reward, terminated, truncated,
 *   score, step count and pose into a digest per environment, and the two digests must agree.
 *   The batch's time is the best of three runs. Then the same over a fixed set of levels (seeds
 *   cycling modulo `--levels`), whose starts the batch keeps (`keptStarts`), after untimed steps
 *   that fill them; FollowerEnv plays the same levels. Then log mode: the episodes of the 20 CB2
 *   games of the test fixtures, with the nDTW reward.
 * - Equivalence: test/env/followerBatchCheck.ts compares every field, state and mask of at least
 *   `--games` whole games, in turn with random actions, with 80% and with 50% of them walking the
 *   leader's task (so that the follower makes sets), with both rewards.
 *
 * - The Python vector environment over the batch (FastFollowerVectorEnv) against today's
 *   FollowerVectorEnv, by `python -m cerealbar.bench --fast`, which fails if their steps differ:
 *   in one Node process, then in as many as the machine has cores.
 * - The engine's step, scripted self-play and cascaded evaluation with the oracle, which are sped
 *   up in place (there is no older path to run beside them): each beside its goal.
 *
 * Prints one line per figure, `typescript batch env N=1024: X steps/s = R.Rx FollowerEnv`, and
 * ends non-zero if the batch and FollowerEnv disagree on any step it ran.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { FOLLOWER_CODES } from '../shared/engine/actions';
import { GameSetupError } from '../shared/engine/errors';
import { Draw, seedRng } from '../shared/engine/rng';
import { HEADINGS } from '../shared/engine/hex';
import { FollowerEnv, type EnvStep, type ResetOptions, type RewardKind } from '../shared/env/env';
import { importCb2Game } from '../shared/cb2/import';
import { loadRecording, type Recording } from '../shared/eval/recording';
import { serializeLine } from '../shared/log/recorder';
import { cb2FixtureFolders, cb2FixtureGame } from '../test/cb2/fixtureGames';
import { FollowerBatch } from '../shared/env/batch/followerBatch';
import { checkBatchAgainstFollowerEnv } from '../test/env/followerBatchCheck';
import { cascadedThroughput, selfPlayGames, selfPlayRate, transitionRate, writeLogFiles } from './figures';

const { values } = parseArgs({
  options: {
    envs: { type: 'string', default: '1024' },
    steps: { type: 'string', default: '100' },
    games: { type: 'string', default: '1000' },
    levels: { type: 'string', default: '4096' },
  },
});
const envs = Number(values.envs);
const steps = Number(values.steps);
const games = Number(values.games);
const levels = Number(values.levels);
const REWARD = 'distance';
/** Games the engine and self-play figures play, and how many of them evaluation replays (enough that starting its worker threads weighs little). */
const ENGINE_GAMES = 200;
const EVAL_GAMES = 200;
const GOALS = { transitions: 5_000_000, selfPlay: 3_000, evaluation: 30_000 };
/** The equivalence check's rounds: the share of actions that walk the leader's task, in turn. */
const GUIDED_SHARES = [0.8, 0, 0.5];

/** A running hash of the numbers a step gave one environment. */
function fold(digest: number, value: number): number {
  return Math.imul(digest ^ Math.round(value * 1e6), 0x01000193) >>> 0;
}

function randomActions(count: number, seed: number): Int32Array {
  const draw = new Draw(seedRng(seed));
  return Int32Array.from({ length: count }, () => draw.int(0, FOLLOWER_CODES.length - 1));
}

/**
 * How both sides play: their next seed after one (the batch's default, previous + N, or a cycle
 * over a fixed set of levels whose starts the batch keeps), and the steps each plays untimed
 * before the timed ones (so that the kept starts are filled).
 */
interface Workload {
  readonly reward: RewardKind;
  /** Environment `slot`'s first seed, and its next one after `previous`. */
  readonly firstSeed: (slot: number) => number;
  readonly nextSeed: (slot: number, previous: number) => number;
  readonly keptStarts: number;
  readonly warmSteps: number;
  /** Log mode: the recordings, whose episodes the seeds number. */
  readonly recordings?: readonly Recording[];
}

const FRESH_SEEDS: Workload = { reward: REWARD, firstSeed: (slot) => slot, nextSeed: (_slot, previous) => previous + envs, keptStarts: 0, warmSteps: 0 };
const levelsWorkload = (levels: number): Workload => ({
  reward: REWARD,
  firstSeed: (slot) => slot % levels,
  nextSeed: (_slot, previous) => (previous + envs) % levels,
  keptStarts: levels,
  warmSteps: Math.ceil(levels / envs) * 96,
});

/** The 20 real CB2 games of the test fixtures, imported: log mode's workload, with the nDTW reward. */
function loggedWorkload(logs: readonly string[]): Workload {
  const recordings = logs.map((log) => loadRecording(log));
  const episodes = recordings.reduce((n, recording) => n + recording.instructions.length, 0);
  return { reward: 'ndtw', firstSeed: (slot) => slot % episodes, nextSeed: (_slot, previous) => (previous + envs) % episodes, keptStarts: 0, warmSteps: 0, recordings };
}

/** The CB2 fixture games as log texts, and a folder holding them as files (for the Python benchmark's `--logs`). */
function cb2Logs(): { readonly texts: string[]; readonly folder: string } {
  const texts = cb2FixtureFolders().map((folder) => importCb2Game(cb2FixtureGame(folder)).lines.map((line) => `${serializeLine(line)}\n`).join(''));
  const folder = mkdtempSync(join(tmpdir(), 'cerealbar-fast-bench-'));
  texts.forEach((text, i) => writeFileSync(join(folder, `cb2-${i}.jsonl`), text));
  return { texts, folder };
}

/** FollowerEnv's reset for a workload's seed (an episode number in log mode). */
function resetOptions(workload: Workload, seed: number): ResetOptions {
  if (!workload.recordings) return { seed };
  for (const log of workload.recordings) {
    if (seed < log.instructions.length) return { log, instruction: seed };
    seed -= log.instructions.length;
  }
  throw new RangeError(`no episode ${seed}`);
}

const firstSeeds = (workload: Workload): Int32Array => Int32Array.from({ length: envs }, (_, slot) => workload.firstSeed(slot));

/** The batch's steps per second over the timed steps, and a digest per environment of every step (warm ones included). */
function timeBatch(actions: Int32Array, workload: Workload): { seconds: number; digests: Uint32Array } {
  const batch = new FollowerBatch({ size: envs, reward: workload.reward, nextSeed: workload.nextSeed, keptStarts: workload.keptStarts, recordings: workload.recordings });
  const digests = new Uint32Array(envs);
  const { step, info, observation } = batch.buffers;
  batch.reset(firstSeeds(workload));
  let started = process.hrtime.bigint();
  for (let t = 0; t < workload.warmSteps + steps; t++) {
    if (t === workload.warmSteps) started = process.hrtime.bigint();
    batch.step(actions.subarray(t * envs, (t + 1) * envs));
    for (let i = 0; i < envs; i++) {
      let digest = digests[i];
      digest = fold(digest, step.reward[i]);
      digest = fold(digest, step.terminated[i]);
      digest = fold(digest, step.truncated[i]);
      digest = fold(digest, info.score[i]);
      digest = fold(digest, info.steps[i]);
      digest = fold(digest, observation.pose[i * 3] * 10_000 + observation.pose[i * 3 + 1] * 10 + observation.pose[i * 3 + 2]);
      digests[i] = digest;
    }
  }
  return { seconds: Number(process.hrtime.bigint() - started) / 1e9, digests };
}

/** FollowerEnvs with the batch's seeds and autoreset: a seed whose game cannot start gives way to the next. */
function timeFollowerEnvs(actions: Int32Array, workload: Workload): { seconds: number; digests: Uint32Array } {
  const all = Array.from({ length: envs }, () => new FollowerEnv({ reward: workload.reward }));
  const seeds = Float64Array.from(firstSeeds(workload));
  const ended = new Uint8Array(envs);
  const digests = new Uint32Array(envs);
  const reset = (i: number): Transition => {
    for (;;) {
      try {
        const { observation, info } = all[i].reset(resetOptions(workload, seeds[i]));
        return { observation, info, reward: 0, terminated: false, truncated: false };
      } catch (error) {
        if (!(error instanceof GameSetupError)) throw error;
        seeds[i] = workload.nextSeed(i, seeds[i]);
      }
    }
  };
  for (let i = 0; i < envs; i++) reset(i);
  let started = process.hrtime.bigint();
  for (let t = 0; t < workload.warmSteps + steps; t++) {
    if (t === workload.warmSteps) started = process.hrtime.bigint();
    for (let i = 0; i < envs; i++) {
      if (ended[i]) seeds[i] = workload.nextSeed(i, seeds[i]);
      const result: Transition = ended[i] ? reset(i) : all[i].step(FOLLOWER_CODES[actions[t * envs + i]]);
      ended[i] = result.terminated || result.truncated ? 1 : 0;
      let digest = digests[i];
      digest = fold(digest, result.reward);
      digest = fold(digest, result.terminated ? 1 : 0);
      digest = fold(digest, result.truncated ? 1 : 0);
      digest = fold(digest, result.info.score);
      digest = fold(digest, result.info.steps);
      const pose = result.observation.pose;
      digest = fold(digest, pose.x * 10_000 + pose.y * 10 + HEADINGS.indexOf(pose.heading));
      digests[i] = digest;
    }
  }
  return { seconds: Number(process.hrtime.bigint() - started) / 1e9, digests };
}

/** The batch (best of three runs) against FollowerEnvs on the same workload and actions: the rates, and the environments whose steps differ. */
function compareWithFollowerEnvs(workload: Workload): { batchRate: number; referenceRate: number; differing: number[] } {
  const actions = randomActions(envs * (workload.warmSteps + steps), 2024);
  const reference = timeFollowerEnvs(actions, workload);
  const runs = [timeBatch(actions, workload), timeBatch(actions, workload), timeBatch(actions, workload)];
  const batch = runs.reduce((best, run) => (run.seconds < best.seconds ? run : best));
  const differing = runs.flatMap((run) => Array.from(run.digests.keys()).filter((i) => run.digests[i] !== reference.digests[i]));
  return { batchRate: (envs * steps) / batch.seconds, referenceRate: (envs * steps) / reference.seconds, differing: [...new Set(differing)] };
}

type Transition = Pick<EnvStep, 'observation' | 'info' | 'reward' | 'terminated' | 'truncated'>;

const format = (value: number): string => Math.round(value).toLocaleString('en-US');

async function main(): Promise<void> {
  let failed = false;
  // The engine, self-play and evaluation are sped up in place; they are measured first, while
  // the heap holds nothing of the environments' runs, and printed last, each beside its goal.
  const benchGames = selfPlayGames(ENGINE_GAMES);
  const transitions = transitionRate(benchGames, 3000);
  const selfPlay = selfPlayRate(benchGames, 3000);
  const selfPlayWithMaps = selfPlayRate(benchGames, 2000, true);
  const cores = availableParallelism();
  const cascade = await cascadedThroughput(writeLogFiles(benchGames.slice(0, EVAL_GAMES)), cores);

  const fresh = compareWithFollowerEnvs(FRESH_SEEDS);
  const onLevels = compareWithFollowerEnvs(levelsWorkload(levels));
  const logs = cb2Logs();
  const logged = compareWithFollowerEnvs(loggedWorkload(logs.texts));
  for (const [what, run] of [['fresh seeds', fresh], [`${levels} levels`, onLevels], ['logged episodes', logged]] as const) {
    if (run.differing.length === 0) continue;
    failed = true;
    console.error(`the batch and FollowerEnv disagree on environments ${run.differing.slice(0, 10).join(', ')} of the timed run on ${what}`);
  }
  console.log(`FollowerEnv x${envs}: ${format(fresh.referenceRate)} steps/s (${format(envs * steps)} steps, random actions, '${REWARD}' rewards)`);
  console.log(`typescript batch env N=${envs}: ${format(fresh.batchRate)} steps/s = ${(fresh.batchRate / fresh.referenceRate).toFixed(1)}x FollowerEnv`);
  console.log(`typescript batch env N=${envs}, ${format(levels)} levels kept: ${format(onLevels.batchRate)} steps/s = ${(onLevels.batchRate / onLevels.referenceRate).toFixed(1)}x FollowerEnv on the same levels`);
  console.log(`typescript batch env N=${envs}, logged episodes of 20 CB2 games (ndtw): ${format(logged.batchRate)} steps/s = ${(logged.batchRate / logged.referenceRate).toFixed(1)}x FollowerEnv on the same episodes`);

  // The Python vector environment over the batch against FollowerVectorEnv (`python -m cerealbar.bench --fast`): it fails when they disagree.
  // In one Node process, then (on a machine with more than one core) in as many as there are cores, N split between them.
  const processes = [...new Set([1, availableParallelism()])].map(String);
  const python = spawnSync(process.execPath, [join(__dirname, '..', '..', 'tools', 'bench-python.cjs'), '--fast', '--envs', String(envs), '--processes', ...processes, '--levels', String(levels), '--logs', logs.folder], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (python.status !== 0) {
    failed = true;
    console.error('the Python vector environments failed or disagree (above)');
  }

  // Whole games, every field compared: enough batch steps that at least `games` games start.
  const size = 64;
  const draw = new Draw(seedRng(7));
  let total = { steps: 0, episodes: 0, points: 0 };
  let disagrees = false;
  for (let round = 0; total.episodes < games && !disagrees; round++) {
    const check = checkBatchAgainstFollowerEnv({
      size,
      reward: round % 2 === 0 ? 'distance' : 'sparse',
      gamma: 0.99,
      maxSteps: 500,
      seeds: Array.from({ length: size }, (_, i) => 100_000 + round * 10 * size + i),
      steps: 400,
      choose: (_slot, _t, _mask, guided) => (draw.chance(GUIDED_SHARES[round % GUIDED_SHARES.length]) ? guided : draw.int(0, FOLLOWER_CODES.length - 1)),
    });
    total = { steps: total.steps + check.steps, episodes: total.episodes + check.episodes, points: total.points + check.points };
    if (check.disagreement) {
      disagrees = true;
      console.error(`the batch and FollowerEnv disagree: ${JSON.stringify(check.disagreement).slice(0, 2000)}`);
    }
  }
  console.log(`equivalence: ${format(total.episodes)} games, ${format(total.steps)} steps, ${format(total.points)} sets: ${disagrees ? 'DISAGREE' : 'every field, state and mask equal'}`);

  console.log(`engine step: ${format(transitions.cpu)} transitions per CPU s (${format(transitions.wall)} per s) = ${(transitions.cpu / GOALS.transitions).toFixed(2)}x the goal of ${format(GOALS.transitions)}`);
  console.log(`scripted self-play, one core: ${format(selfPlay.cpu)} games per CPU s (maps made beforehand; ${format(selfPlayWithMaps.cpu)} with each map generated) = ${(selfPlay.cpu / GOALS.selfPlay).toFixed(2)}x the goal of ${format(GOALS.selfPlay)}`);
  const episodesPerSecond = cascade.instructions / cascade.seconds;
  console.log(`cascaded evaluation (oracle), ${cores} worker threads: ${format(episodesPerSecond)} instruction episodes/s (${format(cascade.examples / cascade.seconds)} cascaded examples/s) = ${(episodesPerSecond / GOALS.evaluation).toFixed(2)}x the goal of ${format(GOALS.evaluation)}`);
  process.exit(failed || disagrees ? 1 : 0);
}

void main();
