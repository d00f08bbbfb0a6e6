/**
 * The batched follower environment is the same game as FollowerEnv: stepped side by side with the
 * same seeds and actions, every step's observation arrays, mask, reward, terminated, truncated and
 * info fields, and the engine state, are equal, and the mask agrees with checkPlayerAction.
 */
import fc from 'fast-check';
import { FollowerEnv, selfPlayStart } from '../../shared/env/env';
import { allocateBatchBuffers, batchRegions, followerBatchLayout } from '../../shared/env/batch/buffers';
import { FollowerBatch } from '../../shared/env/batch/followerBatch';
import { GameSetupError } from '../../shared/engine/errors';
import { Draw, seedRng } from '../../shared/engine/rng';
import { checkBatchAgainstFollowerEnv, type BatchCheck } from './followerBatchCheck';

/** Mostly the task's walk (so that the follower makes sets and finishes instructions), some random actions. */
function mixedPolicy(seed: number, guidedShare: number): (slot: number, t: number, mask: ArrayLike<number>, guided: number) => number {
  const draw = new Draw(seedRng(seed));
  return (_slot, _t, _mask, guided) => (draw.chance(guidedShare) ? guided : draw.int(0, 4));
}

function expectAgreement(check: BatchCheck): void {
  expect(check.disagreement).toBeNull();
}

describe('FollowerBatch against FollowerEnv', () => {
  test.each([
    ['sparse', 0.99, 500, 0.85],
    ['distance', 0.9, 500, 0.85],
    ['distance', 1, 40, 0.5],
    ['sparse', 0.99, 500, 0],
  ] as const)('a fixed set of games: %s rewards, gamma %s, maxSteps %s, %s of the actions the task walk', (reward, gamma, maxSteps, guidedShare) => {
    const size = 12;
    const check = checkBatchAgainstFollowerEnv({
      size,
      reward,
      gamma,
      maxSteps,
      seeds: Array.from({ length: size }, (_, i) => 1000 + i),
      steps: 300,
      choose: mixedPolicy(7, guidedShare),
    });
    expectAgreement(check);
    // The environments played whole games, went on past autoresets, and made sets.
    expect(check.steps).toBeGreaterThan(size * 250);
    expect(check.episodes).toBeGreaterThan(size);
    expect(check.points).toBeGreaterThan(0);
  });

  test('on a grid larger than the maps, the cells past their edges stay off-map', () => {
    const check = checkBatchAgainstFollowerEnv({
      size: 4,
      reward: 'distance',
      gamma: 0.99,
      maxSteps: 500,
      grid: { width: 28, height: 26 },
      seeds: [1, 2, 3, 4],
      steps: 150,
      choose: mixedPolicy(3, 0.7),
    });
    expectAgreement(check);
    expect(check.points).toBeGreaterThan(0);
  });

  test('property: any seeds, options and actions give the same trajectories', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 2 ** 32 - 1 }), { minLength: 1, maxLength: 4 }),
        fc.constantFrom('sparse' as const, 'distance' as const),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 1, max: 120 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.nat(),
        (seeds, reward, gamma, maxSteps, guidedShare, policySeed) => {
          expectAgreement(checkBatchAgainstFollowerEnv({ size: seeds.length, reward, gamma, maxSteps, seeds, steps: 150, choose: mixedPolicy(policySeed, guidedShare) }));
        },
      ),
      { numRuns: 25 },
    );
  });
});

describe('FollowerBatch', () => {
  test('a game that cannot start is replaced by the next seed that can, and seedOf says which', () => {
    expect(() => new FollowerEnv().reset({ seed: 139765 })).toThrow(GameSetupError);
    const batch = new FollowerBatch({ size: 2 });
    batch.reset([139765, 5]);
    expect(batch.seedOf(0)).toBe(139767);
    expect(batch.seedOf(1)).toBe(5);
    // The next seed of slot 0 in a batch of 2 is 139765 + 2; the game it plays is FollowerEnv's on that seed.
    expectAgreement(checkBatchAgainstFollowerEnv({ size: 2, reward: 'distance', gamma: 0.99, maxSteps: 500, seeds: [139765, 5], steps: 30, choose: mixedPolicy(1, 0.8) }));
  });

  test('autoreset: the step after an episode ends starts the next seed, with reward 0 and the new game\'s first observation', () => {
    const batch = new FollowerBatch({ size: 3, maxSteps: 2 });
    batch.reset([10, 11, 12]);
    const { step, info } = batch.buffers;
    batch.step([2, 2, 2]);
    expect(Array.from(step.truncated)).toEqual([0, 0, 0]);
    batch.step([2, 2, 2]);
    expect(Array.from(step.truncated)).toEqual([1, 1, 1]);
    expect(Array.from(info.steps)).toEqual([2, 2, 2]);
    batch.step([2, 2, 2]);
    expect([batch.seedOf(0), batch.seedOf(1), batch.seedOf(2)]).toEqual([13, 14, 15]);
    expect(Array.from(step.reward)).toEqual([0, 0, 0]);
    expect(Array.from(step.truncated)).toEqual([0, 0, 0]);
    expect(Array.from(info.steps)).toEqual([0, 0, 0]);
  });

  test('seeded autoreset: the ended environments start the seeds step is given, one try each; a seed that gives no game waits for resetAt', () => {
    const batch = new FollowerBatch({ size: 3, maxSteps: 1 });
    batch.reset([10, 11, 12]);
    batch.step([2, 2, 2]);
    expect(Array.from(batch.buffers.step.truncated)).toEqual([1, 1, 1]);
    const truncatedPose = Array.from(batch.buffers.observation.pose.subarray(0, 3));
    // 139765's game cannot start: environment 0 stays ended, its outputs untouched, and is reported.
    expect(batch.step([2, 2, 2], [139765, 40, 41])).toEqual([0]);
    expect([batch.seedOf(1), batch.seedOf(2)]).toEqual([40, 41]);
    expect(batch.seedOf(0)).toBe(10);
    expect(Array.from(batch.buffers.step.truncated)).toEqual([1, 0, 0]);
    expect(Array.from(batch.buffers.observation.pose.subarray(0, 3))).toEqual(truncatedPose);
    expect(batch.resetAt(0, 139765)).toBe(false);
    expect(batch.resetAt(0, 42)).toBe(true);
    expect(batch.seedOf(0)).toBe(42);
    expect(batch.buffers.step.truncated[0]).toBe(0);
    // Each environment's new game is FollowerEnv's on that seed.
    for (const [slot, seed] of [[0, 42], [1, 40], [2, 41]]) expect(batch.stateOf(slot)).toEqual(selfPlayStart(seed).start);
    // Only ended environments take their seeds; the others step, whatever their seed says.
    expect(batch.step([2, 2, 2], [139765, 139765, 139765])).toEqual([]);
    expect(() => batch.step([2, 2, 2], [1, 2])).toThrow(/seeds are one per environment/);
    expect(() => batch.resetAt(3, 1)).toThrow(/slot must be/);
    expect(() => batch.resetAt(0, -1)).toThrow(/seeds are integers/);
  });

  test('kept starts: seeds that come round again start from what was kept, and play the same games as FollowerEnv', () => {
    // Twelve levels in turn, 139765 among them (its game cannot start: the next level is played).
    const levels = [0, 1, 2, 139765, 4, 5, 6, 7, 8, 9, 10, 11];
    const nextSeed = (_slot: number, previous: number) => levels[(levels.indexOf(previous) + 1) % levels.length];
    for (const reward of ['distance', 'sparse'] as const) {
      const check = checkBatchAgainstFollowerEnv({ size: 6, reward, gamma: 0.99, maxSteps: 25, seeds: [0, 2, 4, 6, 8, 10], steps: 700, nextSeed, keptStarts: 8, choose: mixedPolicy(3, 0.8) });
      expectAgreement(check);
      // Each environment went round the levels several times: most starts were kept ones.
      expect(check.episodes).toBeGreaterThan(6 * 2 * levels.length);
    }
    // Two levels for six environments: games on one level run side by side, with their leaders sharing the level's path planner.
    const twoLevels = (_slot: number, previous: number) => (previous === 5 ? 7 : 5);
    expectAgreement(checkBatchAgainstFollowerEnv({ size: 6, reward: 'distance', gamma: 0.99, maxSteps: 40, seeds: [5, 5, 5, 7, 7, 7], steps: 400, nextSeed: twoLevels, keptStarts: 2, choose: mixedPolicy(4, 0.8) }));
    expect(() => new FollowerBatch({ size: 1, keptStarts: -1 })).toThrow(/keptStarts must be a whole number/);
  });

  test('writes into the arrays the caller gives, and refuses arrays of the wrong shape', () => {
    const layout = followerBatchLayout({ width: 25, height: 25 }, 500);
    const buffers = allocateBatchBuffers(layout, 2);
    const batch = new FollowerBatch({ size: 2, buffers });
    batch.reset([3, 4]);
    expect(batch.buffers).toBe(buffers);
    expect(buffers.observation.pose.some((value) => value !== 0)).toBe(true);
    const short = allocateBatchBuffers(layout, 1);
    expect(() => new FollowerBatch({ size: 2, buffers: short })).toThrow(/buffers\.\w+\.\w+ must be a \w+ of \d+ elements/);
  });

  test('the arrays are views of one block, each field on an 8-byte boundary, and can be laid in a block the caller gives', () => {
    const layout = followerBatchLayout({ width: 25, height: 25 }, 500);
    const { regions, bytes } = batchRegions(layout, 3);
    const block = new ArrayBuffer(bytes);
    const buffers = allocateBatchBuffers(layout, 3, block);
    let end = 0;
    for (const region of regions) {
      const array = buffers[region.group][region.name];
      expect(array.buffer).toBe(block);
      expect(array.byteOffset).toBe(region.offset);
      expect(region.offset % 8).toBe(0);
      expect(region.offset).toBeGreaterThanOrEqual(end);
      end = region.offset + array.byteLength;
    }
    expect(bytes - end).toBeLessThan(8);
    const batch = new FollowerBatch({ size: 3, buffers });
    batch.reset([1, 2, 3]);
    expect(new Int32Array(block, regions.find((region) => region.name === 'pose')!.offset, 9)).toEqual(buffers.observation.pose);
    expect(() => allocateBatchBuffers(layout, 3, new ArrayBuffer(bytes - 8))).toThrow(/take \d+ bytes, the block has/);
  });

  test('bad input is refused with a clear error and changes nothing', () => {
    expect(() => new FollowerBatch({ size: 0 })).toThrow(RangeError);
    expect(() => new FollowerBatch({ size: 1, reward: 'ndtw' })).toThrow(/'ndtw' needs recordings/);
    expect(() => new FollowerBatch({ size: 1, gamma: 2 })).toThrow(RangeError);
    const batch = new FollowerBatch({ size: 2 });
    expect(() => batch.step([0, 0])).toThrow(/reset\(\)/);
    expect(() => batch.reset([1])).toThrow(/one seed per environment/);
    expect(() => batch.reset([1, -1])).toThrow(/seeds are integers/);
    batch.reset([1, 2]);
    const before = [batch.stateOf(0), batch.stateOf(1)];
    const observation = Array.from(batch.buffers.observation.pose);
    expect(() => batch.step([0, 5])).toThrow(/actions are indices 0 to 4/);
    expect(() => batch.step([0.5, 0])).toThrow(RangeError);
    expect(() => batch.step([0])).toThrow(/one action per environment/);
    expect([batch.stateOf(0), batch.stateOf(1)]).toEqual(before);
    expect(Array.from(batch.buffers.observation.pose)).toEqual(observation);
  });
});
