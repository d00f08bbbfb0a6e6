/**
 * Steps a FollowerBatch and one FollowerEnv per environment side by side, with the same seeds (or
 * in log mode the same episodes) and actions, and finds the first place they disagree: every field of the observation arrays (as
 * FollowerArrays encodes the FollowerEnv's observation, reward and info), the engine state, and the
 * mask against checkPlayerAction. Used by the equivalence test and by `npm run bench:fast`.
 */
import { isDeepStrictEqual } from 'node:util';
import { FOLLOWER_CODES, actionOfCode } from '../../shared/engine/actions';
import { DEFAULT_CONFIG } from '../../shared/engine/config';
import { checkPlayerAction } from '../../shared/engine/legal';
import type { GameState } from '../../shared/engine/state';
import { FollowerEnv, type EnvInfo, type Partner, type RewardKind } from '../../shared/env/env';
import type { Recording } from '../../shared/eval/recording';
import { PathPlanner } from '../../shared/nav/pathing';
import type { BatchBuffers } from '../../shared/env/batch/buffers';
import { FollowerBatch, type FollowerBatchOptions } from '../../shared/env/batch/followerBatch';
import { DTYPE_BYTES, FollowerArrays, TYPED_ARRAYS, type FieldGroup, type GridSize, type Layout, type Transition, type TypedArray } from '../../shared/env/observationArrays';
import type { FollowerObservation } from '../../shared/agents/types';

export interface BatchCheckOptions {
  readonly size: number;
  readonly reward: RewardKind;
  readonly gamma: number;
  readonly maxSteps: number;
  /** The arrays' grid (by default the batch's: 25 x 25 for self-play, the largest map in log mode). */
  readonly grid?: GridSize;
  /** Log mode's recordings; `seeds` are then episode numbers. */
  readonly recordings?: readonly Recording[];
  /** Passed on to the batch. */
  readonly nextSeed?: FollowerBatchOptions['nextSeed'];
  readonly keptStarts?: number;
  readonly seeds: readonly number[];
  /** Batch steps to run. */
  readonly steps: number;
  /**
   * The action index of environment `slot` at batch step `t`, given its mask now and `guided`, the
   * action that carries out the instruction (a step of the walk to the nearest card it still has
   * to change: the leader's task's, or in log mode one the recorded follower changed; else DONE).
   */
  readonly choose: (slot: number, t: number, mask: ArrayLike<number>, guided: number) => number;
}

export interface Disagreement {
  readonly slot: number;
  /** The batch step (0 for the reset). */
  readonly step: number;
  readonly seed: number;
  readonly what: string;
  readonly expected: unknown;
  readonly actual: unknown;
}

export interface BatchCheck {
  /** Environment steps compared (resets not counted). */
  readonly steps: number;
  /** Episodes begun (the first resets and the autoresets). */
  readonly episodes: number;
  /** Sets made in the steps compared, by either player. */
  readonly points: number;
  readonly disagreement: Disagreement | null;
}

/** The FollowerEnv's internal episode: the environment does not expose it, and the check compares its state. */
type EnvEpisode = { state: GameState; partner: Partner; progress: Parameters<Partner['pendingTargets']>[1] | null };
function envEpisode(env: FollowerEnv): EnvEpisode {
  return (env as unknown as { episode: EnvEpisode }).episode;
}

const planners = new WeakMap<object, PathPlanner>();

/** The action that carries out the current instruction: the next step to a card it still has to change, DONE when there is none. */
function guidedAction(env: FollowerEnv): number {
  const { state, partner, progress } = envEpisode(env);
  const card = progress ? partner.pendingTargets(state, progress)[0] : undefined;
  let planner = planners.get(state.world);
  if (!planner) planners.set(state.world, (planner = new PathPlanner(state.world)));
  const walk = card ? planner.nextMove(state.cards, state.follower, card) : null;
  return FOLLOWER_CODES.indexOf(walk ?? 'DONE');
}

/** A FollowerArrays block's fixed part as one array per field, keyed as the batch's buffers are. */
function decodeBlock(layout: Layout, fixed: Uint8Array): Record<FieldGroup, Record<string, TypedArray>> {
  const groups: Record<FieldGroup, Record<string, TypedArray>> = { step: {}, observation: {}, info: {} };
  const bytes = fixed.slice().buffer;
  let offset = 0;
  for (const field of layout.scalars) {
    groups[field.group][field.name] = new TYPED_ARRAYS[field.dtype](bytes.slice(offset, offset + DTYPE_BYTES[field.dtype]), 0, 1);
    offset += DTYPE_BYTES[field.dtype];
  }
  for (const field of layout.arrays) {
    groups[field.group][field.name] = new TYPED_ARRAYS[field.dtype](bytes, field.offset, field.shape.reduce((n, size) => n * size, 1));
  }
  return groups;
}

/** The first field where the batch's environment `slot` differs from the block, or null. */
function compareFields(buffers: BatchBuffers, slot: number, expected: Record<FieldGroup, Record<string, TypedArray>>): Omit<Disagreement, 'slot' | 'step' | 'seed'> | null {
  for (const group of Object.keys(expected) as FieldGroup[]) {
    for (const [name, want] of Object.entries(expected[group])) {
      const got = buffers[group][name].subarray(slot * want.length, (slot + 1) * want.length);
      for (let i = 0; i < want.length; i++) {
        if (got[i] !== want[i]) return { what: `${group}.${name}[${i}]`, expected: Array.from(want), actual: Array.from(got) };
      }
    }
  }
  return null;
}

export function checkBatchAgainstFollowerEnv(options: BatchCheckOptions): BatchCheck {
  const { size, reward, gamma, maxSteps } = options;
  const { recordings } = options;
  const batch = new FollowerBatch({ size, reward, gamma, maxSteps, grid: options.grid, recordings, nextSeed: options.nextSeed, keptStarts: options.keptStarts });
  const grid = batch.grid;
  const logEpisodes = recordings?.flatMap((recording) => recording.instructions.map((_, instruction) => ({ log: recording, instruction })));
  const encoder = new FollowerArrays({ grid, config: DEFAULT_CONFIG, maxSteps, description: false, shaping: true });
  const envs = Array.from({ length: size }, () => new FollowerEnv({ reward, gamma, maxSteps }));
  const ended = new Array<boolean>(size).fill(false);
  let steps = 0;
  let episodes = 0;
  let points = 0;

  const compare = (slot: number, t: number, env: FollowerEnv, observation: FollowerObservation, transition: Transition, info: EnvInfo): Disagreement | null => {
    const where = { slot, step: t, seed: batch.seedOf(slot) };
    const fields = compareFields(batch.buffers, slot, decodeBlock(encoder.layout, encoder.encode(observation, transition, info)[0]));
    if (fields) return { ...where, ...fields };
    const state = envEpisode(env).state;
    const strip = (s: GameState) => ({ ...s, world: null, config: null });
    if (!isDeepStrictEqual(strip(batch.stateOf(slot)), strip(state))) return { ...where, what: 'state', expected: strip(state), actual: strip(batch.stateOf(slot)) };
    const mask = batch.buffers.info.action_mask;
    for (let i = 0; i < FOLLOWER_CODES.length; i++) {
      const allowed = checkPlayerAction(state, 'follower', actionOfCode(FOLLOWER_CODES[i])) === null;
      if ((mask[slot * FOLLOWER_CODES.length + i] === 1) !== allowed) return { ...where, what: `action_mask[${i}] against checkPlayerAction`, expected: allowed, actual: mask[slot * FOLLOWER_CODES.length + i] };
    }
    return null;
  };
  const resetEnv = (slot: number, t: number): Disagreement | null => {
    episodes++;
    ended[slot] = false;
    const { observation, info } = envs[slot].reset(logEpisodes ? logEpisodes[batch.seedOf(slot)] : { seed: batch.seedOf(slot) });
    return compare(slot, t, envs[slot], observation, { reward: 0, terminated: false, truncated: false }, info);
  };

  batch.reset(options.seeds);
  for (let slot = 0; slot < size; slot++) {
    const disagreement = resetEnv(slot, 0);
    if (disagreement) return { steps, episodes, points, disagreement };
  }
  const actions = new Int32Array(size);
  const mask = batch.buffers.info.action_mask;
  for (let t = 1; t <= options.steps; t++) {
    for (let slot = 0; slot < size; slot++) actions[slot] = options.choose(slot, t, mask.subarray(slot * FOLLOWER_CODES.length, (slot + 1) * FOLLOWER_CODES.length), guidedAction(envs[slot]));
    batch.step(actions);
    for (let slot = 0; slot < size; slot++) {
      let disagreement: Disagreement | null;
      if (ended[slot]) {
        disagreement = resetEnv(slot, t);
      } else {
        const result = envs[slot].step(FOLLOWER_CODES[actions[slot]]);
        steps++;
        points += result.info.points;
        ended[slot] = result.terminated || result.truncated;
        disagreement = compare(slot, t, envs[slot], result.observation, result, result.info);
      }
      if (disagreement) return { steps, episodes, points, disagreement };
    }
  }
  return { steps, episodes, points, disagreement: null };
}
