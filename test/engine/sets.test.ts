/** The set checks that placement relies on, against their definition over all triples. */
import fc from 'fast-check';
import { COLORS, COUNTS, SHAPES, allDifferent, hasSetUsing, hasValidSet, type CardFace } from '../../shared/engine/cards';

const face = fc.record({ color: fc.constantFrom(...COLORS), shape: fc.constantFrom(...SHAPES), count: fc.constantFrom(...COUNTS) });

/** Whether some three of `cards` are all different: the definition, every triple checked. */
function someTripleAllDifferent(cards: readonly CardFace[]): boolean {
  for (let i = 0; i < cards.length; i++) {
    for (let j = i + 1; j < cards.length; j++) {
      for (let k = j + 1; k < cards.length; k++) if (allDifferent([cards[i], cards[j], cards[k]])) return true;
    }
  }
  return false;
}

describe('set checks', () => {
  test('hasValidSet finds a set exactly when some three cards are all different', () => {
    fc.assert(fc.property(fc.array(face, { maxLength: 24 }), (cards) => hasValidSet(cards) === someTripleAllDifferent(cards)), { numRuns: 2000 });
  });

  test('a board with added cards holds a set exactly when the board does or hasSetUsing finds one with an added card', () => {
    fc.assert(
      fc.property(fc.array(face, { maxLength: 21 }), fc.array(face, { maxLength: 4 }), (board, added) => {
        expect(hasValidSet(board) || hasSetUsing(added, board)).toBe(someTripleAllDifferent([...board, ...added]));
        // Only sets that use an added card count: a board without one never answers for the added cards.
        if (!someTripleAllDifferent(board)) expect(hasSetUsing(added, board)).toBe(someTripleAllDifferent([...board, ...added]));
      }),
      { numRuns: 3000 },
    );
  });

  test('hasSetUsing ignores a set that lies wholly on the board', () => {
    const board: CardFace[] = [
      { color: 'red', shape: 'star', count: 1 },
      { color: 'blue', shape: 'cube', count: 2 },
      { color: 'green', shape: 'heart', count: 3 },
    ];
    expect(hasValidSet(board)).toBe(true);
    expect(hasSetUsing([{ color: 'red', shape: 'cube', count: 1 }], board)).toBe(false);
    expect(hasSetUsing([{ color: 'pink', shape: 'plus', count: 3 }], board)).toBe(true);
  });
});
