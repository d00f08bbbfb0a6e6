/**
 * Hex geometry in the original CerealBar's offset "odd-r" coordinates:
 * x is the column, y the row; y grows to the north and odd rows sit half a hex
 * to the east. Headings are the six hex directions, clockwise from north-east.
 */

export const HEADINGS = ['NE', 'E', 'SE', 'SW', 'W', 'NW'] as const;
export type Heading = (typeof HEADINGS)[number];

/** Degrees clockwise from north, as in the original client. */
export const HEADING_DEGREES: Readonly<Record<Heading, number>> = { NE: 30, E: 90, SE: 150, SW: 210, W: 270, NW: 330 };

export interface Cell {
  readonly x: number;
  readonly y: number;
}

export interface Pose extends Cell {
  readonly heading: Heading;
}

type Offset = readonly [dx: number, dy: number];

// The original's neighbour rule: the column offset of a diagonal step depends on the row's parity.
const EVEN_ROW_STEP: Readonly<Record<Heading, Offset>> = {
  NE: [0, 1], E: [1, 0], SE: [0, -1], SW: [-1, -1], W: [-1, 0], NW: [-1, 1],
};
const ODD_ROW_STEP: Readonly<Record<Heading, Offset>> = {
  NE: [1, 1], E: [1, 0], SE: [1, -1], SW: [0, -1], W: [-1, 0], NW: [0, 1],
};

/** The cell one step from `cell` in direction `heading` (it may lie off the map). */
export function stepFrom(cell: Cell, heading: Heading): Cell {
  const [dx, dy] = (cell.y & 1 ? ODD_ROW_STEP : EVEN_ROW_STEP)[heading];
  return { x: cell.x + dx, y: cell.y + dy };
}

const neighbourTables = new Map<string, Int32Array>();

/**
 * For hot loops (planners, generators): `table[i * 6 + d]` is the index of the cell one step from
 * cell `i` (= y * width + x) in `HEADINGS[d]`, or -1 off the map. Built once per map size.
 */
export function neighbourTable(width: number, height: number): Int32Array {
  const key = `${width}x${height}`;
  let table = neighbourTables.get(key);
  if (table) return table;
  table = new Int32Array(width * height * HEADINGS.length);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      HEADINGS.forEach((heading, d) => {
        const next = stepFrom({ x, y }, heading);
        const inside = next.x >= 0 && next.y >= 0 && next.x < width && next.y < height;
        table![(y * width + x) * HEADINGS.length + d] = inside ? next.y * width + next.x : -1;
      });
    }
  }
  neighbourTables.set(key, table);
  return table;
}

/** The six neighbours of a cell, in HEADINGS order (some may lie off the map). */
export function neighbours(cell: Cell): Cell[] {
  return HEADINGS.map((heading) => stepFrom(cell, heading));
}

/** Each heading's position in HEADINGS: a property read, where `indexOf` compares strings (moves use it every step). */
export const HEADING_INDEX: Readonly<Record<Heading, number>> = { NE: 0, E: 1, SE: 2, SW: 3, W: 4, NW: 5 };

/** The heading `turns` sixths of a turn clockwise from each heading. */
function turned(turns: number): Readonly<Record<Heading, Heading>> {
  const table = {} as Record<Heading, Heading>;
  for (const heading of HEADINGS) table[heading] = HEADINGS[(HEADING_INDEX[heading] + turns) % 6];
  return table;
}
const RIGHT_OF = turned(1);
const LEFT_OF = turned(5);
const OPPOSITE_OF = turned(3);

export function rotateRight(heading: Heading): Heading {
  return RIGHT_OF[heading];
}

export function rotateLeft(heading: Heading): Heading {
  return LEFT_OF[heading];
}

export function opposite(heading: Heading): Heading {
  return OPPOSITE_OF[heading];
}

/** Number of rotations (each RL or RR) needed to turn from `from` to `to`: 0 to 3. */
export function rotationDistance(from: Heading, to: Heading): number {
  const d = Math.abs(HEADINGS.indexOf(from) - HEADINGS.indexOf(to));
  return Math.min(d, 6 - d);
}

/** Steps between two cells on an unobstructed hex grid. */
export function hexDistance(a: Cell, b: Cell): number {
  const aq = a.x - (a.y - (a.y & 1)) / 2;
  const bq = b.x - (b.y - (b.y & 1)) / 2;
  const dq = aq - bq;
  const dr = a.y - b.y;
  return (Math.abs(dq) + Math.abs(dr) + Math.abs(dq + dr)) / 2;
}

/** Centre of a cell in units where neighbouring centres are 1 apart; +x east, +z north. */
export function cellCentre(cell: Cell): { x: number; z: number } {
  return { x: cell.x + (cell.y & 1) * 0.5, z: (cell.y * Math.sqrt(3)) / 2 };
}

/** Unit vector (east, north) of a heading. */
export function headingVector(heading: Heading): { x: number; z: number } {
  const radians = (HEADING_DEGREES[heading] * Math.PI) / 180;
  return { x: Math.sin(radians), z: Math.cos(radians) };
}

export function isHeading(value: unknown): value is Heading {
  return typeof value === 'string' && (HEADINGS as readonly string[]).includes(value);
}
