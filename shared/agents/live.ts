/**
 * Observations for an agent playing live: the follower's synchronised room state (what the server
 * lets the follower see) is turned into the engine state shape the ObservationTracker reads, so an
 * agent gets the same observations live as offline.
 */
import type { Card } from '../engine/cards';
import type { GameConfig } from '../engine/config';
import type { Heading, Pose } from '../engine/hex';
import type { World } from '../engine/map';
import type { GameState, Instruction, Role } from '../engine/state';

/** The fields of the room state the follower receives (docs/protocol.md). */
export interface FollowerRoomState {
  turnRole: string;
  stepsLeft: number;
  turnsLeft: number;
  score: number;
  follower: { x: number; y: number; heading: string };
  leader?: { x?: number; y?: number; heading?: string } | null;
  /** Whether `leader` is current: the follower's copy keeps the last place it saw the leader. */
  leaderInView?: boolean;
  cards?: { forEach(callback: (card: Card) => void): void };
  instructions?: { forEach(callback: (instruction: { id: number; text: string; status: string }) => void): void };
}

const pose = (p: { x: number; y: number; heading: string }): Pose => ({ x: p.x, y: p.y, heading: p.heading as Heading });

/** An engine-shaped state holding only what the follower was sent. */
export function stateFromFollowerView(room: FollowerRoomState, world: World, config: GameConfig): GameState {
  const cards: Card[] = [];
  room.cards?.forEach((c) => cards.push({ id: c.id, x: c.x, y: c.y, color: c.color, shape: c.shape, count: c.count, selected: c.selected }));
  let current: Instruction | null = null;
  let previous: Instruction | null = null;
  room.instructions?.forEach((i) => {
    if (i.status === 'current') current = { id: i.id, text: i.text };
    else if (i.status === 'done') previous = { id: i.id, text: i.text };
  });
  const leader = room.leader;
  // A leader out of view (or never seen) is placed off the map, where no view reaches.
  const leaderPose: Pose = room.leaderInView && leader?.x !== undefined ? pose(leader as { x: number; y: number; heading: string }) : { x: -100, y: -100, heading: 'NE' };
  return {
    config,
    world,
    turn: { role: room.turnRole as Role, stepsLeft: room.stepsLeft },
    turnsLeft: room.turnsLeft,
    score: room.score,
    queue: current ? [current] : [],
    previousInstruction: previous,
    leader: leaderPose,
    follower: pose(room.follower),
    cards,
    nextCardId: 0,
    nextInstructionId: 0,
    rng: [],
    gameOver: false,
  };
}
