/**
 * Tests of differences between groups of games, and their correction when several are made at
 * once: a permutation p-value per difference of means, and Holm's step-down adjustment of a
 * family of p-values. Both draw from the engine's seeded generator, so a report is reproducible.
 */
import { Draw, seedRng } from '../engine/rng';

/**
 * The two-sided permutation p-value of mean(second) - mean(first): the groups' labels are shuffled
 * among their pooled values `resamples` times, and p = (1 + the shuffles whose |difference| is at
 * least the observed one) / (1 + resamples), which is never 0 and is a valid p-value for a
 * Monte Carlo test (Phipson & Smyth 2010, "Permutation p-values should never be zero", SAGMB 9(1)).
 * It tests the sharp null that the label changes no value: what random assignment of each game to
 * a group justifies, whatever else the games share (Fisher's randomization test; Ernst 2004,
 * "Permutation methods", Statistical Science 19(4)). Null unless both groups have values.
 */
export function permutationPValue(first: readonly number[], second: readonly number[], options: { readonly resamples: number; readonly seed: number }): number | null {
  if (first.length === 0 || second.length === 0) return null;
  const pooled = [...first, ...second];
  const total = pooled.reduce((sum, value) => sum + value, 0);
  const differenceOf = (secondSum: number) => secondSum / second.length - (total - secondSum) / first.length;
  const observed = Math.abs(differenceOf(second.reduce((sum, value) => sum + value, 0)));
  // Sums of whole scores are exact, but the means are not: equal differences may differ in the last bits.
  const atLeastObserved = observed - 1e-9 * Math.max(1, observed);
  const draw = new Draw(seedRng(options.seed));
  let extreme = 0;
  for (let b = 0; b < options.resamples; b++) {
    // A partial Fisher-Yates shuffle: the first second.length places are a uniform draw of the second group.
    let secondSum = 0;
    for (let i = 0; i < second.length; i++) {
      const j = draw.int(i, pooled.length - 1);
      [pooled[i], pooled[j]] = [pooled[j], pooled[i]];
      secondSum += pooled[i];
    }
    if (Math.abs(differenceOf(secondSum)) >= atLeastObserved) extreme++;
  }
  return (1 + extreme) / (1 + options.resamples);
}

/**
 * Holm's step-down adjustment of a family of p-values (Holm 1979, "A simple sequentially rejective
 * multiple test procedure", Scand. J. Statistics 6(2)), in their order: the i-th smallest of m is
 * multiplied by m - i + 1, each kept at least its predecessor's and at most 1. Rejecting where the
 * adjusted p is below alpha keeps the chance of any false rejection in the family at most alpha,
 * with more power than Bonferroni's.
 */
export function holmAdjusted(pValues: readonly number[]): number[] {
  const order = pValues.map((p, index) => ({ p, index })).sort((a, b) => a.p - b.p);
  const adjusted = new Array<number>(pValues.length);
  let running = 0;
  order.forEach(({ p, index }, rank) => {
    running = Math.max(running, Math.min(1, (pValues.length - rank) * p));
    adjusted[index] = running;
  });
  return adjusted;
}
