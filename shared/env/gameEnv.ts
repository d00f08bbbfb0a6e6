/**
 * A headless two-player environment: both seats are agents, and `step` takes the action of the
 * player in control, as the game's turns alternate (rules 1-8: only the player whose turn it is
 * may act). It is what the Python package's PettingZoo environments play; see docs/python.md.
 *
 * Each player sees its own `playerView`: the leader the whole board, the follower its
 * `FollowerObservation` (what it sees and remembers). Both views are kept up to date after every
 * action of either player, as a live game's server sends them. The reward is the points made by the
 * action, the same for both players: the game is cooperative.
 *
 * Seed mode only: a fresh game on `generateMap(seed)`, the whole game.
 */
import { actionOfCode, byActor, FOLLOWER_CODES, isFollowerCode, type Action, type FollowerCode } from '../engine/actions';
import { DEFAULT_CONFIG } from '../engine/config';
import type { ActionError } from '../engine/errors';
import { emptyMemory, playerView, remember, type Memory, type PlayerView } from '../engine/playerView';
import { createGame, type GameState, type Role } from '../engine/state';
import { step, type Outcome } from '../engine/transition';
import { ObservationTracker } from '../agents/observation';
import type { FollowerObservation } from '../agents/types';
import { generateMap } from '../maps/generate';
import type { LeaderAgentAction } from '../agents/types';
import { leaderAction } from './leaderEnv';

export const GAME_AGENTS = ['leader', 'follower'] as const satisfies readonly Role[];

export interface GameEnvOptions {
  /** Actions (of both players) after which an episode is truncated. */
  readonly maxSteps?: number;
}

export const DEFAULT_GAME_ENV_OPTIONS: Required<GameEnvOptions> = { maxSteps: 2000 };

export interface GameEnvInfo {
  readonly score: number;
  /** Sets made by this action: the reward. */
  readonly points: number;
  /** Actions taken so far in the episode, by both players (refused ones included). */
  readonly steps: number;
  /** Who took the action; null after reset. */
  readonly actor: Role | null;
  /** What the engine did with it; null after reset and when it refused the action. */
  readonly outcome: Outcome | null;
  /** Why the engine refused it (the state is then unchanged); null when it accepted it. */
  readonly refused: ActionError | null;
}

export interface GameEnvStep {
  /** Who has control now: the only player that may act next. */
  readonly control: Role;
  readonly leader: PlayerView;
  readonly follower: FollowerObservation;
  readonly reward: number;
  readonly terminated: boolean;
  readonly truncated: boolean;
  readonly info: GameEnvInfo;
}

export type GameAction = { readonly role: 'leader'; readonly action: LeaderAgentAction } | { readonly role: 'follower'; readonly action: FollowerCode };

interface Episode {
  state: GameState;
  /** The leader's memory: the instructions marked done. */
  leaderMemory: Memory;
  /** The follower's memory: the cells and cards it saw. */
  readonly follower: ObservationTracker;
  followerObservation: FollowerObservation;
  steps: number;
  over: boolean;
}

export class GameEnv {
  private readonly options: Required<GameEnvOptions>;
  private episode: Episode | null = null;

  constructor(options: GameEnvOptions = {}) {
    this.options = { ...DEFAULT_GAME_ENV_OPTIONS, ...options };
    const { maxSteps } = this.options;
    if (!(Number.isInteger(maxSteps) && maxSteps >= 1)) throw new RangeError(`maxSteps must be a positive integer, got ${maxSteps}`);
  }

  /** A fresh game on `generateMap(seed)`; the leader plays first. */
  reset(options: { readonly seed: number }): GameEnvStep & { readonly episodeId: string } {
    const state = createGame(DEFAULT_CONFIG, generateMap(options.seed), options.seed);
    const follower = new ObservationTracker();
    const episode: Episode = {
      state,
      leaderMemory: remember(emptyMemory('leader'), state),
      follower,
      followerObservation: follower.observe(state),
      steps: 0,
      over: false,
    };
    this.episode = episode;
    return { ...this.transition(episode, 0, null, null, null), episodeId: `selfplay-${options.seed}` };
  }

  /**
   * The action of `role`. Only the player in control may act: the other's action is refused, as
   * is any action the engine refuses (End Turn with nothing queued, a move with no steps left);
   * a refused action changes nothing but counts as a step, and `info.refused` says why.
   */
  step(action: GameAction): GameEnvStep {
    const episode = this.episode;
    if (!episode || episode.over) throw new Error('the episode is over (or never started): call reset() before step()');
    const before = episode.state;
    const result = step(before, engineAction(action));
    episode.steps++;
    if (result.ok) {
      episode.state = result.state;
      episode.leaderMemory = remember(episode.leaderMemory, result.state);
      episode.followerObservation = episode.follower.observe(result.state);
    }
    const terminated = episode.state.gameOver;
    episode.over = terminated || episode.steps >= this.options.maxSteps;
    return this.transition(episode, episode.state.score - before.score, action.role, result.ok ? result.outcome : null, result.ok ? null : result.error);
  }

  private transition(episode: Episode, points: number, actor: Role | null, outcome: Outcome | null, refused: ActionError | null): GameEnvStep {
    const terminated = episode.state.gameOver;
    return {
      control: episode.state.turn.role,
      leader: playerView(episode.state, 'leader', episode.leaderMemory),
      follower: episode.followerObservation,
      reward: points,
      terminated,
      truncated: !terminated && episode.over,
      info: { score: episode.state.score, points, steps: episode.steps, actor, outcome, refused },
    };
  }
}

function engineAction(action: GameAction): Action {
  if (action.role === 'leader') return leaderAction(action.action);
  if (!isFollowerCode(action.action)) {
    throw new RangeError(`unknown follower action ${JSON.stringify(action.action)}; use one of ${FOLLOWER_CODES.join(', ')}`);
  }
  return byActor('follower', actionOfCode(action.action));
}
