/**
 * A player's observation as flat numeric arrays, for learners in other languages: the Python
 * package maps each array onto the bytes with numpy, without touching its elements one by one.
 * A `Layout` says where each field lies in an encoded block; `FollowerArrays` and `LeaderArrays`
 * write a role's view into such blocks. Nothing here decides what a player knows: the follower's
 * arrays are built from its `FollowerObservation` and the leader's from its `PlayerView`, both the
 * engine's `playerView`.
 *
 * Grids are indexed [y][x] (row y = the map's terrain[y]; y grows to the north) and padded to the
 * largest map among the environment's tasks; cells past a map's edge have code 0, "off-map".
 */
import { FOLLOWER_CODES } from '../engine/actions';
import { allowsCode } from '../engine/legal';
import { COLORS, SHAPES, type Card } from '../engine/cards';
import type { GameConfig } from '../engine/config';
import { HEADINGS, stepFrom, type Pose } from '../engine/hex';
import { PROP_TYPES, TERRAIN_LETTERS } from '../engine/map';
import { UNSEEN, type KnownMap, type PlayerView } from '../engine/playerView';
import { describeObservation } from '../agents/language';
import { LEADER_AGENT_CODES, type FollowerObservation } from '../agents/types';
import type { EnvInfo } from './env';
import type { LeaderEnvInfo } from './leaderEnv';

export type Dtype = 'uint8' | 'int8' | 'int32' | 'float64';
export const DTYPE_BYTES: Readonly<Record<Dtype, number>> = { uint8: 1, int8: 1, int32: 4, float64: 8 };

/** `step`: reward, terminated, truncated; `observation` and `info`: the keys of Gymnasium's obs and info dicts. */
export type FieldGroup = 'step' | 'observation' | 'info';

export interface ScalarField {
  readonly name: string;
  readonly group: FieldGroup;
  readonly dtype: Dtype;
}

export interface ArrayField extends ScalarField {
  readonly shape: readonly number[];
  /** Bounds of every element (a Gymnasium Box). */
  readonly low: number;
  readonly high: number;
  /** Byte offset in the block, a multiple of the element size. */
  readonly offset: number;
}

export interface TextField {
  readonly name: string;
  readonly group: FieldGroup;
  /** Most characters (Unicode code points) the text can have. */
  readonly maxLength: number;
}

/**
 * Where everything lies in a block. A block is the fixed part (`fixedBytes`: the scalars, packed
 * little-endian from byte 0 in order without padding, then the arrays at their offsets) followed
 * by the texts in order, each a little-endian uint32 byte count and that many bytes of UTF-8.
 */
export interface Layout {
  readonly scalars: readonly ScalarField[];
  readonly arrays: readonly ArrayField[];
  readonly fixedBytes: number;
  readonly texts: readonly TextField[];
  /** Action names in the order of their indices and of `action_mask`. */
  readonly actions: readonly string[];
  /** What the codes in the arrays mean: code i of `terrain` is `codes.terrain[i]`, and so on. */
  readonly codes: Readonly<Record<string, readonly string[]>>;
}

/** Grid codes. Terrain 1 is a cell the follower has not seen; the leader sees every cell. */
export const GRID_CODES = {
  terrain: ['off-map', 'unseen', ...Object.values(TERRAIN_LETTERS)],
  props: ['none', ...PROP_TYPES],
  colors: ['none', ...COLORS],
  shapes: ['none', ...SHAPES],
  headings: [...HEADINGS],
  /** The last axis of `cards`. */
  cardChannels: ['color', 'shape', 'count', 'selected'],
} as const;

/** The grids' codes by name (the batched environment writes the same codes). */
export const TERRAIN_CODE: Readonly<Record<string, number>> = Object.fromEntries(
  [UNSEEN, ...Object.keys(TERRAIN_LETTERS)].map((letter, i) => [letter, i + 1]),
);
/** TERRAIN_CODE by a map letter's char code: maps are encoded per game, and a string key per cell costs several times more. */
export const TERRAIN_CODE_BY_CHAR: Uint8Array = (() => {
  const codes = new Uint8Array(128);
  for (const [letter, code] of Object.entries(TERRAIN_CODE)) codes[letter.charCodeAt(0)] = code;
  return codes;
})();
const codeOf = (names: readonly string[]): Readonly<Record<string, number>> => Object.fromEntries(names.map((name, i) => [name, i]));
export const PROP_CODE = codeOf(GRID_CODES.props);
export const COLOR_CODE = codeOf(GRID_CODES.colors);
export const SHAPE_CODE = codeOf(GRID_CODES.shapes);
const HEADING_CODE = codeOf(GRID_CODES.headings);
const CARD_CHANNELS = GRID_CODES.cardChannels.length;

/** Descriptions are a few hundred characters; this bound holds even with every card of a long game remembered. */
export const MAX_DESCRIPTION_LENGTH = 1 << 17;
const INT32_MAX = 2 ** 31 - 1;

/** The grid size of an environment: the largest width and height among its tasks' maps. */
export interface GridSize {
  readonly width: number;
  readonly height: number;
}

class LayoutBuilder {
  private readonly scalars: ScalarField[] = [];
  private readonly arrays: Omit<ArrayField, 'offset'>[] = [];
  private readonly texts: TextField[] = [];

  scalar(group: FieldGroup, name: string, dtype: Dtype): this {
    this.scalars.push({ name, group, dtype });
    return this;
  }

  array(group: FieldGroup, name: string, dtype: Dtype, shape: readonly number[], low: number, high: number): this {
    this.arrays.push({ name, group, dtype, shape, low, high });
    return this;
  }

  text(group: FieldGroup, name: string, maxLength: number): this {
    this.texts.push({ name, group, maxLength });
    return this;
  }

  /** Arrays go widest element first, so that each lies at a multiple of its element size. */
  build(actions: readonly string[]): Layout {
    let offset = this.scalars.reduce((bytes, field) => bytes + DTYPE_BYTES[field.dtype], 0);
    offset = Math.ceil(offset / 8) * 8;
    const arrays: ArrayField[] = [];
    for (const field of [...this.arrays].sort((a, b) => DTYPE_BYTES[b.dtype] - DTYPE_BYTES[a.dtype])) {
      arrays.push({ ...field, offset });
      offset += DTYPE_BYTES[field.dtype] * field.shape.reduce((n, size) => n * size, 1);
    }
    return { scalars: this.scalars, arrays, fixedBytes: offset, texts: this.texts, actions, codes: GRID_CODES };
  }
}

export type TypedArray = Uint8Array | Int8Array | Int32Array | Float64Array;
export const TYPED_ARRAYS: Readonly<Record<Dtype, new (buffer: ArrayBuffer, offset: number, length: number) => TypedArray>> = {
  uint8: Uint8Array,
  int8: Int8Array,
  int32: Int32Array,
  float64: Float64Array,
};

const utf8 = new TextEncoder();

/**
 * One block, written field by field and reused from step to step (a field not written keeps its
 * value). `parts()` gives its bytes without copying them: valid until the next write.
 */
class Block {
  private readonly fixed: Uint8Array;
  private readonly data: DataView;
  private readonly scalarAt = new Map<string, { offset: number; dtype: Dtype }>();
  private readonly arrays = new Map<string, TypedArray>();
  private readonly textIndex: ReadonlyMap<string, number>;
  private readonly textValues: string[];
  private texts = new Uint8Array(4096);

  constructor(readonly layout: Layout) {
    const buffer = new ArrayBuffer(layout.fixedBytes);
    this.fixed = new Uint8Array(buffer);
    this.data = new DataView(buffer);
    let offset = 0;
    for (const field of layout.scalars) {
      this.scalarAt.set(field.name, { offset, dtype: field.dtype });
      offset += DTYPE_BYTES[field.dtype];
    }
    for (const field of layout.arrays) {
      this.arrays.set(field.name, new TYPED_ARRAYS[field.dtype](buffer, field.offset, field.shape.reduce((n, size) => n * size, 1)));
    }
    this.textIndex = new Map(layout.texts.map((field, i) => [field.name, i]));
    this.textValues = layout.texts.map(() => '');
  }

  setScalar(name: string, value: number): void {
    const { offset, dtype } = this.scalarAt.get(name)!;
    switch (dtype) {
      case 'float64':
        return this.data.setFloat64(offset, value, true);
      case 'int32':
        return this.data.setInt32(offset, value, true);
      case 'uint8':
        return this.data.setUint8(offset, value);
      case 'int8':
        return this.data.setInt8(offset, value);
    }
  }

  array(name: string): TypedArray {
    return this.arrays.get(name)!;
  }

  setText(name: string, text: string): void {
    this.textValues[this.textIndex.get(name)!] = text;
  }

  /** The fixed part, then the texts, each a u32 byte count and its UTF-8. */
  parts(): Uint8Array[] {
    let length = 0;
    for (const text of this.textValues) {
      // UTF-8 takes at most 3 bytes per UTF-16 unit.
      if (this.texts.length < length + 4 + 3 * text.length) this.grow(length + 4 + 3 * text.length);
      const { written } = utf8.encodeInto(text, this.texts.subarray(length + 4));
      new DataView(this.texts.buffer).setUint32(length, written, true);
      length += 4 + written;
    }
    return [this.fixed, this.texts.subarray(0, length)];
  }

  private grow(atLeast: number): void {
    const texts = new Uint8Array(Math.max(atLeast, 2 * this.texts.length));
    texts.set(this.texts);
    this.texts = texts;
  }
}

/**
 * Terrain, props and walls change only when the map object does: a player's known map is the same
 * object while nothing new was seen. `walls[y][x]` has bit d set when the side of the cell towards
 * HEADINGS[d] is a wall (both cells of a wall have their side set).
 */
class MapGrids {
  private written: KnownMap | null = null;

  constructor(private readonly grid: GridSize) {}

  write(block: Block, map: KnownMap): void {
    if (map === this.written) return;
    const terrain = block.array('terrain');
    const props = block.array('props');
    terrain.fill(0);
    props.fill(0);
    for (let y = 0; y < map.height; y++) {
      const row = map.terrain[y];
      for (let x = 0; x < map.width; x++) terrain[y * this.grid.width + x] = TERRAIN_CODE_BY_CHAR[row.charCodeAt(x)];
    }
    for (const prop of map.props) props[prop.y * this.grid.width + prop.x] = PROP_CODE[prop.type];
    const walls = block.array('walls');
    walls.fill(0);
    for (const wall of map.walls ?? []) {
      const side = HEADINGS.indexOf(wall.side);
      walls[wall.y * this.grid.width + wall.x] |= 1 << side;
      const there = stepFrom(wall, wall.side);
      if (there.x >= 0 && there.y >= 0 && there.x < map.width && there.y < map.height) walls[there.y * this.grid.width + there.x] |= 1 << ((side + 3) % 6);
    }
    this.written = map;
  }
}

function writeCard(cards: TypedArray, cell: number, card: Card): void {
  const at = cell * CARD_CHANNELS;
  cards[at] = COLOR_CODE[card.color];
  cards[at + 1] = SHAPE_CODE[card.shape];
  cards[at + 2] = card.count;
  cards[at + 3] = card.selected ? 1 : 0;
}

function writePose(target: TypedArray, at: number, pose: Pose): void {
  target[at] = pose.x;
  target[at + 1] = pose.y;
  target[at + 2] = HEADING_CODE[pose.heading];
}

/** What every transition carries besides the observation. */
export interface Transition {
  readonly reward: number;
  readonly terminated: boolean;
  readonly truncated: boolean;
}

/** The fields both roles share: a grid of the map, the cards and the counters. */
function commonFields(builder: LayoutBuilder, grid: GridSize, config: GameConfig, stepsLeft: number): LayoutBuilder {
  const { width, height } = grid;
  // A player starts with turnsPerPlayer turns, and each set adds its scheduled extra turns at most once.
  const mostTurns = config.turnsPerPlayer + config.extraTurns.reduce((sum, turns) => sum + turns, 0);
  return builder
    .scalar('step', 'reward', 'float64')
    .scalar('step', 'terminated', 'uint8')
    .scalar('step', 'truncated', 'uint8')
    .array('observation', 'terrain', 'uint8', [height, width], 0, GRID_CODES.terrain.length - 1)
    .array('observation', 'props', 'uint8', [height, width], 0, GRID_CODES.props.length - 1)
    .array('observation', 'walls', 'uint8', [height, width], 0, 63)
    .array('observation', 'cards', 'uint8', [height, width, CARD_CHANNELS], 0, Math.max(COLORS.length, SHAPES.length))
    .array('observation', 'pose', 'int32', [3], 0, Math.max(width, height, HEADINGS.length) - 1)
    .array('observation', 'steps_left', 'int32', [1], 0, stepsLeft)
    .array('observation', 'turns_left', 'int32', [1], 0, mostTurns)
    .array('observation', 'score', 'int32', [1], 0, INT32_MAX);
}

function writeTransition(block: Block, transition: Transition): void {
  block.setScalar('reward', transition.reward);
  block.setScalar('terminated', transition.terminated ? 1 : 0);
  block.setScalar('truncated', transition.truncated ? 1 : 0);
}

export interface FollowerArraysOptions {
  readonly grid: GridSize;
  readonly config: GameConfig;
  /** The environment's maxSteps: no card can be remembered from longer ago. */
  readonly maxSteps: number;
  /** Add `describeObservation`'s text (it costs about as much as the step itself). */
  readonly description: boolean;
  /** Add the info fields `potential` and `shaping` (the follower environment's rewards have them; the two-player game's do not). */
  readonly shaping: boolean;
}

/** What the follower's info fields are written from. */
export type FollowerArraysInfo = Pick<EnvInfo, 'instructionId' | 'score' | 'points' | 'steps'> & Partial<Pick<EnvInfo, 'potential' | 'shaping'>>;

/**
 * The follower's observation as arrays: its known terrain and props, the cells in view, the cards
 * it sees and remembers (`card_seen_ago`: 0 in view now, n seen n moves ago, -1 no card known),
 * its pose, the leader's when in view (`leader`: in view, x, y, heading; -1 when not in view), the
 * counters; the instructions and the text description as texts.
 */
export class FollowerArrays {
  readonly layout: Layout;
  private readonly block: Block;
  private readonly maps: MapGrids;

  constructor(private readonly options: FollowerArraysOptions) {
    const { grid, config, maxSteps, description, shaping } = options;
    const extent = Math.max(grid.width, grid.height, HEADINGS.length) - 1;
    const builder = commonFields(new LayoutBuilder(), grid, config, config.followerSteps);
    if (shaping) builder.scalar('info', 'potential', 'float64').scalar('info', 'shaping', 'float64');
    builder
      .scalar('info', 'score', 'int32')
      .scalar('info', 'points', 'int32')
      .scalar('info', 'steps', 'int32')
      .scalar('info', 'instruction_id', 'int32')
      .array('observation', 'visible', 'uint8', [grid.height, grid.width], 0, 1)
      .array('observation', 'card_seen_ago', 'int32', [grid.height, grid.width], -1, maxSteps)
      .array('observation', 'leader', 'int32', [4], -1, extent)
      .array('info', 'action_mask', 'int8', [FOLLOWER_CODES.length], 0, 1)
      .text('observation', 'instruction', config.maxInstructionLength)
      .text('observation', 'previous_instruction', config.maxInstructionLength);
    if (description) builder.text('observation', 'description', MAX_DESCRIPTION_LENGTH);
    this.layout = builder.build(FOLLOWER_CODES);
    this.block = new Block(this.layout);
    this.maps = new MapGrids(grid);
  }

  /** The block's bytes, as parts valid until the next call. */
  encode(observation: FollowerObservation, transition: Transition, info: FollowerArraysInfo): Uint8Array[] {
    const { block } = this;
    const width = this.options.grid.width;
    writeTransition(block, transition);
    if (this.options.shaping) {
      block.setScalar('potential', info.potential ?? 0);
      block.setScalar('shaping', info.shaping ?? 0);
    }
    block.setScalar('score', info.score);
    block.setScalar('points', info.points);
    block.setScalar('steps', info.steps);
    block.setScalar('instruction_id', info.instructionId ?? -1);

    this.maps.write(block, observation.map);
    const visible = block.array('visible');
    visible.fill(0);
    for (const cell of observation.visibleCells) visible[cell.y * width + cell.x] = 1;
    const cards = block.array('cards');
    const seenAgo = block.array('card_seen_ago');
    cards.fill(0);
    seenAgo.fill(-1);
    for (const card of observation.visibleCards) {
      writeCard(cards, card.y * width + card.x, card);
      seenAgo[card.y * width + card.x] = 0;
    }
    // A remembered card's cell is out of view, and a cell holds one card: nothing overlaps.
    for (const card of observation.rememberedCards) {
      writeCard(cards, card.y * width + card.x, card);
      seenAgo[card.y * width + card.x] = card.seenAgo;
    }
    writePose(block.array('pose'), 0, observation.pose);
    const leader = block.array('leader');
    if (observation.leader) {
      leader[0] = 1;
      writePose(leader, 1, observation.leader);
    } else {
      leader.fill(-1);
      leader[0] = 0;
    }
    block.array('steps_left')[0] = observation.stepsLeft;
    block.array('turns_left')[0] = observation.turnsLeft;
    block.array('score')[0] = observation.score;
    const mask = block.array('action_mask');
    FOLLOWER_CODES.forEach((code, i) => (mask[i] = observation.legal.includes(code) ? 1 : 0));

    block.setText('instruction', observation.instruction?.text ?? '');
    block.setText('previous_instruction', observation.previousInstruction?.text ?? '');
    if (this.options.description) block.setText('description', describeObservation(observation));
    return block.parts();
  }
}

/** The leader's actions by index: the codes, then writing an instruction (its text goes with it). */
export const LEADER_ACTION_NAMES = [...LEADER_AGENT_CODES, 'INSTRUCTION'] as const;

export interface LeaderArraysOptions {
  readonly grid: GridSize;
  readonly config: GameConfig;
  /** Add the info field `follower_actions` (the leader environment's built-in follower plays inside a step; in the two-player game it does not). */
  readonly followerActions: boolean;
}

/** What the leader's info fields are written from. */
export type LeaderArraysInfo = Pick<LeaderEnvInfo, 'score' | 'points' | 'steps' | 'refused'> & Partial<Pick<LeaderEnvInfo, 'followerActions'>>;

/**
 * The leader's view as arrays: the whole terrain and props, every card (`card_invalid`: the red
 * marks of a selection that cannot become a set), its own pose and the follower's, the counters
 * and the queue's length; the queued instructions (current first, one per line) and the last one
 * done as texts.
 */
export class LeaderArrays {
  readonly layout: Layout;
  private readonly block: Block;
  private readonly maps: MapGrids;

  constructor(private readonly options: LeaderArraysOptions) {
    const { grid, config, followerActions } = options;
    const mostQueued = config.maxQueuedInstructions ?? INT32_MAX;
    const builder = commonFields(new LayoutBuilder(), grid, config, config.leaderSteps)
      .scalar('info', 'score', 'int32')
      .scalar('info', 'points', 'int32')
      .scalar('info', 'steps', 'int32');
    if (followerActions) builder.scalar('info', 'follower_actions', 'int32');
    this.layout = builder
      .array('observation', 'card_invalid', 'uint8', [grid.height, grid.width], 0, 1)
      .array('observation', 'follower', 'int32', [3], 0, Math.max(grid.width, grid.height, HEADINGS.length) - 1)
      .array('observation', 'queue_length', 'int32', [1], 0, mostQueued)
      .array('info', 'action_mask', 'int8', [LEADER_ACTION_NAMES.length], 0, 1)
      .text('observation', 'queue', Math.min(mostQueued * (config.maxInstructionLength + 1), MAX_DESCRIPTION_LENGTH))
      .text('observation', 'previous_instruction', config.maxInstructionLength)
      .text('info', 'refused', 40)
      .build(LEADER_ACTION_NAMES);
    this.block = new Block(this.layout);
    this.maps = new MapGrids(grid);
  }

  /** The block's bytes, as parts valid until the next call. */
  encode(view: PlayerView, transition: Transition, info: LeaderArraysInfo): Uint8Array[] {
    const { block } = this;
    const width = this.options.grid.width;
    writeTransition(block, transition);
    block.setScalar('score', info.score);
    block.setScalar('points', info.points);
    block.setScalar('steps', info.steps);
    if (this.options.followerActions) block.setScalar('follower_actions', info.followerActions ?? 0);

    this.maps.write(block, view.map);
    const cards = block.array('cards');
    const invalid = block.array('card_invalid');
    cards.fill(0);
    invalid.fill(0);
    for (const card of view.cards) {
      writeCard(cards, card.y * width + card.x, card);
      if (view.invalidCards.includes(card.id)) invalid[card.y * width + card.x] = 1;
    }
    writePose(block.array('pose'), 0, view.leader!);
    writePose(block.array('follower'), 0, view.follower);
    block.array('steps_left')[0] = view.turn.role === 'leader' ? (view.turn.stepsLeft ?? 0) : 0;
    block.array('turns_left')[0] = view.turnsLeft;
    block.array('score')[0] = view.score;
    const queue = view.instructions.filter((instruction) => instruction.status !== 'done');
    block.array('queue_length')[0] = queue.length;
    const mask = block.array('action_mask');
    LEADER_AGENT_CODES.forEach((code, i) => (mask[i] = allowsCode(view.legal, code) ? 1 : 0));
    mask[LEADER_AGENT_CODES.length] = view.legal.instruction ? 1 : 0;

    // Instruction texts are sanitized: no line breaks inside one.
    block.setText('queue', queue.map((instruction) => instruction.text).join('\n'));
    block.setText('previous_instruction', view.instructions.filter((instruction) => instruction.status === 'done').at(-1)?.text ?? '');
    block.setText('refused', info.refused?.code ?? '');
    return block.parts();
  }
}
