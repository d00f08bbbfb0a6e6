/**
 * Mirrors the engine's state into the synchronised schema state, and decides what each role's
 * StateView holds. The leader sees everything; the follower sees the cards and the leader's avatar
 * inside its field of view, the current instruction once it was sent, and the previous one.
 */
import type { StateView } from '@colyseus/schema';
import { isInvalidSelection } from '../../shared/engine/cards';
import type { Pose } from '../../shared/engine/hex';
import type { GameState, Instruction } from '../../shared/engine/state';
import { isVisible, viewFrom } from '../../shared/engine/view';
import { CardState, InstructionState, type GameRoomState, type PlayerState } from '../state/schema';

function setPose(player: PlayerState, pose: Pose): void {
  if (player.x !== pose.x) player.x = pose.x;
  if (player.y !== pose.y) player.y = pose.y;
  if (player.heading !== pose.heading) player.heading = pose.heading;
}

/**
 * Copies the engine state into the room state, touching only what changed (each assignment is a
 * patch). `sent` holds the ids of instructions the follower has been able to see.
 */
export function mirrorState(room: GameRoomState, state: GameState, sent: ReadonlySet<number>): void {
  if (room.turnRole !== state.turn.role) room.turnRole = state.turn.role;
  if (room.stepsLeft !== state.turn.stepsLeft) room.stepsLeft = state.turn.stepsLeft;
  if (room.turnsLeft !== state.turnsLeft) room.turnsLeft = state.turnsLeft;
  if (room.score !== state.score) room.score = state.score;
  setPose(room.leader, state.leader);
  setPose(room.follower, state.follower);
  const leaderInView = isVisible(state.world, state.follower, state.config.view, state.leader);
  if (room.leaderInView !== leaderInView) room.leaderInView = leaderInView;
  mirrorCards(room, state);
  mirrorInstructions(room, state, sent);
  const selected = state.cards.filter((card) => card.selected);
  const invalid = isInvalidSelection(selected) ? selected.map((card) => card.id) : [];
  const marks = room.leaderOnly.invalidCards;
  if (marks.length !== invalid.length || invalid.some((id, i) => marks[i] !== id)) {
    marks.clear();
    marks.push(...invalid);
  }
}

function mirrorCards(room: GameRoomState, state: GameState): void {
  const present = new Set<string>();
  for (const card of state.cards) {
    const key = String(card.id);
    present.add(key);
    const mirrored = room.cards.get(key);
    if (!mirrored) {
      room.cards.set(key, new CardState({ ...card }));
    } else if (mirrored.selected !== card.selected) {
      mirrored.selected = card.selected;
    }
  }
  for (const key of [...room.cards.keys()]) if (!present.has(key)) room.cards.delete(key);
}

function statusOf(instruction: Instruction, state: GameState): string {
  if (state.queue.length > 0 && state.queue[0].id === instruction.id) return 'current';
  return state.queue.some((queued) => queued.id === instruction.id) ? 'queued' : 'done';
}

function mirrorInstructions(room: GameRoomState, state: GameState, sent: ReadonlySet<number>): void {
  for (const instruction of state.queue) {
    const key = String(instruction.id);
    if (!room.instructions.has(key)) {
      room.instructions.set(key, new InstructionState({ id: instruction.id, text: instruction.text, status: 'queued', sent: false }));
    }
  }
  room.instructions.forEach((mirrored) => {
    const status = statusOf({ id: mirrored.id, text: mirrored.text }, state);
    if (mirrored.status !== status) mirrored.status = status;
    const isSent = sent.has(mirrored.id);
    if (mirrored.sent !== isSent) mirrored.sent = isSent;
  });
}

/** The leader's view: everything, including what is added later. */
export function fillLeaderView(view: StateView, room: GameRoomState): void {
  view.add(room.leader);
  view.add(room.leaderOnly);
  view.subscribe(room.cards);
  view.subscribe(room.instructions);
}

/** Brings the follower's view in line with what it may see now. */
export function updateFollowerView(view: StateView, room: GameRoomState, state: GameState): void {
  const visible = viewFrom(state.world, state.follower, state.config.view).set;
  const seen = (pose: { x: number; y: number }) => visible.has(pose.y * state.world.width + pose.x);
  show(view, room.leader, seen(state.leader));
  room.cards.forEach((card) => show(view, card, seen(card)));
  const current = state.queue[0];
  room.instructions.forEach((instruction) => {
    const isCurrent = current !== undefined && instruction.id === current.id && instruction.sent;
    const isPrevious = state.previousInstruction !== null && instruction.id === state.previousInstruction.id;
    show(view, instruction, isCurrent || isPrevious);
  });
}

function show(view: StateView, item: object, visible: boolean): void {
  const has = view.has(item as never);
  if (visible && !has) view.add(item as never);
  else if (!visible && has) view.remove(item as never);
}
