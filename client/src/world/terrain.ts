/**
 * The ground: one hex prism per cell, drawn as one instanced mesh per terrain, with faint outlines
 * on walkable cells so that steps can be counted from above.
 */
import {
  BufferGeometry,
  Color,
  CylinderGeometry,
  Float32BufferAttribute,
  Group,
  InstancedMesh,
  LineBasicMaterial,
  LineSegments,
  Matrix4,
  MeshStandardMaterial,
} from 'three';
import { neighbours, type Cell } from '../../../shared/engine/hex';
import { inBounds, TERRAIN_LETTERS, type Terrain, type TerrainLetter } from '../../../shared/engine/map';
import type { KnownMap } from '../../../shared/engine/playerView';
import { cellNoise, cellPosition, HEX_RADIUS, surfaceHeight } from './layout';

const TERRAIN_COLOURS: Readonly<Record<Terrain, string>> = {
  grass: '#7fbf4d',
  path: '#d9b77a',
  water: '#4fa3d9',
  deep_water: '#2a6fb0',
  hill: '#9c8a5a',
};

/**
 * The materials are made once and shared by every ground built: the ground is built again each time
 * the follower sees more, and a material made anew each time had its shader program released and
 * compiled again (about a quarter of a second a time in software WebGL).
 */
const terrainMaterials = new Map<Terrain, MeshStandardMaterial>();
function terrainMaterial(terrain: Terrain): MeshStandardMaterial {
  let material = terrainMaterials.get(terrain);
  if (!material) terrainMaterials.set(terrain, (material = new MeshStandardMaterial({ flatShading: true, roughness: terrain.includes('water') ? 0.35 : 0.95 })));
  return material;
}
const OUTLINE_MATERIAL = new LineBasicMaterial({ color: '#2d4a1e', transparent: true, opacity: 0.18 });

/** Prisms reach down to here, so that cells of different heights show their sides. */
const BASE = -0.8;

/** Number of hill cells around a cell, which raises hills towards their middle. */
export function hillNeighbours(map: KnownMap, cell: Cell): number {
  return neighbours(cell).filter((n) => inBounds(map, n) && knownTerrain(map, n) === 'hill').length;
}

/** The terrain of a cell, or null for one the player has not seen (drawn as nothing). */
export function knownTerrain(map: KnownMap, cell: Cell): Terrain | null {
  return TERRAIN_LETTERS[map.terrain[cell.y][cell.x] as TerrainLetter] ?? null;
}

/** The ground height of every cell, indexed y * width + x. */
export function cellHeights(map: KnownMap): Float32Array {
  const heights = new Float32Array(map.width * map.height);
  for (let y = 0; y < map.height; y++) {
    for (let x = 0; x < map.width; x++) {
      const terrain = knownTerrain(map, { x, y });
      heights[y * map.width + x] = terrain ? surfaceHeight(terrain, hillNeighbours(map, { x, y })) : 0;
    }
  }
  return heights;
}

export function buildTerrain(map: KnownMap, heights: Float32Array): Group {
  const group = new Group();
  group.name = 'terrain';
  const prism = new CylinderGeometry(HEX_RADIUS, HEX_RADIUS, 1, 6, 1);
  const byTerrain = new Map<Terrain, Cell[]>();
  for (let y = 0; y < map.height; y++) {
    for (let x = 0; x < map.width; x++) {
      const terrain = knownTerrain(map, { x, y });
      if (terrain) byTerrain.set(terrain, [...(byTerrain.get(terrain) ?? []), { x, y }]);
    }
  }
  const matrix = new Matrix4();
  const colour = new Color();
  for (const [terrain, cells] of byTerrain) {
    const mesh = new InstancedMesh(prism, terrainMaterial(terrain), cells.length);
    mesh.name = terrain;
    cells.forEach((cell, i) => {
      const top = heights[cell.y * map.width + cell.x];
      const position = cellPosition(cell, (top + BASE) / 2);
      matrix.makeScale(1, top - BASE, 1).setPosition(position);
      mesh.setMatrixAt(i, matrix);
      // A little variation per cell keeps large fields from looking flat.
      colour.set(TERRAIN_COLOURS[terrain]).offsetHSL(0, 0, (cellNoise(cell) - 0.5) * 0.06);
      mesh.setColorAt(i, colour);
    });
    group.add(mesh);
  }
  group.add(walkableOutlines(map, heights));
  return group;
}

function walkableOutlines(map: KnownMap, heights: Float32Array): LineSegments {
  const props = new Set(map.props.map((prop) => prop.y * map.width + prop.x));
  const points: number[] = [];
  for (let y = 0; y < map.height; y++) {
    for (let x = 0; x < map.width; x++) {
      const terrain = knownTerrain(map, { x, y });
      if ((terrain !== 'grass' && terrain !== 'path') || props.has(y * map.width + x)) continue;
      const centre = cellPosition({ x, y }, heights[y * map.width + x] + 0.004);
      for (let corner = 0; corner < 6; corner++) {
        for (const c of [corner, (corner + 1) % 6]) {
          const angle = (c * Math.PI) / 3;
          points.push(centre.x + HEX_RADIUS * Math.sin(angle), centre.y, centre.z + HEX_RADIUS * Math.cos(angle));
        }
      }
    }
  }
  const geometry = new BufferGeometry();
  geometry.setAttribute('position', new Float32BufferAttribute(points, 3));
  const lines = new LineSegments(geometry, OUTLINE_MATERIAL);
  lines.name = 'outlines';
  return lines;
}
