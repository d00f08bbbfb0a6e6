/**
 * A text picture of a map for terminals and logs: north (the highest row) at the top, two
 * characters per cell, odd rows indented by one character because they sit half a hex east.
 */
import type { Cell, Pose } from '../engine/hex';
import type { GameMap, Prop, PropType, TerrainLetter } from '../engine/map';

export interface RenderOverlay {
  leader?: Pose;
  follower?: Pose;
  cards?: readonly (Cell & { selected?: boolean })[];
}

const TERRAIN_SYMBOLS: Readonly<Record<TerrainLetter, string>> = { G: '.', P: '=', W: '~', D: '≈', H: '^' };
const PROP_SYMBOLS: Readonly<Record<PropType, string>> = {
  tree: 'T', hut: 'h', house: 'H', windmill: 'W', tower: 'I', tent: 'A', lamp: 'i', plant: '*',
};
const LEGEND = [
  '. grass  = path  ~ water  ≈ deep water  ^ hill',
  'T tree  h hut  H house  W windmill  I tower  A tent  i lamp  * plant',
  'c card  C selected card  L leader  F follower',
];
/** Width of the row numbers on the left, including the space after them. */
const MARGIN = 3;

/** The parts of a map drawn: a whole map, or a player's known map (its unseen cells, `?`, are drawn as `?`). */
export type DrawnMap = Readonly<Pick<GameMap, 'width' | 'height'>> & { readonly terrain: readonly string[]; readonly props: readonly Prop[] };

export function renderMap(map: DrawnMap, overlay: RenderOverlay = {}): string {
  const symbols = baseSymbols(map);
  const mark = (cell: Cell, symbol: string) => {
    if (cell.x >= 0 && cell.y >= 0 && cell.x < map.width && cell.y < map.height) symbols[cell.y][cell.x] = symbol;
  };
  // Later marks win: a player standing on a card is what matters most.
  for (const card of overlay.cards ?? []) mark(card, card.selected ? 'C' : 'c');
  if (overlay.follower) mark(overlay.follower, 'F');
  if (overlay.leader) mark(overlay.leader, 'L');

  const columns = ' '.repeat(MARGIN) + Array.from({ length: map.width }, (_, x) => x % 10).join(' ');
  const rows: string[] = [];
  for (let y = map.height - 1; y >= 0; y--) {
    rows.push(String(y).padStart(MARGIN - 1) + ' ' + (y & 1 ? ' ' : '') + symbols[y].join(' '));
  }
  return [columns, ...rows, columns, '', ...LEGEND].join('\n');
}

/** Symbols of terrain with props on top, as symbols[y][x]. */
function baseSymbols(map: DrawnMap): string[][] {
  const symbols = map.terrain.map((row) => Array.from(row, (letter) => TERRAIN_SYMBOLS[letter as TerrainLetter] ?? '?'));
  for (const prop of map.props) {
    if (symbols[prop.y]?.[prop.x] !== undefined) symbols[prop.y][prop.x] = PROP_SYMBOLS[prop.type];
  }
  return symbols;
}
