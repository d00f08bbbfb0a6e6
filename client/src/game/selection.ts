/** The selected cards in words, and why a selection cannot make a set: a cue that does not rest on colour. */
import { describeCard, SET_SIZE, type Card, type CardFace } from '../../../shared/engine/cards';

/** "Selected: 1 red star, 2 blue hearts", and why they cannot make a set; null with none selected. */
export function selectionText(cards: readonly Card[], invalid: readonly number[]): string | null {
  const selected = cards.filter((card) => card.selected);
  if (selected.length === 0) return null;
  const listed = `Selected: ${selected.map(describeCard).join(', ')}.`;
  if (!selected.some((card) => invalid.includes(card.id))) return listed;
  return `${listed} These cannot make a set: ${clash(selected)}. Step on one again to unselect it.`;
}

/** What two selected cards share (a set is three cards of different colours, shapes and counts). */
function clash(selected: readonly CardFace[]): string {
  if (selected.length > SET_SIZE) return `a set is ${SET_SIZE} cards`;
  const shared = (['color', 'shape', 'count'] as const).filter((key) => new Set(selected.map((card) => card[key])).size < selected.length);
  const words = { color: 'colour', shape: 'shape', count: 'number' } as const;
  return `two share a ${shared.map((key) => words[key]).join(' and a ')}`;
}
