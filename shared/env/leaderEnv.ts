/**
 * A headless environment for training leaders, with Gymnasium's reset/step conventions: the agent
 * plays the leader, one action per `step` (a move, End Turn, or an instruction's text), and a
 * built-in follower agent plays the follower's turns in between. See docs/env.md.
 *
 * The follower reads the leader's instructions as text, from its own observations (its
 * `playerView`): the `heuristic` agent walks to the card an instruction names, so instructions it
 * can read score. The leader sees its own `playerView`: the whole board.
 *
 * Seed mode only: a fresh game on `generateMap(seed)`, the whole game. The reward is the points
 * made during the step, by either player.
 */
import { actionOfCode, byActor, type Action } from '../engine/actions';
import { DEFAULT_CONFIG } from '../engine/config';
import type { ActionError } from '../engine/errors';
import { emptyMemory, playerView, remember, type Memory, type PlayerView } from '../engine/playerView';
import { createGame, type GameState } from '../engine/state';
import { step, type Outcome } from '../engine/transition';
import { createPureFollower, pureFollowerNames } from '../agents/catalogue';
import { ObservationTracker } from '../agents/observation';
import { leaderPlayerAction } from '../agents/actions';
import type { AgentAction, FollowerObservation, LeaderAgentAction } from '../agents/types';
import { generateMap } from '../maps/generate';
import { MAX_ACTIONS } from '../selfplay/game';

export interface LeaderEnvOptions {
  /** Leader actions after which an episode is truncated. */
  readonly maxSteps?: number;
  /** The built-in follower agent that plays the follower's turns: one of `pureFollowerNames('game')`. */
  readonly follower?: string;
}

export const DEFAULT_LEADER_ENV_OPTIONS: Required<LeaderEnvOptions> = { maxSteps: 500, follower: 'heuristic' };

export interface LeaderEnvInfo {
  readonly score: number;
  /** Sets made during this step, by either player: the reward. */
  readonly points: number;
  /** Leader actions taken so far in the episode (refused ones included). */
  readonly steps: number;
  /** What the engine did with the leader's action; null after reset and when it refused the action. */
  readonly outcome: Outcome | null;
  /** Why the engine refused the leader's action (the state is then unchanged); null when it accepted it. */
  readonly refused: ActionError | null;
  /** Follower actions played during this step. */
  readonly followerActions: number;
}

export interface LeaderResetInfo extends LeaderEnvInfo {
  /** `selfplay-<seed>`. */
  readonly episodeId: string;
}

export interface LeaderEnvStep {
  /** The leader's view: the whole board, both players, every instruction, what it may do. */
  readonly view: PlayerView;
  readonly reward: number;
  /** The game is over. */
  readonly terminated: boolean;
  /** Cut short at the step limit while the game goes on. */
  readonly truncated: boolean;
  readonly info: LeaderEnvInfo;
}

/** A follower agent that acts at once (no process, no promise). */
type Follower = { reset(start: { episodeId: string }): void; act(observation: FollowerObservation): AgentAction };

interface Episode {
  readonly follower: Follower;
  readonly tracker: ObservationTracker;
  state: GameState;
  /** The leader's memory: the instructions marked done, witnessed after every action of either player. */
  memory: Memory;
  steps: number;
  over: boolean;
}

export class LeaderEnv {
  private readonly options: Required<LeaderEnvOptions>;
  private episode: Episode | null = null;

  constructor(options: LeaderEnvOptions = {}) {
    this.options = { ...DEFAULT_LEADER_ENV_OPTIONS, ...options };
    const { maxSteps, follower } = this.options;
    if (!(Number.isInteger(maxSteps) && maxSteps >= 1)) throw new RangeError(`maxSteps must be a positive integer, got ${maxSteps}`);
    if (!pureFollowerNames('game').includes(follower)) throw new RangeError(`unknown follower ${JSON.stringify(follower)}; use one of ${pureFollowerNames('game').join(', ')}`);
  }

  /** A fresh game on `generateMap(seed)`; the leader plays first. */
  reset(options: { readonly seed: number }): { view: PlayerView; info: LeaderResetInfo } {
    const state = createGame(DEFAULT_CONFIG, generateMap(options.seed), options.seed);
    const episodeId = `selfplay-${options.seed}`;
    const follower = createPureFollower(this.options.follower, 'game') as Follower;
    follower.reset({ episodeId });
    const episode: Episode = { follower, tracker: new ObservationTracker(), state, memory: remember(emptyMemory('leader'), state), steps: 0, over: false };
    this.episode = episode;
    return { view: this.view(episode), info: { ...infoOf(episode, null, null, 0, 0), episodeId } };
  }

  /**
   * The leader's action, then, when it ended the leader's turn, the follower's turn, so that the
   * step returns when the leader has control again or the episode is over. An action the engine
   * refuses (End Turn with nothing queued, a move with no steps left, an empty instruction)
   * changes nothing but still counts as a step: `info.refused` says why.
   */
  step(action: LeaderAgentAction): LeaderEnvStep {
    const episode = this.episode;
    if (!episode || episode.over) throw new Error('the episode is over (or never started): call reset() before step()');
    const before = episode.state;
    const result = step(before, leaderAction(action));
    episode.steps++;
    let followerActions = 0;
    if (result.ok) {
      this.witness(episode, result.state);
      followerActions = this.playFollower(episode);
    }
    const terminated = episode.state.gameOver;
    const truncated = !terminated && episode.steps >= this.options.maxSteps;
    episode.over = terminated || truncated;
    const points = episode.state.score - before.score;
    return {
      view: this.view(episode),
      reward: points,
      terminated,
      truncated,
      info: infoOf(episode, result.ok ? result.outcome : null, result.ok ? null : result.error, points, followerActions),
    };
  }

  /** The follower agent acts on its own observations until the leader has control or the game ends. */
  private playFollower(episode: Episode): number {
    let actions = 0;
    while (!episode.state.gameOver && episode.state.turn.role === 'follower') {
      if (actions >= MAX_ACTIONS) throw new Error(`the ${this.options.follower} follower did not end its turn within ${MAX_ACTIONS} actions`);
      const code = episode.follower.act(episode.tracker.observe(episode.state));
      const result = step(episode.state, byActor('follower', actionOfCode(code)));
      // In its turn the follower has an instruction, so every follower action is accepted.
      if (!result.ok) throw new Error(`the engine refused the ${this.options.follower} follower's ${code}: ${result.error.code}`);
      this.witness(episode, result.state);
      actions++;
    }
    return actions;
  }

  private witness(episode: Episode, state: GameState): void {
    episode.state = state;
    episode.memory = remember(episode.memory, state);
  }

  private view(episode: Episode): PlayerView {
    return playerView(episode.state, 'leader', episode.memory);
  }
}

/** The engine's action for a leader action (an instruction sanitized as the game server does); a RangeError for anything else. */
export function leaderAction(action: LeaderAgentAction): Action {
  return byActor('leader', leaderPlayerAction(action));
}

function infoOf(episode: Episode, outcome: Outcome | null, refused: ActionError | null, points: number, followerActions: number): LeaderEnvInfo {
  return { score: episode.state.score, points, steps: episode.steps, outcome, refused, followerActions };
}
