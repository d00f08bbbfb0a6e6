/**
 * What a follower agent sees and does. The same observation reaches an agent offline (evaluation,
 * the headless environment) and live (playing against a human leader through the server).
 */
import type { Card } from '../engine/cards';
import type { Pose } from '../engine/hex';
import type { GameMap, WorldRules } from '../engine/map';
import type { Instruction } from '../engine/state';
import type { FollowerCode } from '../engine/actions';
import type { KnownMap, RememberedCard } from '../engine/playerView';

export const OBSERVATION_VERSION = 2;

/** The follower's actions: the four moves, and DONE for "the current instruction is finished". */
export { FOLLOWER_CODES as AGENT_ACTIONS } from '../engine/actions';
export type AgentAction = FollowerCode;
export type { RememberedCard };

/**
 * Everything a human follower could know at this moment, and nothing more (unless `oracle`).
 * Cells are `{x, y}` in the engine's odd-r coordinates; see docs/agents.md.
 */
export interface FollowerObservation {
  readonly version: typeof OBSERVATION_VERSION;
  /** The instruction to carry out now, and the one finished before it. */
  readonly instruction: Instruction | null;
  readonly previousInstruction: Instruction | null;
  readonly pose: Pose;
  readonly stepsLeft: number;
  readonly turnsLeft: number;
  readonly score: number;
  /** Cells inside the follower's view (the engine's view function). */
  readonly visibleCells: readonly { readonly x: number; readonly y: number }[];
  /** Cards inside the view now. */
  readonly visibleCards: readonly Card[];
  /** Cards seen before and not in view now, in their last seen state. */
  readonly rememberedCards: readonly RememberedCard[];
  /** The leader's pose when it is inside the view. */
  readonly leader: Pose | null;
  /**
   * The terrain and props as the follower knows them: the cells it has seen this episode, `?` for
   * the others. The same object from one observation to the next while nothing new was seen.
   */
  readonly map: KnownMap;
  /** The actions allowed now, in AGENT_ACTIONS order (empty outside the follower's turn; a move into an obstacle is not among them). */
  readonly legal: readonly AgentAction[];
  /** Present only for oracle agents, which are given the full state (clearly not a human's view). */
  readonly oracle?: {
    readonly cards: readonly Card[];
    readonly leader: Pose;
    readonly queue: readonly Instruction[];
  };
}

/** What an episode starts with. An agent learns the world from its observations, as a human follower does. */
export interface EpisodeStart {
  /** The episode's name, e.g. "<gameId>#<instruction index>", for reports and errors. */
  readonly episodeId: string;
  /** Oracle agents only (they declare `needsRecording`): the whole static map. */
  readonly map?: GameMap;
  /** Oracle agents only, with `map`: which cells are walkable and hold cards under the game's rules (absent: CerealBar's). */
  readonly rules?: WorldRules;
  /**
   * Privileged data from the recorded game, given only to agents that declare `needsRecording`
   * (the oracles): the human follower's actions for each instruction of the episode, by
   * instruction id, the ids of the cards the human follower changed for it (flipped an odd number
   * of times, in the order it first stepped on them), every card it stepped onto in order (repeats
   * included), and where it stood when it marked the instruction DONE.
   */
  readonly recording?: {
    readonly actions: Readonly<Record<number, readonly AgentAction[]>>;
    readonly changedCards: Readonly<Record<number, readonly number[]>>;
    readonly cardVisits: Readonly<Record<number, readonly number[]>>;
    readonly endPoses: Readonly<Record<number, Pose>>;
  };
}

export interface FollowerAgent {
  readonly name: string;
  /** Oracle agents: receive the full state in each observation. */
  readonly wantsOracleObservation?: boolean;
  /** Oracle agents: receive the recorded human actions in EpisodeStart. */
  readonly needsRecording?: boolean;
  reset(start: EpisodeStart): void | Promise<void>;
  act(observation: FollowerObservation): AgentAction | Promise<AgentAction>;
  /** Frees what the agent holds (a child process, for example). */
  close?(): void | Promise<void>;
}
