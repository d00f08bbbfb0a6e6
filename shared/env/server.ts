/**
 * The environments served to another process (the Python package): `EnvServer.handle` takes one
 * request's bytes and returns the answer's bytes. The transport (frames on stdin and stdout) is
 * shared/env/node/stdio.ts; docs/python.md describes the protocol.
 *
 * A request is an op byte and the op's arguments. An answer is an 8-byte header (u32 byte count
 * of the payload, u8 status: 0 ok, 1 error, 3 zero bytes that keep the payload 8-byte aligned) and
 * the payload: the op's result, or for an error a JSON object {kind, message}. Numbers are
 * little-endian.
 *
 * | op | request after the op byte | answer's payload |
 * |---|---|---|
 * | 0 hello | | JSON {protocol, version, engineVersion} |
 * | 1 make | JSON make options | JSON {env, layout, episodes}; for role `both`, {env, layouts, agents} |
 * | 2 reset | u32 env, JSON {seed} or {episode} | block, then u32 length + UTF-8 episode id |
 * | 3 step | u32 env, action | block |
 * | 4 stepMany | u32 n, then n times: u32 env, action | n times: u32 length + block |
 * | 5 render | u32 env | UTF-8 text |
 * | 6 close | u32 env | nothing |
 * | 7 encode | u32 env (an observer), JSON {observation, steps, points} | block |
 * | 8 batchMake | JSON {size, reward, gamma, maxSteps, file, logs?, keptStarts?, rows?} | JSON {batch, layout, regions, bytes, episodes} |
 * | 9 batchReset | u32 batch, size times u32 seed | u32 k, k times u32 slot (no game) |
 * | 10 batchStep | u32 batch, size times u8 action, u32 k, k times u32 seed | u32 k, k times u32 slot (no game) |
 * | 11 batchResetAt | u32 batch, u32 slot, u32 seed | u8 1 started, 0 no game |
 * | 12 batchClose | u32 batch | nothing |
 * | 13 frameView | u32 env | JSON FrameView (shared/frames/frame.ts) |
 *
 * An action is a u8 index into the layout's `actions`; the leader's INSTRUCTION is followed by
 * u32 length + UTF-8 text. A block is laid out as its env's `Layout` says (observationArrays.ts).
 *
 * frameView answers with what a frame of the env's agent now draws: `frameView(playerView(state,
 * role, memory))`, the follower env's follower view (with its memory of the episode) or the leader
 * env's leader view, never anything built from the whole state, so that a follower's frame shows
 * only what the follower knows. The client sends it to a frame renderer (`cerealbar frames`) as a
 * frame request's `view`. Only follower and leader envs have one; before a reset it is refused
 * (`episode-over`).
 *
 * A batch (ops 8 to 12, served by servedBatch.ts; requests read and answers written by wire.ts)
 * is a FollowerBatch of `size` environments whose arrays reach the client
 * through `file`, which the client made empty and maps: the server sizes it to `bytes` and, after
 * every reset, step and resetAt, copies the batch's whole block into it (`regions`: where each
 * field lies, batch/buffers.ts). With `rows: {first, of}` the file holds `of` environments, laid
 * out as a batch of `of` would be, and this batch's are its rows `first` to `first + size - 1`:
 * batches in several processes then share one file (the first sizes it; the others open it only
 * while it is all zeros, before any of them wrote), each writing its rows
 * of each field, and the client maps all of them as one. A step's seeds are those of the environments that ended at the
 * previous step (k of them, in slot order), which start their next game on them; a slot whose seed
 * gives no game is answered, and has no game until resetAt starts it; the batch steps only when
 * every slot has a game. A batch made with `logs` plays log mode: its seeds are episode numbers,
 * indices into its `episodes` (as the follower env's make lists them), every one of which gives a
 * game; a number out of range is refused before anything changes. Without logs, `keptStarts: K`
 * (at most MAX_KEPT_STARTS) has the batch keep the starts of the K seeds started last, so that a
 * client drawing its seeds from a fixed set of K levels starts them again by copying: the same
 * games, faster.
 */
import { z } from 'zod';
import { FOLLOWER_CODES, type FollowerCode } from '../engine/actions';
import { DEFAULT_CONFIG } from '../engine/config';
import { GameSetupError } from '../engine/errors';
import { MAX_SEED } from '../engine/state';
import { ENGINE_VERSION } from '../engine/version';
import { renderMap } from '../maps/render';
import { DEFAULT_MAP_SIZE } from '../maps/generate';
import { episodeIds } from '../eval/runner';
import { largestMap, type Recording } from '../eval/recording';
import { followerObservationSchema } from '../agents/protocol';
import { pureFollowerNames } from '../agents/catalogue';
import { LEADER_AGENT_CODES, type FollowerObservation, type LeaderAgentAction } from '../agents/types';
import type { PlayerView } from '../engine/playerView';
import { frameView, type FrameView } from '../frames/frame';
import { FollowerEnv, DEFAULT_ENV_OPTIONS } from './env';
import { DEFAULT_GAME_ENV_OPTIONS, GAME_AGENTS, GameEnv, type GameAction, type GameEnvStep } from './gameEnv';
import { DEFAULT_LEADER_ENV_OPTIONS, LeaderEnv } from './leaderEnv';
import { FollowerArrays, LEADER_ACTION_NAMES, LeaderArrays, type GridSize, type Layout } from './observationArrays';
import { batchRegions, followerBatchLayout } from './batch/buffers';
import { batchOptionsSchema, ServedFollowerBatch, type BlockFile, type OpenBlockFile } from './servedBatch';
import { ByteReader, concat, json, lengthPrefixed, parse, RequestError, utf8, type ErrorKind } from './wire';

export const PROTOCOL = 'cerealbar-env';
export const PROTOCOL_VERSION = 1;

export const OPS = { hello: 0, make: 1, reset: 2, step: 3, stepMany: 4, render: 5, close: 6, encode: 7, batchMake: 8, batchReset: 9, batchStep: 10, batchResetAt: 11, batchClose: 12, frameView: 13 } as const;
export const STATUS = { ok: 0, error: 1 } as const;
export const ANSWER_HEADER_BYTES = 8;

const makeOptionsSchema = z.discriminatedUnion('role', [
  z.strictObject({
    role: z.literal('follower'),
    reward: z.enum(['sparse', 'distance', 'ndtw']).default(DEFAULT_ENV_OPTIONS.reward),
    gamma: z.number().min(0).max(1).default(DEFAULT_ENV_OPTIONS.gamma),
    maxSteps: z.number().int().min(1).default(DEFAULT_ENV_OPTIONS.maxSteps),
    description: z.boolean().default(true),
    /** Log files: episodes are their recorded instructions. Without them, episodes are self-play games by seed. */
    logs: z.array(z.string()).min(1).optional(),
  }),
  z.strictObject({
    role: z.literal('leader'),
    maxSteps: z.number().int().min(1).default(DEFAULT_LEADER_ENV_OPTIONS.maxSteps),
    follower: z.enum(pureFollowerNames('game') as [string, ...string[]]).default(DEFAULT_LEADER_ENV_OPTIONS.follower),
  }),
  /**
   * No game: it encodes follower observations given to it (op encode) as a FollowerEnv with the
   * same grid, maxSteps and description would, for agents that receive them as JSON (the Python
   * package's agents under the agent protocol). Its info has no potential or shaping.
   */
  z.strictObject({
    role: z.literal('observer'),
    width: z.number().int().min(1).max(100).default(DEFAULT_MAP_SIZE),
    height: z.number().int().min(1).max(100).default(DEFAULT_MAP_SIZE),
    maxSteps: z.number().int().min(1).default(DEFAULT_ENV_OPTIONS.maxSteps),
    description: z.boolean().default(true),
  }),
  /** Both players as agents: the PettingZoo environments. */
  z.strictObject({
    role: z.literal('both'),
    maxSteps: z.number().int().min(1).default(DEFAULT_GAME_ENV_OPTIONS.maxSteps),
    description: z.boolean().default(true),
  }),
]);
export type MakeOptions = z.input<typeof makeOptionsSchema>;

const NO_FILES: OpenBlockFile = () => {
  throw new RequestError('invalid', 'this server opens no files: it serves no batches');
};

const resetOptionsSchema = z.union([
  z.strictObject({ seed: z.number().int().min(0).max(MAX_SEED) }),
  z.strictObject({ episode: z.number().int().min(0) }),
]);

/** One environment as served: a reset and a step give encoded blocks. */
interface ServedEnv {
  /** What the make answer says of it besides its id: where things lie in its blocks. */
  readonly made: Readonly<Record<string, unknown>>;
  reset(options: z.output<typeof resetOptionsSchema>): { block: Uint8Array[]; episodeId: string };
  step(request: ByteReader): Uint8Array[];
  render(): string;
  /** What a frame of the agent's view draws now (follower and leader envs only; null before a reset). */
  frameView?(): FrameView | null;
  /** Observers only: the block of an observation given as JSON. */
  encode?(input: unknown): Uint8Array[];
}

const encodeRequestSchema = z.strictObject({
  observation: followerObservationSchema,
  /** The agent's actions so far in the episode. */
  steps: z.number().int().min(0),
  /** Sets made since the agent's previous observation. */
  points: z.number().int().min(0).default(0),
});

export class EnvServer {
  private readonly envs = new Map<number, ServedEnv>();
  private readonly batches = new Map<number, ServedFollowerBatch>();
  private nextId = 1;

  /**
   * `loadRecording(path)`: a log file's recording; `openBlockFile`: a batch's shared file (the
   * server opens no files itself).
   */
  constructor(
    private readonly loadRecording: (path: string) => Recording,
    private readonly openBlockFile: OpenBlockFile = NO_FILES,
  ) {}

  private readonly header = new Uint8Array(ANSWER_HEADER_BYTES);

  /** The answer to `request`: its header, then its payload, as parts valid until the next call. */
  handle(request: Uint8Array): Uint8Array[] {
    let status: number = STATUS.ok;
    let payload: Uint8Array[];
    try {
      payload = this.dispatch(new ByteReader(request));
    } catch (error) {
      status = STATUS.error;
      payload = [json(describeError(error))];
    }
    const header = new DataView(this.header.buffer);
    header.setUint32(0, payload.reduce((n, part) => n + part.length, 0), true);
    header.setUint8(4, status);
    return [this.header, ...payload];
  }

  private dispatch(request: ByteReader): Uint8Array[] {
    const op = request.u8();
    switch (op) {
      case OPS.hello:
        return [json({ protocol: PROTOCOL, version: PROTOCOL_VERSION, engineVersion: ENGINE_VERSION })];
      case OPS.make:
        return this.make(request.json());
      case OPS.reset: {
        const env = this.env(request.u32());
        const { block, episodeId } = env.reset(parse(resetOptionsSchema, request.json(), 'reset options'));
        return [...block, lengthPrefixed(utf8.encode(episodeId))];
      }
      case OPS.step:
        return this.env(request.u32()).step(request);
      case OPS.stepMany: {
        // Copied: the same env may step twice in one batch, and its block is reused.
        const blocks: Uint8Array[] = [];
        for (let n = request.u32(); n > 0; n--) blocks.push(lengthPrefixed(concat(this.env(request.u32()).step(request))));
        return blocks;
      }
      case OPS.render:
        return [utf8.encode(this.env(request.u32()).render())];
      case OPS.frameView: {
        const env = this.env(request.u32());
        request.end();
        if (!env.frameView) throw new RequestError('invalid', 'only follower and leader environments have frames');
        const view = env.frameView();
        if (!view) throw new RequestError('episode-over', 'nothing to draw yet: call reset() first');
        return [json(view)];
      }
      case OPS.encode: {
        const env = this.env(request.u32());
        if (!env.encode) throw new RequestError('invalid', 'only an observer environment encodes observations');
        return env.encode(request.json());
      }
      case OPS.close: {
        this.envs.delete(request.u32());
        return [];
      }
      case OPS.batchMake:
        return this.makeBatch(request.json());
      case OPS.batchReset:
        return this.batch(request.u32()).reset(request);
      case OPS.batchStep:
        return this.batch(request.u32()).step(request);
      case OPS.batchResetAt:
        return this.batch(request.u32()).resetAt(request);
      case OPS.batchClose: {
        const id = request.u32();
        this.batch(id).close();
        this.batches.delete(id);
        return [];
      }
      default:
        throw new RequestError('invalid', `unknown op ${op}`);
    }
  }

  private make(input: unknown): Uint8Array[] {
    const options = parse(makeOptionsSchema, input, 'make options');
    let env: ServedEnv;
    if (options.role === 'leader') {
      env = new ServedLeaderEnv(options.maxSteps, options.follower);
    } else if (options.role === 'both') {
      env = new ServedGameEnv(options.maxSteps, options.description);
    } else if (options.role === 'observer') {
      env = new ServedObserver(options);
    } else {
      env = new ServedFollowerEnv(options, this.recordings(options));
    }
    const id = this.nextId++;
    this.envs.set(id, env);
    return [json({ env: id, ...env.made })];
  }

  private makeBatch(input: unknown): Uint8Array[] {
    const options = parse(batchOptionsSchema, input, 'batch options');
    const recordings = this.recordings(options);
    const grid = recordings ? largestMap(recordings) : DEFAULT_GRID;
    const layout = followerBatchLayout(grid, options.maxSteps);
    // The file's layout: this batch's environments, or all those of the processes sharing it.
    const { regions, bytes } = batchRegions(layout, options.rows?.of ?? options.size);
    let file: BlockFile;
    try {
      file = this.openBlockFile(options.file, bytes, options.rows !== undefined);
    } catch (error) {
      if (error instanceof RequestError) throw error;
      throw new RequestError('invalid', `${options.file}: ${(error as Error).message}`);
    }
    let batch: ServedFollowerBatch;
    try {
      batch = new ServedFollowerBatch(options, recordings, grid, layout, file);
    } catch (error) {
      file.close();
      throw error;
    }
    const id = this.nextId++;
    this.batches.set(id, batch);
    return [json({ batch: id, layout, regions, bytes, episodes: recordings && recordings.flatMap(episodeIds) })];
  }

  /** The recordings of a follower env's or batch's `logs` (null without), refusing 'ndtw' without them. */
  private recordings(options: { readonly reward: string; readonly logs?: readonly string[] }): Recording[] | null {
    const recordings = options.logs?.map((path) => this.load(path)) ?? null;
    if (options.reward === 'ndtw' && !recordings) {
      throw new RequestError('invalid', "the 'ndtw' reward needs recorded reference paths: give logs, or use 'distance' with self-play");
    }
    return recordings;
  }

  private batch(id: number): ServedFollowerBatch {
    const batch = this.batches.get(id);
    if (!batch) throw new RequestError('invalid', `no batch ${id} (closed, or never made)`);
    return batch;
  }

  private load(path: string): Recording {
    try {
      return this.loadRecording(path);
    } catch (error) {
      throw new RequestError('invalid', `${path}: ${(error as Error).message}`);
    }
  }

  private env(id: number): ServedEnv {
    const env = this.envs.get(id);
    if (!env) throw new RequestError('invalid', `no environment ${id} (closed, or never made)`);
    return env;
  }
}

type FollowerMakeOptions = Extract<z.output<typeof makeOptionsSchema>, { role: 'follower' }>;

class ServedFollowerEnv implements ServedEnv {
  readonly made: { readonly layout: Layout; readonly episodes: readonly string[] | null };
  private readonly episodes: readonly string[] | null;
  private readonly env: FollowerEnv;
  private readonly arrays: FollowerArrays;
  /** Log mode: each episode's recording and instruction index. */
  private readonly tasks: readonly { readonly recording: Recording; readonly instruction: number }[];
  private observation: FollowerObservation | null = null;
  private over = true;

  constructor(options: FollowerMakeOptions, recordings: readonly Recording[] | null) {
    this.env = new FollowerEnv({ reward: options.reward, gamma: options.gamma, maxSteps: options.maxSteps });
    this.tasks = (recordings ?? []).flatMap((recording) => recording.instructions.map((_, instruction) => ({ recording, instruction })));
    this.episodes = recordings && recordings.flatMap(episodeIds);
    const grid = recordings ? largestMap(recordings) : { width: DEFAULT_MAP_SIZE, height: DEFAULT_MAP_SIZE };
    this.arrays = new FollowerArrays({ grid, config: DEFAULT_CONFIG, maxSteps: options.maxSteps, description: options.description, shaping: true });
    this.made = { layout: this.arrays.layout, episodes: this.episodes };
  }

  reset(options: z.output<typeof resetOptionsSchema>): { block: Uint8Array[]; episodeId: string } {
    let reset;
    if (this.episodes) {
      if (!('episode' in options)) throw new RequestError('invalid', 'this environment plays logged episodes: reset with {episode}');
      const task = this.tasks[options.episode];
      if (!task) throw new RequestError('invalid', `episode must be an index among the ${this.tasks.length} episodes, got ${options.episode}`);
      reset = this.env.reset({ log: task.recording, instruction: task.instruction });
    } else {
      if (!('seed' in options)) throw new RequestError('invalid', 'this environment plays self-play games: reset with {seed}');
      reset = this.env.reset({ seed: options.seed });
    }
    this.observation = reset.observation;
    this.over = false;
    return { block: this.arrays.encode(reset.observation, NO_TRANSITION, reset.info), episodeId: reset.info.episodeId };
  }

  step(request: ByteReader): Uint8Array[] {
    const action = readFollowerAction(request);
    if (this.over) throw new RequestError('episode-over', 'the episode is over (or never started): call reset() before step()');
    const result = this.env.step(action);
    this.observation = result.observation;
    this.over = result.terminated || result.truncated;
    return this.arrays.encode(result.observation, result, result.info);
  }

  render(): string {
    return this.observation ? renderFollower(this.observation) : NO_EPISODE;
  }

  frameView(): FrameView | null {
    const view = this.env.followerView();
    return view && frameView(view);
  }
}

class ServedLeaderEnv implements ServedEnv {
  readonly made: { readonly layout: Layout; readonly episodes: null };
  private readonly env: LeaderEnv;
  private readonly arrays: LeaderArrays;
  private view: PlayerView | null = null;
  private over = true;

  constructor(maxSteps: number, follower: string) {
    this.env = new LeaderEnv({ maxSteps, follower });
    this.arrays = new LeaderArrays({ grid: DEFAULT_GRID, config: DEFAULT_CONFIG, followerActions: true });
    this.made = { layout: this.arrays.layout, episodes: null };
  }

  reset(options: z.output<typeof resetOptionsSchema>): { block: Uint8Array[]; episodeId: string } {
    if (!('seed' in options)) throw new RequestError('invalid', 'the leader environment plays self-play games: reset with {seed}');
    const reset = this.env.reset({ seed: options.seed });
    this.view = reset.view;
    this.over = false;
    return { block: this.arrays.encode(reset.view, NO_TRANSITION, reset.info), episodeId: reset.info.episodeId };
  }

  step(request: ByteReader): Uint8Array[] {
    const action = readLeaderAction(request);
    if (this.over) throw new RequestError('episode-over', 'the episode is over (or never started): call reset() before step()');
    const result = this.env.step(action);
    this.view = result.view;
    this.over = result.terminated || result.truncated;
    return this.arrays.encode(result.view, result, result.info);
  }

  render(): string {
    return this.view ? renderLeader(this.view) : NO_EPISODE;
  }

  frameView(): FrameView | null {
    return this.view && frameView(this.view);
  }
}

/**
 * Both players as agents (gameEnv.ts). A step request is a u8 role (0 leader, 1 follower) and
 * that role's action. A block is 8 bytes (u8 the role in control now, u8 the role that acted: 2
 * after reset; then zeros), the leader's block, zeros up to a multiple of 8 bytes, the follower's.
 */
class ServedGameEnv implements ServedEnv {
  readonly made: { readonly layouts: Readonly<Record<(typeof GAME_AGENTS)[number], Layout>>; readonly agents: typeof GAME_AGENTS };
  private readonly env: GameEnv;
  private readonly leaderArrays: LeaderArrays;
  private readonly followerArrays: FollowerArrays;
  private readonly prefix = new Uint8Array(8);
  private last: GameEnvStep | null = null;
  private over = true;

  constructor(maxSteps: number, description: boolean) {
    this.env = new GameEnv({ maxSteps });
    this.leaderArrays = new LeaderArrays({ grid: DEFAULT_GRID, config: DEFAULT_CONFIG, followerActions: false });
    this.followerArrays = new FollowerArrays({ grid: DEFAULT_GRID, config: DEFAULT_CONFIG, maxSteps, description, shaping: false });
    this.made = { layouts: { leader: this.leaderArrays.layout, follower: this.followerArrays.layout }, agents: GAME_AGENTS };
  }

  reset(options: z.output<typeof resetOptionsSchema>): { block: Uint8Array[]; episodeId: string } {
    if (!('seed' in options)) throw new RequestError('invalid', 'the two-player environment plays self-play games: reset with {seed}');
    const reset = this.env.reset({ seed: options.seed });
    this.over = false;
    return { block: this.blockOf(reset), episodeId: reset.episodeId };
  }

  step(request: ByteReader): Uint8Array[] {
    const role = GAME_AGENTS[request.u8()];
    if (role === undefined) throw new RequestError('invalid', `unknown role; the roles are 0 leader, 1 follower`);
    const action: GameAction = role === 'leader' ? { role, action: readLeaderAction(request) } : { role, action: readFollowerAction(request) };
    if (this.over) throw new RequestError('episode-over', 'the episode is over (or never started): call reset() before step()');
    const result = this.env.step(action);
    this.over = result.terminated || result.truncated;
    return this.blockOf(result);
  }

  render(): string {
    const last = this.last;
    if (!last) return NO_EPISODE;
    return `${last.control}'s turn\n${renderLeader(last.leader)}`;
  }

  private blockOf(result: GameEnvStep): Uint8Array[] {
    this.last = result;
    this.prefix[0] = GAME_AGENTS.indexOf(result.control);
    this.prefix[1] = result.info.actor === null ? GAME_AGENTS.length : GAME_AGENTS.indexOf(result.info.actor);
    const leader = this.leaderArrays.encode(result.leader, result, result.info);
    const follower = this.followerArrays.encode(result.follower, result, { ...result.info, instructionId: result.follower.instruction?.id ?? null });
    const length = this.prefix.length + leader.reduce((n, part) => n + part.length, 0);
    return [this.prefix, ...leader, new Uint8Array((8 - (length % 8)) % 8), ...follower];
  }
}

/** Encodes the observations it is given, as a FollowerEnv of the same grid would; it plays no game. */
class ServedObserver implements ServedEnv {
  readonly made: { readonly layout: Layout; readonly episodes: null };
  private readonly grid: GridSize;
  private readonly arrays: FollowerArrays;
  private last: FollowerObservation | null = null;

  constructor(options: Extract<z.output<typeof makeOptionsSchema>, { role: 'observer' }>) {
    this.grid = { width: options.width, height: options.height };
    this.arrays = new FollowerArrays({ grid: this.grid, config: DEFAULT_CONFIG, maxSteps: options.maxSteps, description: options.description, shaping: false });
    this.made = { layout: this.arrays.layout, episodes: null };
  }

  reset(): never {
    throw new RequestError('invalid', 'an observer plays no game: it only encodes observations (op encode)');
  }

  step(): never {
    return this.reset();
  }

  encode(input: unknown): Uint8Array[] {
    const { observation, steps, points } = parse(encodeRequestSchema, input, 'observation');
    const { width, height } = observation.map;
    if (width > this.grid.width || height > this.grid.height) {
      throw new RequestError('invalid', `the observation's map is ${width} x ${height}, larger than this observer's ${this.grid.width} x ${this.grid.height} grid`);
    }
    this.last = observation as FollowerObservation;
    return this.arrays.encode(this.last, NO_TRANSITION, { score: observation.score, points, steps, instructionId: observation.instruction?.id ?? null });
  }

  render(): string {
    return this.last ? renderFollower(this.last) : 'no observation yet: encode one';
  }
}

/**
 * A FollowerBatch whose arrays lie in one block, copied into the client's file after every change.
 * Requests are checked whole before the batch changes: a bad one changes nothing.
 */
const NO_TRANSITION = { reward: 0, terminated: false, truncated: false };
const NO_EPISODE = 'no episode yet: call reset()';
const DEFAULT_GRID: GridSize = { width: DEFAULT_MAP_SIZE, height: DEFAULT_MAP_SIZE };

function readFollowerAction(request: ByteReader): FollowerCode {
  const index = request.u8();
  const action = FOLLOWER_CODES[index];
  if (action === undefined) throw new RequestError('invalid', `unknown action ${index}; the follower's actions are 0 to ${FOLLOWER_CODES.length - 1} (${FOLLOWER_CODES.join(', ')})`);
  return action;
}

/** An index into LEADER_ACTION_NAMES; INSTRUCTION is followed by u32 length + UTF-8 text. */
function readLeaderAction(request: ByteReader): LeaderAgentAction {
  const index = request.u8();
  if (index === LEADER_AGENT_CODES.length) return { instruction: request.text(request.u32()) };
  if (index < LEADER_AGENT_CODES.length) return LEADER_AGENT_CODES[index];
  throw new RequestError('invalid', `unknown action ${index}; the leader's actions are 0 to ${LEADER_ACTION_NAMES.length - 1} (${LEADER_ACTION_NAMES.join(', ')})`);
}

function renderFollower(observation: FollowerObservation): string {
  const status =
    `follower at (${observation.pose.x}, ${observation.pose.y}) facing ${observation.pose.heading}; ` +
    `score ${observation.score}, ${observation.turnsLeft} turns left, ${observation.stepsLeft} steps left\n` +
    `instruction: ${observation.instruction?.text ?? 'none'}`;
  const cards = [...observation.visibleCards, ...observation.rememberedCards];
  return `${status}\n${renderMap(observation.map, { follower: observation.pose, leader: observation.leader ?? undefined, cards })}\n? not seen yet`;
}

function renderLeader(view: PlayerView): string {
  const queue = view.instructions.filter((instruction) => instruction.status !== 'done');
  const status =
    `leader at (${view.leader!.x}, ${view.leader!.y}) facing ${view.leader!.heading}, follower at (${view.follower.x}, ${view.follower.y}) facing ${view.follower.heading}; ` +
    `score ${view.score}, ${view.turnsLeft} turns left, ${view.turn.role}'s turn\n` +
    `queue: ${queue.length === 0 ? 'empty' : queue.map((instruction) => instruction.text).join(' | ')}`;
  return `${status}\n${renderMap(view.map, { leader: view.leader!, follower: view.follower, cards: view.cards })}`;
}

function describeError(error: unknown): { kind: ErrorKind; message: string } {
  if (error instanceof RequestError) return { kind: error.kind, message: error.message };
  if (error instanceof GameSetupError) return { kind: 'setup', message: error.message };
  if (error instanceof RangeError) return { kind: 'invalid', message: error.message };
  if (error instanceof Error) return { kind: 'internal', message: error.stack ?? error.message };
  return { kind: 'internal', message: String(error) };
}

