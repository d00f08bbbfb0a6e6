/**
 * Why a bootstrap interval of a mean says less than it seems to, in words for a report: a bare
 * "0 to 0" reads as certainty when it only means that nothing varied. Shared by the reports that
 * print intervals, so that each says the same of the same values.
 */

/**
 * Below this many values a percentile bootstrap interval is too narrow: the resampled means spread
 * by about sqrt((n - 1) / n) of the mean's standard error, and take few distinct values, so the
 * interval covers the true mean less often than its level says (the percentile interval's
 * "narrowness bias": Hesterberg 2015, "What teachers should know about the bootstrap", The
 * American Statistician 69(4), section 4).
 */
export const MIN_VALUES_FOR_INTERVAL = 10;

/**
 * What to say beside the interval of the mean of `values` (each one a game, or a participant when
 * `unit` says so), or null when nothing needs saying: too few values, and values all equal (every
 * resample then has the same mean, so the interval has no width whatever the values' true spread).
 */
export function intervalWarning(values: readonly number[], unit = 'games'): string | null {
  const problems: string[] = [];
  if (values.length < MIN_VALUES_FOR_INTERVAL) problems.push(`fewer than ${MIN_VALUES_FOR_INTERVAL} ${unit}`);
  if (values.length > 0 && values.every((value) => value === values[0])) problems.push('constant scores: no spread to resample');
  return problems.length === 0 ? null : problems.join('; ');
}
