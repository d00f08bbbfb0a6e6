/**
 * The follower's view: the hexes inside a cone in front of it. The same function decides what
 * the follower's camera shows, which cards the server sends it, and what agents observe.
 */
import { cellCentre, headingVector, hexDistance, type Cell, type Pose } from './hex';
import type { GameConfig } from './config';

export type ViewConfig = GameConfig['view'];

// Tolerance so that cells exactly on the cone's edge count as seen on every machine.
const EDGE_TOLERANCE = 1e-9;

/** What the follower sees from one pose: cell indices in ascending order, as a set, and as cells. */
export interface View {
  readonly indices: readonly number[];
  readonly set: ReadonlySet<number>;
  readonly cells: readonly Readonly<Cell>[];
}

// A view depends only on the map's size, the pose and the view settings: each is computed once and
// shared by every game with the same settings, found by the field of view, the range, then a
// number made of the size and the pose (cheaper than building a string key at every call).
const views = new Map<number, Map<number, Map<number, View>>>();
const HEADING_NUMBER: Readonly<Record<Pose['heading'], number>> = { NE: 0, E: 1, SE: 2, SW: 3, W: 4, NW: 5 };
// Map sizes are at most 100 (map schema), so 128 per coordinate keeps keys distinct.
const SPAN = 128;

/** The follower's view from `pose`, shared and frozen (callers must not change it). */
export function viewFrom(dims: { width: number; height: number }, pose: Pose, view: ViewConfig): View {
  let byRange = views.get(view.fovDegrees);
  if (!byRange) views.set(view.fovDegrees, (byRange = new Map()));
  let byPose = byRange.get(view.range);
  if (!byPose) byRange.set(view.range, (byPose = new Map()));
  const key = (((dims.width * SPAN + dims.height) * SPAN + pose.y) * SPAN + pose.x) * 6 + HEADING_NUMBER[pose.heading];
  let seen = byPose.get(key);
  if (!seen) {
    const indices = Object.freeze(computeVisibleIndices(dims, pose, view));
    const cells = Object.freeze(indices.map((i) => Object.freeze({ x: i % dims.width, y: Math.floor(i / dims.width) })));
    seen = { indices, set: new Set(indices), cells };
    byPose.set(key, seen);
  }
  return seen;
}

/**
 * Indices (y * width + x) of the cells the follower sees from `pose`, in ascending order: its own
 * cell, and every cell within `range` hexes whose centre lies within half the field of view of
 * its heading.
 */
export function visibleIndices(dims: { width: number; height: number }, pose: Pose, view: ViewConfig): number[] {
  return [...viewFrom(dims, pose, view).indices];
}

function computeVisibleIndices(dims: { width: number; height: number }, pose: Pose, view: ViewConfig): number[] {
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
  return viewFrom(dims, pose, view).set.has(cell.y * dims.width + cell.x);
}
