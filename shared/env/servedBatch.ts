/**
 * A FollowerBatch as the environment server serves it (ops 8 to 12, shared/env/server.ts): its
 * arrays laid in one block that each reset, step and resetAt copies into a file the client maps,
 * the seeds of the environments that start a new game read from the request, and the slots whose
 * seed gave no game kept apart until resetAt starts them. Several servers (processes) may share
 * one file, each batch its own rows of it (`rows`), so that the client maps all N environments'
 * arrays as one, without copying the parts together.
 */
import { z } from 'zod';
import { FOLLOWER_CODES } from '../engine/actions';
import type { Recording } from '../eval/recording';
import { DEFAULT_ENV_OPTIONS } from './env';
import { FollowerBatch } from './batch/followerBatch';
import { allocateBatchBuffers, batchRegions, type BatchRegion } from './batch/buffers';
import { DTYPE_BYTES, type GridSize, type Layout } from './observationArrays';
import { RequestError, type ByteReader } from './wire';

/** The most environments a batch holds (each takes about 8 KB of the shared file). */
export const MAX_BATCH_SIZE = 65_536;

/** The most starts a batch keeps (each takes about 35 KB of the server's memory). */
export const MAX_KEPT_STARTS = 65_536;

export const batchOptionsSchema = z
  .strictObject({
  size: z.number().int().min(1).max(MAX_BATCH_SIZE),
  reward: z.enum(['sparse', 'distance', 'ndtw']).default('sparse'),
  gamma: z.number().min(0).max(1).default(DEFAULT_ENV_OPTIONS.gamma),
  maxSteps: z.number().int().min(1).default(DEFAULT_ENV_OPTIONS.maxSteps),
  /** The file the client made (empty) and maps: the server sizes it and copies the batch's arrays into it. */
  file: z.string().min(1),
  /** Log files: log mode, whose seeds are episode numbers. Without them, self-play games by seed. */
  logs: z.array(z.string()).min(1).optional(),
  /** Self-play: how many seeds' starts to keep (FollowerBatch's keptStarts), for clients that play a fixed set of levels. */
  keptStarts: z.number().int().min(0).max(MAX_KEPT_STARTS).default(0),
  /**
   * The file holds `of` environments, and this batch's are its rows `first` to `first + size - 1`
   * (the others are other processes'); by default the file holds this batch alone.
   */
  rows: z.strictObject({ first: z.number().int().min(0), of: z.number().int().min(1).max(MAX_BATCH_SIZE) }).optional(),
})
  .refine((options) => !(options.logs && options.keptStarts > 0), { message: 'keptStarts is for self-play games by seed: a batch with logs keeps no starts', path: ['keptStarts'] })
  .refine((options) => !options.rows || options.rows.first + options.size <= options.rows.of, {
    message: "the batch's rows (rows.first to rows.first + size - 1) must lie within the file's rows.of environments",
    path: ['rows'],
  });
export type BatchOptions = z.input<typeof batchOptionsSchema>;

/** A file another process maps, open for writing. */
export interface BlockFile {
  /** Copies `bytes` into the file from byte `position` on. */
  write(bytes: Uint8Array, position: number): void;
  close(): void;
}

/**
 * Opens the file at `path` and sizes it to `bytes` (shared/env/node/blockFile.ts): an empty one,
 * or with `shared` (a batch with rows of a file other batches write too) one another batch
 * already sized and none wrote into yet (all zeros), so that no other file is clobbered.
 */
export type OpenBlockFile = (path: string, bytes: number, shared: boolean) => BlockFile;

/** A run of the batch's block and where in the file it goes. */
interface Span {
  readonly from: number;
  readonly length: number;
  readonly to: number;
}

/**
 * Where each field of a batch of `size` (its block, `batchRegions`) goes in a file laid out for
 * `of` environments of which the batch's are rows `first` on: one span per field, or the whole
 * block when the file is the batch's alone.
 */
function fileSpans(layout: Layout, size: number, rows: { readonly first: number; readonly of: number }): readonly Span[] {
  const own = batchRegions(layout, size);
  if (rows.first === 0 && rows.of === size) return [{ from: 0, length: own.bytes, to: 0 }];
  const file = batchRegions(layout, rows.of).regions;
  return own.regions.map((region: BatchRegion, i): Span => {
    const rowBytes = (region.length / size) * DTYPE_BYTES[region.dtype];
    return { from: region.offset, length: size * rowBytes, to: file[i].offset + rows.first * rowBytes };
  });
}

export class ServedFollowerBatch {
  private readonly batch: FollowerBatch;
  private readonly block: Uint8Array;
  private readonly terminated: Uint8Array;
  private readonly truncated: Uint8Array;
  /** The seeds a step hands the batch: those of the environments that ended, in their slots. */
  private readonly seeds: Float64Array;
  /** Slots with no game (every slot before the first reset): the batch steps only when there are none. */
  private readonly unstarted = new Set<number>();
  /** Log mode: how many episodes there are (seeds are numbers below it); null in seed mode. */
  private readonly episodeCount: number | null;
  private readonly spans: readonly Span[];

  constructor(
    options: z.output<typeof batchOptionsSchema>,
    recordings: readonly Recording[] | null,
    grid: GridSize,
    layout: Layout,
    private readonly file: BlockFile,
  ) {
    const memory = new ArrayBuffer(batchRegions(layout, options.size).bytes);
    this.block = new Uint8Array(memory);
    this.spans = fileSpans(layout, options.size, options.rows ?? { first: 0, of: options.size });
    const buffers = allocateBatchBuffers(layout, options.size, memory);
    const { size, reward, gamma, maxSteps, keptStarts } = options;
    this.batch = new FollowerBatch({ size, reward, gamma, maxSteps, keptStarts, recordings: recordings ?? undefined, grid, buffers });
    this.episodeCount = recordings && recordings.reduce((n, recording) => n + recording.instructions.length, 0);
    this.terminated = buffers.step.terminated as Uint8Array;
    this.truncated = buffers.step.truncated as Uint8Array;
    this.seeds = new Float64Array(options.size);
    for (let slot = 0; slot < options.size; slot++) this.unstarted.add(slot);
  }

  /** Starts every environment on its seed: the slots whose seed gives no game are answered, and left with none. */
  reset(request: ByteReader): Uint8Array[] {
    const seeds = this.readSeeds(request, this.batch.size, 'reset');
    const failed: number[] = [];
    for (let slot = 0; slot < seeds.length; slot++) {
      if (this.batch.resetAt(slot, seeds[slot])) this.unstarted.delete(slot);
      else {
        this.unstarted.add(slot);
        failed.push(slot);
      }
    }
    return this.written(failed);
  }

  step(request: ByteReader): Uint8Array[] {
    if (this.unstarted.size === this.batch.size) throw new RequestError('episode-over', 'the batch was never reset: reset it before a step');
    if (this.unstarted.size > 0) throw new RequestError('episode-over', `${this.unstarted.size} environments have no game (their seed gave none): start them with resetAt before a step`);
    const actions = request.take(this.batch.size);
    for (let slot = 0; slot < actions.length; slot++) {
      if (actions[slot] >= FOLLOWER_CODES.length) throw new RequestError('invalid', `unknown action ${actions[slot]} for environment ${slot}; the follower's actions are 0 to ${FOLLOWER_CODES.length - 1} (${FOLLOWER_CODES.join(', ')})`);
    }
    let ended = 0;
    for (let slot = 0; slot < actions.length; slot++) ended += this.terminated[slot] | this.truncated[slot];
    const seeds = this.readSeeds(request, request.u32(), 'step');
    if (seeds.length !== ended) throw new RequestError('invalid', `a step takes the seeds of the environments whose episode ended at the previous step: ${ended}, got ${seeds.length}`);
    for (let slot = 0, next = 0; slot < actions.length; slot++) if (this.terminated[slot] | this.truncated[slot]) this.seeds[slot] = seeds[next++];
    const failed = this.batch.step(actions, this.seeds);
    for (const slot of failed) this.unstarted.add(slot);
    return this.written(failed);
  }

  /** Starts a slot left with no game on a new seed: u8 1, or 0 when that seed gives none either. */
  resetAt(request: ByteReader): Uint8Array[] {
    const slot = request.u32();
    const seed = request.u32();
    request.end();
    if (slot >= this.batch.size) throw new RequestError('invalid', `slot must be from 0 to ${this.batch.size - 1}, got ${slot}`);
    this.checkEpisode(seed);
    if (!this.unstarted.has(slot)) throw new RequestError('invalid', `environment ${slot} has a game: resetAt starts only one whose seed gave none`);
    const started = this.batch.resetAt(slot, seed);
    if (started) this.unstarted.delete(slot);
    this.copyToFile();
    return [new Uint8Array([started ? 1 : 0])];
  }

  close(): void {
    this.file.close();
  }

  /** `count` u32 seeds, the rest of the request; in log mode each an episode number. */
  private readSeeds(request: ByteReader, count: number, op: string): Uint32Array {
    if (request.remaining !== count * 4) throw new RequestError('invalid', `${op} takes ${count} seeds (u32), got ${request.remaining} bytes for them`);
    const seeds = new Uint32Array(count);
    for (let i = 0; i < count; i++) this.checkEpisode((seeds[i] = request.u32()));
    return seeds;
  }

  /** In log mode, a seed is an episode number: one out of range is refused (every u32 is a seed in seed mode). */
  private checkEpisode(seed: number): void {
    if (this.episodeCount !== null && seed >= this.episodeCount) {
      throw new RequestError('invalid', `this batch plays logged episodes: its seeds are episode numbers from 0 to ${this.episodeCount - 1}, got ${seed}`);
    }
  }

  /** Copies the block into the file: each field to the batch's rows of it. */
  private copyToFile(): void {
    for (const span of this.spans) this.file.write(this.block.subarray(span.from, span.from + span.length), span.to);
  }

  /** Copies the block into the file; the answer lists `failed`. */
  private written(failed: readonly number[]): Uint8Array[] {
    this.copyToFile();
    const answer = new Uint8Array(4 + 4 * failed.length);
    const view = new DataView(answer.buffer);
    view.setUint32(0, failed.length, true);
    failed.forEach((slot, i) => view.setUint32(4 + 4 * i, slot, true));
    return [answer];
  }
}
