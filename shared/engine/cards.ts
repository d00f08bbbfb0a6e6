/** Card properties and the rules of sets. */

export const COLORS = ['orange', 'black', 'blue', 'yellow', 'pink', 'red', 'green'] as const;
export const SHAPES = ['torus', 'plus', 'star', 'cube', 'heart', 'diamond', 'triangle'] as const;
export const COUNTS = [1, 2, 3] as const;
export type Color = (typeof COLORS)[number];
export type Shape = (typeof SHAPES)[number];
export type Count = (typeof COUNTS)[number];

export interface CardFace {
  readonly color: Color;
  readonly shape: Shape;
  readonly count: Count;
}

export interface Card extends CardFace {
  readonly id: number;
  readonly x: number;
  readonly y: number;
  readonly selected: boolean;
}

/**
 * `card` with `selected` as given, every field named in one order. The engine builds every card of
 * a state by a literal of this shape (drawCards too), so that all cards share one hidden class:
 * cards spread from others or parsed from logs came in several, and that made each read slow.
 */
export function cardWith(card: Card, selected: boolean): Card {
  return { id: card.id, x: card.x, y: card.y, color: card.color, shape: card.shape, count: card.count, selected };
}

/** Number of cards in a valid set. */
export const SET_SIZE = 3;

/** True when two faces share no colour, shape or count. */
function compatible(a: CardFace, b: CardFace): boolean {
  // Counts first: with three counts against seven colours and shapes, they differ least often.
  return a.count !== b.count && a.color !== b.color && a.shape !== b.shape;
}

/** True when no two faces share a colour, a shape or a count. */
export function allDifferent(faces: readonly CardFace[]): boolean {
  for (let i = 0; i < faces.length; i++) {
    for (let j = i + 1; j < faces.length; j++) {
      if (!compatible(faces[i], faces[j])) return false;
    }
  }
  return true;
}

/** A valid set: exactly three cards whose colours, shapes and counts are all different. */
export function isValidSet(faces: readonly CardFace[]): boolean {
  return faces.length === SET_SIZE && allDifferent(faces);
}

/**
 * A selection the leader sees marked red: three or more selected cards that are not a set,
 * or any repeated property among the selected cards (so it can never grow into a set).
 */
export function isInvalidSelection(selected: readonly CardFace[]): boolean {
  return selected.length > SET_SIZE || !allDifferent(selected);
}

/** True when some three cards of the board form a valid set. */
export function hasValidSet(cards: readonly CardFace[]): boolean {
  const n = cards.length;
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      if (!compatible(cards[i], cards[j])) continue;
      for (let k = j + 1; k < n; k++) {
        if (compatible(cards[i], cards[k]) && compatible(cards[j], cards[k])) return true;
      }
    }
  }
  return false;
}

/**
 * True when some valid set of `board` and `added` together holds at least one card of `added`:
 * with `hasValidSet(board)`, whether the board with the added cards holds a set, without checking
 * the board's own triples again for each candidate.
 */
export function hasSetUsing(added: readonly CardFace[], board: readonly CardFace[]): boolean {
  for (let a = 0; a < added.length; a++) {
    const first = added[a];
    // A set whose first added card is `first` takes its other two from the board and the added cards after it.
    const others = board.length + added.length - a - 1;
    for (let i = 0; i < others; i++) {
      const second = i < board.length ? board[i] : added[a + 1 + i - board.length];
      if (!compatible(first, second)) continue;
      for (let j = i + 1; j < others; j++) {
        const third = j < board.length ? board[j] : added[a + 1 + j - board.length];
        if (compatible(first, third) && compatible(second, third)) return true;
      }
    }
  }
  return false;
}

/**
 * Each shape's name in words, one and several, wherever a person or a model reads it (the pages,
 * the replay, the text observation, the scripted leader's instructions, the rules and the quiz):
 * what the cards draw (a ring is a circle, a plus a cross). The values of
 * SHAPES are the logs' and the maps' and never change.
 */
export const SHAPE_NAMES: Readonly<Record<Shape, { readonly one: string; readonly many: string }>> = {
  torus: { one: 'circle', many: 'circles' },
  plus: { one: 'cross', many: 'crosses' },
  star: { one: 'star', many: 'stars' },
  cube: { one: 'cube', many: 'cubes' },
  heart: { one: 'heart', many: 'hearts' },
  diamond: { one: 'diamond', many: 'diamonds' },
  triangle: { one: 'triangle', many: 'triangles' },
};

/** "star" for one, "stars" for more. */
export function shapeName(shape: Shape, count: number): string {
  return count === 1 ? SHAPE_NAMES[shape].one : SHAPE_NAMES[shape].many;
}

/** "1 red star", "3 blue circles". */
export function describeCard(face: CardFace): string {
  return `${face.count} ${face.color} ${shapeName(face.shape, face.count)}`;
}
