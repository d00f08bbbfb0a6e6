/** The game state and how a game starts. */
import { cardWith, type Card } from './cards';
import { type GameConfig } from './config';
import { GameSetupError } from './errors';
import type { Pose } from './hex';
import { buildWorld, cellIndex, type GameMap, type World } from './map';
import { drawCards, placementProblem } from './placement';
import { Draw, seedRng, type RngState } from './rng';

export const ROLES = ['leader', 'follower'] as const;
export type Role = (typeof ROLES)[number];

export interface Instruction {
  readonly id: number;
  readonly text: string;
}

/** An instruction the leader cancelled (the cancel rule, `config.cancelInstructions`). */
export interface CancelledInstruction extends Instruction {
  /** It was the current instruction, the one the follower was shown, when it was cancelled. */
  readonly current: boolean;
}

export interface Turn {
  readonly role: Role;
  readonly stepsLeft: number;
}

/**
 * Everything the rules need, as an immutable value: every transition returns a new state and
 * shares what did not change. `world` and `config` never change during a game.
 */
export interface GameState {
  readonly config: GameConfig;
  readonly world: World;
  readonly turn: Turn;
  /** Turns left for each player, counting the current round (a leader turn and its follower turn). */
  readonly turnsLeft: number;
  readonly score: number;
  /** Instructions not yet marked DONE; the head is the current one. */
  readonly queue: readonly Instruction[];
  /** The instruction most recently marked DONE (the follower sees it with the current one). */
  readonly previousInstruction: Instruction | null;
  /** Every instruction cancelled so far, in order: empty unless the leader cancelled. */
  readonly cancelled: readonly CancelledInstruction[];
  readonly leader: Pose;
  readonly follower: Pose;
  readonly cards: readonly Card[];
  readonly nextCardId: number;
  readonly nextInstructionId: number;
  /** Instructions with an id below this have been shown to the follower: those queued when its latest turn began. */
  readonly instructionsShown: number;
  readonly rng: RngState;
  readonly gameOver: boolean;
}

/** The fields a transition may change. */
export type StateChanges = Partial<Omit<GameState, 'config' | 'world'>>;

/** A state a transition is building: a fresh copy that it changes before anyone else sees it. */
export type DraftState = { -readonly [K in keyof GameState]: GameState[K] };

/**
 * A copy of `state` for a transition to change and return. Every state is built by this one
 * literal (and the same field order in startGame), so all states share one shape: object spread
 * made transitions several times slower. A transition sets the fields it changes on the copy
 * (a store to a field the shape has keeps the shape) rather than passing them in an object: the
 * changes' many shapes made reading them cost a quarter of a move.
 */
export function copyState(state: GameState): DraftState {
  return {
    config: state.config,
    world: state.world,
    turn: state.turn,
    turnsLeft: state.turnsLeft,
    score: state.score,
    queue: state.queue,
    previousInstruction: state.previousInstruction,
    cancelled: state.cancelled,
    leader: state.leader,
    follower: state.follower,
    cards: state.cards,
    nextCardId: state.nextCardId,
    nextInstructionId: state.nextInstructionId,
    instructionsShown: state.instructionsShown,
    rng: state.rng,
    gameOver: state.gameOver,
  };
}

/** A copy of `state` with `changes` applied. A change cannot set a field to null or undefined. */
export function updateState(state: GameState, changes: StateChanges): GameState {
  const next = copyState(state);
  next.turn = changes.turn ?? state.turn;
  next.turnsLeft = changes.turnsLeft ?? state.turnsLeft;
  next.score = changes.score ?? state.score;
  next.queue = changes.queue ?? state.queue;
  next.previousInstruction = changes.previousInstruction ?? state.previousInstruction;
  next.cancelled = changes.cancelled ?? state.cancelled;
  next.leader = changes.leader ?? state.leader;
  next.follower = changes.follower ?? state.follower;
  next.cards = changes.cards ?? state.cards;
  next.nextCardId = changes.nextCardId ?? state.nextCardId;
  next.nextInstructionId = changes.nextInstructionId ?? state.nextInstructionId;
  next.instructionsShown = changes.instructionsShown ?? state.instructionsShown;
  next.rng = changes.rng ?? state.rng;
  next.gameOver = changes.gameOver ?? state.gameOver;
  return next;
}

/** What a game starts from, besides its map and config: recorded in every log header. */
export interface InitialSetup {
  readonly leader: Pose;
  readonly follower: Pose;
  readonly cards: readonly Card[];
  readonly rng: RngState;
}

/** Builds the first state from an explicit setup, checking that it obeys the placement rules. */
export function startGame(config: GameConfig, map: GameMap, setup: InitialSetup): GameState {
  const world = buildWorld(map, config);
  for (const role of ROLES) {
    const pose = setup[role];
    if (pose.x < 0 || pose.y < 0 || pose.x >= world.width || pose.y >= world.height || !world.region[cellIndex(world, pose)]) {
      throw new GameSetupError(`the ${role} starts at (${pose.x}, ${pose.y}), outside the walkable play region`);
    }
  }
  if (setup.cards.length !== config.cardCount) {
    throw new GameSetupError(`the game needs ${config.cardCount} cards, the setup has ${setup.cards.length}`);
  }
  const problem = placementProblem(
    world,
    new Set([cellIndex(world, setup.leader), cellIndex(world, setup.follower)]),
    setup.cards,
    setup.cards.map((_, i) => i),
    [],
  );
  if (problem) throw new GameSetupError(`initial cards: ${problem}`);
  return {
    config,
    world,
    turn: { role: 'leader', stepsLeft: config.leaderSteps },
    turnsLeft: config.turnsPerPlayer,
    score: 0,
    queue: [],
    previousInstruction: null,
    cancelled: [],
    // Copies built as the engine builds poses and cards, so that all of a game's share one shape each.
    leader: ownPose(setup.leader),
    follower: ownPose(setup.follower),
    cards: setup.cards.map((card) => cardWith(card, card.selected)),
    nextCardId: setup.cards.length,
    nextInstructionId: 0,
    instructionsShown: 0,
    rng: setup.rng,
    gameOver: false,
  };
}

function ownPose(pose: Pose): Pose {
  return { x: pose.x, y: pose.y, heading: pose.heading };
}

/**
 * A new game on `map` with everything the map leaves open (start poses, cards) drawn from `seed`.
 * Throws GameSetupError when the map cannot hold a game.
 */
export function createGame(config: GameConfig, map: GameMap, seed: number): GameState {
  return startGame(config, map, drawSetup(config, map, seed));
}

/** Seeds are integers in [0, 2^32): the generator uses 32 bits of seed. */
export const MAX_SEED = 2 ** 32 - 1;

export function drawSetup(config: GameConfig, map: GameMap, seed: number): InitialSetup {
  if (!Number.isInteger(seed) || seed < 0 || seed > MAX_SEED) {
    throw new GameSetupError(`the seed must be an integer from 0 to ${MAX_SEED}, got ${seed}`);
  }
  const world = buildWorld(map, config);
  const draw = new Draw(seedRng(seed));
  const needed = config.cardCount + 2;
  if (world.cardCells.length < needed) {
    throw new GameSetupError(`the play region has ${world.cardCells.length} inner cells; ${needed} are needed for the cards and players`);
  }
  let leader: Pose;
  let follower: Pose;
  if (map.spawn) {
    ({ leader, follower } = map.spawn);
  } else {
    // The original spawns players on path cells, facing north-east.
    const paths = world.cardCells.filter((i) => map.terrain[Math.floor(i / map.width)][i % map.width] === 'P');
    const starts = paths.length >= 2 ? paths : world.cardCells;
    const leaderCell = draw.pick(starts);
    let followerCell = draw.pick(starts);
    while (followerCell === leaderCell) followerCell = draw.pick(starts);
    leader = { x: leaderCell % map.width, y: Math.floor(leaderCell / map.width), heading: 'NE' };
    follower = { x: followerCell % map.width, y: Math.floor(followerCell / map.width), heading: 'NE' };
  }
  const occupied = new Set([cellIndex(world, leader), cellIndex(world, follower)]);
  const cards = map.cards ? fixedCards(map) : drawCards(draw, world, occupied, config.cardCount, 0, []);
  return { leader, follower, cards, rng: draw.state() };
}

function fixedCards(map: GameMap): Card[] {
  return (map.cards ?? []).map((card, id) => ({ id, ...card, selected: false }));
}
