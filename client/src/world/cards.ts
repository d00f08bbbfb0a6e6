/**
 * Cards on the ground: a white card with one to three shapes of one colour, outlined blue when
 * selected and red when the leader's selection cannot make a set. A set flashes before its cards
 * vanish, and new cards grow in.
 */
import {
  BoxGeometry,
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
import type { Card, Color, Shape as CardShape } from '../../../shared/engine/cards';
import { cellPosition } from './layout';

export const CARD_COLOURS: Readonly<Record<Color, string>> = {
  orange: '#ff8a1f',
  black: '#1d1d1f',
  blue: '#1f5cff',
  yellow: '#ffd21a',
  pink: '#ff6fcf',
  red: '#e0201b',
  green: '#1fa83a',
};

export const SELECTED_COLOUR = '#1e6bff';
export const INVALID_COLOUR = '#ff2a2a';
const FLASH_COLOUR = '#fff27a';

// As large as a cell allows, so that shape and count read from the leader's height.
const SHAPE_SIZE = 0.25;
const SHAPE_DEPTH = 0.07;

function extruded(points: [number, number][] | ((shape: Shape) => void)): BufferGeometry {
  const shape = new Shape();
  if (typeof points === 'function') points(shape);
  else shape.setFromPoints(points.map(([x, y]) => ({ x, y }) as never));
  const geometry = new ExtrudeGeometry(shape, { depth: SHAPE_DEPTH, bevelEnabled: false });
  // Lie flat, the shape's "up" pointing north.
  geometry.rotateX(-Math.PI / 2);
  geometry.center();
  geometry.translate(0, SHAPE_DEPTH / 2, 0);
  return geometry;
}

function starPoints(spikes: number, outer: number, inner: number): [number, number][] {
  return Array.from({ length: spikes * 2 }, (_, i) => {
    const r = i % 2 === 0 ? outer : inner;
    const a = (i * Math.PI) / spikes;
    return [r * Math.sin(a), r * Math.cos(a)];
  });
}

const s = SHAPE_SIZE / 2;
const SHAPE_BUILDERS: Readonly<Record<CardShape, () => BufferGeometry>> = {
  torus: () => {
    const geometry = new TorusGeometry(s * 0.68, s * 0.3, 8, 20);
    geometry.rotateX(Math.PI / 2);
    geometry.translate(0, s * 0.3, 0);
    return geometry;
  },
  plus: () => {
    const w = s * 0.36;
    return extruded([[-w, s], [w, s], [w, w], [s, w], [s, -w], [w, -w], [w, -s], [-w, -s], [-w, -w], [-s, -w], [-s, w], [-w, w]]);
  },
  star: () => extruded(starPoints(5, s * 1.1, s * 0.45)),
  cube: () => {
    const geometry = new BoxGeometry(s * 1.4, s * 1.4, s * 1.4);
    geometry.translate(0, s * 0.7, 0);
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
    const geometry = new OctahedronGeometry(s * 1.05, 0);
    geometry.scale(0.75, 0.5, 1.1);
    geometry.translate(0, s * 0.5, 0);
    return geometry;
  },
  triangle: () => extruded([[0, s * 1.05], [s * 1.05, -s * 0.8], [-s * 1.05, -s * 0.8]]),
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

const CARD_WIDTH = 0.88;
const CARD_DEPTH = 0.56;
const plateGeometry = new BoxGeometry(CARD_WIDTH, 0.03, CARD_DEPTH);
const outlineGeometry = new BoxGeometry(CARD_WIDTH + 0.12, 0.02, CARD_DEPTH + 0.12);
const plateMaterial = new MeshStandardMaterial({ color: '#f7f3ea', roughness: 0.8 });
const SHAPE_SPACING = 0.29;

export type CardMark = 'none' | 'selected' | 'invalid' | 'flash';
const MARK_COLOURS: Readonly<Record<Exclude<CardMark, 'none'>, string>> = { selected: SELECTED_COLOUR, invalid: INVALID_COLOUR, flash: FLASH_COLOUR };

/** One card's meshes; `mark` switches the outline. */
export class CardModel {
  readonly group = new Group();
  private readonly outline: Mesh;
  private readonly outlineMaterial = new MeshBasicMaterial({ color: SELECTED_COLOUR });

  constructor(readonly card: Card, groundHeight: number) {
    this.group.name = `card:${card.id}`;
    this.group.position.copy(cellPosition(card, groundHeight));
    this.outline = new Mesh(outlineGeometry, this.outlineMaterial);
    this.outline.position.y = 0.01;
    this.outline.visible = false;
    const plate = new Mesh(plateGeometry, plateMaterial);
    plate.position.y = 0.025;
    this.group.add(this.outline, plate);
    for (let i = 0; i < card.count; i++) {
      const shape = new Mesh(shapeGeometry(card.shape), colourMaterial(card.color));
      shape.position.set((i - (card.count - 1) / 2) * SHAPE_SPACING, 0.04, 0);
      this.group.add(shape);
    }
  }

  setMark(mark: CardMark): void {
    this.outline.visible = mark !== 'none';
    if (mark !== 'none') this.outlineMaterial.color.set(MARK_COLOURS[mark]);
  }

  dispose(): void {
    this.outlineMaterial.dispose();
  }
}
