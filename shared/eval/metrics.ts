/**
 * Path metrics for instruction following, as defined in the nDTW paper (Ilharco et al. 2019,
 * Table 3 and Appendix A-B): they compare a follower's path Q (the query) with the reference path
 * R, given a distance d between nodes and a success threshold d_th. See docs/metrics.md.
 *
 * Conventions, the same in every function:
 * - A path is the sequence of nodes an agent occupied, starting where it started: never empty.
 * - A path never jumps between unreachable nodes: consecutive nodes at distance Infinity are a
 *   `RangeError` (every step of an agent's path is to a neighbour). A jump would make PL infinite
 *   and SPL or CLS NaN; with it ruled out, only NE, ONE, AD and MD can be infinite.
 * - Consecutive repeated nodes are collapsed first (a rotation or a blocked move keeps the agent on
 *   its cell, but the paper's paths are node sequences). This changes AD, SED, CLS and nDTW, which
 *   count nodes or steps; the other metrics are unaffected by repeats anyway.
 * - d must be zero exactly between a node and itself (it decides what "repeated" means, and which
 *   SED actions match); `GeodesicDistance.between` from ./distance.ts is the one for CerealBar.
 * - Success is judged on the LAST nodes, as in the paper's text and the authors' code:
 *   SR = 1 when d(q_last, r_last) <= d_th. (The paper's Algorithm 2 tests the first nodes: a typo.)
 * - The paper's 0/0 cases are given values, documented on each function.
 */

/** The nodes an agent occupied, in order; at least one. */
export type Path<N> = readonly N[];

/** d(a, b) >= 0, symmetric, 0 exactly when a and b are the same node; Infinity when unreachable. */
export type Distance<N> = (a: N, b: N) => number;

/**
 * d_th for CerealBar, in hex steps: a follower succeeds when it stops on the reference end cell or
 * next to it. The nDTW paper, following Anderson et al. (R2R), sets d_th to 1.33 x the average edge
 * length; edges here are 1 hex and geodesic distances integers, so every d_th in [1, 2) gives the
 * same successes. Zero is not usable as the default: nDTW and CLS divide by d_th. Whether the
 * follower changed the right cards is the game's own outcome, not a path metric; for strict
 * stop-on-the-cell success, call `successRate` with d_th = 0.
 */
export const DEFAULT_SUCCESS_THRESHOLD = 1;

/** The metrics, in the order of the paper's Table 3. */
export const METRIC_NAMES = ['PL', 'NE', 'ONE', 'SR', 'OSR', 'AD', 'MD', 'SPL', 'SED', 'CLS', 'nDTW', 'SDTW'] as const;
export type MetricName = (typeof METRIC_NAMES)[number];

/** Which values are better, for reports. PL has no better direction: ideally it equals PL(R). */
export type MetricDirection = 'higher' | 'lower' | 'neither';

export const METRIC_DIRECTIONS: Readonly<Record<MetricName, MetricDirection>> = {
  PL: 'neither',
  NE: 'lower',
  ONE: 'lower',
  SR: 'higher',
  OSR: 'higher',
  AD: 'lower',
  MD: 'lower',
  SPL: 'higher',
  SED: 'higher',
  CLS: 'higher',
  nDTW: 'higher',
  SDTW: 'higher',
};

/**
 * The path without consecutive repeats (a node equal to the one before it, by d = 0). A jump
 * between unreachable nodes is a `RangeError`: an agent walks.
 */
export function collapseRepeats<N>(path: Path<N>, d: Distance<N>): N[] {
  const nodes = path.slice(0, 1);
  for (let i = 1; i < path.length; i++) {
    const step = d(path[i - 1], path[i]);
    if (!Number.isFinite(step)) throw new RangeError(`a path cannot jump between unreachable nodes: nodes ${i - 1} and ${i} are ${step} apart`);
    if (step !== 0) nodes.push(path[i]);
  }
  return nodes;
}

/** PL(P) = sum of d(p_i, p_i+1) over consecutive nodes. */
export function pathLength<N>(path: Path<N>, d: Distance<N>): number {
  const nodes = nodesOf(path, d);
  let length = 0;
  for (let i = 1; i < nodes.length; i++) length += d(nodes[i - 1], nodes[i]);
  return length;
}

/** NE = d(q_last, r_last). */
export function navigationError<N>(reference: Path<N>, query: Path<N>, d: Distance<N>): number {
  return d(lastOf(nodesOf(query, d)), lastOf(nodesOf(reference, d)));
}

/** ONE = min over q in Q of d(q, r_last): how close the query ever came to the goal. */
export function oracleNavigationError<N>(reference: Path<N>, query: Path<N>, d: Distance<N>): number {
  return distanceToPath(lastOf(nodesOf(reference, d)), nodesOf(query, d), d);
}

/** SR = 1 if NE <= d_th, else 0 (last nodes). d_th = 0 is allowed: stop exactly on r_last. */
export function successRate<N>(reference: Path<N>, query: Path<N>, d: Distance<N>, dTh: number): number {
  requireSuccessThreshold(dTh);
  return navigationError(reference, query, d) <= dTh ? 1 : 0;
}

/** OSR = 1 if ONE <= d_th, else 0. */
export function oracleSuccessRate<N>(reference: Path<N>, query: Path<N>, d: Distance<N>, dTh: number): number {
  requireSuccessThreshold(dTh);
  return oracleNavigationError(reference, query, d) <= dTh ? 1 : 0;
}

/** AD = mean over q in Q of d(q, R), where d(n, P) = min over p in P of d(n, p). */
export function averageDeviation<N>(reference: Path<N>, query: Path<N>, d: Distance<N>): number {
  const referenceNodes = nodesOf(reference, d);
  const deviations = nodesOf(query, d).map((q) => distanceToPath(q, referenceNodes, d));
  return sum(deviations) / deviations.length;
}

/** MD = max over q in Q of d(q, R). */
export function maxDeviation<N>(reference: Path<N>, query: Path<N>, d: Distance<N>): number {
  const referenceNodes = nodesOf(reference, d);
  return Math.max(...nodesOf(query, d).map((q) => distanceToPath(q, referenceNodes, d)));
}

/**
 * SPL = SR * d(q_1, r_last) / max(PL(Q), d(q_1, r_last)).
 * 0/0 (the query starts on r_last and never moves): SPL = SR, since the shortest path to the goal
 * is empty and the agent took exactly it. Infinity / Infinity (no path from q_1 to r_last, yet
 * success: only when d breaks the triangle inequality, as the geodesic d can through an unwalkable
 * endpoint no agent stands on): SPL = 0, there being no shortest path to compare with.
 */
export function successWeightedByPathLength<N>(reference: Path<N>, query: Path<N>, d: Distance<N>, dTh: number): number {
  if (successRate(reference, query, d, dTh) === 0) return 0;
  const shortest = d(nodesOf(query, d)[0], lastOf(nodesOf(reference, d)));
  if (!Number.isFinite(shortest)) return 0;
  const taken = Math.max(pathLength(query, d), shortest);
  return taken === 0 ? 1 : shortest / taken;
}

/**
 * SED = SR * (1 - ED(A_R, A_Q) / max(|A_R|, |A_Q|)), where A_P is the sequence of steps
 * (p_i, p_i+1) of P and ED the Levenshtein distance, two steps matching only when both their
 * nodes are the same. 0/0 (neither path moves): SED = SR, as two empty step sequences are equal.
 */
export function successWeightedByEditDistance<N>(reference: Path<N>, query: Path<N>, d: Distance<N>, dTh: number): number {
  if (successRate(reference, query, d, dTh) === 0) return 0;
  const referenceSteps = stepsOf(nodesOf(reference, d));
  const querySteps = stepsOf(nodesOf(query, d));
  const longest = Math.max(referenceSteps.length, querySteps.length);
  if (longest === 0) return 1;
  const sameStep = (a: Step<N>, b: Step<N>) => d(a[0], b[0]) === 0 && d(a[1], b[1]) === 0;
  return 1 - editDistance(referenceSteps, querySteps, sameStep) / longest;
}

/** PC = mean over r in R of exp(-d(r, Q) / d_th): how well the query covers the reference. */
export function pathCoverage<N>(reference: Path<N>, query: Path<N>, d: Distance<N>, dTh: number): number {
  requireScaleThreshold(dTh);
  const queryNodes = nodesOf(query, d);
  const scores = nodesOf(reference, d).map((r) => Math.exp(-distanceToPath(r, queryNodes, d) / dTh));
  return sum(scores) / scores.length;
}

/**
 * CLS = PC * LS with LS = PC * PL(R) / (PC * PL(R) + |PC * PL(R) - PL(Q)|).
 * 0/0 in LS (PC * PL(R) = 0 and PL(Q) = 0, e.g. neither path moves): LS = 1, the lengths agree.
 */
export function coverageWeightedByLengthScore<N>(reference: Path<N>, query: Path<N>, d: Distance<N>, dTh: number): number {
  const coverage = pathCoverage(reference, query, d, dTh);
  const expectedLength = coverage * pathLength(reference, d);
  const denominator = expectedLength + Math.abs(expectedLength - pathLength(query, d));
  const lengthScore = denominator === 0 ? 1 : expectedLength / denominator;
  return coverage * lengthScore;
}

/**
 * DTW(R, Q) = min over warpings W of the sum of d(r_i, q_j) over (i, j) in W: the paper's
 * Algorithm 1, exact, O(|R| |Q|) time. C[i][j] = DTW(r_1..i, q_1..j) depends only on row i - 1
 * and on C[i][j - 1], so one previous row is kept (O(|Q|) memory).
 */
export function dynamicTimeWarping<N>(reference: Path<N>, query: Path<N>, d: Distance<N>): number {
  const referenceNodes = nodesOf(reference, d);
  const queryNodes = nodesOf(query, d);
  // Row 0: C[0][0] = 0 and C[0][j] = infinity, so every warping starts at (1, 1).
  let previous = new Float64Array(queryNodes.length + 1).fill(Infinity);
  previous[0] = 0;
  for (const r of referenceNodes) {
    const current = new Float64Array(queryNodes.length + 1);
    current[0] = Infinity;
    for (let j = 1; j <= queryNodes.length; j++) {
      current[j] = d(r, queryNodes[j - 1]) + Math.min(previous[j], current[j - 1], previous[j - 1]);
    }
    previous = current;
  }
  return previous[queryNodes.length];
}

/** nDTW = exp(-DTW(R, Q) / (|R| * d_th)), in (0, 1] for reachable paths; 1 exactly when Q = R once repeats are collapsed. */
export function normalizedDynamicTimeWarping<N>(reference: Path<N>, query: Path<N>, d: Distance<N>, dTh: number): number {
  requireScaleThreshold(dTh);
  const referenceSize = nodesOf(reference, d).length;
  return Math.exp(-dynamicTimeWarping(reference, query, d) / (referenceSize * dTh));
}

/** SDTW = SR * nDTW (SR on the last nodes). */
export function successWeightedByDtw<N>(reference: Path<N>, query: Path<N>, d: Distance<N>, dTh: number): number {
  requireScaleThreshold(dTh);
  if (successRate(reference, query, d, dTh) === 0) return 0;
  return normalizedDynamicTimeWarping(reference, query, d, dTh);
}

/** Every metric of Table 3 for one (reference, query) pair. d_th must be positive (nDTW, CLS). */
export function pathMetrics<N>(reference: Path<N>, query: Path<N>, d: Distance<N>, dTh: number): Record<MetricName, number> {
  return {
    PL: pathLength(query, d),
    NE: navigationError(reference, query, d),
    ONE: oracleNavigationError(reference, query, d),
    SR: successRate(reference, query, d, dTh),
    OSR: oracleSuccessRate(reference, query, d, dTh),
    AD: averageDeviation(reference, query, d),
    MD: maxDeviation(reference, query, d),
    SPL: successWeightedByPathLength(reference, query, d, dTh),
    SED: successWeightedByEditDistance(reference, query, d, dTh),
    CLS: coverageWeightedByLengthScore(reference, query, d, dTh),
    nDTW: normalizedDynamicTimeWarping(reference, query, d, dTh),
    SDTW: successWeightedByDtw(reference, query, d, dTh),
  };
}

/** One move of a path: from a node to the next. */
type Step<N> = readonly [from: N, to: N];

function stepsOf<N>(nodes: readonly N[]): Step<N>[] {
  return nodes.slice(1).map((to, i) => [nodes[i], to] as const);
}

/** Levenshtein distance: the fewest insertions, deletions and substitutions turning a into b. */
function editDistance<T>(a: readonly T[], b: readonly T[], same: (x: T, y: T) => boolean): number {
  // previous[j] = distance between a[0..i-1) and b[0..j); starts as the empty prefix of a.
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1] + (same(a[i - 1], b[j - 1]) ? 0 : 1);
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length];
}

/** d(n, P) = min over p in P of d(n, p). */
function distanceToPath<N>(node: N, path: readonly N[], d: Distance<N>): number {
  return Math.min(...path.map((p) => d(node, p)));
}

/** Validates the path (never empty: an agent is always somewhere) and collapses its repeats. */
function nodesOf<N>(path: Path<N>, d: Distance<N>): N[] {
  if (path.length === 0) throw new RangeError('a path needs at least one node: where the agent starts');
  return collapseRepeats(path, d);
}

function lastOf<N>(nodes: readonly N[]): N {
  return nodes[nodes.length - 1];
}

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

/** Success compares d <= d_th, so 0 (stop exactly on r_last) is a valid threshold. */
function requireSuccessThreshold(dTh: number): void {
  if (!(Number.isFinite(dTh) && dTh >= 0)) throw new RangeError(`d_th must be a finite number >= 0, got ${dTh}`);
}

/** nDTW and CLS divide distances by d_th, so it must be positive there. */
function requireScaleThreshold(dTh: number): void {
  if (!(Number.isFinite(dTh) && dTh > 0)) throw new RangeError(`d_th must be a finite number > 0 for nDTW, CLS and SDTW, got ${dTh}`);
}
