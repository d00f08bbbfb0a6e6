/**
 * The built-in `scripted` leader agent: self-play's scripted leader (shared/selfplay/leader.ts) in
 * the leader's seat, seeing only the leader's observation. It plans a valid set, takes a card
 * itself when it can, writes one templated instruction per card for the follower and ends its
 * turn; its seeded habits (helping, walking ahead) are self-play's. Unlike
 * self-play's follower, an agent follower is not told which card an instruction means and sees
 * only what is in front of it: so each instruction also says where the card is from where the
 * follower will stand when it reads it ("pick up the 2 red stars: 4 hexes ahead, slightly to the
 * right"), which is its pose now for the first instruction it has queued and, for the next ones
 * ("then ..."), the previous card, facing the way its walk there most likely ends. It never lets
 * its turn run out on purpose (self-play's habit, there to exercise the timeout rules): a person
 * playing with it would wait for nothing.
 *
 * It keeps what an instruction was about (its plan memory) between calls, under the id the
 * instruction gets: the next id after the newest one it sees, checked against the text on the
 * next call. It answers one action a call; an answer the leader would not give by itself (the
 * server's timeout) is a pass.
 */
import type { Action, Move } from '../engine/actions';
import type { Card } from '../engine/cards';
import { opposite, rotateLeft, rotateRight, stepFrom, type Cell, type Pose } from '../engine/hex';
import { buildWorld } from '../engine/map';
import { Draw, seedRng } from '../engine/rng';
import { PathPlanner } from '../nav/pathing';
import { LEADER_HABITS, ScriptedLeader, type CardTask, type LeaderBoard, type LeaderHabits } from '../selfplay/leader';
import { hashString } from './builtin';
import { describeRelativePosition, relativeBearing } from './language';
import { mapFromKnown } from './observation';
import type { Answer, EpisodeStart, LeaderAgent, LeaderAgentAction, LeaderObservation } from './types';

/** Self-play's habits but for letting a turn run out. */
const AGENT_HABITS: LeaderHabits = { ...LEADER_HABITS, timeout: 0 };

export class ScriptedLeaderAgent implements LeaderAgent {
  readonly name = 'scripted';
  readonly role = 'leader';
  private draw = new Draw(seedRng(0));
  private tasks = new Map<number, CardTask>();
  /** The instruction last written, until the next observation shows the id it got. */
  private written: { readonly id: number; readonly text: string } | null = null;
  private leader: ScriptedLeader | null = null;
  /** Walks on the whole map (the leader sees it all), to foresee where the follower ends each walk. */
  private paths: PathPlanner | null = null;
  /** Its own turn ended (it ended it or passed): the next call begins a new turn. */
  private turnOver = true;
  private lastSteps = 0;

  reset(start: EpisodeStart): void {
    this.draw = new Draw(seedRng(hashString(start.episodeId)));
    this.tasks = new Map();
    this.written = null;
    this.leader = null;
    this.paths = null;
    this.turnOver = true;
  }

  act(observation: LeaderObservation): Answer<LeaderAgentAction> {
    this.checkWritten(observation);
    // A leader's turn ends only by End Turn or its time running out; a fresh step count also shows a new turn.
    if (this.turnOver || observation.stepsLeft > this.lastSteps) this.scripted(observation).startTurn();
    this.lastSteps = observation.stepsLeft;
    const decision = this.scripted(observation).decide(boardOf(observation));
    let answer = agentAction(decision.action);
    this.turnOver = answer === 'END' || answer === null;
    if (answer === null) return [];
    if (decision.task && typeof answer === 'object') {
      answer = { instruction: this.withPlace(observation, decision.task, answer.instruction) };
      const id = nextInstructionId(observation);
      this.tasks.set(id, decision.task);
      this.written = { id, text: answer.instruction };
    }
    return answer;
  }

  private scripted(observation: LeaderObservation): ScriptedLeader {
    this.leader ??= new ScriptedLeader(this.planner(observation), this.draw, this.tasks, AGENT_HABITS);
    return this.leader;
  }

  private planner(observation: LeaderObservation): PathPlanner {
    this.paths ??= new PathPlanner(buildWorld(mapFromKnown(observation.map)));
    return this.paths;
  }

  /**
   * The instruction with where its card is, from where the follower will start on it: after the
   * cards of the instructions still queued, or where it stands when there are none. Unchanged
   * when the words would make it too long.
   */
  private withPlace(observation: LeaderObservation, task: CardTask, text: string): string {
    const card = observation.cards.find((c) => c.id === task.cardId);
    if (!card) return text;
    let start: Pose = observation.follower;
    let then = false;
    for (const instruction of observation.instructions) {
      const queued = instruction.status !== 'done' ? this.tasks.get(instruction.id) : undefined;
      const previous = queued && observation.cards.find((c) => c.id === queued.cardId);
      if (!previous) continue;
      start = walkEnd(this.planner(observation), observation.cards, start, previous);
      then = true;
    }
    const placed = placedInstruction(text, start, card, then);
    return placed.length <= observation.maxInstructionLength ? placed : text;
  }

  /** The instruction last written got the id foreseen, or it was refused: its task is forgotten then. */
  private checkWritten(observation: LeaderObservation): void {
    const written = this.written;
    if (!written) return;
    this.written = null;
    if (!observation.instructions.some((instruction) => instruction.id === written.id && instruction.text === written.text)) this.tasks.delete(written.id);
  }
}

/** The board the scripted leader plans from, as the leader's observation shows it. */
function boardOf(observation: LeaderObservation): LeaderBoard {
  return {
    cards: observation.cards,
    leader: observation.pose,
    follower: observation.follower,
    nextCardId: Math.max(-1, ...observation.cards.map((card) => card.id)) + 1,
    queue: observation.instructions.filter((instruction) => instruction.status !== 'done'),
    turn: { stepsLeft: observation.stepsLeft },
  };
}

/**
 * An instruction with where its card lies from `from`: "pick up the 2 red stars: 4 hexes ahead,
 * slightly to the right"; "turn around and" first when it is right behind; "then" first when it
 * follows another instruction (`from` is then that instruction's card).
 */
export function placedInstruction(text: string, from: Pose, card: Cell, then: boolean): string {
  const where = describeRelativePosition(from, card);
  const behind = where !== 'where you stand' && Math.abs(relativeBearing(from, card)) >= TURN_AROUND_DEGREES;
  const placed = `${behind ? 'turn around and ' : ''}${text}: ${where === 'where you stand' ? 'where you stand (step off it and back on)' : where}`;
  return then ? `then ${placed}` : placed;
}

/** From this bearing on (either side), a card is "behind you" with no side given: the follower had best turn around. */
const TURN_AROUND_DEGREES = 165;
/** A bound on a foreseen walk's steps; walks on a map are far shorter. */
const MAX_FORESEEN_STEPS = 200;

/**
 * Where a walk from `from` onto `card` ends, facing the way its last step went: a follower who
 * sees only ahead walks forward (the planner's shortest walk may back up; a follower would turn
 * around instead, and arrive facing the same way).
 */
function walkEnd(paths: PathPlanner, cards: readonly Card[], from: Pose, card: Cell): Pose {
  let pose = from;
  let facing = from.heading;
  for (let steps = 0; steps < MAX_FORESEEN_STEPS && (pose.x !== card.x || pose.y !== card.y); steps++) {
    const move = paths.nextMove(cards, pose, card);
    if (!move) break;
    pose = afterMove(pose, move);
    if (move === 'MF' || move === 'MB') facing = move === 'MF' ? pose.heading : opposite(pose.heading);
  }
  return { x: card.x, y: card.y, heading: facing };
}

function afterMove(pose: Pose, move: Move): Pose {
  switch (move) {
    case 'MF':
      return { ...stepFrom(pose, pose.heading), heading: pose.heading };
    case 'MB':
      return { ...stepFrom(pose, opposite(pose.heading)), heading: pose.heading };
    case 'RL':
      return { ...pose, heading: rotateLeft(pose.heading) };
    case 'RR':
      return { ...pose, heading: rotateRight(pose.heading) };
  }
}

function nextInstructionId(observation: LeaderObservation): number {
  return Math.max(-1, ...observation.instructions.map((instruction) => instruction.id)) + 1;
}

/** The agent's action for the scripted leader's; null for the server's timeout (the agent passes). */
function agentAction(action: Action): LeaderAgentAction | null {
  switch (action.type) {
    case 'move':
      return action.move;
    case 'instruction':
      return { instruction: action.text };
    case 'endTurn':
      return 'END';
    default:
      return null;
  }
}
