/**
 * The percentile bootstrap of a mean when the values come in clusters (each participant's games):
 * whole clusters are resampled with replacement, as many as there are, and a resample's mean is
 * over every value of the clusters drawn (a cluster drawn twice counts twice). One person's games
 * are alike (their skill, their patience), so they are not independent draws: resampling games
 * treats them as such, and its interval is too narrow when they are alike; resampling clusters
 * keeps that likeness in every resample (Davison & Hinkley 1997, "Bootstrap Methods and their
 * Application", section 3.8; Field & Welsh 2007, "Bootstrapping clustered data", JRSS B 69(3)).
 * The ends are read off as bootstrap.ts's are, from the engine's seeded generator.
 */
import { Draw, seedRng } from '../engine/rng';
import { percentileInterval, type BootstrapOptions, type Interval } from './bootstrap';

/** A cluster's values in each group compared: one group for a mean, two for a difference. */
type Cluster = readonly (readonly number[])[];

/**
 * Each resample's mean per group, over the clusters drawn. A resample that leaves a group with no
 * value has no mean there and is drawn again: the resamples are those in which both groups were seen.
 */
function resampledGroupMeans(clusters: readonly Cluster[], groups: number, options: BootstrapOptions): number[][] {
  const totals = clusters.map((cluster) => cluster.map((values) => ({ sum: values.reduce((sum, value) => sum + value, 0), count: values.length })));
  const draw = new Draw(seedRng(options.seed));
  const last = clusters.length - 1;
  const means: number[][] = [];
  while (means.length < options.resamples) {
    const sums = new Array<number>(groups).fill(0);
    const counts = new Array<number>(groups).fill(0);
    for (let i = 0; i <= last; i++) {
      const cluster = totals[draw.int(0, last)];
      for (let group = 0; group < groups; group++) {
        sums[group] += cluster[group].sum;
        counts[group] += cluster[group].count;
      }
    }
    if (counts.every((count) => count > 0)) means.push(sums.map((sum, group) => sum / counts[group]));
  }
  return means;
}

const hasValues = (clusters: readonly Cluster[], group: number) => clusters.some((cluster) => cluster[group].length > 0);

/** The cluster bootstrap interval of the mean of every value of `clusters` (each cluster its values); null when there are none. */
export function clusterBootstrapInterval(clusters: readonly (readonly number[])[], options: BootstrapOptions): Interval | null {
  const asGroups = clusters.map((values) => [values]);
  if (!hasValues(asGroups, 0)) return null;
  const means = resampledGroupMeans(asGroups, 1, options).map(([mean]) => mean);
  return percentileInterval(means.sort((a, b) => a - b), options.level);
}

/**
 * The cluster bootstrap interval of mean(second) - mean(first), where a cluster may have values in
 * both (a participant who played both arms): each resample draws the clusters once, for both
 * groups, so that what a person brings to both is kept together. Null unless both groups have values.
 */
export function clusterDifferenceInterval(clusters: readonly { readonly first: readonly number[]; readonly second: readonly number[] }[], options: BootstrapOptions): Interval | null {
  const asGroups = clusters.map((cluster) => [cluster.first, cluster.second]);
  if (!hasValues(asGroups, 0) || !hasValues(asGroups, 1)) return null;
  const differences = resampledGroupMeans(asGroups, 2, options).map(([first, second]) => second - first);
  return percentileInterval(differences.sort((a, b) => a - b), options.level);
}
