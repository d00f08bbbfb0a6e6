/** Where cards go: drawing new cards on free cells so that the board holds a valid set. */
import { COLORS, COUNTS, SHAPES, SET_SIZE, hasSetUsing, hasValidSet, type Card, type CardFace } from './cards';
import type { Draw } from './rng';
import { cellIndex, inBounds, type World } from './map';

/** Attempts at random faces before the new cards are drawn as a set of their own. */
const RANDOM_ATTEMPTS = 100;

function randomFace(draw: Draw): CardFace {
  return { color: draw.pick(COLORS), shape: draw.pick(SHAPES), count: draw.pick(COUNTS) };
}

/** Three faces that form a set by construction. */
function setFaces(draw: Draw): CardFace[] {
  const colors = draw.shuffled(COLORS);
  const shapes = draw.shuffled(SHAPES);
  const counts = draw.shuffled(COUNTS);
  return [0, 1, 2].map((i) => ({ color: colors[i], shape: shapes[i], count: counts[i] }));
}

/**
 * Draws `count` cards with ids from `firstId` on distinct card cells not in `occupied`, such that
 * `board` plus the new cards holds at least one valid set. Properties are drawn independently
 * (duplicates are possible, as in the original); if that keeps failing, the new cards form a set.
 */
export function drawCards(
  draw: Draw,
  world: World,
  occupied: ReadonlySet<number>,
  count: number,
  firstId: number,
  board: readonly CardFace[],
): Card[] {
  let free = world.cardCells.length;
  for (const index of occupied) free -= world.cardCellMask[index];
  if (free < count) throw new RangeError(`only ${free} free cells for ${count} cards`);
  const cells: number[] = [];
  while (cells.length < count) {
    const index = draw.pick(world.cardCells);
    if (!occupied.has(index) && !cells.includes(index)) cells.push(index);
  }
  let faces: CardFace[] = [];
  // A set on the board stays whatever the new faces are; only without one do they need checking.
  const boardHasSet = hasValidSet(board);
  let valid = false;
  for (let attempt = 0; attempt < RANDOM_ATTEMPTS && !valid; attempt++) {
    faces = cells.map(() => randomFace(draw));
    valid = boardHasSet || hasSetUsing(faces, board);
  }
  if (!valid && count >= SET_SIZE) {
    faces = [...setFaces(draw), ...faces.slice(SET_SIZE)];
  }
  // Every field named in cardWith's order, not a spread, so that these cards share its shape.
  return cells.map((index, i) => ({
    id: firstId + i,
    x: index % world.width,
    y: Math.floor(index / world.width),
    color: faces[i].color,
    shape: faces[i].shape,
    count: faces[i].count,
    selected: false,
  }));
}

/**
 * Why recorded cards could not have been placed by the rules, or null when they could:
 * used when a log from another engine version supplies its own replacement cards.
 */
export function placementProblem(
  world: World,
  occupied: ReadonlySet<number>,
  cards: readonly Card[],
  expectedIds: readonly number[],
  board: readonly CardFace[],
): string | null {
  if (cards.length !== expectedIds.length) return `expected ${expectedIds.length} cards, got ${cards.length}`;
  const used = new Set<number>();
  for (const [i, card] of cards.entries()) {
    if (card.id !== expectedIds[i]) return `card ${i} has id ${card.id}, expected ${expectedIds[i]}`;
    if (card.selected) return `card ${card.id} is selected`;
    const index = cellIndex(world, card);
    if (!inBounds(world, card) || !world.cardCellMask[index]) return `card ${card.id} at (${card.x}, ${card.y}) is not on a reachable inner cell`;
    if (occupied.has(index) || used.has(index)) return `card ${card.id} at (${card.x}, ${card.y}) is on an occupied cell`;
    used.add(index);
  }
  if (!hasValidSet([...board, ...cards])) return 'the board would hold no valid set';
  return null;
}
