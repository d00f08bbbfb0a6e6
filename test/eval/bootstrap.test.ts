/** The percentile bootstrap interval of a mean: reproducible from its seed, and what the percentile method says. */
import { bootstrapInterval, quantile, resampledMeans } from '../../shared/eval/bootstrap';

const scores = [0, 3, 1, 7, 2, 2, 5, 0, 4, 9, 1, 3];
const mean = scores.reduce((a, b) => a + b, 0) / scores.length;

test('E-34: the same values, seed and resamples give the same interval; another seed another one', () => {
  const options = { resamples: 2000, seed: 7, level: 0.95 };
  const once = bootstrapInterval(scores, options);
  expect(bootstrapInterval(scores, options)).toEqual(once);
  expect(bootstrapInterval(scores, { ...options, seed: 8 })).not.toEqual(once);
});

test('the interval holds the mean, lies within the values and narrows with the level', () => {
  const wide = bootstrapInterval(scores, { resamples: 5000, seed: 1, level: 0.95 })!;
  const narrow = bootstrapInterval(scores, { resamples: 5000, seed: 1, level: 0.5 })!;
  expect(wide.low).toBeLessThan(mean);
  expect(wide.high).toBeGreaterThan(mean);
  expect(wide.low).toBeGreaterThanOrEqual(Math.min(...scores));
  expect(wide.high).toBeLessThanOrEqual(Math.max(...scores));
  expect(narrow.low).toBeGreaterThan(wide.low);
  expect(narrow.high).toBeLessThan(wide.high);
  // The normal approximation's 95% interval for comparison: the bootstrap's is near it.
  const sd = Math.sqrt(scores.reduce((s, x) => s + (x - mean) ** 2, 0) / (scores.length - 1));
  const half = (1.96 * sd) / Math.sqrt(scores.length);
  expect(Math.abs(wide.low - (mean - half))).toBeLessThan(0.5);
  expect(Math.abs(wide.high - (mean + half))).toBeLessThan(0.5);
});

test('E-34: the ends are the 2.5th and 97.5th percentiles of the resampled means, linearly interpolated', () => {
  const means = resampledMeans(scores, 1001, 3);
  expect(means).toEqual([...means].sort((a, b) => a - b));
  // With 1001 means the 2.5th percentile falls exactly on the 26th (index 25).
  expect(bootstrapInterval(scores, { resamples: 1001, seed: 3, level: 0.95 })).toEqual({ low: means[25], high: means[975] });
  expect(quantile([1, 2, 3, 5], 0.5)).toBe(2.5);
  expect(quantile([1, 2, 3, 5], 0)).toBe(1);
  expect(quantile([1, 2, 3, 5], 1)).toBe(5);
});

test('no values: no interval; one value, or all equal: the interval is that value', () => {
  expect(bootstrapInterval([], { resamples: 100, seed: 1, level: 0.95 })).toBeNull();
  expect(bootstrapInterval([4], { resamples: 100, seed: 1, level: 0.95 })).toEqual({ low: 4, high: 4 });
  expect(bootstrapInterval([2, 2, 2], { resamples: 100, seed: 1, level: 0.95 })).toEqual({ low: 2, high: 2 });
});
