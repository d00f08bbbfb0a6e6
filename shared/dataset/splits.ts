/**
 * Train, validation and test splits by game, with similar mean scores: the paper "ensured the mean
 * score between the three splits was roughly the same". Games are ordered by score (ties in an
 * order drawn from the seed), then dealt out one by one to the split furthest below its share so
 * far, so that every split takes games from all along the score range.
 */
import { Draw, seedRng } from '../engine/rng';

/** Hugging Face's split names; "validation" is the paper's development set. */
export const SPLITS = ['train', 'validation', 'test'] as const;
export type Split = (typeof SPLITS)[number];

export interface SplitOptions {
  /** Each split's share of the games, in SPLITS order; they sum to 1. */
  readonly fractions: readonly [number, number, number];
  /** Orders games of equal score; the same seed and games give the same splits. */
  readonly seed: number;
}

export const DEFAULT_SPLITS: SplitOptions = { fractions: [0.8, 0.1, 0.1], seed: 0 };

export function assignSplits(games: readonly { readonly game_id: string; readonly score: number }[], options: SplitOptions): Map<string, Split> {
  const { fractions } = options;
  if (fractions.some((fraction) => !(fraction >= 0)) || Math.abs(fractions.reduce((a, b) => a + b, 0) - 1) > 1e-9) {
    throw new RangeError(`split fractions must be 3 numbers of at least 0 that sum to 1, got ${fractions.join(', ')}`);
  }
  const byId = [...games].sort((a, b) => (a.game_id < b.game_id ? -1 : a.game_id > b.game_id ? 1 : 0));
  const ordered = new Draw(seedRng(options.seed)).shuffled(byId).sort((a, b) => a.score - b.score);
  const counts = [0, 0, 0];
  const splits = new Map<string, Split>();
  ordered.forEach((game, dealt) => {
    // The split whose count is furthest below its share of the games dealt so far, this one included.
    let best = 0;
    for (let i = 1; i < SPLITS.length; i++) {
      if (fractions[i] * (dealt + 1) - counts[i] > fractions[best] * (dealt + 1) - counts[best]) best = i;
    }
    counts[best]++;
    splits.set(game.game_id, SPLITS[best]);
  });
  return splits;
}
