/**
 * A logged game as dataset records: one per game and one per instruction written in it, in the
 * shape `cerealbar dataset export` writes (docs/data.md). Built from the replayed recording, so a
 * record holds only what the engine reproduced from the log.
 */
import type { Card } from '../engine/cards';
import type { Pose } from '../engine/hex';
import type { GameMap } from '../engine/map';
import type { GameState } from '../engine/state';
import type { FeedbackSignal } from '../engine/actions';
import type { AgentAction } from '../agents/types';
import type { Recording, RecordedInstruction } from '../eval/recording';
import { rulesProfileOf } from '../log/format';

/** The game as it was just before the follower's first action for an instruction. */
export interface StateRecord {
  readonly leader: Pose;
  readonly follower: Pose;
  readonly cards: readonly Card[];
  readonly score: number;
  readonly turns_left: number;
  /** The queued instructions' texts, the current one first. */
  readonly queue: readonly string[];
}

export interface InstructionRecord {
  /** `<game_id>#<index>`. */
  readonly id: string;
  readonly game_id: string;
  /** Its place among the game's instructions, in the order the leader wrote them (0-based). */
  readonly index: number;
  /** The engine's id for it (the log's `outcome.instruction`). */
  readonly instruction_id: number;
  readonly text: string;
  /** The follower marked it DONE. */
  readonly completed: boolean;
  /** The follower's actions while it was current, DONE included when it was marked. */
  readonly actions: readonly AgentAction[];
  /** The follower's moves among them (DONE not counted): Table 3's "follower actions". */
  readonly num_actions: number;
  /** The follower's pose before its first action and after each one; empty when it never became current. */
  readonly path: readonly Pose[];
  /** Just before the follower's first action for it; null when it never acted on it. */
  readonly state_before: StateRecord | null;
  /** Cards whose selection the follower flipped an odd number of times for it. */
  readonly changed_cards: readonly number[];
  /** Sets made by the follower's actions for it. */
  readonly points: number;
  /** The leader cancelled it (with the current and every queued instruction): it was neither followed nor failed. */
  readonly cancelled: boolean;
  /** The leader's positive live-feedback signals while it was current. */
  readonly feedback_positive: number;
  /** The leader's negative live-feedback signals while it was current. */
  readonly feedback_negative: number;
  /** Every live-feedback signal while it was current, in order, with the steps the follower had taken in its turn before it. */
  readonly feedback: readonly FeedbackRecord[];
}

export interface FeedbackRecord {
  readonly signal: FeedbackSignal;
  /** The follower's steps (moves) in its current turn before the signal: 0 when it came before the turn's first move. */
  readonly after_step: number;
}

export interface GameRecord {
  readonly game_id: string;
  /** Where the game came from: the header's `meta.source` (`selfplay`, `cb2`, ...), or `server` for a live game. */
  readonly source: string;
  /** The rules it was played by: `cerealbar` (the paper), or the profile its log names. */
  readonly profile: string;
  readonly engine_version: string;
  readonly started_at: string;
  readonly score: number;
  /** How it ended (the log's end line), or `open` for a log with no end. */
  readonly end_reason: string;
  readonly num_instructions: number;
  readonly num_completed: number;
  /** Instructions the leader cancelled. */
  readonly num_cancelled: number;
  readonly num_follower_actions: number;
  readonly map: GameMap;
  readonly seed: number;
}

export interface GameRecords {
  readonly game: GameRecord;
  readonly instructions: readonly InstructionRecord[];
}

export function recordsOf(recording: Recording): GameRecords {
  const { header, events, states } = recording;
  const gameId = header.gameId;
  const followed = followedInstructions(recording);
  const cancelled = new Set(recording.cancelledIds);
  const feedback = feedbackByInstruction(recording);
  const instructions: InstructionRecord[] = [];
  events.forEach((event, i) => {
    if (event.type !== 'instruction' || event.outcome.instruction === undefined) return;
    const id = event.outcome.instruction;
    const index = instructions.length;
    const done = followed.get(id);
    const steps = done ? followerSteps(recording, done) : { path: [], points: 0 };
    instructions.push({
      id: `${gameId}#${index}`,
      game_id: gameId,
      index,
      instruction_id: id,
      text: states[i + 1].queue.find((queued) => queued.id === id)?.text ?? event.payload.text,
      completed: done !== undefined && done.end !== null,
      actions: done?.actions ?? [],
      num_actions: done ? done.actions.filter((action) => action !== 'DONE').length : 0,
      path: steps.path,
      state_before: done ? stateRecord(states[done.start]) : null,
      changed_cards: done?.changedCards ?? [],
      points: steps.points,
      cancelled: cancelled.has(id),
      feedback_positive: (feedback.get(id) ?? []).filter((signal) => signal.signal === 'positive').length,
      feedback_negative: (feedback.get(id) ?? []).filter((signal) => signal.signal === 'negative').length,
      feedback: feedback.get(id) ?? [],
    });
  });
  const meta = header.meta as { source?: unknown };
  const final = states[states.length - 1];
  return {
    game: {
      game_id: gameId,
      source: typeof meta.source === 'string' ? meta.source : 'server',
      profile: rulesProfileOf(header),
      engine_version: header.engineVersion,
      started_at: header.startedAt,
      score: final.score,
      end_reason: recording.end?.reason ?? 'open',
      num_instructions: instructions.length,
      num_completed: instructions.filter((instruction) => instruction.completed).length,
      num_cancelled: instructions.filter((instruction) => instruction.cancelled).length,
      num_follower_actions: instructions.reduce((sum, instruction) => sum + instruction.num_actions, 0),
      map: header.map,
      seed: header.seed,
    },
    instructions,
  };
}

/** What the follower did with each instruction it acted on (done, cancelled, or the one the game ended on), by id. */
export function followedInstructions(recording: Recording): Map<number, RecordedInstruction> {
  const followed = new Map<number, RecordedInstruction>();
  for (const instruction of [...recording.instructions, ...recording.cancelled, ...(recording.unfinished ? [recording.unfinished] : [])]) followed.set(instruction.id, instruction);
  return followed;
}

/** The live feedback of the game by the instruction it was given on (the log's `outcome.feedback`). */
function feedbackByInstruction(recording: Recording): Map<number, FeedbackRecord[]> {
  const byInstruction = new Map<number, FeedbackRecord[]>();
  recording.events.forEach((event, i) => {
    const feedback = event.outcome.feedback;
    if (!feedback) return;
    const signals = byInstruction.get(feedback.instruction) ?? [];
    signals.push({ signal: feedback.signal, after_step: recording.states[i].config.followerSteps - event.outcome.turn.stepsLeft });
    byInstruction.set(feedback.instruction, signals);
  });
  return byInstruction;
}

function stateRecord(state: GameState): StateRecord {
  return {
    leader: state.leader,
    follower: state.follower,
    cards: state.cards,
    score: state.score,
    turns_left: state.turnsLeft,
    queue: state.queue.map((instruction) => instruction.text),
  };
}

/** The follower's poses from the instruction's start and after each of its moves for it, and the sets those made. */
function followerSteps(recording: Recording, instruction: RecordedInstruction): { path: Pose[]; points: number } {
  const { states, events } = recording;
  const path = instructionPathStates(recording, instruction).map((i) => states[i].follower);
  let points = 0;
  forEachFollowerEvent(recording, instruction, (i) => {
    if (events[i].outcome.set) points++;
  });
  return { path, points };
}

/**
 * The indexes in `recording.states` of the states of an instruction's `path`: its start, and the
 * state after each of the follower's moves for it (frames of the dataset are drawn at these).
 */
export function instructionPathStates(recording: Recording, instruction: RecordedInstruction): number[] {
  const indexes = [instruction.start];
  forEachFollowerEvent(recording, instruction, (i) => {
    if (recording.events[i].type === 'move') indexes.push(i + 1);
  });
  return indexes;
}

/** Calls `visit(i)` for each event i of the follower's while the instruction was its current one. */
function forEachFollowerEvent(recording: Recording, instruction: RecordedInstruction, visit: (i: number) => void): void {
  const last = instruction.end ?? recording.states.length - 1;
  for (let i = instruction.start; i < last; i++) {
    // A cancelled instruction has no end: the follower's later moves are for others.
    if (recording.events[i].actor !== 'follower' || recording.states[i].queue[0]?.id !== instruction.id) continue;
    visit(i);
  }
}
