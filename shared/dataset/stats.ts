/**
 * The statistics of the CerealBar paper's Table 3 for any set of games: score, instructions and
 * completed instructions per game, tokens and follower actions per instruction (mean, median,
 * max), the number of games and the vocabulary size.
 *
 * Tokens as the paper counts them, lowercased words of NLTK's word tokenizer, approximated here by
 * its two steps: sentences split at `.`, `!` or `?` followed by a space (NLTK uses the Punkt model),
 * then the Penn Treebank word tokenizer (talisman's port of the rules NLTK starts from).
 */
import treebank from 'talisman/tokenizers/words/treebank';
import type { GameRecords } from './records';

export interface Summary {
  readonly mean: number;
  readonly median: number;
  readonly max: number;
}

export interface DatasetStats {
  readonly games: number;
  readonly instructions: number;
  readonly completed_instructions: number;
  readonly score: Summary;
  readonly instructions_per_game: Summary;
  readonly completed_instructions_per_game: Summary;
  readonly tokens_per_instruction: Summary;
  /** Over the instructions the follower completed: its moves for each (DONE not counted). */
  readonly follower_actions_per_instruction: Summary;
  /** Distinct lowercased tokens over every instruction. */
  readonly vocabulary_size: number;
  /** The share of games with a score above 0. */
  readonly games_with_points: number;
  /** Games by rules profile. */
  readonly profiles: Readonly<Record<string, number>>;
}

export function tokenize(text: string): string[] {
  return text
    .toLowerCase()
    .split(/(?<=[.!?])\s+/)
    .flatMap((sentence) => treebank(sentence));
}

export function summarize(values: readonly number[]): Summary {
  if (values.length === 0) return { mean: 0, median: 0, max: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
  return { mean: sorted.reduce((sum, value) => sum + value, 0) / sorted.length, median, max: sorted[sorted.length - 1] };
}

export function datasetStats(games: readonly GameRecords[]): DatasetStats {
  const instructions = games.flatMap((game) => game.instructions);
  const completed = instructions.filter((instruction) => instruction.completed);
  const vocabulary = new Set<string>();
  const tokenCounts = instructions.map((instruction) => {
    const tokens = tokenize(instruction.text);
    for (const token of tokens) vocabulary.add(token);
    return tokens.length;
  });
  const profiles: Record<string, number> = {};
  for (const { game } of games) profiles[game.profile] = (profiles[game.profile] ?? 0) + 1;
  return {
    games: games.length,
    instructions: instructions.length,
    completed_instructions: completed.length,
    score: summarize(games.map(({ game }) => game.score)),
    instructions_per_game: summarize(games.map(({ game }) => game.num_instructions)),
    completed_instructions_per_game: summarize(games.map(({ game }) => game.num_completed)),
    tokens_per_instruction: summarize(tokenCounts),
    follower_actions_per_instruction: summarize(completed.map((instruction) => instruction.num_actions)),
    vocabulary_size: vocabulary.size,
    games_with_points: games.length === 0 ? 0 : games.filter(({ game }) => game.score > 0).length / games.length,
    profiles,
  };
}
