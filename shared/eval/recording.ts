/**
 * A recorded game seen from the evaluation's side: every state, every event, and for each
 * instruction what the human follower did with it (appendix F's examples start at the first
 * follower step of an instruction).
 */
import type { Cell, Pose } from '../engine/hex';
import type { GameState } from '../engine/state';
import type { Card } from '../engine/cards';
import type { AgentAction } from '../agents/types';
import type { LogEnd, LogEvent, LogHeader } from '../log/format';
import { replay } from '../log/replay';

/** What the human follower did for one instruction. */
export interface RecordedInstruction {
  readonly id: number;
  readonly text: string;
  /** Index in `states` of the state before the follower's first step for it (j'). */
  readonly start: number;
  /** Index in `states` of the state after the follower marked it DONE, or null if it never did. */
  readonly end: number | null;
  /** The follower's actions while it was current, DONE included when it was marked. */
  readonly actions: readonly AgentAction[];
  /** Cells the follower stood on, from `start` on (consecutive repeats kept: rotations). */
  readonly path: readonly Cell[];
  /** Cards whose selection the follower flipped an odd number of times (what it "changed"), in the order it first stepped on them. */
  readonly changedCards: readonly number[];
  /** Every card the follower stepped onto, in order, repeats included (each visit flipped it). */
  readonly cardVisits: readonly number[];
  readonly endPose: Pose;
}

export interface Recording {
  readonly header: LogHeader;
  /** The log's end line; null for a log still open (a game in progress, or a process that died). */
  readonly end: LogEnd | null;
  /** states[0] is the start; states[i] is the state after events[i - 1]. */
  readonly states: readonly GameState[];
  readonly events: readonly LogEvent[];
  /**
   * Instructions the recorded follower marked DONE, in order: the evaluation's examples. An
   * instruction the game ended on before it was done is left out (no one could say it was followed).
   */
  readonly instructions: readonly RecordedInstruction[];
  /**
   * The instruction the game ended on before the follower marked it DONE, or null: not an example,
   * but the oracles replay what the follower did with it (a set made then counts in the points
   * possible from earlier examples).
   */
  readonly unfinished: RecordedInstruction | null;
  /**
   * The ids of every instruction the recorded leader cancelled (the cancel rule), in order: not
   * examples, neither followed nor failed (docs/evaluation.md, E-37).
   */
  readonly cancelledIds: readonly number[];
  /**
   * What the follower did with the cancelled instructions it had acted on, up to the cancel (their
   * `end` is null): the oracles replay it, so that the recorded cancel comes where it came.
   */
  readonly cancelled: readonly RecordedInstruction[];
  /** Replacement cards of every set made in the game, by the sorted ids of the set's cards. */
  readonly setReplacements: ReadonlyMap<string, readonly Card[]>;
}

export const setKey = (cardIds: readonly number[]) => [...cardIds].sort((a, b) => a - b).join(',');

/** Replays a log (throws the replay's LogError when it is inconsistent) and segments it. */
export function loadRecording(text: string): Recording {
  const states: GameState[] = [];
  const events: LogEvent[] = [];
  const result = replay(text, {
    allowOpen: true,
    onState: (state, event) => {
      states.push(state);
      if (event) events.push(event);
    },
  });
  const setReplacements = new Map<string, readonly Card[]>();
  for (const event of events) if (event.outcome.set) setReplacements.set(setKey(event.outcome.set.cards), event.outcome.set.added);
  const { done, unfinished, cancelled } = segment(states, events);
  const cancelledIds = events.flatMap((event) => event.outcome.cancelled ?? []);
  return { header: result.header, end: result.end, states, events, instructions: done, unfinished, cancelledIds, cancelled, setReplacements };
}

/** The follower's instructions: those it marked DONE, the one the game ended on, those the leader cancelled while the follower was on them. */
function segment(
  states: readonly GameState[],
  events: readonly LogEvent[],
): { done: RecordedInstruction[]; unfinished: RecordedInstruction | null; cancelled: RecordedInstruction[] } {
  const done: RecordedInstruction[] = [];
  const cancelled: RecordedInstruction[] = [];
  let current: OpenInstruction | null = null;
  events.forEach((event, i) => {
    const before = states[i];
    if (event.type === 'cancel' && current) {
      cancelled.push(close(current, null));
      current = null;
    }
    if (event.actor !== 'follower') return;
    const head = before.queue[0];
    if (!current || current.id !== head.id) {
      current = { id: head.id, text: head.text, start: i, actions: [], path: [cellOf(before.follower)], visits: [], last: before };
    }
    const open = current;
    open.last = states[i + 1];
    if (event.type === 'move') {
      open.actions.push(event.payload.move);
      open.path.push(cellOf(states[i + 1].follower));
      open.visits.push(...(event.outcome.toggled ?? []));
    } else if (event.type === 'done') {
      open.actions.push('DONE');
      done.push(close(open, i + 1));
      current = null;
    }
  });
  return { done, unfinished: current ? close(current, null) : null, cancelled };
}

/** An instruction the follower is on, while segmenting. */
interface OpenInstruction {
  readonly id: number;
  readonly text: string;
  readonly start: number;
  readonly actions: AgentAction[];
  readonly path: Cell[];
  /** The cards the follower stepped on, in order. */
  readonly visits: number[];
  /** The state after the follower's last action for it. */
  last: GameState;
}

function close(open: OpenInstruction, end: number | null): RecordedInstruction {
  const { id, text, start, actions, path, visits } = open;
  return { id, text, start, end, actions, path, changedCards: oddlyFlipped(visits), cardVisits: visits, endPose: open.last.follower };
}

/** The cards flipped an odd number of times by these visits, in the order of their first visit. */
export function oddlyFlipped(visits: readonly number[]): number[] {
  const flips = new Map<number, number>();
  for (const id of visits) flips.set(id, (flips.get(id) ?? 0) + 1);
  return [...flips].filter(([, n]) => n % 2 === 1).map(([id]) => id);
}

export const cellOf = (pose: Pose): Cell => ({ x: pose.x, y: pose.y });

/** The largest map among the recordings, width and height apart: a grid every one fits in. */
export function largestMap(recordings: readonly Recording[]): { readonly width: number; readonly height: number } {
  return {
    width: Math.max(...recordings.map((recording) => recording.header.map.width)),
    height: Math.max(...recordings.map((recording) => recording.header.map.height)),
  };
}
