/**
 * Agents that know the recorded game, as upper bounds for evaluation:
 * - `static-oracle` replays the human follower's actions for each instruction, then says DONE;
 * - `oracle` walks the shortest paths onto the cards the human follower stepped onto, in the same
 *   order and as often (so it flips each card as often as the human did), then to where the human
 *   stopped, turns as it faced, and says DONE.
 */
import { rotateLeft, rotationDistance, type Pose } from '../engine/hex';
import { buildWorld, CEREALBAR_WORLD_RULES, type GameMap, type WorldRules } from '../engine/map';
import { PathPlanner } from '../nav/pathing';
import type { AgentAction, EpisodeStart, FollowerAgent, FollowerObservation } from './types';

function recordingOf(start: EpisodeStart, agent: string): NonNullable<EpisodeStart['recording']> & { readonly map: GameMap; readonly rules: WorldRules } {
  if (!start.recording || !start.map) throw new Error(`the ${agent} agent needs the recorded game and its map`);
  return { ...start.recording, map: start.map, rules: start.rules ?? CEREALBAR_WORLD_RULES };
}

export class StaticOracle implements FollowerAgent {
  readonly name = 'static-oracle';
  readonly needsRecording = true;
  readonly readsView = false;
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
  readonly readsView = false;
  private recording!: ReturnType<typeof recordingOf>;
  private planner!: PathPlanner;
  /** The instruction in hand, how many of the human's card visits for it are made, and where the oracle last stood. */
  private progress: { id: number; visited: number; at: Pose } | null = null;

  reset(start: EpisodeStart): void {
    this.recording = recordingOf(start, this.name);
    this.planner = PathPlanner.shared(buildWorld(this.recording.map, this.recording.rules));
    this.progress = null;
  }

  act(observation: FollowerObservation): AgentAction {
    const instruction = observation.instruction;
    const cards = observation.oracle?.cards;
    if (!instruction || !cards) return 'DONE';
    const pose = observation.pose;
    const visits = this.recording.cardVisits[instruction.id] ?? [];
    if (this.progress?.id !== instruction.id) this.progress = { id: instruction.id, visited: 0, at: pose };
    const progress = this.progress;
    // Only the oracle's own moves change its pose, and its walks enter no card but the next one.
    const moved = progress.at.x !== pose.x || progress.at.y !== pose.y;
    progress.at = pose;
    if (moved && cards.some((card) => card.id === visits[progress.visited] && card.x === pose.x && card.y === pose.y)) progress.visited++;
    // A card that left the board in a set cannot be visited again.
    while (progress.visited < visits.length && !cards.some((card) => card.id === visits[progress.visited])) progress.visited++;
    const next = cards.find((card) => card.id === visits[progress.visited]);
    if (next) return this.planner.nextMove(cards, pose, next) ?? 'DONE';
    const end = this.recording.endPoses[instruction.id];
    if (!end) return 'DONE';
    const atEnd = pose.x === end.x && pose.y === end.y;
    if (!atEnd) return this.planner.nextMove(cards, pose, end) ?? 'DONE';
    return turnToward(pose, end);
  }
}

/** RL or RR toward the end heading, or DONE when facing it. */
function turnToward(pose: Pose, end: Pose): AgentAction {
  const turns = rotationDistance(pose.heading, end.heading);
  if (turns === 0) return 'DONE';
  return rotationDistance(rotateLeft(pose.heading), end.heading) < turns ? 'RL' : 'RR';
}
