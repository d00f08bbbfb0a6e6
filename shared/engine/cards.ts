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

/** Number of cards in a valid set. */
export const SET_SIZE = 3;

/** True when no two faces share a colour, a shape or a count. */
export function allDifferent(faces: readonly CardFace[]): boolean {
  for (let i = 0; i < faces.length; i++) {
    for (let j = i + 1; j < faces.length; j++) {
      const a = faces[i];
      const b = faces[j];
      if (a.color === b.color || a.shape === b.shape || a.count === b.count) return false;
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
      if (!allDifferent([cards[i], cards[j]])) continue;
      for (let k = j + 1; k < n; k++) {
        if (allDifferent([cards[i], cards[j], cards[k]])) return true;
      }
    }
  }
  return false;
}

const PLURAL_SHAPES: Readonly<Record<Shape, string>> = {
  torus: 'toruses', plus: 'pluses', star: 'stars', cube: 'cubes', heart: 'hearts', diamond: 'diamonds', triangle: 'triangles',
};

/** "1 red star", "3 blue toruses". */
export function describeCard(face: CardFace): string {
  return `${face.count} ${face.color} ${face.count > 1 ? PLURAL_SHAPES[face.shape] : face.shape}`;
}
