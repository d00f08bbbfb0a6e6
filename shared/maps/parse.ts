/**
 * Reading map files: JSON, then the format (mapSchema), then what the schema cannot see on its
 * own: whether the fixed start poses and cards stand on walkable cells the players can reach.
 * Every problem becomes one line naming the file and the field, for people editing maps by hand.
 */
import type { z } from 'zod';
import { TERRAIN_LETTERS, buildWorld, cellIndex, inBounds, mapSchema, type GameMap, type TerrainLetter } from '../engine/map';
import type { Cell } from '../engine/hex';
import { ROLES } from '../engine/state';

export class MapFormatError extends Error {
  override name = 'MapFormatError';

  constructor(
    readonly source: string,
    readonly problem: string,
  ) {
    super(`${source}: ${problem}`);
  }
}

/** Parses and checks a map file's text; `source` (usually the path) starts every error message. */
export function parseMapText(text: string, source: string): GameMap {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new MapFormatError(source, `not JSON: ${oneLine((error as Error).message)}`);
  }
  const parsed = mapSchema.safeParse(data);
  if (!parsed.success) {
    const [first, ...rest] = parsed.error.issues;
    const more = rest.length > 0 ? ` (and ${rest.length} more problem${rest.length > 1 ? 's' : ''})` : '';
    throw new MapFormatError(source, describeIssue(first, data) + more);
  }
  const problem = mapProblem(parsed.data);
  if (problem) throw new MapFormatError(source, problem);
  return parsed.data;
}

/**
 * The first reason why a map that fits the schema cannot hold a game with its fixed start poses
 * and cards, or null. Maps without them are left to the game, which draws both in the play region.
 */
export function mapProblem(map: GameMap): string | null {
  const placed: { field: string; cell: Cell }[] = [];
  if (map.spawn) for (const role of ROLES) placed.push({ field: `spawn.${role}`, cell: map.spawn[role] });
  (map.cards ?? []).forEach((card, i) => placed.push({ field: `cards.${i}`, cell: card }));
  for (const { field, cell } of placed) {
    const problem = footingProblem(map, cell);
    if (problem) return `${field}: ${problem}`;
  }
  return reachProblem(map);
}

/** Why a player or a card cannot stand on `cell`, or null. */
function footingProblem(map: GameMap, cell: Cell): string | null {
  const where = `(${cell.x}, ${cell.y})`;
  if (!inBounds(map, cell)) return `${where} is off the ${map.width}x${map.height} map`;
  const prop = map.props.find((p) => p.x === cell.x && p.y === cell.y);
  if (prop) return `${where} is on a ${prop.type}, not walkable`;
  const letter = map.terrain[cell.y][cell.x] as TerrainLetter;
  if (letter !== 'G' && letter !== 'P') return `${where} is on ${TERRAIN_LETTERS[letter].replace('_', ' ')}, not walkable`;
  return null;
}

/** Checks, on walkable cells, that the follower and the cards are where the game can use them. */
function reachProblem(map: GameMap): string | null {
  const world = buildWorld(map);
  if (map.spawn && !world.region[cellIndex(world, map.spawn.follower)]) {
    const { x, y } = map.spawn.follower;
    return `spawn.follower: (${x}, ${y}) cannot be reached from the leader's start`;
  }
  const cardCells = new Set(world.cardCells);
  const taken = new Map<number, string>();
  if (map.spawn) for (const role of ROLES) taken.set(cellIndex(world, map.spawn[role]), `the ${role}'s start`);
  for (const [i, card] of (map.cards ?? []).entries()) {
    const index = cellIndex(world, card);
    const where = `cards.${i}: (${card.x}, ${card.y})`;
    if (card.x === 0 || card.y === 0 || card.x === map.width - 1 || card.y === map.height - 1) return `${where} is on the map's edge`;
    if (!cardCells.has(index)) {
      return `${where} ${map.spawn ? "cannot be reached from the leader's start" : 'is not in the largest walkable area'}`;
    }
    if (taken.has(index)) return `${where} is on ${taken.get(index)}`;
    taken.set(index, `the cell of cards.${i}`);
  }
  return null;
}

/** One zod issue as `path: message`, with the details zod leaves out where they help. */
function describeIssue(issue: z.core.$ZodIssue, data: unknown): string {
  const path = issue.path.join('.');
  let message = issue.message;
  if (issue.code === 'invalid_format' && issue.path[0] === 'terrain') {
    message = `${badLetter(data, issue.path[1])}; ${message}`;
  } else if (issue.code === 'invalid_union') {
    // A union of literals (the card count) reports only "Invalid input"; list what it accepts.
    const accepted = issue.errors.flat().flatMap((sub) => (sub.code === 'invalid_value' ? sub.values : []));
    if (accepted.length > 0) message = `expected one of ${accepted.map((v) => JSON.stringify(v)).join('|')}`;
  }
  return path ? `${path}: ${message}` : message;
}

/** Where the first letter outside G P W D H is in terrain row `y` of the raw data. */
function badLetter(data: unknown, y: PropertyKey | undefined): string {
  const letters = Array.from((data as { terrain: string[] }).terrain[Number(y)]);
  const x = letters.findIndex((letter) => !Object.hasOwn(TERRAIN_LETTERS, letter));
  return `row ${String(y)} has ${JSON.stringify(letters[x])} at column ${x}`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
