/** Numbers on a study's pages: money in the study's currency, the pay offered and earned, and the wait's clock. */
import { durationText, earningsLines, formatClock, formatMoney, payText } from '../../client/src/study/format';

test('amounts in the currency, with its own decimals', () => {
  expect(formatMoney(4.5, 'GBP')).toBe('£4.50');
  expect(formatMoney(4.5, 'USD')).toBe('$4.50');
  expect(formatMoney(0.1, 'EUR')).toBe('€0.10');
  expect(formatMoney(300, 'JPY')).toBe('¥300');
  expect(formatMoney(1234.5, 'USD')).toBe('$1,234.50');
});

test('the pay offered, with the bonus and its cap when there are', () => {
  expect(payText({ base: 4.5, bonusPerPoint: 0, currency: 'GBP' })).toBe('£4.50 for taking part.');
  expect(payText({ base: 4.5, bonusPerPoint: 0.1, currency: 'GBP' })).toBe('£4.50 for taking part, plus a bonus of £0.10 for each point your team scores.');
  expect(payText({ base: 2, bonusPerPoint: 0.05, maxBonus: 1, currency: 'USD' })).toBe(
    '$2.00 for taking part, plus a bonus of $0.05 for each point your team scores (at most $1.00 more).',
  );
});

test('the earnings: base, bonus and total, without binary fractions showing', () => {
  expect(earningsLines({ base: 0.1, bonus: 0.2, currency: 'GBP' })).toEqual({ base: '£0.10', bonus: '£0.20', total: '£0.30' });
});

test("the wait's clock counts down whole seconds and stops at 0:00", () => {
  expect(formatClock(300)).toBe('5:00');
  expect(formatClock(64.2)).toBe('1:05');
  expect(formatClock(9)).toBe('0:09');
  expect(formatClock(-3)).toBe('0:00');
});

test('durations in words', () => {
  expect(durationText(300)).toBe('5 minutes');
  expect(durationText(60)).toBe('1 minute');
  expect(durationText(90)).toBe('90 seconds');
});
