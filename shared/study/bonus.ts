/**
 * What a worker earns: the study's base pay, and a bonus for the points its games scored. One
 * function, used by the worker's pages, the admin page and the bonus sheets, so that every figure
 * a worker sees is the one they are paid.
 */
import type { StudyFile } from './studyFile';

/**
 * The bonus for `points` (the final scores of a worker's games, added up): bonusPerPoint each,
 * rounded to the cent (half a cent up), and at most maxBonus when the study sets one.
 */
export function bonusFor(pay: StudyFile['pay'], points: number): number {
  const cents = Math.round(points * pay.bonusPerPoint * 100 + 1e-9);
  const capped = pay.maxBonus === undefined ? cents : Math.min(cents, Math.round(pay.maxBonus * 100));
  return capped / 100;
}

/** An amount as the bonus sheets write it: two decimals, a dot, no currency sign. */
export function formatAmount(amount: number): string {
  return amount.toFixed(2);
}
