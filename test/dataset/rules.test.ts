/** The pruning rules, the score-balanced splits and the Table 3 statistics. */
import fc from 'fast-check';
import { loadRecording } from '../../shared/eval/recording';
import { DEFAULT_PRUNING, prunedBy } from '../../shared/dataset/pruning';
import { recordsOf, type GameRecords } from '../../shared/dataset/records';
import { assignSplits, SPLITS } from '../../shared/dataset/splits';
import { datasetStats, summarize, tokenize } from '../../shared/dataset/stats';
import { cutLog, logText, selfPlayLines } from './corpus';

const whole = recordsOf(loadRecording(logText(selfPlayLines(3))));

/** A game whose records claim `completed` of `written` instructions done (the pruning looks only at records). */
function withCounts(written: number, completed: number): GameRecords {
  return { game: { ...whole.game, num_instructions: written, num_completed: completed }, instructions: whole.instructions.map((record) => ({ ...record, num_actions: 3 })) };
}

describe('pruning', () => {
  test('a whole self-play game is kept by every rule', () => {
    expect(prunedBy(whole, DEFAULT_PRUNING)).toBeNull();
  });

  test('no-completed-instruction: a game cut before the first DONE', () => {
    const cut = recordsOf(loadRecording(cutLog(3, 6)));
    expect(cut.game.num_completed).toBe(0);
    expect(prunedBy(cut, DEFAULT_PRUNING)).toBe('no-completed-instruction');
  });

  test('low-completion-rate: under the share given, by the first rule that applies', () => {
    expect(prunedBy(withCounts(10, 4), DEFAULT_PRUNING)).toBe('low-completion-rate');
    expect(prunedBy(withCounts(10, 5), DEFAULT_PRUNING)).toBeNull();
    expect(prunedBy(withCounts(10, 5), { ...DEFAULT_PRUNING, minCompletionRate: 0.6 })).toBe('low-completion-rate');
    expect(prunedBy(withCounts(10, 0), DEFAULT_PRUNING)).toBe('no-completed-instruction');
  });

  test('long-action-sequence: an instruction with more follower moves than the limit', () => {
    const longest = Math.max(...whole.instructions.map((record) => record.num_actions));
    expect(prunedBy(whole, { ...DEFAULT_PRUNING, maxActionsPerInstruction: longest })).toBeNull();
    expect(prunedBy(whole, { ...DEFAULT_PRUNING, maxActionsPerInstruction: longest - 1 })).toBe('long-action-sequence');
  });

  test('only the rules asked for apply', () => {
    expect(prunedBy(withCounts(10, 0), { ...DEFAULT_PRUNING, rules: [] })).toBeNull();
    expect(prunedBy(withCounts(10, 0), { ...DEFAULT_PRUNING, rules: ['long-action-sequence'] })).toBeNull();
  });
});

describe('splits', () => {
  const games = (scores: readonly number[]) => scores.map((score, i) => ({ game_id: `game-${i}`, score }));

  test('every game in one split, each split within one game of its share, the same for the same seed', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 20 }), { minLength: 1, maxLength: 200 }), fc.integer({ min: 0, max: 1000 }), (scores, seed) => {
        const fractions = [0.8, 0.1, 0.1] as const;
        const splits = assignSplits(games(scores), { fractions, seed });
        expect(splits.size).toBe(scores.length);
        SPLITS.forEach((split, i) => {
          const count = [...splits.values()].filter((s) => s === split).length;
          expect(Math.abs(count - fractions[i] * scores.length)).toBeLessThan(1 + 1e-9);
        });
        expect(assignSplits([...games(scores)].reverse(), { fractions, seed })).toEqual(splits);
      }),
    );
  });

  test('mean scores are close across splits, even with scores spread wide', () => {
    const scores = Array.from({ length: 300 }, (_, i) => (i * 7919) % 23);
    const splits = assignSplits(games(scores), { fractions: [0.8, 0.1, 0.1], seed: 4 });
    const mean = (split: string) => {
      const inSplit = scores.filter((_, i) => splits.get(`game-${i}`) === split);
      return inSplit.reduce((a, b) => a + b, 0) / inSplit.length;
    };
    const overall = scores.reduce((a, b) => a + b, 0) / scores.length;
    for (const split of SPLITS) expect(Math.abs(mean(split) - overall)).toBeLessThan(0.5);
  });

  test('bad fractions are refused', () => {
    expect(() => assignSplits(games([1]), { fractions: [0.5, 0.5, 0.5], seed: 0 })).toThrow(/sum to 1/);
    expect(() => assignSplits(games([1]), { fractions: [1.2, -0.1, -0.1], seed: 0 })).toThrow(/at least 0/);
  });
});

describe('statistics', () => {
  test('tokens: lowercased words and punctuation of the Treebank rules, sentences split first', () => {
    expect(tokenize("Pick up the 3 red stars, then don't move.")).toEqual(['pick', 'up', 'the', '3', 'red', 'stars', ',', 'then', 'do', "n't", 'move', '.']);
    expect(tokenize('Go left. Then stop!')).toEqual(['go', 'left', '.', 'then', 'stop', '!']);
  });

  test('summaries: mean, median (the middle two averaged) and max', () => {
    expect(summarize([3, 1, 2])).toEqual({ mean: 2, median: 2, max: 3 });
    expect(summarize([4, 1, 2, 3])).toEqual({ mean: 2.5, median: 2.5, max: 4 });
    expect(summarize([])).toEqual({ mean: 0, median: 0, max: 0 });
  });

  test("Table 3's figures of a set of games", () => {
    const cut = recordsOf(loadRecording(cutLog(3, 6)));
    const stats = datasetStats([whole, cut]);
    expect(stats.games).toBe(2);
    expect(stats.instructions).toBe(whole.instructions.length + cut.instructions.length);
    expect(stats.completed_instructions).toBe(whole.game.num_completed);
    expect(stats.score).toEqual(summarize([whole.game.score, 0]));
    expect(stats.games_with_points).toBe(0.5);
    // Over completed instructions only: the one the game ended on is left out.
    expect(stats.follower_actions_per_instruction).toEqual(summarize(whole.instructions.filter((record) => record.completed).map((record) => record.num_actions)));
    const vocabulary = new Set([...whole.instructions, ...cut.instructions].flatMap((record) => tokenize(record.text)));
    expect(stats.vocabulary_size).toBe(vocabulary.size);
    expect(stats.profiles).toEqual({ cerealbar: 2 });
  });
});
