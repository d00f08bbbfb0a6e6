/**
 * The batched follower environment's arrays: the follower's `Layout` (as FollowerArrays has it,
 * without the texts) with a leading axis of N, allocated here or given by the caller and checked.
 */
import { DEFAULT_CONFIG, type GameConfig } from '../../engine/config';
import { DTYPE_BYTES, FollowerArrays, TYPED_ARRAYS, type FieldGroup, type GridSize, type Layout, type TypedArray } from '../observationArrays';

/** The batch's arrays by group and field name, as the follower's `Layout` names them; each has a leading axis of N. */
export type BatchBuffers = Readonly<Record<FieldGroup, Readonly<Record<string, TypedArray>>>>;

/** The follower's layout, as the environment server's FollowerEnv arrays have it (without the texts). */
export function followerBatchLayout(grid: GridSize, maxSteps: number, config: GameConfig = DEFAULT_CONFIG): Layout {
  return new FollowerArrays({ grid, config, maxSteps, description: false, shaping: true }).layout;
}

/** One array per field of `layout`, with a leading axis of `size`. */
export function allocateBatchBuffers(layout: Layout, size: number): BatchBuffers {
  const groups: Record<FieldGroup, Record<string, TypedArray>> = { step: {}, observation: {}, info: {} };
  for (const field of layout.scalars) groups[field.group][field.name] = typedArray(field.dtype, size);
  for (const field of layout.arrays) groups[field.group][field.name] = typedArray(field.dtype, size * elementsOf(field.shape));
  return groups;
}

function typedArray(dtype: keyof typeof DTYPE_BYTES, length: number): TypedArray {
  return new TYPED_ARRAYS[dtype](new ArrayBuffer(length * DTYPE_BYTES[dtype]), 0, length);
}

const elementsOf = (shape: readonly number[]): number => shape.reduce((n, size) => n * size, 1);

/** Caller-owned buffers must have every field of the layout, of its type and length. */
export function checkBuffers(layout: Layout, buffers: BatchBuffers, size: number): void {
  const expected = allocateBatchBuffers(layout, 1);
  for (const group of Object.keys(expected) as FieldGroup[]) {
    for (const [name, one] of Object.entries(expected[group])) {
      const given = buffers[group]?.[name];
      if (!given || given.constructor !== one.constructor || given.length !== one.length * size) {
        throw new RangeError(`buffers.${group}.${name} must be a ${one.constructor.name} of ${one.length * size} elements`);
      }
    }
  }
}
