/**
 * Numbers on the study's pages, in words: money (Intl.NumberFormat, in the study's currency), the
 * pay a study offers, what a worker has earned, and the clock of the wait for a partner. The pages
 * are in English, so amounts are too (£4.50, $4.50, €4.50).
 */
import type { PublicStudy } from '../../../shared/study/studyFile';
import type { PublicWorker } from '../../../shared/study/worker';

const LOCALE = 'en';

export function formatMoney(amount: number, currency: string): string {
  return new Intl.NumberFormat(LOCALE, { style: 'currency', currency }).format(amount);
}

/** "£4.50 for taking part, plus £0.10 for each point your team scores (at most £3.00 more)." */
export function payText(pay: PublicStudy['pay']): string {
  const base = `${formatMoney(pay.base, pay.currency)} for taking part`;
  if (pay.bonusPerPoint <= 0) return `${base}.`;
  const cap = pay.maxBonus === undefined ? '' : ` (at most ${formatMoney(pay.maxBonus, pay.currency)} more)`;
  return `${base}, plus a bonus of ${formatMoney(pay.bonusPerPoint, pay.currency)} for each point your team scores${cap}.`;
}

/** The base pay, the bonus so far and their sum, each formatted. */
export function earningsLines(earnings: PublicWorker['earnings']): { base: string; bonus: string; total: string } {
  const { base, bonus, currency } = earnings;
  return { base: formatMoney(base, currency), bonus: formatMoney(bonus, currency), total: formatMoney(base + bonus, currency) };
}

/** Whole seconds as m:ss ("4:05"); never below 0:00. */
export function formatClock(seconds: number): string {
  const whole = Math.max(0, Math.ceil(seconds));
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, '0')}`;
}

/** "5 minutes", "1 minute", "90 seconds": how long the wait for a partner lasts, in words. */
export function durationText(seconds: number): string {
  if (seconds % 60 !== 0) return `${seconds} seconds`;
  const minutes = seconds / 60;
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}
