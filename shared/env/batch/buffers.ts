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

/** Where one field's array lies in the batch's single block of memory. */
export interface BatchRegion {
  readonly group: FieldGroup;
  readonly name: string;
  readonly dtype: keyof typeof DTYPE_BYTES;
  /** Elements: N times the field's own. */
  readonly length: number;
  /** Bytes from the block's start, a multiple of 8. */
  readonly offset: number;
}

/**
 * The fields of `layout`, each with a leading axis of `size`, laid one after another in one block,
 * each on an 8-byte boundary, in the layout's order (scalars, then arrays): so the whole batch can
 * be copied, or mapped by another process, as one piece.
 */
export function batchRegions(layout: Layout, size: number): { readonly regions: readonly BatchRegion[]; readonly bytes: number } {
  const regions: BatchRegion[] = [];
  let offset = 0;
  const add = (group: FieldGroup, name: string, dtype: keyof typeof DTYPE_BYTES, length: number): void => {
    regions.push({ group, name, dtype, length, offset });
    offset += Math.ceil((length * DTYPE_BYTES[dtype]) / 8) * 8;
  };
  for (const field of layout.scalars) add(field.group, field.name, field.dtype, size);
  for (const field of layout.arrays) add(field.group, field.name, field.dtype, size * elementsOf(field.shape));
  return { regions, bytes: offset };
}

/** One array per field of `layout`, with a leading axis of `size`, as views of one block (`batchRegions`), or of `block` when given. */
export function allocateBatchBuffers(layout: Layout, size: number, block?: ArrayBuffer): BatchBuffers {
  const { regions, bytes } = batchRegions(layout, size);
  if (block && block.byteLength < bytes) throw new RangeError(`the batch's arrays take ${bytes} bytes, the block has ${block.byteLength}`);
  const memory = block ?? new ArrayBuffer(bytes);
  const groups: Record<FieldGroup, Record<string, TypedArray>> = { step: {}, observation: {}, info: {} };
  for (const region of regions) groups[region.group][region.name] = new TYPED_ARRAYS[region.dtype](memory, region.offset, region.length);
  return groups;
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
