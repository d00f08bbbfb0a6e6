/**
 * Evaluation episodes over recorded games (the CerealBar appendix, section F). The agent plays the
 * follower from the recorded state at the first follower step of an instruction; the recorded
 * leader turns are replayed open loop whenever the leader has control.
 *
 * - single: the agent executes that one instruction, until it says DONE or reaches the action limit.
 * - cascaded: the agent executes it and every later instruction, as long as the recorded game goes on
 *   and, by default (`cascade: 'stop-at-first-failure'`, the original's convention), until the first
 *   instruction it does not follow. `cascade: 'continue'` plays on after failures (not the paper's).
 *
 * The agent may answer with plans (shared/agents/plans.ts); a pass (an empty plan) lets its turn
 * run out.
 *
 * A set the agent makes that the recorded game also made gets the recorded replacement cards, so the
 * board stays aligned with the recording; any other set gets cards drawn by the engine's generator.
 */
import { actionOfCode, byActor, FOLLOWER_CODES, isFollowerCode, type Action } from '../engine/actions';
import { step, type StepResult } from '../engine/transition';
import { eventAction, rulesProfileOf } from '../log/format';
import { worldRulesOf } from '../engine/config';
import type { GameState } from '../engine/state';
import { followerInstructionId } from '../engine/playerView';
import type { Cell } from '../engine/hex';
import { frameView } from '../frames/frame';
import { ObservationTracker } from '../agents/observation';
import { followerSituation, PlanPlayer } from '../agents/plans';
import { AgentRunStopped, type AgentAction, type EpisodeStart, type FollowerAgent } from '../agents/types';
import { GeodesicDistance } from './distance';
import { DEFAULT_SUCCESS_THRESHOLD, pathMetrics, type MetricName } from './metrics';
import { cellOf, oddlyFlipped, setKey, type RecordedInstruction, type Recording } from './recording';

export type EvalMode = 'single' | 'cascaded';

/**
 * What cascaded evaluation does after an instruction the agent did not follow:
 * - 'stop-at-first-failure' (the default, the original implementation's): the example ends there,
 *   so the points of later instructions are not played for;
 * - 'continue': the agent plays on through later instructions (a departure from the paper; the
 *   count of instructions followed still stops at the first failure).
 */
export type CascadeConvention = 'stop-at-first-failure' | 'continue';
export const CASCADE_CONVENTIONS: readonly CascadeConvention[] = ['stop-at-first-failure', 'continue'];

export interface EvalOptions {
  readonly mode: EvalMode;
  /** Cascaded mode only: whether an example stops at the first instruction not followed. */
  readonly cascade: CascadeConvention;
  /** Most actions (DONE included) an agent may take for one instruction; then DONE is forced. */
  readonly maxActions: number;
  /** Success threshold d_th of the path metrics, in hexes. */
  readonly successThreshold: number;
}

export const DEFAULT_EVAL_OPTIONS: EvalOptions = {
  mode: 'single',
  cascade: 'stop-at-first-failure',
  maxActions: 25,
  successThreshold: DEFAULT_SUCCESS_THRESHOLD,
};

/** What the agent did with one instruction. */
export interface InstructionRun {
  readonly instructionId: number;
  readonly actions: AgentAction[];
  readonly path: Cell[];
  /** Every card the agent stepped onto while the instruction was current, in order. */
  readonly cardVisits: number[];
  /** The agent reached the action limit and DONE was forced. */
  limitReached: boolean;
  /** The agent marked it DONE (or DONE was forced). */
  finished: boolean;
  /** Finished, with exactly the cards the human follower changed for it (appendix F's "followed"). */
  followed: boolean;
  /** The recorded leader cancelled it: neither followed nor failed, whatever the agent did (E-37). */
  readonly cancelled: boolean;
}

export interface EpisodeResult {
  readonly episodeId: string;
  readonly gameId: string;
  /** The rules the game was played by: `cerealbar`, or the profile its log names (`cb2`). */
  readonly profile: string;
  /** Position of the instruction among the recording's instructions (j), and its id. */
  readonly index: number;
  readonly instructionId: number;
  readonly text: string;
  readonly mode: EvalMode;
  /** Index of the recorded event the episode starts at (for links into the replay viewer). */
  readonly startEvent: number;
  /** Why the agent failed (it crashed, hung, printed garbage, or chose an illegal action). */
  readonly error: string | null;
  readonly actions: readonly AgentAction[];
  readonly limitReached: boolean;
  readonly single?: {
    readonly cardAccuracy: number;
    readonly exactEnvAccuracy: number;
    readonly relaxedEnvAccuracy: number;
    readonly sequenceAccuracy: number;
    readonly metrics: Record<MetricName, number>;
  };
  readonly cascaded?: {
    /** The convention the example was played under (also in the report's options). */
    readonly cascade: CascadeConvention;
    /** Followed instructions from j on, up to the first one not followed (under both conventions). */
    readonly instructionsFollowed: number;
    readonly instructionsPossible: number;
    readonly proportionFollowed: number;
    readonly pointsScored: number;
    readonly pointsPossible: number;
    /**
     * pointsScored / pointsPossible, not clipped: above 1 when the agent scored more than the
     * recorded game did from j on. Null (undefined) when the recorded game scored nothing from j on.
     */
    readonly proportionPoints: number | null;
    /** Instructions the agent played that the recorded leader cancelled: neither followed nor failed (E-38). */
    readonly instructionsCancelled: number;
    /** The instructions the agent played, in order, whether it followed each, and `cancelled` for those the recorded leader cancelled. */
    readonly played: readonly { readonly instructionId: number; readonly followed: boolean; readonly cancelled?: true }[];
  };
}

/** A leader turn of the recording: its actions, ending with the one that ended the turn. */
export interface LeaderTurn {
  readonly firstEvent: number;
  readonly actions: readonly Action[];
}

export function leaderTurns(recording: Recording): LeaderTurn[] {
  const turns: LeaderTurn[] = [];
  let open: { firstEvent: number; actions: Action[] } | null = null;
  recording.events.forEach((event, i) => {
    const isLeaderTurn = recording.states[i].turn.role === 'leader';
    if (!isLeaderTurn) return;
    open ??= { firstEvent: i, actions: [] };
    open.actions.push(eventAction(event));
    if (event.outcome.turnEnded || event.outcome.gameOver) {
      turns.push(open);
      open = null;
    }
  });
  if (open) turns.push(open);
  return turns;
}

/**
 * A follower turn of the recording: its events (the leader's feedback and cancel among them), and
 * what ended it when the follower did not: its time running out, or the leader's cancel.
 */
interface FollowerTurn {
  readonly firstEvent: number;
  readonly lastEvent: number;
  readonly cutBy: 'timeout' | 'cancel' | null;
}

function followerTurns(recording: Recording): FollowerTurn[] {
  const turns: FollowerTurn[] = [];
  recording.events.forEach((event, i) => {
    if (recording.states[i].turn.role !== 'follower') return;
    const open = turns.at(-1);
    const cutBy = event.type === 'timeout' || event.type === 'cancel' ? event.type : null;
    if (open && open.lastEvent === i - 1 && !open.cutBy) turns[turns.length - 1] = { ...open, lastEvent: i, cutBy };
    else turns.push({ firstEvent: i, lastEvent: i, cutBy });
  });
  return turns;
}

interface Turns {
  readonly leader: readonly LeaderTurn[];
  readonly follower: readonly FollowerTurn[];
  /** The follower turns a timeout or a cancel ended, by their first event. */
  readonly cut: ReadonlyMap<number, FollowerTurn>;
}

/** The turns of a recording, found once for all of its episodes. */
const turnsCache = new WeakMap<Recording, Turns>();
function turnsOf(recording: Recording): Turns {
  let turns = turnsCache.get(recording);
  if (!turns) {
    const follower = followerTurns(recording);
    turns = { leader: leaderTurns(recording), follower, cut: new Map(follower.filter((turn) => turn.cutBy).map((turn) => [turn.firstEvent, turn])) };
    turnsCache.set(recording, turns);
  }
  return turns;
}

/** The episodes of a recording: one per instruction the follower started on. */
export function episodeIds(recording: Recording): string[] {
  return recording.instructions.map((_, index) => episodeIdOf(recording, index));
}

/** The id of the episode of the recording's `index`-th instruction: `<gameId>#<index>`. */
export const episodeIdOf = (recording: Recording, index: number): string => `${recording.header.gameId}#${index}`;

class AgentFailure extends Error {}

/**
 * Runs the agent on the episode for the `index`-th recorded instruction. Agent errors do not
 * throw: they end the episode and are reported in `error`.
 */
export async function runEpisode(agent: FollowerAgent, recording: Recording, index: number, options: EvalOptions): Promise<EpisodeResult> {
  const target = recording.instructions[index];
  const episodeId = episodeIdOf(recording, index);
  // An agent learns the world from its observations; only oracles get the static map and the recording.
  const start: EpisodeStart = {
    episodeId,
    ...(agent.needsRecording && { map: recording.header.map, rules: worldRulesOf(recording.header.config), recording: recordingFor(recording) }),
  };
  const runs: InstructionRun[] = [];
  let state = recording.states[target.start];
  let error: string | null = null;
  try {
    await agent.reset(start);
    state = await play(agent, recording, target, options, runs, state);
  } catch (failure) {
    if (failure instanceof AgentRunStopped) throw failure;
    error = failure instanceof AgentFailure ? failure.message : `agent failed: ${(failure as Error).message}`;
  }
  const first = runs[0] ?? newRun(target.id, state, recording);
  const base = {
    episodeId,
    gameId: recording.header.gameId,
    profile: rulesProfileOf(recording.header),
    index,
    instructionId: target.id,
    text: target.text,
    mode: options.mode,
    startEvent: target.start,
    error,
    actions: runs.flatMap((run) => run.actions),
    limitReached: runs.some((run) => run.limitReached),
  };
  if (options.mode === 'single') return { ...base, single: scoreSingle(recording, target, first, state, options, error) };
  return { ...base, cascaded: scoreCascade(recording, index, runs, state, options.cascade) };
}

function newRun(instructionId: number, state: GameState, recording: Recording): InstructionRun {
  const cancelled = recording.cancelledIds.includes(instructionId);
  return { instructionId, actions: [], path: [cellOf(state.follower)], cardVisits: [], limitReached: false, finished: false, followed: false, cancelled };
}

/**
 * What oracle agents are given of a recorded game: the human follower's actions, cards and end pose
 * per instruction (the unfinished one and the cancelled ones included), by the id the follower's
 * observations give the instruction (followerInstructionId: the engine's, unless the leader
 * cancelled queued instructions the follower never saw).
 */
export function recordingFor(recording: Recording): NonNullable<EpisodeStart['recording']> {
  const actions: Record<number, readonly AgentAction[]> = {};
  const changedCards: Record<number, readonly number[]> = {};
  const cardVisits: Record<number, readonly number[]> = {};
  const endPoses: Record<number, RecordedInstruction['endPose']> = {};
  for (const instruction of [...recording.instructions, ...recording.cancelled, ...(recording.unfinished ? [recording.unfinished] : [])]) {
    const id = followerInstructionId(recording.states[instruction.start], instruction.id);
    actions[id] = instruction.actions;
    changedCards[id] = instruction.changedCards;
    cardVisits[id] = instruction.cardVisits;
    endPoses[id] = instruction.endPose;
  }
  return { actions, changedCards, cardVisits, endPoses };
}

/** Steps the game with the agent as follower and the recorded leader, until the episode ends. */
async function play(
  agent: FollowerAgent,
  recording: Recording,
  target: RecordedInstruction,
  options: EvalOptions,
  runs: InstructionRun[],
  state: GameState,
): Promise<GameState> {
  const tracker = new ObservationTracker();
  const leader = new RecordedLeader(recording, target.start);
  const humanChanges = new Map(recording.instructions.map((instruction) => [instruction.id, setKey(instruction.changedCards)]));
  const plans = new PlanPlayer<AgentAction>();
  while (!state.gameOver) {
    if (state.turn.role === 'leader') {
      plans.turnEnded();
      if (leader.exhausted) break; // the recorded game has nothing more to say
      state = leader.playTurn(state);
      continue;
    }
    const instruction = state.queue[0];
    let run = runs[runs.length - 1];
    if (!run || run.instructionId !== instruction.id) {
      if (options.mode === 'single' && runs.length > 0) break;
      run = newRun(instruction.id, state, recording);
      runs.push(run);
    }
    let chosen: AgentAction;
    const cut = leader.endFollowerTurnAsRecorded(state);
    if (cut !== state) {
      state = cut;
      continue;
    }
    if (run.actions.length >= options.maxActions - 1) {
      chosen = 'DONE';
      run.limitReached = true;
    } else {
      const observation = tracker.observe(state, { oracle: agent.wantsOracleObservation, view: agent.readsView });
      const seen = tracker.lastView();
      const asked = plans.nextNow(followerSituation(observation.instruction), () => agent.act(observation, { frame: () => frameView(seen()) }));
      const next = asked instanceof Promise ? await asked : asked;
      if (next === null) {
        // The agent passes: its turn runs out, as the server's timeout would end it.
        state = followerTimeout(state);
        continue;
      }
      if (!isFollowerCode(next)) throw new AgentFailure(`unknown action ${JSON.stringify(next)}; actions are ${FOLLOWER_CODES.join(', ')}`);
      chosen = next;
    }
    const action = byActor('follower', actionOfCode(chosen));
    const result = stepWithRecordedSets(state, action, recording);
    if (!result.ok) throw new AgentFailure(`illegal action ${chosen}: ${result.error.code}: ${result.error.message}`);
    run.actions.push(chosen);
    leader.followerActed();
    if (action.type === 'move') run.path.push(cellOf(result.state.follower));
    run.cardVisits.push(...(result.outcome.toggled ?? []));
    state = result.state;
    if (chosen === 'DONE') {
      run.finished = true;
      // The follower's own flips on both sides: what the leader flipped meanwhile counts for neither.
      run.followed = !run.cancelled && humanChanges.get(run.instructionId) === setKey(oddlyFlipped(run.cardVisits));
      if (options.mode === 'single') break;
      // The cascade stops at the first failure; an instruction the recorded leader cancelled is none (E-38).
      if (!run.followed && !run.cancelled && options.cascade !== 'continue') break;
    }
  }
  return state;
}

function followerTimeout(state: GameState): GameState {
  const result = step(state, { type: 'timeout', actor: 'server', role: 'follower' });
  if (!result.ok) throw new Error(`the follower's timeout is refused: ${result.error.message}`);
  return result.state;
}

/**
 * The recorded leader, replayed open loop from a point of the recording on: each call to
 * `playTurn` plays its next recorded turn. It also keeps the recorded follower's clock: a follower
 * turn that ran out of time in the recording runs out in the episode after as many follower
 * actions (docs/evaluation.md, E-20), and one the recorded leader cancelled is cancelled there
 * (E-39), so that the replayed leader acts where it acted.
 */
export class RecordedLeader {
  private readonly turns: readonly LeaderTurn[];
  /** The recorded follower turns a timeout or a cancel ended, by their first event. */
  private readonly cut: ReadonlyMap<number, FollowerTurn>;
  private next = 0;
  /** Follower actions left in this turn before the recorded timeout or cancel; Infinity when it had none. */
  private followerActionsLeft: number;
  /** What ends the follower's turn in progress when its actions run out. */
  private cutBy: FollowerTurn['cutBy'];

  constructor(
    private readonly recording: Recording,
    /** Index of the event after which the replayed turns start (the follower's first step of the episode). */
    afterEvent: number,
  ) {
    const { leader, follower: followers, cut } = turnsOf(recording);
    this.turns = leader.filter((turn) => turn.firstEvent > afterEvent);
    this.cut = cut;
    // The follower turn in progress at afterEvent: only its actions from there on count.
    const current = followers.find((turn) => turn.firstEvent <= afterEvent && afterEvent <= turn.lastEvent);
    this.cutBy = current?.cutBy ?? null;
    this.followerActionsLeft = current?.cutBy ? this.followerActions(afterEvent, current.lastEvent) : Infinity;
  }

  /** The recorded follower's actions among events from..to (a timeout is the server's). */
  private followerActions(from: number, to: number): number {
    return this.recording.events.slice(from, to + 1).filter((event) => event.actor === 'follower').length;
  }

  get exhausted(): boolean {
    return this.next >= this.turns.length;
  }

  /**
   * The state after the server's timeout, or the recorded leader's cancel, when the recorded
   * follower's turn had ended so by now; else `state`.
   */
  endFollowerTurnAsRecorded(state: GameState): GameState {
    if (this.followerActionsLeft > 0 || state.gameOver || state.turn.role !== 'follower') return state;
    if (this.cutBy !== 'cancel') return followerTimeout(state);
    const cancelled = step(state, { type: 'cancel', actor: 'leader' });
    if (!cancelled.ok) throw new Error(`the recorded leader's cancel is refused: ${cancelled.error.message}`);
    return cancelled.state;
  }

  /** Counts one action of the follower in its turn. */
  followerActed(): void {
    this.followerActionsLeft--;
  }

  /** The recorded follower's turn ended (timed out or was cancelled) by now: `endFollowerTurnAsRecorded` will end this one. */
  get turnCut(): boolean {
    return this.followerActionsLeft <= 0;
  }

  playTurn(state: GameState): GameState {
    const turn = this.turns[this.next++];
    const follower = this.cut.get(turn.firstEvent + turn.actions.length);
    this.cutBy = follower?.cutBy ?? null;
    this.followerActionsLeft = follower ? this.followerActions(follower.firstEvent, follower.lastEvent) : Infinity;
    return replayLeaderTurn(state, turn, this.recording);
  }
}

/** A step in which a set the recorded game also made gets the recorded replacement cards. */
export function stepWithRecordedSets(state: GameState, action: Action, recording: Recording): StepResult {
  const result = step(state, action);
  if (!result.ok || !result.outcome.set) return result;
  const recorded = recording.setReplacements.get(setKey(result.outcome.set.cards));
  if (!recorded) return result;
  const aligned = step(state, action, { replacementCards: recorded });
  // Recorded cards may no longer fit (a player stands on one of their cells): keep the drawn ones.
  return aligned.ok ? aligned : result;
}

/**
 * Replays a recorded leader turn, open loop: actions the diverged state refuses are skipped. The
 * turn is over when an action ends it (rule 3 leaves the leader in control, with a fresh turn);
 * if none does, the leader's time runs out.
 */
function replayLeaderTurn(state: GameState, turn: LeaderTurn, recording: Recording): GameState {
  const timeout: Action = { type: 'timeout', actor: 'server', role: 'leader' };
  for (const action of turn.actions) {
    // End Turn with an empty queue is refused; the leader's time would have run out instead (rule 3).
    let result = stepWithRecordedSets(state, action, recording);
    if (!result.ok && action.type === 'endTurn') result = step(state, timeout);
    if (!result.ok) continue;
    state = result.state;
    if (result.outcome.turnEnded || state.gameOver) return state;
  }
  const timedOut = step(state, timeout);
  return timedOut.ok ? timedOut.state : state;
}

/** The cards as a comparable text: position, face and selection, ids aside (sets may renumber). */
function boardKey(state: GameState): string {
  return state.cards
    .map((card) => `${card.x},${card.y},${card.color},${card.shape},${card.count},${card.selected ? 1 : 0}`)
    .sort()
    .join(';');
}

function scoreSingle(
  recording: Recording,
  target: RecordedInstruction,
  run: InstructionRun,
  final: GameState,
  options: EvalOptions,
  error: string | null,
): NonNullable<EpisodeResult['single']> {
  const recordedFinal = recording.states[target.end ?? recording.states.length - 1];
  const distance = new GeodesicDistance(final.world);
  const d = (a: Cell, b: Cell) => distance.between(a, b);
  const metrics = pathMetrics(target.path, run.path, d, options.successThreshold);
  if (error) return { cardAccuracy: 0, exactEnvAccuracy: 0, relaxedEnvAccuracy: 0, sequenceAccuracy: 0, metrics };
  const cardsEqual = boardKey(final) === boardKey(recordedFinal);
  const samePose =
    final.follower.x === recordedFinal.follower.x && final.follower.y === recordedFinal.follower.y && final.follower.heading === recordedFinal.follower.heading;
  const near = d(final.follower, recordedFinal.follower) <= options.successThreshold;
  const sameActions = run.actions.length === target.actions.length && run.actions.every((a, i) => a === target.actions[i]);
  return {
    cardAccuracy: cardsEqual ? 1 : 0,
    exactEnvAccuracy: cardsEqual && samePose ? 1 : 0,
    relaxedEnvAccuracy: cardsEqual && near ? 1 : 0,
    sequenceAccuracy: sameActions ? 1 : 0,
    metrics,
  };
}

/**
 * Appendix F: instructions followed from j on, out of the N - j left (an instruction is followed
 * when the agent changed exactly the cards the human follower changed for it; the count stops at
 * the first instruction that is not), and the points scored from j on, out of the points the
 * recorded game scored from j on. The proportion of points is not clipped at 1 (the appendix's
 * definition: an agent may score more than the recorded game). After an agent failure, what it
 * finished before still counts.
 */
function scoreCascade(
  recording: Recording,
  index: number,
  runs: readonly InstructionRun[],
  final: GameState,
  cascade: CascadeConvention,
): NonNullable<EpisodeResult['cascaded']> {
  const possible = recording.instructions.length - index;
  let followed = 0;
  for (let k = index; k < recording.instructions.length; k++) {
    const run = runs.find((r) => r.instructionId === recording.instructions[k].id);
    if (!run || !run.followed) break;
    followed++;
  }
  const startScore = recording.states[recording.instructions[index].start].score;
  const recordedScore = recording.states[recording.states.length - 1].score;
  const pointsPossible = recordedScore - startScore;
  const pointsScored = final.score - startScore;
  return {
    cascade,
    instructionsFollowed: followed,
    instructionsPossible: possible,
    proportionFollowed: followed / possible,
    pointsScored,
    pointsPossible,
    proportionPoints: pointsPossible > 0 ? pointsScored / pointsPossible : null,
    instructionsCancelled: runs.filter((run) => run.cancelled).length,
    played: runs.map((run) => ({ instructionId: run.instructionId, followed: run.followed, ...(run.cancelled && { cancelled: true as const }) })),
  };
}
