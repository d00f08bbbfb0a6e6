/**
 * The follower's view: the hexes inside a cone in front of it. The same function decides what
 * the follower's camera shows, which cards the server sends it, and what agents observe.
 */
import { cellCentre, headingVector, hexDistance, type Pose } from './hex';
import type { GameConfig } from './config';

export type ViewConfig = GameConfig['view'];

// Tolerance so that cells exactly on the cone's edge count as seen on every machine.
const EDGE_TOLERANCE = 1e-9;

/**
 * Indices (y * width + x) of the cells the follower sees from `pose`: its own cell, and every
 * cell within `range` hexes whose centre lies within half the field of view of its heading.
 */
export function visibleCells(dims: { width: number; height: number }, pose: Pose, view: ViewConfig): number[] {
  const eye = cellCentre(pose);
  const facing = headingVector(pose.heading);
  const minCos = Math.cos(((view.fovDegrees / 2) * Math.PI) / 180) - EDGE_TOLERANCE;
  const cells: number[] = [];
  const yFrom = Math.max(0, pose.y - view.range);
  const yTo = Math.min(dims.height - 1, pose.y + view.range);
  for (let y = yFrom; y <= yTo; y++) {
    for (let x = Math.max(0, pose.x - view.range); x <= Math.min(dims.width - 1, pose.x + view.range); x++) {
      const distance = hexDistance(pose, { x, y });
      if (distance > view.range) continue;
      if (distance === 0 || view.fovDegrees >= 360) {
        cells.push(y * dims.width + x);
        continue;
      }
      const centre = cellCentre({ x, y });
      const dx = centre.x - eye.x;
      const dz = centre.z - eye.z;
      if ((dx * facing.x + dz * facing.z) / Math.hypot(dx, dz) >= minCos) cells.push(y * dims.width + x);
    }
  }
  return cells;
}

export function isVisible(dims: { width: number; height: number }, pose: Pose, view: ViewConfig, cell: { x: number; y: number }): boolean {
  return visibleCells(dims, pose, view).includes(cell.y * dims.width + cell.x);
}
