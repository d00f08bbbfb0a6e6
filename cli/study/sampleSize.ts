/**
 * How many games per arm a study needs, from a pilot's games: the normal-approximation sample size
 * for a difference of two means, inflated by the design effect of participants' games being alike.
 * docs/study-arms.md ("How many games") gives the formula and a worked example.
 */

/** Power the report plans for: the usual 80%. */
export const PLANNED_POWER = 0.8;

/**
 * The standard normal quantile: the z with P(Z <= z) = p, by Acklam's rational approximation
 * (relative error below 1.2e-9, which no sample size can feel).
 */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`a normal quantile needs 0 < p < 1, not ${p}`);
  const a = [-39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [-0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const tail = (q: number) => (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  if (p < 0.02425) return tail(Math.sqrt(-2 * Math.log(p)));
  if (p > 1 - 0.02425) return -tail(Math.sqrt(-2 * Math.log(1 - p)));
  const q = p - 0.5;
  const r = q * q;
  return ((((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q) / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

/** z(1 - alpha/2) + z(power): a two-sided test at `alpha` with that power. */
const zSum = (alpha: number, power: number) => normalQuantile(1 - alpha / 2) + normalQuantile(power);

/**
 * Games per arm to find a true difference `difference` in mean score with a two-sided test at
 * `alpha` and the given power, when a game's score has standard deviation `sd` and participants'
 * games bring a design effect `designEffect`: n = 2 (z(1 - alpha/2) + z(power))^2 sd^2 deff / difference^2,
 * rounded up (Chow, Shao & Wang 2008, "Sample Size Calculations in Clinical Research", 3.2.1;
 * Donner & Klar 2000, "Design and Analysis of Cluster Randomization Trials", ch. 5).
 */
export function gamesPerArm(difference: number, sd: number, designEffect: number, alpha: number, power = PLANNED_POWER): number {
  return Math.ceil((2 * zSum(alpha, power) ** 2 * sd ** 2 * designEffect) / difference ** 2);
}

/** The smallest true difference `games` per arm find at `power`: the same formula solved for the difference. */
export function detectableDifference(games: number, sd: number, designEffect: number, alpha: number, power = PLANNED_POWER): number {
  return zSum(alpha, power) * sd * Math.sqrt((2 * designEffect) / games);
}

/** Each arm's scores, one list per participant who played it. */
export type ArmClusters = readonly (readonly number[])[];

const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);

/** What a pilot's games say of a score's spread within an arm and of how alike one participant's games are. */
export interface PilotVariance {
  /** The pooled within-arm standard deviation of a game's score: sqrt(sum over arms of squared deviations from the arm's mean / (games - arms)). */
  readonly sd: number | null;
  /** Games per participant in an arm, on average (games over participant-arm pairs). */
  readonly gamesPerParticipant: number | null;
  /**
   * The intraclass correlation of one participant's games in an arm: the share of a score's
   * variance that lies between participants, by one-way analysis of variance with participants
   * nested in arms (the unbalanced estimator, Donner 1986, "A review of inference procedures for
   * the intraclass correlation coefficient", Int. Stat. Review 54(1)), at least 0. Null when no
   * participant played two games of an arm, or no arm had two participants.
   */
  readonly icc: number | null;
  /**
   * Kish's design effect 1 + (m - 1) icc, m the games per participant (Kish 1965, "Survey
   * Sampling"): by how much participants' likeness inflates the variance of an arm's mean. 1 when
   * every participant played one game of an arm; null when the icc cannot be estimated otherwise.
   */
  readonly designEffect: number | null;
}

/** The pilot's spread and likeness, from each arm's scores by participant (arms or participants with no game add nothing). */
export function pilotVariance(arms: readonly ArmClusters[]): PilotVariance {
  const cells = arms.map((arm) => arm.filter((games) => games.length > 0)).filter((arm) => arm.length > 0);
  const games = sum(cells.map((arm) => sum(arm.map((cell) => cell.length))));
  const clusters = sum(cells.map((arm) => arm.length));
  if (games === 0) return { sd: null, gamesPerParticipant: null, icc: null, designEffect: null };
  let within = 0; // squared deviations from each participant's mean in the arm
  let between = 0; // each participant's games times the squared deviation of its mean from the arm's
  let sizeSquares = 0; // sum over arms of sum(n_i^2) / N_arm
  let armDeviations = 0; // squared deviations from each arm's mean
  for (const arm of cells) {
    const armGames = sum(arm.map((cell) => cell.length));
    const armMean = sum(arm.map(sum)) / armGames;
    sizeSquares += sum(arm.map((cell) => cell.length ** 2)) / armGames;
    for (const cell of arm) {
      const cellMean = sum(cell) / cell.length;
      within += sum(cell.map((score) => (score - cellMean) ** 2));
      between += cell.length * (cellMean - armMean) ** 2;
      armDeviations += sum(cell.map((score) => (score - armMean) ** 2));
    }
  }
  const sd = games > cells.length ? Math.sqrt(armDeviations / (games - cells.length)) : null;
  const gamesPerParticipant = games / clusters;
  const betweenDf = clusters - cells.length;
  const withinDf = games - clusters;
  let icc: number | null = null;
  if (betweenDf > 0 && withinDf > 0) {
    const msb = between / betweenDf;
    const msw = within / withinDf;
    const n0 = (games - sizeSquares) / betweenDf;
    const denominator = msb + (n0 - 1) * msw;
    if (denominator > 0) icc = Math.min(1, Math.max(0, (msb - msw) / denominator));
  }
  const designEffect = gamesPerParticipant === 1 ? 1 : icc === null ? null : 1 + (gamesPerParticipant - 1) * icc;
  return { sd, gamesPerParticipant, icc, designEffect };
}
