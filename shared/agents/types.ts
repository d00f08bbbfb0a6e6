/**
 * What a follower agent sees and does. The same observation reaches an agent offline (evaluation,
 * the headless environment) and live (playing against a human leader through the server).
 */
import type { Card } from '../engine/cards';
import type { Pose } from '../engine/hex';
import type { GameMap, WorldRules } from '../engine/map';
import type { Instruction, Role } from '../engine/state';
import type { FollowerCode } from '../engine/actions';
import type { InstructionView, KnownMap, RememberedCard } from '../engine/playerView';
import type { FrameView } from '../frames/frame';
import type { LeaderFeedback } from './feedback';

export const OBSERVATION_VERSION = 2;

/** The follower's actions: the four moves, and DONE for "the current instruction is finished". */
export { FOLLOWER_CODES as AGENT_ACTIONS } from '../engine/actions';
export type AgentAction = FollowerCode;
export type { LeaderFeedback, RememberedCard };

/**
 * Everything a human follower could know at this moment, and nothing more (unless `oracle`).
 * Cells are `{x, y}` in the engine's odd-r coordinates; see docs/agents.md.
 */
export interface FollowerObservation {
  readonly version: typeof OBSERVATION_VERSION;
  /** The instruction to carry out now. */
  readonly instruction: Instruction | null;
  /** The one finished before it: marked DONE, or cancelled by the leader (then `cancelled: true`). */
  readonly previousInstruction: (Instruction & { readonly cancelled?: true }) | null;
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
  /** Only in games with the leader's live feedback: its signals in the follower's current turn, in order. */
  readonly feedback?: readonly LeaderFeedback[];
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
  /** The agent's own version, for log headers and reports (`AgentIdentity`). */
  readonly version?: string;
  /** Oracle agents: receive the full state in each observation. */
  readonly wantsOracleObservation?: boolean;
  /** Oracle agents: receive the recorded human actions in EpisodeStart. */
  readonly needsRecording?: boolean;
  /**
   * False for an agent that never reads the follower's view in its observations (visibleCells,
   * visibleCards, rememberedCards, leader, map, legal): the oracles, which play from the recorded
   * game. Hosts then build the view only if it is read after all, which saves most of an
   * evaluation step. Such an observation's view fields are getters, left out by a spread.
   */
  readonly readsView?: boolean;
  reset(start: EpisodeStart): void | Promise<void>;
  /** One action, or a plan of several (an empty plan passes: the turn runs out); see `Answer`. */
  act(observation: FollowerObservation, context?: ActContext): Answer<AgentAction> | Promise<Answer<AgentAction>>;
  /** Frees what the agent holds (a child process, for example). */
  close?(): void | Promise<void>;
}

/**
 * The leader seat (agent protocol version 3). The leader's actions are the engine's: the moves,
 * `END` (End Turn) and an instruction's text, `{instruction: "..."}`. Actions that carry more
 * than a code are objects keyed by their kind, so that the live-feedback actions fit in the same
 * vocabulary (`{feedback: "positive"}`, and the code `CANCEL`) once the game has them.
 */
export const LEADER_AGENT_CODES = ['MF', 'MB', 'RL', 'RR', 'END'] as const;
export type LeaderAgentCode = (typeof LEADER_AGENT_CODES)[number];
export type LeaderAgentAction = LeaderAgentCode | { readonly instruction: string };

export const LEADER_OBSERVATION_VERSION = 1;

/**
 * Everything a human leader knows at this moment: the leader's `playerView` in the shape agents
 * read (the whole map, every card, both poses, the queue with each instruction's status).
 */
export interface LeaderObservation {
  readonly version: typeof LEADER_OBSERVATION_VERSION;
  readonly role: 'leader';
  /** The whole map (the leader sees everything). */
  readonly map: KnownMap;
  readonly pose: Pose;
  readonly follower: Pose;
  /** Every card on the board. */
  readonly cards: readonly Card[];
  /** Ids of the cards the follower sees now (the engine's viewFrom), as a human leader watching its view would know. */
  readonly visibleToFollower: readonly number[];
  /** Selected cards that cannot be part of a valid set (the red marks a human leader sees). */
  readonly invalidCards: readonly number[];
  /** Every instruction written so far, each with its status (`done`, `current`, `queued`). */
  readonly instructions: readonly InstructionView[];
  /** Whose turn it is, and its steps left. */
  readonly turn: { readonly role: Role; readonly stepsLeft: number };
  /** Steps left in the leader's own turn (0 outside it). */
  readonly stepsLeft: number;
  readonly turnsLeft: number;
  readonly score: number;
  /** The codes allowed now, in LEADER_AGENT_CODES order (empty outside the leader's turn). */
  readonly legal: readonly LeaderAgentCode[];
  /** An instruction may be written now (its length at most `maxInstructionLength`). */
  readonly canInstruct: boolean;
  readonly maxInstructionLength: number;
}

/**
 * What an agent answers to one observation: one action, or a plan of several. The host plays a
 * plan's actions in order and asks again when the plan ends or the agent's view changed in a way
 * the plan could not know (the current instruction changed, the engine refused an action, the
 * turn ended). An empty plan passes: the agent does nothing more this turn, and the turn runs out
 * (the server's timeout), as a human's would.
 */
export type Answer<A> = A | readonly A[];

/** What the host knows of the moment an agent is asked in (absent where it cannot know it, e.g. a remote client). */
export interface ActContext {
  /** The index of the log event the answer's first action will be: events logged so far. */
  readonly event?: number;
  /**
   * The drawn part of the seat's own view now (`frameView` of the playerView the observation is
   * made from, the follower's memory included), built when called: what a picture of the seat's
   * view shows (the LLM agent's images). Read it while acting: the host's view moves on after.
   */
  readonly frame?: () => FrameView;
}

/** Who played a seat, for log headers and reports: the agent's name and version, and the spec that started it. */
export interface AgentIdentity {
  readonly name: string;
  readonly version?: string;
  /** What started it: a built-in's name, a command line, `llm` with its model. */
  readonly spec: string;
}

export interface LeaderAgent {
  readonly name: string;
  readonly role: 'leader';
  readonly version?: string;
  reset(start: EpisodeStart): void | Promise<void>;
  act(observation: LeaderObservation, context?: ActContext): Answer<LeaderAgentAction> | Promise<Answer<LeaderAgentAction>>;
  close?(): void | Promise<void>;
}

/**
 * An agent's failure that ends the whole run, not only its episode or game: an LLM endpoint that
 * stopped answering. Evaluation stops with it instead of scoring the rest as failures.
 */
export class AgentRunStopped extends Error {}
