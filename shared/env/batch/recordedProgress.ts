/**
 * What log mode's potentials look at, per environment of a batch, as FollowerEnv's
 * InstructionProgress keeps it: the instruction in hand, the cards the follower flipped an odd
 * number of times for it, and ('ndtw') how its path so far warps onto the recorded one.
 */
import type { Cell } from '../../engine/hex';
import type { GeodesicDistance } from '../../eval/distance';
import { DEFAULT_SUCCESS_THRESHOLD, collapseRepeats } from '../../eval/metrics';
import type { Recording } from '../../eval/recording';

/** Below every instruction id and the -1 of none: a new episode's progress starts afresh. */
const NO_PROGRESS_YET = -2;

/** What log mode looks up by a recorded instruction's id: the cards its follower changed and the path it took. */
interface RecordedTargets {
  readonly changedCards: ReadonlyMap<number, readonly number[]>;
  readonly paths: ReadonlyMap<number, readonly Cell[]>;
  /** The paths with repeated cells collapsed (nDTW's reference nodes), made as first needed. */
  readonly collapsed: Map<number, readonly Cell[]>;
}

const recordedTargets = new WeakMap<Recording, RecordedTargets>();

function targetsOf(recording: Recording): RecordedTargets {
  let targets = recordedTargets.get(recording);
  if (!targets) {
    targets = {
      changedCards: new Map(recording.instructions.map((recorded) => [recorded.id, recorded.changedCards])),
      paths: new Map(recording.instructions.map((recorded) => [recorded.id, recorded.path])),
      collapsed: new Map(),
    };
    recordedTargets.set(recording, targets);
  }
  return targets;
}

export class RecordedProgress {
  /** The instruction in hand (-1 none, NO_PROGRESS_YET at an episode's start). */
  private readonly instruction: Int32Array;
  private readonly changed: Set<number>[];
  /**
   * 'ndtw': the instruction's reference nodes (null without a recorded path), the last column of
   * the DTW table against the follower's path so far (C[i][j] for the last node j, i = 0..|R|),
   * grown by one column per new cell instead of computed whole at every step, and that cell.
   */
  private readonly reference: (readonly Cell[] | null)[];
  private readonly column: Float64Array[];
  private readonly lastCell: Int32Array;

  constructor(
    size: number,
    /** Whether the path is followed too: only 'ndtw' reads it. */
    private readonly warps: boolean,
  ) {
    this.instruction = new Int32Array(size).fill(-1);
    this.changed = Array.from({ length: size }, () => new Set<number>());
    this.reference = new Array<readonly Cell[] | null>(size).fill(null);
    this.column = new Array<Float64Array>(size);
    this.lastCell = new Int32Array(size);
  }

  /** A new episode in `slot`: the next `follow` starts its progress afresh, whatever instruction is in hand. */
  restart(slot: number): void {
    this.instruction[slot] = NO_PROGRESS_YET;
  }

  /** The follower stepped on card `id`, which flipped (no instruction in hand: nothing to count). */
  flipped(slot: number, id: number): void {
    if (this.instruction[slot] < 0) return;
    const changed = this.changed[slot];
    if (!changed.delete(id)) changed.add(id);
  }

  /** The follower's cell (its index on the recording's map) after a step other than DONE: it joins the path of the instruction in hand. */
  moved(slot: number, recording: Recording, at: number, distance: GeodesicDistance): void {
    if (this.instruction[slot] >= 0 && this.reference[slot] && at !== this.lastCell[slot]) this.warp(slot, recording, at, distance);
  }

  /** `current` is the instruction in hand now (FollowerEnv's progressAt): a new one starts its progress afresh, from the follower's cell `at`. */
  follow(slot: number, current: number, recording: Recording, at: number, distance: GeodesicDistance): void {
    if (this.instruction[slot] === current) return;
    this.instruction[slot] = current;
    this.changed[slot].clear();
    if (!this.warps) return;
    const reference = (this.reference[slot] = current >= 0 ? referenceNodes(recording, current, distance) : null);
    if (!reference) return;
    // Column 0 of the table: C[0][0] = 0 and C[i][0] = infinity, so every warping starts at (1, 1).
    const column = (this.column[slot] = new Float64Array(reference.length + 1).fill(Infinity));
    column[0] = 0;
    this.warp(slot, recording, at, distance);
  }

  /** The nDTW of the follower's path so far against the recorded one (0 without one). */
  ndtw(slot: number): number {
    const reference = this.reference[slot];
    return reference ? Math.exp(-this.column[slot][reference.length] / (reference.length * DEFAULT_SUCCESS_THRESHOLD)) : 0;
  }

  /** True for a card the recorded follower changed for `instruction` (the one in hand) and this follower has not changed (flipped an odd number of times) yet. */
  stillToChange(slot: number, recording: Recording, instruction: number, id: number): boolean {
    const changedCards = targetsOf(recording).changedCards.get(instruction);
    return changedCards !== undefined && changedCards.includes(id) && !this.changed[slot].has(id);
  }

  /**
   * The follower's cell joins its path: one more column of the DTW table, by the same recurrence
   * and in the same order as dynamicTimeWarping, so nDTW comes out the same to the last bit.
   */
  private warp(slot: number, recording: Recording, at: number, distance: GeodesicDistance): void {
    const reference = this.reference[slot]!;
    const column = this.column[slot];
    const between = distance.between;
    const { width } = recording.header.map;
    const cell = { x: at % width, y: Math.floor(at / width) };
    // C[0][j] is infinity for j >= 1; `diagonal` holds C[i - 1][j - 1] as the column is overwritten.
    let diagonal = column[0];
    column[0] = Infinity;
    for (let i = 1; i <= reference.length; i++) {
      const left = column[i];
      column[i] = between(reference[i - 1], cell) + Math.min(left, column[i - 1], diagonal);
      diagonal = left;
    }
    this.lastCell[slot] = at;
  }
}

/** The nodes of the recorded follower's path for `instruction`, repeats collapsed (null when it has none). */
function referenceNodes(recording: Recording, instruction: number, distance: GeodesicDistance): readonly Cell[] | null {
  const targets = targetsOf(recording);
  const path = targets.paths.get(instruction);
  if (!path) return null;
  let nodes = targets.collapsed.get(instruction);
  if (!nodes) targets.collapsed.set(instruction, (nodes = collapseRepeats(path, distance.between)));
  return nodes;
}
