/**
 * The cluster bootstrap: participants resampled with all their games. With one game each it is the
 * per-game bootstrap; games alike within a participant widen the interval of a mean; a participant
 * effect shared by two arms cancels from their difference.
 */
import { bootstrapInterval, differenceInterval } from '../../shared/eval/bootstrap';
import { clusterBootstrapInterval, clusterDifferenceInterval } from '../../shared/eval/clusterBootstrap';

const options = { resamples: 4000, seed: 3, level: 0.95 };
const width = (interval: { low: number; high: number } | null) => interval!.high - interval!.low;

test('one game a participant: the per-game bootstrap, draw for draw', () => {
  const scores = [0, 3, 1, 7, 2, 2, 5, 0, 4, 9, 1, 3];
  expect(clusterBootstrapInterval(scores.map((score) => [score]), options)).toEqual(bootstrapInterval(scores, options));
});

test("participants whose games are alike: the interval over participants is wider than the one over games, which takes them for independent", () => {
  // Six participants, five games each, a participant's games near its own level.
  const participants = [0, 2, 4, 6, 8, 10].map((level) => [level, level, level + 1, level, level + 1]);
  const overParticipants = clusterBootstrapInterval(participants, options)!;
  const overGames = bootstrapInterval(participants.flat(), options)!;
  expect(width(overParticipants)).toBeGreaterThan(1.8 * width(overGames));
  const mean = participants.flat().reduce((a, b) => a + b, 0) / 30;
  expect(overParticipants.low).toBeLessThan(mean);
  expect(overParticipants.high).toBeGreaterThan(mean);
  expect(clusterBootstrapInterval(participants, options)).toEqual(overParticipants); // seeded
});

test("a participant's own level, shared by both arms, cancels from the difference resampled by participant", () => {
  // Each participant scores its level in the first arm and one more in the second.
  const levels = [0, 3, 6, 9, 12, 15, 18, 21];
  const clusters = levels.map((level) => ({ first: [level], second: [level + 1] }));
  expect(clusterDifferenceInterval(clusters, options)).toEqual({ low: 1, high: 1 });
  // Resampled as independent games, the levels' spread is all noise.
  expect(width(differenceInterval(levels, levels.map((level) => level + 1), options))).toBeGreaterThan(8);
});

test('a participant in one arm only counts there; a resample that leaves an arm empty is drawn again; no values, no interval', () => {
  const clusters = [{ first: [2], second: [] }, { first: [], second: [5] }, { first: [], second: [7] }];
  // The first arm's one participant is in every resample kept: its mean is always 2.
  const interval = clusterDifferenceInterval(clusters, options)!;
  expect(interval.low).toBeGreaterThanOrEqual(3);
  expect(interval.high).toBeLessThanOrEqual(5);
  expect(interval.high).toBeGreaterThan(interval.low);
  expect(clusterDifferenceInterval([{ first: [1], second: [] }], options)).toBeNull();
  expect(clusterBootstrapInterval([], options)).toBeNull();
});
