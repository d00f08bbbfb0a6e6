/** The permutation p-value of a difference of means, and Holm's adjustment over a family of them. */
import { holmAdjusted, permutationPValue } from '../../shared/eval/multipleComparisons';

test("Holm's adjustment: as R's p.adjust(method = 'holm'), in the given order; one p-value stays as it is", () => {
  // p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm") gives 0.03 0.06 0.06 0.02.
  const adjusted = holmAdjusted([0.01, 0.04, 0.03, 0.005]);
  [0.03, 0.06, 0.06, 0.02].forEach((p, i) => expect(adjusted[i]).toBeCloseTo(p, 12));
  // 0.6 x 2 is over 1: kept at 1, and the larger p after it no lower.
  holmAdjusted([0.2, 0.9, 0.6]).forEach((p, i) => expect(p).toBeCloseTo([0.6, 1, 1][i], 12));
  expect(holmAdjusted([0.04])).toEqual([0.04]);
  expect(holmAdjusted([])).toEqual([]);
});

test('the permutation p-value approaches the exact one, is reproducible from its seed, and is never 0', () => {
  // {1,2,3} against {4,5,6}: 2 of the 20 splits are as far apart, so p = 0.1 exactly.
  const options = { resamples: 20_000, seed: 5 };
  const p = permutationPValue([1, 2, 3], [4, 5, 6], options)!;
  expect(Math.abs(p - 0.1)).toBeLessThan(0.01);
  expect(permutationPValue([1, 2, 3], [4, 5, 6], options)).toBe(p);
  expect(permutationPValue([4, 5, 6], [1, 2, 3], options)).toBeCloseTo(p, 2); // two-sided
  const apart = permutationPValue(Array(10).fill(0), Array(10).fill(5), { resamples: 999, seed: 1 })!;
  expect(apart).toBeGreaterThan(0);
  expect(apart).toBeLessThan(0.01);
});

test('no difference: p is 1; an empty group: no p-value', () => {
  expect(permutationPValue([1, 2, 3, 4], [4, 3, 2, 1], { resamples: 500, seed: 1 })).toBe(1);
  expect(permutationPValue([], [1, 2], { resamples: 500, seed: 1 })).toBeNull();
});
