/**
 * N follower environments stepped together on typed arrays: the same game as `FollowerEnv`, in
 * seed mode or in log mode (docs/env.md, "The batched follower environment"), with its observations, masks,
 * rewards and infos written in place into arrays the caller owns, laid out as `FollowerArrays`'
 * fields with a leading axis of N, and Gymnasium's next-step autoreset.
 *
 * The follower's turn runs on the arrays: a move looks its target up in the world's step table, a
 * card toggles in place, DONE moves a queue position, and the follower's memory (cells seen, cards
 * as last seen) is kept per cell and written into the grids by its FollowerSight. Whatever the arrays do not hold is left to the engine: an action
 * that ends the follower's turn or makes a set is played by `step` on the state the arrays stand
 * for, the leader (scripted, or replayed from the recording) plays its turns as in `FollowerEnv`, and the arrays are loaded back from
 * the state that results. So the engine stays the definition, and the fast path covers the
 * follower's steps in between (seven in eight with random actions; the others are the engine's
 * steps, one in nine, and autoresets).
 */
import { FOLLOWER_CODES, actionOfCode, byActor, type Action } from '../../engine/actions';
import type { Card } from '../../engine/cards';
import { DEFAULT_CONFIG } from '../../engine/config';
import { GameSetupError } from '../../engine/errors';
import { HEADINGS } from '../../engine/hex';
import type { World } from '../../engine/map';
import { followerInstructionId } from '../../engine/playerView';
import { MAX_SEED, updateState, type GameState } from '../../engine/state';
import { GeodesicDistance, type DistanceRow } from '../../eval/distance';
import { PathPlanner } from '../../nav/pathing';
import { largestMap, type Recording } from '../../eval/recording';
import { DEFAULT_MAP_SIZE } from '../../maps/generate';
import { DEFAULT_ENV_OPTIONS, ScriptedPartner, logStart, selfPlayStart, type Partner, type PartnerMemory, type RewardKind } from '../env';
import { COLOR_CODE, SHAPE_CODE, type GridSize, type Layout } from '../observationArrays';
import { allocateBatchBuffers, checkBuffers, followerBatchLayout, type BatchBuffers } from './buffers';
import { RecordedProgress } from './recordedProgress';
import { FollowerSight, NO_CARD } from './followerSight';
import { MapTables } from './tables';

export interface FollowerBatchOptions {
  /** N, the number of environments. */
  readonly size: number;
  /** 'sparse', 'distance', or (log mode only: it needs the recorded paths) 'ndtw'. */
  readonly reward?: RewardKind;
  readonly gamma?: number;
  readonly maxSteps?: number;
  /**
   * Log mode: the episodes are the recordings' instructions, recording by recording (the order of
   * the environment server's episode list), and `reset`, `step`, `resetAt` and `seedOf` speak of
   * episode numbers where seed mode speaks of seeds. Without it, seed mode: self-play games.
   */
  readonly recordings?: readonly Recording[];
  /** The grid the arrays are padded to: by default self-play's 25 x 25, or in log mode the recordings' largest map. */
  readonly grid?: GridSize;
  /**
   * The seed (or episode number) of environment `slot`'s next episode after one on `previous`
   * (autoreset), or after a seed whose game cannot start. By default `previous + size` (modulo
   * the number of episodes in log mode), so slot i plays i + k·size when reset at 0.
   */
  readonly nextSeed?: (slot: number, previous: number) => number;
  /**
   * Seed mode: how many games' starts to keep, by seed (the state after the leader's first turn,
   * the leader as it then stands, the map's tables), so that a seed that comes round again (a
   * `nextSeed` that cycles over a fixed set of levels) starts by copying instead of generating its
   * map and playing the leader's first turn. The least recently started go first. 0, the default,
   * keeps none.
   */
  readonly keptStarts?: number;
  /** Arrays to write into (`allocateBatchBuffers(layout, size)` shapes them); by default the batch allocates its own. */
  readonly buffers?: BatchBuffers;
}

const MOVE_FORWARD = FOLLOWER_CODES.indexOf('MF');
const MOVE_BACK = FOLLOWER_CODES.indexOf('MB');
const ROTATE_LEFT = FOLLOWER_CODES.indexOf('RL');
const ROTATE_RIGHT = FOLLOWER_CODES.indexOf('RR');
const DONE = FOLLOWER_CODES.indexOf('DONE');
const ACTIONS = FOLLOWER_CODES.length;
const ENGINE_ACTIONS: readonly Action[] = FOLLOWER_CODES.map((code) => byActor('follower', actionOfCode(code)));
/** Seeds in a row whose games cannot start before a reset gives up. */
const MOST_SETUP_RETRIES = 1000;
const NONE_FAILED: readonly number[] = [];
/**
 * The batch. `reset(seeds)` starts every environment; `step(actions)` takes one action index
 * (FOLLOWER_CODES order: MF, MB, RL, RR, DONE) per environment and writes the transitions into
 * `buffers`. An environment whose episode ended at the previous step is reset instead, with its
 * next seed (the action is ignored): reward 0, neither terminated nor truncated, the new game's
 * first observation.
 */
export class FollowerBatch {
  readonly size: number;
  readonly layout: Layout;
  readonly buffers: BatchBuffers;
  private readonly reward: RewardKind;
  private readonly gamma: number;
  private readonly maxSteps: number;
  /** The arrays' layout follows the default rules, as the environment server's FollowerEnv arrays do. */
  private readonly config = DEFAULT_CONFIG;
  /** The grid the arrays are padded to. */
  readonly grid: GridSize;
  /** Log mode's episodes, null in seed mode. */
  private readonly episodes: readonly { readonly recording: Recording; readonly instruction: number }[] | null;
  /** Cards per environment the arrays hold room for: the most any episode's rules deal. */
  private readonly cardStride: number;
  private readonly gridCells: number;
  private readonly nextSeed: (slot: number, previous: number) => number;

  // The game, one entry per environment (per cell: `slot · gridCells + cell`; per card: `slot · cardCount + k`).
  private readonly cell: Int32Array;
  private readonly heading: Uint8Array;
  private readonly leaderCell: Int32Array;
  private readonly leaderHeading: Uint8Array;
  /** The follower's steps left in its turn; 0 when it is not its turn. */
  private readonly stepsLeft: Int32Array;
  private readonly turnsLeft: Int32Array;
  private readonly score: Int32Array;
  private readonly gameOver: Uint8Array;
  /** Instructions of `synced[slot].queue` marked DONE on the arrays since. */
  private readonly queueHead: Int32Array;
  /** The id of the queue's instruction at `queueHead` (-1 none): read at every step, kept here rather than in the state. */
  private readonly currentId: Int32Array;
  /** The arrays differ from `synced[slot]` (the follower acted on them since). */
  private readonly dirty: Uint8Array;
  private readonly cardAt: Int16Array;
  private readonly cardCount: Uint8Array;
  private readonly cardId: Int32Array;
  private readonly cardCell: Int32Array;
  private readonly cardFace: Uint8Array;
  private readonly cardSelected: Uint8Array;
  private readonly selectedCount: Uint8Array;
  /** What the follower sees and remembers, written into the observation grids. */
  private readonly sight: FollowerSight;
  // The episode.
  private readonly seeds: Float64Array;
  private readonly steps: Int32Array;
  private readonly phi: Float64Array;
  private readonly ended: Uint8Array;
  /** The instruction whose task card `targetCard` holds (-1 none yet), the card's index in the game's cards (-1 none) and the selection asked for. */
  private readonly targetOf: Int32Array;
  private readonly targetCard: Int32Array;
  private readonly targetSelect: Uint8Array;
  /** The search from the target card (null without a target card): phi is minus the distance it gives at the follower's cell. */
  private readonly targetField: (DistanceRow | null)[];
  /** The state's nextCardId at the last load: while it stays, no set was made and the cards keep their order. */
  private readonly loadedCards: Int32Array;
  /** Log mode's progress with the instruction in hand, for its potentials; null in seed mode. */
  private readonly progress: RecordedProgress | null;
  /** The state the arrays were last loaded from: what the engine and the leader continue from. */
  private readonly synced: GameState[];
  /** Seed mode's are ScriptedPartners, log mode's replay the recorded leader. */
  private readonly partners: Partner[];
  private readonly distances: GeodesicDistance[];
  private readonly tables: MapTables[];
  private readonly keptStarts: number;
  /** Seed mode's kept starts by seed, least recently started first; null for a seed whose game cannot start. */
  private readonly kept = new Map<number, { readonly start: GameState; readonly partner: PartnerMemory } | null>();
  /** Per world, its tables and distances: log mode's episodes on one recording share them. */
  private readonly worlds = new WeakMap<World, { readonly tables: MapTables; readonly distance: GeodesicDistance }>();

  // The output arrays, by field.
  private readonly out: {
    readonly reward: Float64Array;
    readonly terminated: Uint8Array;
    readonly truncated: Uint8Array;
    readonly potential: Float64Array;
    readonly shaping: Float64Array;
    readonly infoScore: Int32Array;
    readonly points: Int32Array;
    readonly steps: Int32Array;
    readonly instructionId: Int32Array;
    readonly terrain: Uint8Array;
    readonly props: Uint8Array;
    readonly walls: Uint8Array;
    readonly cards: Uint8Array;
    readonly visible: Uint8Array;
    readonly cardSeenAgo: Int32Array;
    readonly pose: Int32Array;
    readonly leader: Int32Array;
    readonly stepsLeft: Int32Array;
    readonly turnsLeft: Int32Array;
    readonly score: Int32Array;
    readonly actionMask: Int8Array;
  };

  constructor(options: FollowerBatchOptions) {
    const { size } = options;
    if (!(Number.isInteger(size) && size >= 1)) throw new RangeError(`size must be a positive integer, got ${size}`);
    this.size = size;
    this.reward = options.reward ?? DEFAULT_ENV_OPTIONS.reward;
    this.gamma = options.gamma ?? DEFAULT_ENV_OPTIONS.gamma;
    this.maxSteps = options.maxSteps ?? DEFAULT_ENV_OPTIONS.maxSteps;
    if (!(this.gamma >= 0 && this.gamma <= 1)) throw new RangeError(`gamma must be in [0, 1], got ${this.gamma}`);
    if (!(Number.isInteger(this.maxSteps) && this.maxSteps >= 1)) throw new RangeError(`maxSteps must be a positive integer, got ${this.maxSteps}`);
    this.keptStarts = options.keptStarts ?? 0;
    if (!(Number.isInteger(this.keptStarts) && this.keptStarts >= 0)) throw new RangeError(`keptStarts must be a whole number, got ${this.keptStarts}`);
    const recordings = options.recordings ?? null;
    this.episodes = recordings && recordings.flatMap((recording) => recording.instructions.map((_, instruction) => ({ recording, instruction })));
    if (this.episodes?.length === 0) throw new RangeError('the recordings have no instructions: log mode has no episode to play');
    const rewards: readonly RewardKind[] = recordings ? ['sparse', 'distance', 'ndtw'] : ['sparse', 'distance'];
    if (!rewards.includes(this.reward)) {
      throw new RangeError(`${recordings ? 'log mode' : "seed mode plays self-play games, whose"} rewards are ${rewards.map((kind) => `'${kind}'`).join(', ')}; got ${JSON.stringify(this.reward)}${recordings ? '' : " ('ndtw' needs recordings)"}`);
    }
    this.grid = options.grid ?? (recordings ? largestMap(recordings) : { width: DEFAULT_MAP_SIZE, height: DEFAULT_MAP_SIZE });
    this.gridCells = this.grid.width * this.grid.height;
    this.cardStride = Math.max(this.config.cardCount, ...(recordings ?? []).map((recording) => recording.header.config.cardCount));
    const count = this.episodes?.length ?? MAX_SEED + 1;
    this.nextSeed = options.nextSeed ?? ((_slot, previous) => (previous + size) % count);
    this.layout = followerBatchLayout(this.grid, this.maxSteps, this.config);
    this.buffers = options.buffers ?? allocateBatchBuffers(this.layout, size);
    checkBuffers(this.layout, this.buffers, size);

    const cells = size * this.gridCells;
    const cards = size * this.cardStride;
    this.cell = new Int32Array(size);
    this.heading = new Uint8Array(size);
    this.leaderCell = new Int32Array(size);
    this.leaderHeading = new Uint8Array(size);
    this.stepsLeft = new Int32Array(size);
    this.turnsLeft = new Int32Array(size);
    this.score = new Int32Array(size);
    this.gameOver = new Uint8Array(size);
    this.queueHead = new Int32Array(size);
    this.currentId = new Int32Array(size).fill(-1);
    this.dirty = new Uint8Array(size);
    this.cardAt = new Int16Array(cells).fill(NO_CARD);
    this.cardCount = new Uint8Array(size);
    this.cardId = new Int32Array(cards);
    this.cardCell = new Int32Array(cards);
    this.cardFace = new Uint8Array(cards * 3);
    this.cardSelected = new Uint8Array(cards);
    this.selectedCount = new Uint8Array(size);
    this.seeds = new Float64Array(size);
    this.steps = new Int32Array(size);
    this.phi = new Float64Array(size);
    this.ended = new Uint8Array(size);
    this.targetOf = new Int32Array(size);
    this.targetCard = new Int32Array(size);
    this.targetSelect = new Uint8Array(size);
    this.targetField = new Array<DistanceRow | null>(size).fill(null);
    this.loadedCards = new Int32Array(size);
    this.progress = recordings && new RecordedProgress(size, this.reward === 'ndtw');
    this.synced = new Array<GameState>(size);
    this.partners = new Array<Partner>(size);
    this.distances = new Array<GeodesicDistance>(size);
    this.tables = new Array<MapTables>(size);

    const { step, info, observation } = this.buffers;
    this.out = {
      reward: step.reward as Float64Array,
      terminated: step.terminated as Uint8Array,
      truncated: step.truncated as Uint8Array,
      potential: info.potential as Float64Array,
      shaping: info.shaping as Float64Array,
      infoScore: info.score as Int32Array,
      points: info.points as Int32Array,
      steps: info.steps as Int32Array,
      instructionId: info.instruction_id as Int32Array,
      terrain: observation.terrain as Uint8Array,
      props: observation.props as Uint8Array,
      walls: observation.walls as Uint8Array,
      cards: observation.cards as Uint8Array,
      visible: observation.visible as Uint8Array,
      cardSeenAgo: observation.card_seen_ago as Int32Array,
      pose: observation.pose as Int32Array,
      leader: observation.leader as Int32Array,
      stepsLeft: observation.steps_left as Int32Array,
      turnsLeft: observation.turns_left as Int32Array,
      score: observation.score as Int32Array,
      actionMask: info.action_mask as Int8Array,
    };
    this.sight = new FollowerSight(size, this.gridCells, this.out, { cardAt: this.cardAt, cardFace: this.cardFace, cardSelected: this.cardSelected, stride: this.cardStride });
  }

  /**
   * Starts every environment: environment i on `seeds[i]`, or, when that game cannot start
   * (GameSetupError), on the next seed after it that can (`seedOf` tells which).
   */
  reset(seeds: ArrayLike<number>): void {
    if (seeds.length !== this.size) throw new RangeError(`reset needs one seed per environment (${this.size}), got ${seeds.length}`);
    for (let slot = 0; slot < this.size; slot++) this.checkStart(seeds[slot]);
    for (let slot = 0; slot < this.size; slot++) this.resetSlot(slot, seeds[slot]);
  }

  /**
   * One action index per environment; an unknown index throws before any environment moves.
   *
   * An environment whose episode ended at the previous step starts its next game instead: on
   * `seeds[slot]` when `seeds` is given (one try), else on `nextSeed` (skipping seeds whose games
   * cannot start). Returns the environments whose given seed could not start a game: they are left
   * ended, with their outputs as the last step wrote them, until `resetAt` starts them.
   */
  step(actions: ArrayLike<number>, seeds?: ArrayLike<number>): readonly number[] {
    if (actions.length !== this.size) throw new RangeError(`step needs one action per environment (${this.size}), got ${actions.length}`);
    if (seeds && seeds.length !== this.size) throw new RangeError(`step's seeds are one per environment (${this.size}), got ${seeds.length}`);
    if (this.synced[0] === undefined) throw new Error('the batch was never reset: call reset() before step()');
    for (let slot = 0; slot < this.size; slot++) {
      const action = actions[slot];
      if (!(action === MOVE_FORWARD || action === MOVE_BACK || action === ROTATE_LEFT || action === ROTATE_RIGHT || action === DONE)) {
        throw new RangeError(`actions are indices 0 to ${FOLLOWER_CODES.length - 1} (${FOLLOWER_CODES.join(', ')}), got ${action} for environment ${slot}`);
      }
      if (seeds && this.ended[slot]) this.checkStart(seeds[slot]);
    }
    let failed: number[] | null = null;
    for (let slot = 0; slot < this.size; slot++) {
      if (!this.ended[slot]) this.stepSlot(slot, actions[slot]);
      else if (!seeds) this.resetSlot(slot, this.nextSeed(slot, this.seeds[slot]));
      else if (!this.tryReset(slot, seeds[slot])) (failed ??= []).push(slot);
    }
    return failed ?? NONE_FAILED;
  }

  /**
   * Starts environment `slot` on `seed`, writing its first observation (reward 0, neither
   * terminated nor truncated); false, with nothing changed, when that seed's game cannot start.
   */
  resetAt(slot: number, seed: number): boolean {
    if (!(Number.isInteger(slot) && slot >= 0 && slot < this.size)) throw new RangeError(`slot must be an integer from 0 to ${this.size - 1}, got ${slot}`);
    this.checkStart(seed);
    return this.tryReset(slot, seed);
  }

  /** The seed of environment `slot`'s current game, or in log mode its episode number. */
  seedOf(slot: number): number {
    return this.seeds[slot];
  }

  /** In log mode, the episode id of environment `slot`'s current episode (`<gameId>#<instruction index>`, as FollowerEnv's); in seed mode `selfplay-<seed>`. */
  episodeIdOf(slot: number): string {
    const episode = this.episodes?.[this.seeds[slot]];
    return episode ? `${episode.recording.header.gameId}#${episode.instruction}` : `selfplay-${this.seeds[slot]}`;
  }

  private checkStart(value: number): void {
    if (this.episodes) {
      if (!(Number.isInteger(value) && value >= 0 && value < this.episodes.length)) throw new RangeError(`episodes are numbered 0 to ${this.episodes.length - 1}, got ${value}`);
    } else if (!(Number.isInteger(value) && value >= 0 && value <= MAX_SEED)) {
      throw new RangeError(`seeds are integers from 0 to ${MAX_SEED}, got ${value}`);
    }
  }

  /** The engine state environment `slot` stands for (built from its arrays: for checks, not for the hot path). */
  stateOf(slot: number): GameState {
    return this.materialize(slot);
  }

  /** Starts environment `slot` on `seed`, or on the next seed after it whose game can start. */
  private resetSlot(slot: number, seed: number): void {
    for (let tries = 0; !this.tryReset(slot, seed); tries++) {
      if (tries >= MOST_SETUP_RETRIES) throw new GameSetupError(`${MOST_SETUP_RETRIES} seeds in a row up to ${seed} give no game`);
      seed = this.nextSeed(slot, seed);
    }
  }

  /** Starts environment `slot` on `seed`; false, with nothing changed, when that seed's game cannot start. */
  private tryReset(slot: number, seed: number): boolean {
    const start = this.episodes ? logStart(this.episodes[seed].recording, this.episodes[seed].instruction) : this.selfPlayStartOf(seed);
    if (!start) return false;
    const known = this.known(start.start);
    this.seeds[slot] = seed;
    this.partners[slot] = start.partner;
    this.tables[slot] = known.tables;
    this.distances[slot] = known.distance;
    this.sight.restart(slot);
    this.steps[slot] = 0;
    this.ended[slot] = 0;
    // A new game: its cards and tasks are not the last game's, whatever their ids.
    this.targetOf[slot] = -1;
    this.loadedCards[slot] = -1;
    this.load(slot, start.start);
    if (this.progress) {
      this.progress.restart(slot);
      this.followProgress(slot);
    }
    this.phi[slot] = this.potential(slot);
    this.write(slot, 0, 0, 0, 0, 0);
    return true;
  }

  /** The follower's action, on the arrays when they hold all it changes, else by the engine; then the leader's turns. */
  private stepSlot(slot: number, action: number): void {
    const scoreBefore = this.score[slot];
    const partner = this.partners[slot];
    let exhausted = false;
    if (this.stepOnArrays(slot, action)) {
      // A recorded timeout or cancel can end the follower's turn after any of its actions.
      if (partner.countFollowerAction()) exhausted = this.playLeader(slot, this.materialize(slot));
    } else {
      const result = partner.stepFollower(this.materialize(slot), ENGINE_ACTIONS[action]);
      if (!result.ok) throw new Error(`the engine refused the follower's ${FOLLOWER_CODES[action]}: ${result.error.code}: ${result.error.message}`);
      if (this.progress) for (const id of result.outcome.toggled ?? []) this.progress.flipped(slot, id);
      exhausted = this.playLeader(slot, result.state);
    }
    this.steps[slot]++;
    // As FollowerEnv: the step's cell joins the path of the instruction it was taken for, then the progress follows the instruction current now.
    if (this.progress) {
      if (action !== DONE) this.progress.moved(slot, this.recordingOf(slot), this.cell[slot], this.distances[slot]);
      this.followProgress(slot);
    }
    const terminated = this.gameOver[slot] === 1;
    const truncated = !terminated && (exhausted || this.steps[slot] >= this.maxSteps);
    // As FollowerEnv's advance: phi(s') for the instruction current at s', 0 at the game's end.
    const phiNext = terminated ? 0 : this.potential(slot);
    const shaping = this.gamma * phiNext - this.phi[slot];
    this.phi[slot] = phiNext;
    this.ended[slot] = terminated || truncated ? 1 : 0;
    const points = this.score[slot] - scoreBefore;
    this.write(slot, points + shaping, terminated ? 1 : 0, truncated ? 1 : 0, shaping, points);
  }

  /** What the batch derives once per world: the tables and the distances. */
  private known(state: GameState): { readonly tables: MapTables; readonly distance: GeodesicDistance } {
    let known = this.worlds.get(state.world);
    if (!known) {
      known = { tables: new MapTables(state.world, this.grid, state.config), distance: new GeodesicDistance(state.world) };
      this.worlds.set(state.world, known);
    }
    return known;
  }

  /** Seed mode's start on `seed`, kept or made (null when that seed's game cannot start). */
  private selfPlayStartOf(seed: number): { readonly partner: Partner; readonly start: GameState } | null {
    const kept = this.kept.get(seed);
    if (kept !== undefined) {
      // Most recently started last: the first is the one to drop.
      this.kept.delete(seed);
      this.kept.set(seed, kept);
      // A level's leaders share its world's planner (PathPlanner.shared): its distance fields come back with the level, and its answers do not depend on what it holds.
      return kept && { start: kept.start, partner: new ScriptedPartner(kept.start.world, seed, kept.partner, PathPlanner.shared(kept.start.world)) };
    }
    let made: ReturnType<typeof selfPlayStart> | null = null;
    try {
      made = selfPlayStart(seed);
    } catch (error) {
      if (!(error instanceof GameSetupError)) throw error;
    }
    if (this.keptStarts > 0) {
      this.kept.set(seed, made && { start: made.start, partner: made.partner.memory() });
      if (this.kept.size > this.keptStarts) this.kept.delete(this.kept.keys().next().value!);
    }
    return made;
  }

  /** The leader's turns from `state`, loaded into the arrays; true when a recording had no more to play. */
  private playLeader(slot: number, state: GameState): boolean {
    const play = this.partners[slot].playLeader(state);
    this.load(slot, play.state);
    return play.exhausted;
  }

  /** Log mode: the progress follows the instruction current now. */
  private followProgress(slot: number): void {
    this.progress!.follow(slot, this.currentInstruction(slot), this.recordingOf(slot), this.cell[slot], this.distances[slot]);
  }

  /** Log mode: the recording environment `slot`'s episode is of. */
  private recordingOf(slot: number): Recording {
    return this.episodes![this.seeds[slot]].recording;
  }

  /**
   * Plays the follower's action on the arrays and returns true, or returns false with nothing
   * changed when the action would end the turn or make a set (the engine plays those).
   */
  private stepOnArrays(slot: number, action: number): boolean {
    const heading = this.heading[slot];
    if (action === DONE) {
      const queue = this.synced[slot].queue;
      if (this.queueHead[slot] + 1 >= queue.length) return false;
      this.currentId[slot] = queue[++this.queueHead[slot]].id;
      this.dirty[slot] = 1;
      return true;
    }
    if (action === ROTATE_LEFT || action === ROTATE_RIGHT) {
      if (this.stepsLeft[slot] === 1) return false;
      this.heading[slot] = (heading + (action === ROTATE_LEFT ? 5 : 1)) % 6;
      this.stepsLeft[slot]--;
      this.dirty[slot] = 1;
      return true;
    }
    const direction = action === MOVE_FORWARD ? heading : (heading + 3) % 6;
    const target = this.tables[slot].world.steps[this.cell[slot] * 6 + direction];
    // Blocked: the engine accepts it as a no-op that costs no step.
    if (target < 0) return true;
    if (this.stepsLeft[slot] === 1) return false;
    const card = this.cardAt[slot * this.gridCells + target];
    if (card !== NO_CARD) {
      this.toggle(slot, card);
      if (this.selectedCount[slot] === 3 && this.selectionIsSet(slot)) {
        this.toggle(slot, card);
        return false;
      }
      this.progress?.flipped(slot, this.cardId[slot * this.cardStride + card]);
    }
    this.cell[slot] = target;
    this.stepsLeft[slot]--;
    this.dirty[slot] = 1;
    return true;
  }

  private toggle(slot: number, card: number): void {
    const k = slot * this.cardStride + card;
    this.cardSelected[k] ^= 1;
    this.selectedCount[slot] += this.cardSelected[k] ? 1 : -1;
  }

  /** The three selected cards differ in every colour, shape and count (the engine's isValidSet). */
  private selectionIsSet(slot: number): boolean {
    const first = slot * this.cardStride;
    let a = -1;
    let b = -1;
    let c = -1;
    for (let k = first; k < first + this.cardCount[slot]; k++) {
      if (!this.cardSelected[k]) continue;
      if (a < 0) a = k;
      else if (b < 0) b = k;
      else c = k;
    }
    const face = this.cardFace;
    for (let property = 0; property < 3; property++) {
      const x = face[a * 3 + property];
      const y = face[b * 3 + property];
      const z = face[c * 3 + property];
      if (x === y || y === z || x === z) return false;
    }
    return true;
  }

  /** The engine state the arrays stand for: `synced` with the follower's actions on the arrays applied. */
  private materialize(slot: number): GameState {
    const state = this.synced[slot];
    if (!this.dirty[slot]) return state;
    const head = this.queueHead[slot];
    const first = slot * this.cardStride;
    const x = this.cell[slot] % state.world.width;
    return updateState(state, {
      follower: { x, y: (this.cell[slot] - x) / state.world.width, heading: HEADINGS[this.heading[slot]] },
      turn: { role: 'follower', stepsLeft: this.stepsLeft[slot] },
      cards: state.cards.map((card, k): Card => (card.selected === (this.cardSelected[first + k] === 1) ? card : { ...card, selected: !card.selected })),
      queue: head > 0 ? state.queue.slice(head) : state.queue,
      previousInstruction: head > 0 ? state.queue[head - 1] : state.previousInstruction,
    });
  }

  /** Loads the arrays from an engine state. */
  private load(slot: number, state: GameState): void {
    const width = state.world.width;
    this.synced[slot] = state;
    this.queueHead[slot] = 0;
    this.currentId[slot] = state.queue.length > 0 ? state.queue[0].id : -1;
    this.dirty[slot] = 0;
    // After a set the cards changed order: find the target card again.
    if (state.nextCardId !== this.loadedCards[slot]) {
      this.loadedCards[slot] = state.nextCardId;
      this.targetOf[slot] = -1;
    }
    this.cell[slot] = state.follower.y * width + state.follower.x;
    this.heading[slot] = HEADINGS.indexOf(state.follower.heading);
    this.leaderCell[slot] = state.leader.y * width + state.leader.x;
    this.leaderHeading[slot] = HEADINGS.indexOf(state.leader.heading);
    this.stepsLeft[slot] = state.turn.role === 'follower' && !state.gameOver ? state.turn.stepsLeft : 0;
    this.turnsLeft[slot] = state.turnsLeft;
    this.score[slot] = state.score;
    this.gameOver[slot] = state.gameOver ? 1 : 0;
    const cells = slot * this.gridCells;
    const first = slot * this.cardStride;
    for (let k = first; k < first + this.cardCount[slot]; k++) this.cardAt[cells + this.cardCell[k]] = NO_CARD;
    if (state.cards.length > this.cardStride) throw new Error(`the batch holds ${this.cardStride} cards a game, the state has ${state.cards.length}`);
    this.cardCount[slot] = state.cards.length;
    let selected = 0;
    state.cards.forEach((card, i) => {
      const k = first + i;
      const cell = card.y * width + card.x;
      this.cardId[k] = card.id;
      this.cardCell[k] = cell;
      this.cardAt[cells + cell] = i;
      this.cardFace[k * 3] = COLOR_CODE[card.color];
      this.cardFace[k * 3 + 1] = SHAPE_CODE[card.shape];
      this.cardFace[k * 3 + 2] = card.count;
      this.cardSelected[k] = card.selected ? 1 : 0;
      if (card.selected) selected++;
    });
    this.selectedCount[slot] = selected;
  }

  /** The id of the current instruction, -1 when none is queued. */
  private currentInstruction(slot: number): number {
    return this.currentId[slot];
  }

  /** phi, as FollowerEnv's distance potential: minus the walk to the current task's card while its selection is not the one asked for. */
  private potential(slot: number): number {
    if (this.reward === 'sparse') return 0;
    const instruction = this.currentInstruction(slot);
    if (instruction < 0) return 0;
    if (this.episodes) return this.recordedPotential(slot, instruction);
    if (this.targetOf[slot] !== instruction) this.findTarget(slot, instruction);
    const card = this.targetCard[slot];
    if (card < 0) return 0;
    if (this.cardSelected[slot * this.cardStride + card] === this.targetSelect[slot]) return 0;
    // A cell no walk reaches the card from is left out, as FollowerEnv leaves out an infinite distance.
    const apart = this.distances[slot].stepsTo(this.targetField[slot]!, this.cell[slot]);
    return apart < 0 ? 0 : -apart;
  }

  /**
   * Log mode's phi, as FollowerEnv's: 'distance', minus the walk to the nearest card the recorded
   * follower changed for the instruction that is on the board and not changed yet; 'ndtw', the
   * nDTW of the path so far against the recorded one (0 without one).
   */
  private recordedPotential(slot: number, instruction: number): number {
    const progress = this.progress!;
    if (this.reward === 'ndtw') return progress.ndtw(slot);
    const recording = this.recordingOf(slot);
    const first = slot * this.cardStride;
    let nearest = Infinity;
    for (let k = first; k < first + this.cardCount[slot]; k++) {
      if (!progress.stillToChange(slot, recording, instruction, this.cardId[k])) continue;
      const distance = this.distances[slot];
      const apart = distance.stepsTo(distance.searchFrom(this.tables[slot].size.cells[this.cardCell[k]]), this.cell[slot]);
      if (apart >= 0 && apart < nearest) nearest = apart;
    }
    return nearest === Infinity ? 0 : -nearest;
  }

  /** The card of the leader's task for `instruction`, by its index among the game's cards (-1 when there is no task or the card is gone). */
  private findTarget(slot: number, instruction: number): void {
    // Seed mode only: its partners are ScriptedPartners.
    const task = (this.partners[slot] as ScriptedPartner).taskOf(instruction);
    this.targetOf[slot] = instruction;
    const first = slot * this.cardStride;
    let card = -1;
    if (task) for (let k = first; k < first + this.cardCount[slot] && card < 0; k++) if (this.cardId[k] === task.cardId) card = k - first;
    this.targetCard[slot] = card;
    this.targetSelect[slot] = task?.select ? 1 : 0;
    // The field from the card: one breadth-first search per target card, not one per follower cell (d is symmetric).
    this.targetField[slot] = card < 0 ? null : this.distances[slot].searchFrom(this.tables[slot].size.cells[this.cardCell[first + card]]);
  }

  /** Writes environment `slot`'s observation, mask, reward and info into the buffers. */
  private write(slot: number, reward: number, terminated: number, truncated: number, shaping: number, points: number): void {
    const out = this.out;
    const tables = this.tables[slot];
    const { gridIndex } = tables.size;
    this.sight.observe(slot, tables, this.cell[slot], this.heading[slot]);
    const grid = slot * this.gridCells;
    const pose = this.cell[slot] * 6 + this.heading[slot];
    const x = this.cell[slot] % tables.world.width;
    out.pose[slot * 3] = x;
    out.pose[slot * 3 + 1] = (this.cell[slot] - x) / tables.world.width;
    out.pose[slot * 3 + 2] = this.heading[slot];
    const leader = this.leaderCell[slot];
    if (out.visible[grid + gridIndex[leader]]) {
      const leaderX = leader % tables.world.width;
      out.leader[slot * 4] = 1;
      out.leader[slot * 4 + 1] = leaderX;
      out.leader[slot * 4 + 2] = (leader - leaderX) / tables.world.width;
      out.leader[slot * 4 + 3] = this.leaderHeading[slot];
    } else {
      out.leader.fill(-1, slot * 4, slot * 4 + 4);
      out.leader[slot * 4] = 0;
    }
    out.stepsLeft[slot] = this.stepsLeft[slot];
    out.turnsLeft[slot] = this.turnsLeft[slot];
    out.score[slot] = this.score[slot];
    const instruction = this.currentInstruction(slot);
    const acting = this.stepsLeft[slot] > 0;
    const steps = tables.world.steps;
    const mask = slot * ACTIONS;
    out.actionMask[mask + MOVE_FORWARD] = acting && steps[pose] >= 0 ? 1 : 0;
    out.actionMask[mask + MOVE_BACK] = acting && steps[this.cell[slot] * 6 + ((this.heading[slot] + 3) % 6)] >= 0 ? 1 : 0;
    out.actionMask[mask + ROTATE_LEFT] = acting ? 1 : 0;
    out.actionMask[mask + ROTATE_RIGHT] = acting ? 1 : 0;
    out.actionMask[mask + DONE] = acting && instruction >= 0 ? 1 : 0;

    out.reward[slot] = reward;
    out.terminated[slot] = terminated;
    out.truncated[slot] = truncated;
    out.potential[slot] = this.phi[slot];
    out.shaping[slot] = shaping;
    out.infoScore[slot] = this.score[slot];
    out.points[slot] = points;
    out.steps[slot] = this.steps[slot];
    out.instructionId[slot] = instruction < 0 ? -1 : followerInstructionId(this.synced[slot], instruction);
  }
}
