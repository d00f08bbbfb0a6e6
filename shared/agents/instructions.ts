/**
 * Reading a card request out of an instruction's words: "pick up the 2 red stars", "unselect
 * the green cube". Enough for templated instructions and the simplest human ones.
 */
import { COLORS, SHAPES, SHAPE_NAMES, shapeName, type Card, type Color, type Count, type Shape } from '../engine/cards';

export interface CardRequest {
  readonly color?: Color;
  readonly shape?: Shape;
  readonly count?: Count;
  /** False when the instruction asks to unselect. */
  readonly select: boolean;
}

const COUNT_WORDS: Readonly<Record<string, Count>> = { '1': 1, one: 1, single: 1, '2': 2, two: 2, '3': 3, three: 3 };
/** The shapes' names (SHAPE_NAMES), and the engine's (a torus, pluses, cubes) that older instructions use. */
const SHAPE_WORDS: Readonly<Record<string, Shape>> = Object.fromEntries(
  SHAPES.flatMap((shape) => [SHAPE_NAMES[shape].one, SHAPE_NAMES[shape].many, shape, `${shape}s`, `${shape}es`].map((word) => [word, shape])),
);
const UNSELECT_WORDS = new Set(['unselect', 'deselect', 'unpick', 'undo']);

/** The card properties an instruction names, or null when it names none. */
export function readCardRequest(text: string): CardRequest | null {
  const words = text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
  let color: Color | undefined;
  let shape: Shape | undefined;
  let count: Count | undefined;
  for (const word of words) {
    if (!color && (COLORS as readonly string[]).includes(word)) color = word as Color;
    else if (!shape && SHAPE_WORDS[word]) shape = SHAPE_WORDS[word];
    else if (!count && COUNT_WORDS[word]) count = COUNT_WORDS[word];
  }
  if (!color && !shape) return null;
  return { color, shape, count, select: !words.some((word) => UNSELECT_WORDS.has(word)) };
}

/** The cards a request asks for, in words: "card with 2 red stars", "card with red shapes", "card with crosses". */
export function describeCardRequest(request: CardRequest): string {
  const shapes = request.shape ? shapeName(request.shape, request.count ?? 2) : request.count === 1 ? 'shape' : 'shapes';
  return `card with ${[request.count, request.color, shapes].filter((word) => word !== undefined).join(' ')}`;
}

/** Cards that fit a request, preferring those whose selection the request would change. */
export function matchingCards(request: CardRequest, cards: readonly Card[]): Card[] {
  const fits = cards.filter(
    (card) =>
      (!request.color || card.color === request.color) &&
      (!request.shape || card.shape === request.shape) &&
      (!request.count || card.count === request.count),
  );
  const useful = fits.filter((card) => card.selected !== request.select);
  return useful.length > 0 ? useful : fits;
}
