/**
 * The batched follower environment in log mode is FollowerEnv's log mode: every field, state and
 * mask equal at every step, over the real CB2 games of the fixtures, a game whose leader cancelled
 * instructions, and self-play games, with each reward; and bad input.
 */
import fc from 'fast-check';
import { importCb2Game } from '../../shared/cb2/import';
import { makeConfig } from '../../shared/engine/config';
import { Draw, seedRng } from '../../shared/engine/rng';
import { FollowerBatch } from '../../shared/env/batch/followerBatch';
import { loadRecording, type Recording } from '../../shared/eval/recording';
import type { LogLine } from '../../shared/log/format';
import { serializeLine } from '../../shared/log/recorder';
import { generateMap } from '../../shared/maps/generate';
import { playSelfPlayGame } from '../../shared/selfplay/game';
import { FOLLOWER_CODES } from '../../shared/engine/actions';
import { cb2FixtureFolders, cb2FixtureGame } from '../cb2/fixtureGames';
import { feedbackAndCancelGame } from '../cb2/cb2Script';
import { checkBatchAgainstFollowerEnv, type BatchCheck } from './followerBatchCheck';

const logText = (lines: readonly LogLine[]) => lines.map((line) => `${serializeLine(line)}\n`).join('');

function selfPlayRecording(seed: number): Recording {
  const lines: LogLine[] = [];
  playSelfPlayGame({ seed, map: generateMap(seed), config: makeConfig(), startedAt: new Date(0) }, (line) => lines.push(line));
  return loadRecording(logText(lines));
}

const cb2 = cb2FixtureFolders().map((folder) => loadRecording(logText(importCb2Game(cb2FixtureGame(folder)).lines)));
const cancelled = loadRecording(logText(importCb2Game(feedbackAndCancelGame()).lines));
const selfPlay = [3, 4].map(selfPlayRecording);
const recordings = [...cb2, cancelled, ...selfPlay];
const episodeCount = recordings.reduce((n, recording) => n + recording.instructions.length, 0);

/** With probability `guided` the action that carries out the instruction, else a uniformly random one. */
function mixedPolicy(seed: number, guided: number) {
  const draw = new Draw(seedRng(seed));
  return (_slot: number, _t: number, _mask: ArrayLike<number>, guidedAction: number) => (draw.chance(guided) ? guidedAction : draw.int(0, FOLLOWER_CODES.length - 1));
}

function expectAgreement(check: BatchCheck): void {
  expect(check.disagreement).toBeNull();
}

describe('FollowerBatch in log mode against FollowerEnv in log mode', () => {
  test('the fixtures hold the games the check needs: real CB2 games, a cancel, self-play', () => {
    expect(cb2.length).toBe(20);
    expect(cancelled.cancelled.length).toBeGreaterThan(0);
    expect(episodeCount).toBeGreaterThan(150);
  });

  test.each([
    ['distance', 0.99, 0.85],
    ['ndtw', 1, 0.85],
    ['sparse', 0.99, 0.3],
    ['distance', 0.9, 0],
  ] as const)('every episode of the recordings: %s rewards, gamma %s, %s of the actions carry out the instruction', (reward, gamma, guided) => {
    const size = 48;
    // Each environment starts on its own episode and autoresets onto episode + size: every episode is played.
    const rounds = Math.ceil(episodeCount / size) + 1;
    const check = checkBatchAgainstFollowerEnv({ size, reward, gamma, maxSteps: 60, recordings, seeds: Array.from({ length: size }, (_, i) => i), steps: rounds * 60, choose: mixedPolicy(size + gamma, guided) });
    expectAgreement(check);
    expect(check.episodes).toBeGreaterThanOrEqual(episodeCount);
  });

  test('a follower that steps off its card and back on, before it says DONE: a card flipped twice is a target again', () => {
    const draw = new Draw(seedRng(11));
    const [moveForward, moveBack, done] = (['MF', 'MB', 'DONE'] as const).map((code) => FOLLOWER_CODES.indexOf(code));
    const dither = (_slot: number, _t: number, _mask: ArrayLike<number>, guided: number) => (guided === done && draw.chance(0.7) ? (draw.chance(0.5) ? moveForward : moveBack) : guided);
    const size = 48;
    expectAgreement(checkBatchAgainstFollowerEnv({ size, reward: 'distance', gamma: 0.99, maxSteps: 60, recordings, seeds: Array.from({ length: size }, (_, i) => i), steps: 400, choose: dither }));
  });

  test('property: any episodes, rewards, discounts and actions give the same trajectories', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat(episodeCount - 1), { minLength: 4, maxLength: 4 }),
        fc.constantFrom('sparse' as const, 'distance' as const, 'ndtw' as const),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer(),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (seeds, reward, gamma, maxSteps, seed, guided) => {
          const check = checkBatchAgainstFollowerEnv({ size: seeds.length, reward, gamma, maxSteps, recordings, seeds, steps: 80, choose: mixedPolicy(seed, guided) });
          expect(check.disagreement).toBeNull();
        },
      ),
      { numRuns: 25 },
    );
  });

  test('bad input: log mode numbers episodes, and the recordings must have some', () => {
    const batch = new FollowerBatch({ size: 2, recordings: selfPlay });
    const episodes = selfPlay.reduce((n, recording) => n + recording.instructions.length, 0);
    expect(() => batch.reset([0, episodes])).toThrow(`episodes are numbered 0 to ${episodes - 1}, got ${episodes}`);
    batch.reset([0, episodes - 1]);
    expect(batch.episodeIdOf(1)).toBe(`${selfPlay[1].header.gameId}#${selfPlay[1].instructions.length - 1}`);
    expect(() => new FollowerBatch({ size: 1, recordings: [] })).toThrow(/no episode to play/);
    expect(() => new FollowerBatch({ size: 1, recordings: selfPlay, grid: { width: 10, height: 10 } }).reset([0])).toThrow(/larger than the batch's 10 x 10 grid/);
  });
});
