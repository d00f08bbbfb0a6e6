/**
 * The games per arm a study needs, from a pilot: the normal quantiles, the two-sample formula with
 * a design effect (the worked example of docs/study-arms.md), and the pilot's spread and
 * intraclass correlation by participants nested in arms.
 */
import { detectableDifference, gamesPerArm, normalQuantile, pilotVariance } from '../../cli/study/sampleSize';

test('normal quantiles as tables give them', () => {
  expect(normalQuantile(0.975)).toBeCloseTo(1.959963985, 8);
  expect(normalQuantile(0.8)).toBeCloseTo(0.841621234, 8);
  expect(normalQuantile(0.5)).toBeCloseTo(0, 12);
  expect(normalQuantile(0.01)).toBeCloseTo(-2.326347874, 8);
  expect(normalQuantile(0.999)).toBeCloseTo(3.090232306, 8);
  expect(() => normalQuantile(1)).toThrow(RangeError);
});

test("games per arm: 2 (z(1 - alpha/2) + z(0.8))^2 SD^2 deff / difference^2, rounded up; the docs' worked example", () => {
  expect(gamesPerArm(1, 2, 1, 0.05)).toBe(63); // 62.79
  expect(gamesPerArm(1, 2, 1.5, 0.05)).toBe(95); // 94.19
  expect(gamesPerArm(1, 2, 1, 0.05 / 3)).toBe(84); // three pairs of arms: Holm's first step
  expect(gamesPerArm(-1, 2, 1, 0.05)).toBe(63);
  // docs/study-arms.md: a pilot SD of 2.4, an ICC of 0.1 over 3 games a participant, a difference of 1 point.
  expect(gamesPerArm(1, 2.4, 1 + 2 * 0.1, 0.05)).toBe(109);
  // The smallest difference those games find is the one asked for, or just below it.
  const found = detectableDifference(63, 2, 1, 0.05);
  expect(found).toBeLessThanOrEqual(1);
  expect(found).toBeGreaterThan(0.99);
});

test("the pilot's pooled SD, intraclass correlation and design effect, participants nested in arms", () => {
  // One arm, three participants with two games each: MSB 8, MSW 0.5, n0 2, so ICC 7.5 / 8.5.
  const one = pilotVariance([[[1, 2], [3, 4], [5, 6]]]);
  expect(one.sd).toBeCloseTo(Math.sqrt(17.5 / 5), 12);
  expect(one.gamesPerParticipant).toBe(2);
  expect(one.icc).toBeCloseTo(7.5 / 8.5, 12);
  expect(one.designEffect).toBeCloseTo(1 + 7.5 / 8.5, 12);
  // Two arms ten points apart: the arms' difference is no likeness of a participant's games.
  const two = pilotVariance([[[1, 2], [3, 4]], [[11, 12], [13, 14]]]);
  expect(two.icc).toBeCloseTo(3.5 / 4.5, 12);
  expect(two.sd).toBeCloseTo(Math.sqrt(10 / 6), 12);
  // Participants less alike than chance: the estimate is kept at 0.
  expect(pilotVariance([[[1, 5], [5, 1]]]).icc).toBe(0);
});

test('one game a participant: design effect 1 with no ICC to estimate; no games: nothing known', () => {
  expect(pilotVariance([[[1], [4], [2]], [[3], [5]]])).toMatchObject({ gamesPerParticipant: 1, icc: null, designEffect: 1 });
  expect(pilotVariance([[[1, 2, 3]]])).toMatchObject({ gamesPerParticipant: 3, icc: null, designEffect: null });
  expect(pilotVariance([[], []])).toEqual({ sd: null, gamesPerParticipant: null, icc: null, designEffect: null });
});
