/**
 * Reading an instruction's words: the card it asks for ("pick up the 2 red stars", "unselect the
 * green cube") and where it says the card is ("4 hexes ahead, slightly to the right"). Enough for
 * templated instructions and the simplest human ones.
 */
import { COLORS, SHAPES, SHAPE_NAMES, shapeName, type Card, type Color, type Count, type Shape } from '../engine/cards';
import { hexDistance, type Cell, type Pose } from '../engine/hex';
import { relativeBearing } from './language';

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

/** Number words for distances and repeats; "once" and "twice" only make sense as repeats. */
export const NUMBER_WORDS: Readonly<Record<string, number>> = {
  one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10, once: 1, twice: 2,
};

/** "3 hexes", "two steps", "a hex": how far a place is. */
const DISTANCE = new RegExp(
  String.raw`\b(\d+|a|an|${Object.keys(NUMBER_WORDS).join('|')})\s+(?:more\s+)?(?:hex(?:es|agons?)?|steps?|spaces?|tiles?|cells?|squares?)\b`,
);
const DISTANCES = new RegExp(DISTANCE.source, 'g');

/** The card properties an instruction names, or null when it names none. */
export function readCardRequest(text: string): CardRequest | null {
  // A distance ("3 hexes ahead") is not the card's count.
  const words = text.toLowerCase().replace(DISTANCES, ' ').match(/[a-z0-9]+/g) ?? [];
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

/**
 * Where an instruction says its card is, from where the follower stands when it reads it: "4
 * hexes ahead, slightly to the right", "turn around and get the green heart: 3 hexes behind you".
 */
export interface PlaceHint {
  /** Hexes away; absent when the text gives only a direction ("the red star on your left"). */
  readonly distance?: number;
  /** Degrees clockwise from the reader's heading, in (-180, 180]: negative is to the left. */
  readonly bearing: number;
}

const UNDERFOOT = /\b(?:where you stand|(?:you are|you're) standing on|under (?:you|your feet)|right here)\b/;
/** "behind you", "behind, to the left", "turn around": not "behind the tree", which says where from another thing. */
const BEHIND = /\bbehind\b(?!\s+(?:the|a|an|that|this|those|these|it)\b)|\bturn(?:ing)?\s+around\b|\bat your back\b|\b(?:back|rear)[\s-]+(?:left|right)\b/;
const AHEAD = /\bahead\b|\bin front\b|\bfront[\s-]+(?:left|right)\b|\bforward\b|\bstraight\b/;
/** "left" or "right" as a side: not the "right" of "right here", "right behind you", "right in front". */
const SIDE = /\b(left|right)\b(?!\s+(?:here|there|in|behind|ahead|next|by|at|where|away|now|beside|under|on|up|before|after)\b)/g;
const SLIGHTLY = /\bslight(?:ly)?\b|\ba (?:little|bit|touch)\b|\bsomewhat\b/;

/**
 * The place an instruction gives for its card, or null when it gives none. It reads the words of
 * the relative-position helpers of language.ts (straight ahead, ahead slightly to one side, ahead
 * to one side, to one side, behind to one side, behind slightly to one side, behind: 0, 30, 60, 90,
 * 120, 150 and 180 degrees) and the common ways people say them ("a little to your right", "on your
 * left", "turn around", "2 steps ahead"). Of several sides named, the last counts.
 */
export function readPlaceHint(text: string): PlaceHint | null {
  const lower = text.toLowerCase();
  if (UNDERFOOT.test(lower)) return { distance: 0, bearing: 0 };
  const sides = [...lower.matchAll(SIDE)];
  const side = sides.length === 0 ? 0 : sides[sides.length - 1][1] === 'left' ? -1 : 1;
  const behind = BEHIND.test(lower);
  const ahead = AHEAD.test(lower);
  if (!side && !behind && !ahead) return null;
  const slightly = SLIGHTLY.test(lower);
  const bearing = !side ? (behind ? 180 : 0) : side * (behind ? (slightly ? 150 : 120) : ahead || slightly ? (slightly ? 30 : 60) : 90);
  const distance = readDistance(lower);
  return distance === undefined ? { bearing } : { distance, bearing };
}

function readDistance(lower: string): number | undefined {
  const word = DISTANCE.exec(lower)?.[1];
  if (word === undefined) return undefined;
  if (word === 'a' || word === 'an') return 1;
  return /^\d+$/.test(word) ? Number(word) : NUMBER_WORDS[word];
}

/**
 * The cell a hint points at from `pose`: of the cells on the map `distance` hexes away, the one
 * whose bearing is nearest the hint's (ties by row, then column). Null when none is on the map.
 */
export function hintedCell(pose: Pose, hint: Required<PlaceHint>, map: { readonly width: number; readonly height: number }): Cell | null {
  if (hint.distance === 0) return { x: pose.x, y: pose.y };
  let best: { cell: Cell; off: number } | null = null;
  for (let y = Math.max(0, pose.y - hint.distance); y <= Math.min(map.height - 1, pose.y + hint.distance); y++) {
    for (let x = Math.max(0, pose.x - hint.distance - 1); x <= Math.min(map.width - 1, pose.x + hint.distance + 1); x++) {
      const cell = { x, y };
      if (hexDistance(pose, cell) !== hint.distance) continue;
      const off = angleBetween(relativeBearing(pose, cell), hint.bearing);
      if (!best || off < best.off) best = { cell, off };
    }
  }
  return best?.cell ?? null;
}

function angleBetween(a: number, b: number): number {
  const apart = Math.abs(a - b) % 360;
  return apart > 180 ? 360 - apart : apart;
}
