/** The selected cards in words: what a player who cannot tell the colours apart reads instead. */
import type { Card } from '../../shared/engine/cards';
import { selectionText } from '../../client/src/game/selection';

let nextId = 0;
const card = (color: Card['color'], shape: Card['shape'], count: Card['count'], selected = true): Card => ({ id: nextId++, x: 0, y: 0, color, shape, count, selected });

test('nothing selected says nothing', () => {
  expect(selectionText([card('red', 'star', 1, false)], [])).toBeNull();
});

test('a selection that can still make a set is listed', () => {
  const cards = [card('red', 'star', 1), card('blue', 'heart', 2), card('green', 'cube', 3, false)];
  expect(selectionText(cards, [])).toBe('Selected: 1 red star, 2 blue hearts.');
});

test('a selection that cannot make a set says what its cards share and how to undo it', () => {
  const red = [card('red', 'star', 1), card('red', 'heart', 2)];
  expect(selectionText(red, red.map((c) => c.id))).toBe(
    'Selected: 1 red star, 2 red hearts. These cannot make a set: two share a colour. Step on one again to unselect it.',
  );
  const twins = [card('blue', 'cube', 2), card('blue', 'cube', 1)];
  expect(selectionText(twins, twins.map((c) => c.id))).toContain('two share a colour and a shape.');
  const four = [card('red', 'star', 1), card('blue', 'heart', 2), card('green', 'cube', 3), card('pink', 'plus', 1)];
  expect(selectionText(four, four.map((c) => c.id))).toContain('These cannot make a set: a set is 3 cards.');
});
