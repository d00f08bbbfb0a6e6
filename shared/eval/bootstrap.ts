/**
 * The bootstrap interval of a mean, by the percentile method: resample the values with
 * replacement (as many as there are), take each resample's mean, and read the interval's ends
 * off the sorted means at (1 - level) / 2 and (1 + level) / 2, interpolating linearly between
 * neighbouring means (the usual "linear" percentile). The resampling draws from the engine's
 * seeded generator, so the same values, seed and number of resamples give the same interval.
 * Values that come in clusters (a participant's games) are resampled by cluster in
 * clusterBootstrap.ts.
 */
import { Draw, seedRng } from '../engine/rng';

export interface BootstrapOptions {
  /** How many resamples (B). */
  readonly resamples: number;
  /** Seeds the resampling. */
  readonly seed: number;
  /** The interval's coverage, 0.95 for a 95% interval. */
  readonly level: number;
}

export const DEFAULT_BOOTSTRAP: BootstrapOptions = { resamples: 10_000, seed: 1, level: 0.95 };

export interface Interval {
  readonly low: number;
  readonly high: number;
}

export const mean = (values: readonly number[]): number => values.reduce((sum, value) => sum + value, 0) / values.length;

/** The q-quantile (0 <= q <= 1) of sorted values, interpolated linearly between order statistics. */
export function quantile(sorted: readonly number[], q: number): number {
  const at = q * (sorted.length - 1);
  const below = Math.floor(at);
  const above = Math.min(sorted.length - 1, below + 1);
  return sorted[below] + (at - below) * (sorted[above] - sorted[below]);
}

/** The means of `resamples` resamples of `values` (with replacement, each as long as `values`), sorted. */
export function resampledMeans(values: readonly number[], resamples: number, seed: number): number[] {
  const draw = new Draw(seedRng(seed));
  const last = values.length - 1;
  const means = new Array<number>(resamples);
  for (let b = 0; b < resamples; b++) {
    let sum = 0;
    for (let i = 0; i <= last; i++) sum += values[draw.int(0, last)];
    means[b] = sum / values.length;
  }
  return means.sort((a, b) => a - b);
}

/** The percentile interval of `level` read off sorted resampled statistics: their (1 - level) / 2 and (1 + level) / 2 quantiles. */
export function percentileInterval(sorted: readonly number[], level: number): Interval {
  const tail = (1 - level) / 2;
  return { low: quantile(sorted, tail), high: quantile(sorted, 1 - tail) };
}

/** The percentile bootstrap interval of the mean of `values`; null when there are none. */
export function bootstrapInterval(values: readonly number[], options: BootstrapOptions = DEFAULT_BOOTSTRAP): Interval | null {
  if (values.length === 0) return null;
  return percentileInterval(resampledMeans(values, options.resamples, options.seed), options.level);
}

/**
 * The percentile bootstrap interval of mean(second) - mean(first) for independent samples (games
 * of different arms, on different maps: nothing pairs them): each resample draws each sample anew,
 * with replacement and as many as it has, from one seeded generator.
 */
export function differenceInterval(first: readonly number[], second: readonly number[], options: BootstrapOptions): Interval {
  const draw = new Draw(seedRng(options.seed));
  const resampledMean = (values: readonly number[]) => {
    let sum = 0;
    for (let i = 0; i < values.length; i++) sum += values[draw.int(0, values.length - 1)];
    return sum / values.length;
  };
  const differences = Array.from({ length: options.resamples }, () => resampledMean(second) - resampledMean(first)).sort((x, y) => x - y);
  return percentileInterval(differences, options.level);
}
