/**
 * A headless environment for training followers, with Gymnasium's reset/step conventions: the
 * agent plays the follower, one action per `step`, and the environment plays the leader's turns in
 * between. See docs/env.md.
 *
 * Two modes, chosen at reset:
 * - seed: a fresh game on `generateMap(seed)`, the scripted self-play leader as partner, the whole game;
 * - log: a recorded game from the first follower step of one of its instructions on, the recorded
 *   leader turns replayed open loop (as in cascaded evaluation, shared/eval/runner.ts).
 *
 * Rewards are the points made, plus optionally a potential-based shaping term
 * F = gamma * phi(s') - phi(s) (Ng et al. 1999, as used by PixL2R).
 */
import type { Card } from '../engine/cards';
import { DEFAULT_CONFIG } from '../engine/config';
import { GameSetupError } from '../engine/errors';
import type { Cell } from '../engine/hex';
import type { GameMap, World } from '../engine/map';
import { createGame, type GameState } from '../engine/state';
import { emptyMemory, followerInstructionId, playerView, remember, type Memory, type PlayerView } from '../engine/playerView';
import { actionOfCode, byActor, type Action } from '../engine/actions';
import { step, type Outcome, type StepResult } from '../engine/transition';
import { GeodesicDistance } from '../eval/distance';
import { DEFAULT_SUCCESS_THRESHOLD, normalizedDynamicTimeWarping } from '../eval/metrics';
import { cellOf, loadRecording, type RecordedInstruction, type Recording } from '../eval/recording';
import { RecordedLeader, stepWithRecordedSets } from '../eval/runner';
import { generateMap } from '../maps/generate';
import { MAX_ACTIONS, scriptedPlayersDraw } from '../selfplay/game';
import { ScriptedLeader, type CardTask, type LeaderMemory } from '../selfplay/leader';
import { PathPlanner } from '../nav/pathing';
import { ObservationTracker } from '../agents/observation';
import { AGENT_ACTIONS, type AgentAction, type FollowerObservation } from '../agents/types';

/** sparse: points only; distance and ndtw add the shaping term of that potential. */
export type RewardKind = 'sparse' | 'distance' | 'ndtw';

export interface FollowerEnvOptions {
  readonly reward?: RewardKind;
  /** The discount in F = gamma * phi(s') - phi(s); use the learner's own discount. */
  readonly gamma?: number;
  /** Follower actions after which an episode is truncated. */
  readonly maxSteps?: number;
}

export const DEFAULT_ENV_OPTIONS: Required<FollowerEnvOptions> = { reward: 'sparse', gamma: 0.99, maxSteps: 500 };

export type ResetOptions =
  | { readonly seed: number }
  /** `log`: a log's text or a loaded recording; `instruction`: index among `recording.instructions`. */
  | { readonly log: string | Recording; readonly instruction: number };

export interface EnvInfo {
  /**
   * The instruction the follower is to carry out now, by the id its observation gives it
   * (followerInstructionId: the engine's, unless the leader cancelled queued instructions the
   * follower never saw); null when none is queued.
   */
  readonly instructionId: number | null;
  readonly score: number;
  /** What the engine did with the follower's action; null after reset. */
  readonly outcome: Outcome | null;
  /** phi of the state now, for the instruction current now (0 with sparse rewards and at the game's end). */
  readonly potential: number;
  /** F of this step (0 after reset and with sparse rewards): the reward is `points + shaping`. */
  readonly shaping: number;
  /** Sets made during this step, by either player: the sparse reward. */
  readonly points: number;
  /** Follower actions taken so far in the episode. */
  readonly steps: number;
}

/** Reset also gives what stays fixed for the episode: an agent needs the map to know the terrain. */
export interface ResetInfo extends EnvInfo {
  /** `selfplay-<seed>` or `<gameId>#<instruction index>`, like evaluation episodes. */
  readonly episodeId: string;
}

export interface EnvStep {
  readonly observation: FollowerObservation;
  readonly reward: number;
  /** The game is over. */
  readonly terminated: boolean;
  /** Cut short while the game goes on: the step limit, or (log mode) the recorded leader has no more turns. */
  readonly truncated: boolean;
  readonly info: EnvInfo;
}

/** What the follower did with the instruction in hand: what the potentials look at. */
interface InstructionProgress {
  readonly instructionId: number;
  /** Cells the follower stood on since the instruction came up: the nDTW query path. */
  readonly path: Cell[];
  /** Cards the follower flipped an odd number of times for it: what it "changed". */
  readonly changed: Set<number>;
}

/** phi: a number for a state and the progress on one instruction. */
type Potential = (state: GameState, progress: InstructionProgress) => number;

/** Cards of the instruction the follower still has to change. */
type PendingTargets = (state: GameState, progress: InstructionProgress) => readonly Card[];

export interface LeaderPlay {
  readonly state: GameState;
  /** The leader had the turn but nothing more to play (a recorded game that ran out). */
  readonly exhausted: boolean;
}

/** What the two modes do differently: who plays the leader, how the follower's sets get their cards, the targets. */
export interface Partner {
  stepFollower(state: GameState, action: Action): StepResult;
  /** Plays leader turns until the follower has control or the game ends. */
  playLeader(state: GameState): LeaderPlay;
  /**
   * Counts a follower action played without `stepFollower` (the batched environment plays most on
   * its arrays). True when the partner must act now although the follower's turn goes on (a
   * recorded timeout or cancel): call `playLeader`.
   */
  countFollowerAction(): boolean;
  readonly pendingTargets: PendingTargets;
}

interface EpisodeSetup {
  readonly partner: Partner;
  readonly start: GameState;
  readonly map: GameMap;
  readonly episodeId: string;
  /** The recorded follower's path for each instruction it finished, by id (log mode only). */
  readonly referencePaths: ReadonlyMap<number, readonly Cell[]> | null;
}

interface Episode {
  readonly partner: Partner;
  readonly potential: Potential;
  readonly tracker: ObservationTracker;
  state: GameState;
  /**
   * The follower's memory for `followerView`, kept beside the tracker's: the states the follower
   * observed (one per observation, as the tracker witnesses them), remembered in order only when
   * a view is asked for. `unremembered` holds those not remembered yet.
   */
  memory: Memory;
  unremembered: GameState[];
  /** Null when no instruction is queued (only once the episode is over). */
  progress: InstructionProgress | null;
  /** phi(state) for `progress`'s instruction: where the next step's F starts from. */
  phi: number;
  steps: number;
  over: boolean;
}

export class FollowerEnv {
  private readonly options: Required<FollowerEnvOptions>;
  private episode: Episode | null = null;

  constructor(options: FollowerEnvOptions = {}) {
    this.options = { ...DEFAULT_ENV_OPTIONS, ...options };
    const { gamma, maxSteps, reward } = this.options;
    if (!(gamma >= 0 && gamma <= 1)) throw new RangeError(`gamma must be in [0, 1], got ${gamma}`);
    if (!(Number.isInteger(maxSteps) && maxSteps >= 1)) throw new RangeError(`maxSteps must be a positive integer, got ${maxSteps}`);
    if (!REWARD_KINDS.includes(reward)) throw new RangeError(`unknown reward ${JSON.stringify(reward)}; use one of ${REWARD_KINDS.join(', ')}`);
  }

  reset(options: ResetOptions): { observation: FollowerObservation; info: ResetInfo } {
    const setup = 'seed' in options ? seedEpisode(options.seed) : logEpisode(options.log, options.instruction);
    const potential = this.potentialFor(setup);
    const progress = progressAt(setup.start);
    const phi = progress ? potential(setup.start, progress) : 0;
    const episode: Episode = {
      partner: setup.partner,
      potential,
      tracker: new ObservationTracker(),
      state: setup.start,
      memory: emptyMemory('follower'),
      unremembered: [setup.start],
      progress,
      phi,
      steps: 0,
      over: false,
    };
    this.episode = episode;
    const info = { ...this.infoOf(episode, null, 0, 0), episodeId: setup.episodeId };
    return { observation: episode.tracker.observe(episode.state), info };
  }

  /** The follower's action, then the leader's turns until the follower has control again or the episode ends. */
  step(action: AgentAction): EnvStep {
    const episode = this.episode;
    if (!episode || episode.over) throw new Error('the episode is over (or never started): call reset() before step()');
    if (!AGENT_ACTIONS.includes(action)) throw new RangeError(`unknown action ${JSON.stringify(action)}; use one of ${AGENT_ACTIONS.join(', ')}`);
    const before = episode.state;
    const result = episode.partner.stepFollower(before, engineAction(action));
    // The follower has control whenever step is allowed, and then every AgentAction is legal.
    if (!result.ok) throw new Error(`the engine refused the follower's ${action}: ${result.error.code}: ${result.error.message}`);
    episode.steps++;
    if (episode.progress) recordProgress(episode.progress, action, result);
    const { state, exhausted } = episode.partner.playLeader(result.state);
    const terminated = state.gameOver;
    const truncated = !terminated && (exhausted || episode.steps >= this.options.maxSteps);
    const shaping = this.advance(episode, state, terminated);
    episode.over = terminated || truncated;
    if (state !== episode.unremembered.at(-1)) episode.unremembered.push(state);
    const points = state.score - before.score;
    return {
      observation: episode.tracker.observe(state),
      reward: points + shaping,
      terminated,
      truncated,
      info: this.infoOf(episode, result.outcome, shaping, points),
    };
  }

  /**
   * The follower's playerView now: `playerView(state, 'follower', memory)` with its memory of the
   * states it observed this episode (the reset's and each step's), the view its last observation
   * was built from; null before the first reset. Frames are drawn from it (shared/frames), so a
   * frame shows only what the follower knows.
   */
  followerView(): PlayerView | null {
    const episode = this.episode;
    if (!episode) return null;
    for (const state of episode.unremembered) episode.memory = remember(episode.memory, state);
    episode.unremembered = [];
    return playerView(episode.state, 'follower', episode.memory);
  }

  /**
   * Moves the episode to `next` and returns F = gamma * phi(s') - phi(s). The current instruction
   * is part of the state, so phi(s') is taken for the instruction current at s': phi is then one
   * function of the state over the whole game and policy invariance holds for the whole game (a
   * DONE moves phi to the next instruction's target, and F pays for that move). The game's end is
   * terminal: its potential is 0, as policy invariance needs in episodic tasks.
   */
  private advance(episode: Episode, next: GameState, terminated: boolean): number {
    if (episode.progress?.instructionId !== next.queue[0]?.id) episode.progress = progressAt(next);
    const phiNext = terminated || !episode.progress ? 0 : episode.potential(next, episode.progress);
    const shaping = this.options.gamma * phiNext - episode.phi;
    episode.state = next;
    episode.phi = phiNext;
    return shaping;
  }

  private potentialFor(setup: EpisodeSetup): Potential {
    const distance = new GeodesicDistance(setup.start.world);
    switch (this.options.reward) {
      case 'sparse':
        return () => 0;
      case 'distance':
        return distancePotential(setup.partner.pendingTargets, distance);
      case 'ndtw':
        if (!setup.referencePaths) throw new Error("the 'ndtw' reward needs a recorded reference path: use log mode, or 'distance' with a seed");
        return fidelityPotential(setup.referencePaths, distance);
    }
  }

  private infoOf(episode: Episode, outcome: Outcome | null, shaping: number, points: number): EnvInfo {
    return {
      instructionId: episode.state.queue.length > 0 ? followerInstructionId(episode.state, episode.state.queue[0].id) : null,
      score: episode.state.score,
      outcome,
      potential: episode.phi,
      shaping,
      points,
      steps: episode.steps,
    };
  }
}

const REWARD_KINDS: readonly RewardKind[] = ['sparse', 'distance', 'ndtw'];

function engineAction(action: AgentAction): Action {
  return byActor('follower', actionOfCode(action));
}

function progressAt(state: GameState): InstructionProgress | null {
  const instruction = state.queue[0];
  return instruction ? { instructionId: instruction.id, path: [cellOf(state.follower)], changed: new Set() } : null;
}

/** The same bookkeeping as the recording's segmentation: a cell per move, toggles counted by parity. */
function recordProgress(progress: InstructionProgress, action: AgentAction, result: Extract<StepResult, { ok: true }>): void {
  if (action !== 'DONE') progress.path.push(cellOf(result.state.follower));
  for (const id of result.outcome.toggled ?? []) {
    if (!progress.changed.delete(id)) progress.changed.add(id);
  }
}

/**
 * phi = -(geodesic distance to the nearest card still to be changed), 0 when none is left. A card
 * no walk can reach is left out: it can never be changed, and phi must stay finite.
 */
function distancePotential(pendingTargets: PendingTargets, distance: GeodesicDistance): Potential {
  return (state, progress) => {
    const apart = pendingTargets(state, progress)
      .map((card) => distance.between(state.follower, card))
      .filter(Number.isFinite);
    return apart.length === 0 ? 0 : -Math.min(...apart);
  };
}

/**
 * phi = nDTW(recorded path, follower path so far), so that with gamma = 1 F is the gain in nDTW:
 * the nDTW paper's fidelity reward. The potential looks at the path so far, which PixL2R also
 * takes as its state. An instruction the recorded follower never finished has no reference: 0.
 */
function fidelityPotential(referencePaths: ReadonlyMap<number, readonly Cell[]>, distance: GeodesicDistance): Potential {
  return (_state, progress) => {
    const reference = referencePaths.get(progress.instructionId);
    return reference ? normalizedDynamicTimeWarping(reference, progress.path, distance.between, DEFAULT_SUCCESS_THRESHOLD) : 0;
  };
}


/** A self-play game on `seed` up to the follower's first turn, with its leader: seed mode's start (the batched environment starts its games here too). */
export function selfPlayStart(seed: number): { readonly partner: ScriptedPartner; readonly start: GameState; readonly map: GameMap } {
  const map = generateMap(seed);
  const initial = createGame(DEFAULT_CONFIG, map, seed);
  const partner = new ScriptedPartner(initial.world, seed);
  const { state } = partner.playLeader(initial);
  if (state.gameOver) throw new GameSetupError(`seed ${seed}: the game ended before the follower got a turn (the leader found no set to ask for)`);
  return { partner, start: state, map };
}

function seedEpisode(seed: number): EpisodeSetup {
  return { ...selfPlayStart(seed), episodeId: `selfplay-${seed}`, referencePaths: null };
}

/** A recorded game from the follower's first step for instruction `index` on, with its recorded leader: log mode's start (the batched environment starts its episodes here too). */
export function logStart(recording: Recording, index: number): { readonly partner: Partner; readonly start: GameState } {
  const instruction = recording.instructions[index];
  if (!Number.isInteger(index) || !instruction) {
    throw new RangeError(`instruction must be an index among the recording's ${recording.instructions.length} instructions, got ${index}`);
  }
  return { partner: new RecordedPartner(recording, instruction), start: recording.states[instruction.start] };
}

function logEpisode(log: string | Recording, index: number): EpisodeSetup {
  const recording = typeof log === 'string' ? loadRecording(log) : log;
  return {
    ...logStart(recording, index),
    map: recording.header.map,
    episodeId: `${recording.header.gameId}#${index}`,
    referencePaths: new Map(recording.instructions.map((recorded) => [recorded.id, recorded.path])),
  };
}

/**
 * Seed mode: the self-play leader, wired as in shared/selfplay/game.ts but without its simulated
 * clock (the environment has no time: turns end by steps, DONE, End Turn or the leader's own
 * timeout habit). Its task map says which card each instruction is about.
 */
/** A ScriptedPartner as it stood, to start games from again (the batched environment's kept starts). */
export interface PartnerMemory {
  readonly tasks: readonly (readonly [number, CardTask])[];
  readonly leader: LeaderMemory;
}

export class ScriptedPartner implements Partner {
  private readonly tasks = new Map<number, CardTask>();
  private readonly leader: ScriptedLeader;

  /**
   * The partner of the game on `world` with `seed`, or with `memory` one that goes on as the
   * partner it was taken from, planning with `paths` when given (a planner of `world`).
   */
  constructor(world: World, seed: number, memory?: PartnerMemory, paths: PathPlanner = new PathPlanner(world)) {
    if (memory) {
      for (const [id, task] of memory.tasks) this.tasks.set(id, task);
      this.leader = ScriptedLeader.resume(paths, this.tasks, memory.leader);
      return;
    }
    this.leader = new ScriptedLeader(paths, scriptedPlayersDraw(seed), this.tasks);
    // A game starts with the leader's turn.
    this.leader.startTurn();
  }

  memory(): PartnerMemory {
    return { tasks: [...this.tasks], leader: this.leader.memory() };
  }

  stepFollower(state: GameState, action: Action): StepResult {
    return this.afterStep(step(state, action));
  }

  playLeader(state: GameState): LeaderPlay {
    for (let actions = 0; !state.gameOver && state.turn.role === 'leader'; actions++) {
      if (actions >= MAX_ACTIONS) throw new Error(`the scripted leader did not end its turns within ${MAX_ACTIONS} actions`);
      const decision = this.leader.decide(state);
      const result = this.afterStep(step(state, decision.action));
      if (!result.ok) throw new Error(`the engine refused the scripted leader's ${JSON.stringify(decision.action)}: ${result.error.code}`);
      if (decision.task && result.outcome.instruction !== undefined) this.tasks.set(result.outcome.instruction, decision.task);
      state = result.state;
    }
    return { state, exhausted: false };
  }

  countFollowerAction(): boolean {
    return false;
  }

  /** The card the leader's instruction `instructionId` is about and the selection it asks for, if it gave one. */
  taskOf(instructionId: number): CardTask | undefined {
    return this.tasks.get(instructionId);
  }

  /** The task's card, while its selection is not yet the one asked for. */
  readonly pendingTargets: PendingTargets = (state, progress) => {
    const task = this.taskOf(progress.instructionId);
    return task ? state.cards.filter((card) => card.id === task.cardId && card.selected !== task.select) : [];
  };

  /** The leader's habits are drawn per turn: a turn that ends with the leader in control starts a new one. */
  private afterStep(result: StepResult): StepResult {
    if (result.ok && result.outcome.turnEnded && !result.state.gameOver && result.state.turn.role === 'leader') this.leader.startTurn();
    return result;
  }
}

/** Log mode: the recorded leader replayed open loop, and recorded sets keep their recorded cards. */
class RecordedPartner implements Partner {
  private readonly leader: RecordedLeader;
  private readonly changedCards: ReadonlyMap<number, readonly number[]>;

  constructor(
    private readonly recording: Recording,
    start: RecordedInstruction,
  ) {
    this.leader = new RecordedLeader(recording, start.start);
    this.changedCards = new Map(recording.instructions.map((recorded) => [recorded.id, recorded.changedCards]));
  }

  stepFollower(state: GameState, action: Action): StepResult {
    this.leader.followerActed();
    return stepWithRecordedSets(state, action, this.recording);
  }

  countFollowerAction(): boolean {
    this.leader.followerActed();
    return this.leader.turnCut;
  }

  playLeader(state: GameState): LeaderPlay {
    // A follower turn that ran out of time, or that the leader cancelled, in the recording ends here too (docs/evaluation.md, E-20, E-39).
    state = this.leader.endFollowerTurnAsRecorded(state);
    while (!state.gameOver && state.turn.role === 'leader') {
      if (this.leader.exhausted) return { state, exhausted: true };
      state = this.leader.playTurn(state);
    }
    return { state, exhausted: false };
  }

  /** The cards the recorded follower changed for the instruction, while on the board and not changed yet. */
  readonly pendingTargets: PendingTargets = (state, progress) => {
    const targets = this.changedCards.get(progress.instructionId) ?? [];
    return state.cards.filter((card) => targets.includes(card.id) && !progress.changed.has(card.id));
  };
}
