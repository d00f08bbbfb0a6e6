/**
 * Where things are in the 3D scene. The engine's plane has +x east and +z north with neighbouring
 * cell centres 1 apart; the scene keeps x and puts north at -z (three.js cameras look down -z), so
 * a camera south of the map looking north sees east on its right.
 */
import { Vector3 } from 'three';
import { cellCentre, HEADING_DEGREES, type Cell, type Heading } from '../../../shared/engine/hex';
import type { Terrain } from '../../../shared/engine/map';

/** Circumradius of a pointy-top hex whose neighbours' centres are 1 apart. */
export const HEX_RADIUS = 0.5 / Math.cos(Math.PI / 6);

/** Height of the top of each terrain; hills rise further with the hill cells around them. */
const TERRAIN_TOP: Readonly<Record<Terrain, number>> = { grass: 0, path: 0.02, water: -0.22, deep_water: -0.4, hill: 0.35 };

export function cellPosition(cell: Cell, height = 0): Vector3 {
  const centre = cellCentre(cell);
  return new Vector3(centre.x, height, -centre.z);
}

/** The y rotation that turns a model built facing north (-z) to `heading` (degrees clockwise from north). */
export function headingRotation(heading: Heading): number {
  return (-HEADING_DEGREES[heading] * Math.PI) / 180;
}

/** Top of the ground at a cell: where cards, props and avatars stand. */
export function surfaceHeight(terrain: Terrain, hillNeighbours = 0): number {
  return TERRAIN_TOP[terrain] + (terrain === 'hill' ? 0.12 * hillNeighbours : 0);
}

/** The middle of the map in the scene, and the extent of its hexes east-west (width) and north-south (depth), for cameras. */
export function mapBounds(map: { readonly width: number; readonly height: number }): { centre: Vector3; width: number; depth: number } {
  // Odd rows are shifted half a cell east: the hexes span x from -0.5 to width (one row: width - 0.5).
  const east = map.width - (map.height > 1 ? 0 : 0.5);
  const northmost = cellCentre({ x: 0, y: map.height - 1 }).z;
  return { centre: new Vector3((east - 0.5) / 2, 0, -northmost / 2), width: east + 0.5, depth: northmost + 2 * HEX_RADIUS };
}

/** A small deterministic hash of a cell, for colour variation that is the same on every screen. */
export function cellNoise(cell: Cell, salt = 0): number {
  let h = (cell.x * 374761393 + cell.y * 668265263 + salt * 2147483647) | 0;
  h = Math.imul(h ^ (h >>> 13), 1274126177);
  return ((h ^ (h >>> 16)) >>> 0) / 4294967295;
}
