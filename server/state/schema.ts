/**
 * The state the server synchronises to clients (Colyseus schema). Fields built with `.view()`
 * reach a client only when its StateView holds them: the follower's view never holds queued
 * instructions, leader-only marks, or cards and the leader's avatar outside its field of view.
 */
import { schema, t, type SchemaType } from '@colyseus/schema';

export const PlayerState = schema(
  {
    x: t.int16(),
    y: t.int16(),
    heading: t.string(),
    /** False while the player's connection is down (it may come back within the reconnection window). */
    connected: t.boolean(),
  },
  'PlayerState',
);
export type PlayerState = SchemaType<typeof PlayerState>;

export const CardState = schema(
  {
    id: t.uint16(),
    x: t.int16(),
    y: t.int16(),
    color: t.string(),
    shape: t.string(),
    count: t.uint8(),
    selected: t.boolean(),
  },
  'CardState',
);
export type CardState = SchemaType<typeof CardState>;

export const InstructionState = schema(
  {
    id: t.uint16(),
    text: t.string(),
    /** 'done', 'current' (the head of the queue) or 'queued'. */
    status: t.string(),
    /** True once the follower could see it: from the first follower turn after it was written. */
    sent: t.boolean(),
  },
  'InstructionState',
);
export type InstructionState = SchemaType<typeof InstructionState>;

/** What only the leader sees. */
export const LeaderOnlyState = schema(
  {
    /** Ids of selected cards that cannot be part of a valid set (outlined red for the leader). */
    invalidCards: t.array('uint16'),
  },
  'LeaderOnlyState',
);
export type LeaderOnlyState = SchemaType<typeof LeaderOnlyState>;

export const GameRoomState = schema(
  {
    /** 'waiting' for the second player, 'playing', or 'ended'. */
    phase: t.string(),
    gameId: t.string(),
    pool: t.string(),
    /** Number of actions the game has accepted: the log's last event seq. */
    seq: t.uint32(),
    turnRole: t.string(),
    stepsLeft: t.uint8(),
    turnsLeft: t.uint16(),
    score: t.uint16(),
    /** Epoch milliseconds at which the current turn times out (0 when no turn runs). */
    turnDeadline: t.float64(),
    /** Seconds each role has per turn. */
    leaderTurnSeconds: t.float32(),
    followerTurnSeconds: t.float32(),
    follower: t.ref(PlayerState),
    leader: t.ref(PlayerState).view(),
    /**
     * True while the leader's avatar is inside the follower's view. The follower's copy of
     * `leader` keeps its last values when the leader leaves the view; this says whether it is current.
     */
    leaderInView: t.boolean(),
    cards: t.map(CardState).view(),
    instructions: t.map(InstructionState).view(),
    leaderOnly: t.ref(LeaderOnlyState).view(),
    /** Why the game ended, once it has (the log's end reason). */
    endReason: t.string(),
  },
  'GameRoomState',
);
export type GameRoomState = SchemaType<typeof GameRoomState>;
