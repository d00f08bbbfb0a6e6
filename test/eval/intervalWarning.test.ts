/** The warning a report prints beside an interval of a mean: too few values, or no spread to resample. */
import { bootstrapInterval } from '../../shared/eval/bootstrap';
import { intervalWarning, MIN_VALUES_FOR_INTERVAL } from '../../shared/eval/intervalWarning';

const spread = [0, 3, 1, 7, 2, 2, 5, 0, 4, 9, 1, 3];

test('no warning for ten or more values that vary', () => {
  expect(MIN_VALUES_FOR_INTERVAL).toBe(10);
  expect(intervalWarning(spread)).toBeNull();
  expect(intervalWarning(spread.slice(0, 10))).toBeNull();
});

test('fewer than ten values: said with the unit counted', () => {
  expect(intervalWarning(spread.slice(0, 9))).toBe('fewer than 10 games');
  expect(intervalWarning([], 'games')).toBe('fewer than 10 games');
  expect(intervalWarning([1, 2, 3], 'participants')).toBe('fewer than 10 participants');
});

test('values all equal: the bare "0 to 0" the interval gives is named for what it is', () => {
  const constant = Array.from({ length: 12 }, () => 0);
  expect(bootstrapInterval(constant, { resamples: 500, seed: 1, level: 0.95 })).toEqual({ low: 0, high: 0 });
  expect(intervalWarning(constant)).toBe('constant scores: no spread to resample');
  expect(intervalWarning([2, 2, 2])).toBe('fewer than 10 games; constant scores: no spread to resample');
});
