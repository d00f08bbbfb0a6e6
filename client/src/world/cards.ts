/**
 * Cards on the ground: a round white card with one to three shapes of one colour, ringed blue when
 * selected and red when the leader's selection cannot make a set. A set flashes before its cards
 * vanish, and new cards grow in.
 */
import {
  BoxGeometry,
  CylinderGeometry,
  ExtrudeGeometry,
  Group,
  Mesh,
  MeshBasicMaterial,
  MeshStandardMaterial,
  OctahedronGeometry,
  Shape,
  TorusGeometry,
  type BufferGeometry,
} from 'three';
import type { Card, Color, Count, Shape as CardShape } from '../../../shared/engine/cards';
import { cellPosition } from './layout';

export const CARD_COLOURS: Readonly<Record<Color, string>> = {
  orange: '#ff8a1f',
  // Charcoal rather than black, so that its faces' shading and the black rim show where one symbol ends.
  black: '#3a3c42',
  blue: '#1f5cff',
  yellow: '#ffd21a',
  pink: '#ff6fcf',
  red: '#e0201b',
  green: '#1fa83a',
};

export const SELECTED_COLOUR = '#1e6bff';
export const INVALID_COLOUR = '#ff2a2a';
const FLASH_COLOUR = '#fff27a';

/**
 * Every symbol is about SYMBOL_SIZE across (the diamond a little taller, the star and the heart a
 * little wider), as large as three fit on a card: at 1280x800 the leader's overview draws a cell
 * about 30 px wide, so a symbol is at least 12 px, where the outlines of a star, a cross and a
 * diamond still differ. Each has a dark rim, so that a yellow one shows on the white card, and the
 * shapes differ by outline, not colour alone.
 */
const SYMBOL_SIZE = 0.42;
const SYMBOL_DEPTH = 0.06;
/** The dark rim around each symbol: a copy this much wider, under it. */
const RIM_SCALE = 1.2;
const RIM_COLOUR = '#08090b';

function extruded(points: [number, number][] | ((shape: Shape) => void)): BufferGeometry {
  const shape = new Shape();
  if (typeof points === 'function') points(shape);
  else shape.setFromPoints(points.map(([x, y]) => ({ x, y }) as never));
  const geometry = new ExtrudeGeometry(shape, { depth: SYMBOL_DEPTH, bevelEnabled: false });
  // Lie flat, the shape's "up" pointing north.
  geometry.rotateX(-Math.PI / 2);
  geometry.center();
  geometry.translate(0, SYMBOL_DEPTH / 2, 0);
  return geometry;
}

function starPoints(spikes: number, outer: number, inner: number): [number, number][] {
  return Array.from({ length: spikes * 2 }, (_, i) => {
    const r = i % 2 === 0 ? outer : inner;
    const a = (i * Math.PI) / spikes;
    return [r * Math.sin(a), r * Math.cos(a)];
  });
}

const s = SYMBOL_SIZE / 2;
/**
 * Seen from above: a ring, a cross, a five-pointed star, a cube on its corner (a hexagon of three
 * shaded faces), a heart, a rhombus taller than wide, a triangle pointing north.
 */
const SHAPE_BUILDERS: Readonly<Record<CardShape, () => BufferGeometry>> = {
  torus: () => {
    const geometry = new TorusGeometry(s * 0.66, s * 0.34, 8, 24);
    geometry.rotateX(Math.PI / 2);
    geometry.translate(0, s * 0.34, 0);
    return geometry;
  },
  plus: () => {
    const w = s * 0.38;
    return extruded([[-w, s], [w, s], [w, w], [s, w], [s, -w], [w, -w], [w, -s], [-w, -s], [-w, -w], [-s, -w], [-s, w], [-w, w]]);
  },
  star: () => extruded(starPoints(5, s * 1.08, s * 0.48)),
  cube: () => {
    // Standing on a corner, as a cube is drawn on paper: from above a hexagon of three shaded
    // faces, SYMBOL_SIZE across its flats, which three fit on a card (three squares that size do not).
    const edge = SYMBOL_SIZE / Math.SQRT2;
    const geometry = new BoxGeometry(edge, edge, edge);
    geometry.rotateY(Math.PI / 4);
    geometry.rotateZ(Math.atan(Math.SQRT2));
    geometry.rotateY(Math.PI / 6);
    // Half as tall, so that it does not hide the one behind it when seen at an angle.
    geometry.scale(1, 0.5, 1);
    geometry.translate(0, (edge * Math.sqrt(3)) / 4, 0);
    return geometry;
  },
  heart: () =>
    extruded((shape) => {
      shape.moveTo(0, -s);
      shape.bezierCurveTo(-s * 0.2, -s * 0.7, -s * 1.1, -s * 0.1, -s * 1.0, s * 0.4);
      shape.bezierCurveTo(-s * 0.9, s * 1.0, -s * 0.15, s * 1.05, 0, s * 0.45);
      shape.bezierCurveTo(s * 0.15, s * 1.05, s * 0.9, s * 1.0, s * 1.0, s * 0.4);
      shape.bezierCurveTo(s * 1.1, -s * 0.1, s * 0.2, -s * 0.7, 0, -s);
    }),
  diamond: () => {
    const geometry = new OctahedronGeometry(s, 0);
    geometry.scale(1, 0.6, 1.25);
    geometry.translate(0, s * 0.6, 0);
    return geometry;
  },
  triangle: () => extruded([[0, s * 1.05], [s * 1.1, -s * 0.85], [-s * 1.1, -s * 0.85]]),
};

const shapeGeometries = new Map<CardShape, BufferGeometry>();
function shapeGeometry(shape: CardShape): BufferGeometry {
  let geometry = shapeGeometries.get(shape);
  if (!geometry) shapeGeometries.set(shape, (geometry = SHAPE_BUILDERS[shape]()));
  return geometry;
}

const colourMaterials = new Map<Color, MeshStandardMaterial>();
function colourMaterial(colour: Color): MeshStandardMaterial {
  let m = colourMaterials.get(colour);
  if (!m) colourMaterials.set(colour, (m = new MeshStandardMaterial({ color: CARD_COLOURS[colour], roughness: 0.5, flatShading: true })));
  return m;
}
const rimMaterial = new MeshBasicMaterial({ color: RIM_COLOUR });

/** A round white card with a dark edge, as wide as a cell allows; the mark is a wider ring under it. */
const CARD_RADIUS = 0.47;
const EDGE_RADIUS = 0.5;
const MARK_RADIUS = 0.6;
const CARD_TOP = 0.06;
const plateGeometry = new CylinderGeometry(CARD_RADIUS, CARD_RADIUS, CARD_TOP, 40).translate(0, CARD_TOP / 2, 0);
const edgeGeometry = new CylinderGeometry(EDGE_RADIUS, EDGE_RADIUS, CARD_TOP - 0.01, 40).translate(0, (CARD_TOP - 0.01) / 2, 0);
const markGeometry = new CylinderGeometry(MARK_RADIUS, MARK_RADIUS, 0.03, 40).translate(0, 0.015, 0);
const plateMaterial = new MeshStandardMaterial({ color: '#f7f3ea', roughness: 0.8 });

/**
 * Where a card's symbols sit (x east, z south of its centre), like a die's pips: one in the
 * middle, two side by side, three in a triangle, so that the count reads from the pattern too.
 */
const GAP = SYMBOL_SIZE + 0.04;
const SYMBOL_PLACES: Readonly<Record<Count, readonly (readonly [number, number])[]>> = {
  1: [[0, 0]],
  // A pair has room for a wider gap than a triangle.
  2: [[-GAP / 2 - 0.02, 0], [GAP / 2 + 0.02, 0]],
  3: [[0, -GAP / Math.sqrt(3)], [-GAP / 2, GAP / (2 * Math.sqrt(3))], [GAP / 2, GAP / (2 * Math.sqrt(3))]],
};

export type CardMark = 'none' | 'selected' | 'invalid' | 'flash';
const MARK_COLOURS: Readonly<Record<Exclude<CardMark, 'none'>, string>> = { selected: SELECTED_COLOUR, invalid: INVALID_COLOUR, flash: FLASH_COLOUR };

/** One card's meshes; `mark` switches the ring around it. */
export class CardModel {
  /** Whether this model draws `card` standing at `groundHeight` (its mark aside). */
  draws(card: Card, groundHeight: number): boolean {
    const { x, y, color, shape, count } = this.card;
    return card.x === x && card.y === y && card.color === color && card.shape === shape && card.count === count && groundHeight === this.groundHeight;
  }

  readonly group = new Group();
  /** The coloured symbols (not their rims). */
  readonly symbols: Mesh[] = [];
  private readonly mark: Mesh;
  private readonly markMaterial = new MeshBasicMaterial({ color: SELECTED_COLOUR });

  constructor(
    readonly card: Card,
    readonly groundHeight: number,
  ) {
    this.group.name = `card:${card.id}`;
    this.group.position.copy(cellPosition(card, groundHeight));
    this.mark = new Mesh(markGeometry, this.markMaterial);
    this.mark.visible = false;
    this.group.add(this.mark, new Mesh(edgeGeometry, rimMaterial), new Mesh(plateGeometry, plateMaterial));
    const geometry = shapeGeometry(card.shape);
    for (const [x, z] of SYMBOL_PLACES[card.count]) {
      const rim = new Mesh(geometry, rimMaterial);
      rim.scale.set(RIM_SCALE, 0.5, RIM_SCALE);
      rim.position.set(x, CARD_TOP, z);
      const symbol = new Mesh(geometry, colourMaterial(card.color));
      symbol.position.set(x, CARD_TOP + 0.005, z);
      this.symbols.push(symbol);
      this.group.add(rim, symbol);
    }
  }

  setMark(mark: CardMark): void {
    this.mark.visible = mark !== 'none';
    if (mark !== 'none') this.markMaterial.color.set(MARK_COLOURS[mark]);
  }

  dispose(): void {
    this.markMaterial.dispose();
  }
}
