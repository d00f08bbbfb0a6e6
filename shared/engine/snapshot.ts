/**
 * The canonical JSON snapshot of a game: what both players could know together, in a fixed
 * key order, so two snapshots of the same state serialise to the same text.
 */
import type { Color, Count, Shape } from './cards';
import type { Heading } from './hex';
import type { GameState, Instruction, Role } from './state';

export interface Snapshot {
  turn: { role: Role; stepsLeft: number };
  turnsLeft: number;
  score: number;
  queue: Instruction[];
  previousInstruction: Instruction | null;
  /** Present once an instruction was cancelled: every cancelled one, in order. */
  cancelled?: { id: number; text: string; current: boolean }[];
  leader: { x: number; y: number; heading: Heading };
  follower: { x: number; y: number; heading: Heading };
  cards: { id: number; x: number; y: number; color: Color; shape: Shape; count: Count; selected: boolean }[];
  gameOver: boolean;
}

export function snapshot(state: GameState): Snapshot {
  const pose = (p: GameState['leader']) => ({ x: p.x, y: p.y, heading: p.heading });
  return {
    turn: { role: state.turn.role, stepsLeft: state.turn.stepsLeft },
    turnsLeft: state.turnsLeft,
    score: state.score,
    queue: state.queue.map((i) => ({ id: i.id, text: i.text })),
    previousInstruction: state.previousInstruction && { id: state.previousInstruction.id, text: state.previousInstruction.text },
    ...(state.cancelled.length > 0 ? { cancelled: state.cancelled.map((i) => ({ id: i.id, text: i.text, current: i.current })) } : {}),
    leader: pose(state.leader),
    follower: pose(state.follower),
    cards: [...state.cards]
      .sort((a, b) => a.id - b.id)
      .map((c) => ({ id: c.id, x: c.x, y: c.y, color: c.color, shape: c.shape, count: c.count, selected: c.selected })),
    gameOver: state.gameOver,
  };
}
