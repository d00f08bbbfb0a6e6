/**
 * Agents that know the recorded game, as upper bounds for evaluation:
 * - `static-oracle` replays the human follower's actions for each instruction, then says DONE;
 * - `oracle` walks the shortest paths to the cards the human follower changed, in the order it
 *   changed them, then to where the human stopped, turns as it faced, and says DONE.
 */
import { rotateLeft, rotationDistance, type Pose } from '../engine/hex';
import { buildWorld, type GameMap } from '../engine/map';
import { PathPlanner } from '../nav/pathing';
import type { AgentAction, EpisodeStart, FollowerAgent, FollowerObservation } from './types';

function recordingOf(start: EpisodeStart, agent: string): NonNullable<EpisodeStart['recording']> & { readonly map: GameMap } {
  if (!start.recording || !start.map) throw new Error(`the ${agent} agent needs the recorded game and its map`);
  return { ...start.recording, map: start.map };
}

export class StaticOracle implements FollowerAgent {
  readonly name = 'static-oracle';
  readonly needsRecording = true;
  private actions: NonNullable<EpisodeStart['recording']>['actions'] = {};
  private readonly taken = new Map<number, number>();

  reset(start: EpisodeStart): void {
    this.actions = recordingOf(start, this.name).actions;
    this.taken.clear();
  }

  act(observation: FollowerObservation): AgentAction {
    const id = observation.instruction?.id;
    if (id === undefined) return 'DONE';
    const done = this.taken.get(id) ?? 0;
    this.taken.set(id, done + 1);
    return this.actions[id]?.[done] ?? 'DONE';
  }
}

export class Oracle implements FollowerAgent {
  readonly name = 'oracle';
  readonly needsRecording = true;
  readonly wantsOracleObservation = true;
  private recording!: ReturnType<typeof recordingOf>;
  private planner!: PathPlanner;
  /** For the instruction in hand: each target card's selection when the instruction came up. */
  private startSelection: { id: number; selected: Map<number, boolean> } | null = null;

  reset(start: EpisodeStart): void {
    this.recording = recordingOf(start, this.name);
    this.planner = new PathPlanner(buildWorld(this.recording.map));
    this.startSelection = null;
  }

  act(observation: FollowerObservation): AgentAction {
    const instruction = observation.instruction;
    const cards = observation.oracle?.cards;
    if (!instruction || !cards) return 'DONE';
    const targets = this.recording.changedCards[instruction.id] ?? [];
    if (this.startSelection?.id !== instruction.id) {
      this.startSelection = { id: instruction.id, selected: new Map(cards.filter((c) => targets.includes(c.id)).map((c) => [c.id, c.selected])) };
    }
    const start = this.startSelection.selected;
    // A target is still to do while it is on the board with the selection it started with.
    const pending = targets.map((id) => cards.find((c) => c.id === id)).find((card) => card && start.has(card.id) && card.selected === start.get(card.id));
    if (pending) return this.planner.nextMove(cards, observation.pose, pending) ?? 'DONE';
    const end = this.recording.endPoses[instruction.id];
    if (!end) return 'DONE';
    const atEnd = observation.pose.x === end.x && observation.pose.y === end.y;
    if (!atEnd) return this.planner.nextMove(cards, observation.pose, end) ?? 'DONE';
    return turnToward(observation.pose, end);
  }
}

/** RL or RR toward the end heading, or DONE when facing it. */
function turnToward(pose: Pose, end: Pose): AgentAction {
  const turns = rotationDistance(pose.heading, end.heading);
  if (turns === 0) return 'DONE';
  return rotationDistance(rotateLeft(pose.heading), end.heading) < turns ? 'RL' : 'RR';
}
