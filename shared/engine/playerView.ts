/**
 * What a player knows: `playerView(state, role, memory)` is the one place a player's knowledge is
 * cut. Everything a player's client, a live bot, an agent's observation, the training environment
 * and the replay viewer's per-role view show is built from it, and from nothing else.
 *
 * The leader knows the whole game except what only the engine needs (the generator's state, the
 * next ids). The follower knows what its first-person view shows now (cells, cards, the leader's
 * avatar) and what it remembers (`Memory`): the cells it has seen, the cards it saw as they were
 * then, and the instructions it was shown. It never learns a seed, a spawn pose, a map's name, a
 * card or the leader outside its view, the leader's steps, or how many instructions are queued.
 */
import type { Card } from './cards';
import { isInvalidSelection } from './cards';
import type { GameConfig } from './config';
import { stepFrom, type Pose } from './hex';
import { legalActions, type LegalActions } from './legal';
import type { Prop, Wall } from './map';
import type { CancelledInstruction, GameState, Instruction, Role } from './state';
import { viewFrom } from './view';

/** The map as a player knows it. */
export interface KnownMap {
  readonly width: number;
  readonly height: number;
  /** terrain[y] is row y, one letter per column as in map files; `?` for a cell not yet seen. */
  readonly terrain: readonly string[];
  /** Props on cells seen, in the map's order. */
  readonly props: readonly Prop[];
  /** Walls with a seen cell on either side, in the map's order; only on maps that have walls (CB2's). */
  readonly walls?: readonly Wall[];
}

export const UNSEEN = '?';

/** A card the follower saw earlier and does not see now, as it was when last seen. */
export interface RememberedCard extends Card {
  /** How many of the follower's moves ago it last saw the card (moves that changed its pose). */
  readonly seenAgo: number;
}

/** A card in the follower's memory, with its move count (Memory.moves) when last seen. */
export interface SightedCard extends Card {
  readonly seenAt: number;
}

export type InstructionStatus = 'done' | 'cancelled' | 'current' | 'queued';

export interface InstructionView extends Instruction {
  readonly status: InstructionStatus;
  /** The follower has been shown it (it was queued when a follower turn began). */
  readonly shown: boolean;
}

export interface PlayerView {
  readonly role: Role;
  /** The game's rules (public). */
  readonly config: GameConfig;
  readonly map: KnownMap;
  /** Whose turn it is; the steps left are null when the player may not know them (the leader's, for the follower). */
  readonly turn: { readonly role: Role; readonly stepsLeft: number | null };
  readonly turnsLeft: number;
  readonly score: number;
  readonly gameOver: boolean;
  /** Null for the follower while the leader is outside its view. */
  readonly leader: Pose | null;
  readonly follower: Pose;
  /** Cards the player sees now: every card for the leader, the cards in view for the follower. */
  readonly cards: readonly Card[];
  /** The follower's memory of cards out of view now (always empty for the leader). */
  readonly rememberedCards: readonly RememberedCard[];
  /** Selected cards that cannot be part of a valid set (the leader's red marks; empty for the follower). */
  readonly invalidCards: readonly number[];
  /** For the leader every instruction; for the follower the finished ones and the current one once shown. */
  readonly instructions: readonly InstructionView[];
  /** What this player may do now. */
  readonly legal: LegalActions;
}

/**
 * What a player remembers between moments: small, explicit, and kept by whoever serves the player
 * (the room, an environment), so that a reconnecting client gets the same view.
 */
export interface Memory {
  readonly role: Role;
  /** Instructions marked DONE, in order (the state keeps only the last). */
  readonly done: readonly Instruction[];
  /** Follower: the map as seen so far (the leader's is the whole map). */
  readonly map: KnownMap | null;
  /** Follower: cards seen, each as it was when last seen, by id. */
  readonly cards: readonly SightedCard[];
  /** Follower: moves that changed its pose, counted; the clock of `RememberedCard.seenAt`. */
  readonly moves: number;
  /** Follower: its pose at the last remembered moment. */
  readonly pose: Pose | null;
}

/** A player's memory before the game (or an episode) begins. */
export function emptyMemory(role: Role): Memory {
  return { role, done: [], map: null, cards: [], moves: 0, pose: null };
}

/** The memory after the player witnesses `state`. Returns `memory` itself when nothing new was learnt. */
export function remember(memory: Memory, state: GameState): Memory {
  const done = rememberDone(memory.done, state.previousInstruction);
  if (memory.role === 'leader') return done === memory.done ? memory : { ...memory, done };
  const pose = state.follower;
  const moved = memory.pose !== null && (memory.pose.x !== pose.x || memory.pose.y !== pose.y || memory.pose.heading !== pose.heading);
  const samePose = memory.pose !== null && !moved;
  const moves = moved ? memory.moves + 1 : memory.moves;
  const view = viewFrom(state.world, pose, state.config.view);
  const map = samePose && memory.map ? memory.map : revealCells(memory.map, state, view.indices);
  const cards = rememberCards(memory.cards, state, view.set, moves);
  if (done === memory.done && map === memory.map && cards === memory.cards && samePose) return memory;
  return { role: memory.role, done, map, cards, moves, pose };
}

/** The instructions marked DONE once `previous` is the last one: the memory's `done`. */
export function rememberDone(done: readonly Instruction[], previous: Instruction | null): readonly Instruction[] {
  if (previous === null || done.some((instruction) => instruction.id === previous.id)) return done;
  return [...done, { id: previous.id, text: previous.text }];
}

function revealCells(known: KnownMap | null, state: GameState, cells: readonly number[]): KnownMap {
  const map = state.world.map;
  const width = map.width;
  // Most moments reveal nothing new: look before copying anything.
  if (known && cells.every((index) => known.terrain[(index - (index % width)) / width][index % width] !== UNSEEN)) return known;
  const rows = known ? known.terrain.slice() : Array.from({ length: map.height }, () => UNSEEN.repeat(width));
  for (const index of cells) {
    const x = index % width;
    const y = (index - x) / width;
    if (rows[y][x] === UNSEEN) rows[y] = rows[y].slice(0, x) + map.terrain[y][x] + rows[y].slice(x + 1);
  }
  const props = map.props.filter((prop) => rows[prop.y][prop.x] !== UNSEEN);
  if (!map.walls?.length) return { width, height: map.height, terrain: rows, props };
  const seen = (cell: { x: number; y: number }) => cell.x >= 0 && cell.y >= 0 && cell.x < width && cell.y < map.height && rows[cell.y][cell.x] !== UNSEEN;
  const walls = map.walls.filter((wall) => seen(wall) || seen(stepFrom(wall, wall.side)));
  return { width, height: map.height, terrain: rows, props, walls };
}

function rememberCards(cards: readonly SightedCard[], state: GameState, inView: ReadonlySet<number>, moves: number): readonly SightedCard[] {
  const width = state.world.width;
  const visible = state.cards.filter((card) => inView.has(card.y * width + card.x));
  // Cards out of view stay as last seen; one whose cell is in view again but which is not there
  // any more was taken by a set, and is forgotten.
  const kept = cards.filter((card) => !inView.has(card.y * width + card.x));
  if (visible.length === 0 && kept.length === cards.length) return cards;
  const updated = [...kept, ...visible.map((card) => sighting(card, moves))].sort(byId);
  if (updated.length === cards.length && updated.every((card, i) => sameSighting(card, cards[i]))) return cards;
  return updated;
}

/** Cards never change place or face: a sighting differs only in the card, its selection or when it was seen. */
function sameSighting(a: SightedCard, b: SightedCard): boolean {
  return a.id === b.id && a.selected === b.selected && a.seenAt === b.seenAt;
}

/** The leader's map: the whole terrain and props, without the name, seed, spawn or fixed cards. */
const leaderMaps = new WeakMap<object, KnownMap>();
function wholeMap(state: GameState): KnownMap {
  let known = leaderMaps.get(state.world);
  if (!known) {
    const map = state.world.map;
    known = { width: map.width, height: map.height, terrain: map.terrain, props: map.props, ...(map.walls?.length ? { walls: map.walls } : {}) };
    leaderMaps.set(state.world, known);
  }
  return known;
}

/**
 * What `role` knows in `state`, given what it remembers. `memory` must have witnessed `state`
 * (call `remember` first): playerView only reads it.
 */
export function playerView(state: GameState, role: Role, memory: Memory): PlayerView {
  if (memory.role !== role) throw new Error(`the ${memory.role}'s memory cannot give the ${role}'s view`);
  return role === 'leader' ? leaderView(state, memory) : followerView(state, memory);
}

function leaderView(state: GameState, memory: Memory): PlayerView {
  const selected = state.cards.filter((card) => card.selected);
  return {
    role: 'leader',
    config: state.config,
    map: wholeMap(state),
    turn: { role: state.turn.role, stepsLeft: state.turn.stepsLeft },
    turnsLeft: state.turnsLeft,
    score: state.score,
    gameOver: state.gameOver,
    leader: copyPose(state.leader),
    follower: copyPose(state.follower),
    cards: state.cards.map(copyCard).sort(byId),
    rememberedCards: [],
    invalidCards: isInvalidSelection(selected) ? selected.map((card) => card.id).sort((a, b) => a - b) : [],
    instructions: [
      ...finished(memory.done, state.cancelled, state.instructionsShown),
      ...state.queue.map((instruction, i) => instructionView(instruction, i === 0 ? 'current' : 'queued', instruction.id < state.instructionsShown)),
    ],
    legal: legalActions(state, 'leader'),
  };
}

function followerView(state: GameState, memory: Memory): PlayerView {
  if (memory.map === null) throw new Error('the follower has not witnessed the game yet: call remember() first');
  const inView = viewFrom(state.world, state.follower, state.config.view).set;
  const width = state.world.width;
  const instructions = followerInstructions(state, memory.done);
  const cards = state.cards.filter((card) => inView.has(card.y * width + card.x)).map(copyCard).sort(byId);
  return {
    role: 'follower',
    config: state.config,
    map: memory.map,
    turn: { role: state.turn.role, stepsLeft: state.turn.role === 'follower' ? state.turn.stepsLeft : null },
    turnsLeft: state.turnsLeft,
    score: state.score,
    gameOver: state.gameOver,
    leader: inView.has(state.leader.y * width + state.leader.x) ? copyPose(state.leader) : null,
    follower: copyPose(state.follower),
    cards,
    // A card in memory is remembered (not seen now) when its cell is out of view.
    rememberedCards: memory.cards.filter((card) => !inView.has(card.y * width + card.x)).map((card) => rememberedAs(card, memory.moves)),
    invalidCards: [],
    instructions,
    legal: legalActions(state, 'follower'),
  };
}

/**
 * The instructions the follower knows in `state`, having seen `done` marked DONE (its memory's):
 * the finished ones and the current one once shown, by the ids it knows them by.
 */
export function followerInstructions(state: GameState, done: readonly Instruction[]): InstructionView[] {
  const current = state.queue[0];
  // The follower saw only the current instruction of those a cancel removed.
  const instructions = finished(done, state.cancelled.filter((instruction) => instruction.current), state.instructionsShown);
  if (current !== undefined && current.id < state.instructionsShown) instructions.push(instructionView(current, 'current', true));
  if (state.cancelled.length > 0) {
    for (let i = 0; i < instructions.length; i++) instructions[i] = { ...instructions[i], id: followerInstructionId(state, instructions[i].id) };
  }
  return instructions;
}

/**
 * The id the follower knows an instruction by. An instruction's id counts every instruction
 * written, so after a cancel the ids would tell the follower how many queued instructions it never
 * saw went with it: the follower's ids leave those out. Without a cancel they are the engine's.
 */
export function followerInstructionId(state: GameState, id: number): number {
  let unseen = 0;
  for (const instruction of state.cancelled) if (!instruction.current && instruction.id < id) unseen++;
  return id - unseen;
}

/** Instructions done and cancelled, in the order they were written (both come before every queued one). */
function finished(done: readonly Instruction[], cancelled: readonly CancelledInstruction[], shownBelow: number): InstructionView[] {
  const views = done.map((instruction) => instructionView(instruction, 'done', true));
  if (cancelled.length === 0) return views;
  for (const instruction of cancelled) views.push(instructionView(instruction, 'cancelled', instruction.current || instruction.id < shownBelow));
  return views.sort(byId);
}

function instructionView(instruction: Instruction, status: InstructionStatus, shown: boolean): InstructionView {
  return { id: instruction.id, text: instruction.text, status, shown };
}

const byId = (a: { id: number }, b: { id: number }): number => a.id - b.id;

// Explicit copies: a view holds the named fields and nothing else, and never shares objects with
// the engine state.
function copyCard(card: Card): Card {
  return { id: card.id, x: card.x, y: card.y, color: card.color, shape: card.shape, count: card.count, selected: card.selected };
}

function sighting(card: Card, seenAt: number): SightedCard {
  return { id: card.id, x: card.x, y: card.y, color: card.color, shape: card.shape, count: card.count, selected: card.selected, seenAt };
}

function rememberedAs(card: SightedCard, moves: number): RememberedCard {
  return { id: card.id, x: card.x, y: card.y, color: card.color, shape: card.shape, count: card.count, selected: card.selected, seenAgo: moves - card.seenAt };
}

function copyPose(pose: Pose): Pose {
  return { x: pose.x, y: pose.y, heading: pose.heading };
}
