/**
 * The built-in `scripted` leader agent: self-play's scripted leader (shared/selfplay/leader.ts) in
 * the leader's seat, seeing only the leader's observation. It plans a valid set, takes a card
 * itself when it can, writes one templated instruction per card for the follower ("pick up the 2
 * red stars") and ends its turn; its seeded habits (letting a turn run out, walking ahead) are
 * self-play's. Unlike self-play's follower, an agent follower is not told which card an
 * instruction means: it reads the text.
 *
 * It keeps what an instruction was about (its plan memory) between calls, under the id the
 * instruction gets: the next id after the newest one it sees, checked against the text on the
 * next call. It answers one action a call; an answer the leader would not give by itself (the
 * server's timeout) is a pass.
 */
import type { Action } from '../engine/actions';
import { buildWorld } from '../engine/map';
import { Draw, seedRng } from '../engine/rng';
import { PathPlanner } from '../nav/pathing';
import { ScriptedLeader, type CardTask, type LeaderBoard } from '../selfplay/leader';
import { hashString } from './builtin';
import { mapFromKnown } from './observation';
import type { Answer, EpisodeStart, LeaderAgent, LeaderAgentAction, LeaderObservation } from './types';

export class ScriptedLeaderAgent implements LeaderAgent {
  readonly name = 'scripted';
  readonly role = 'leader';
  private draw = new Draw(seedRng(0));
  private tasks = new Map<number, CardTask>();
  /** The instruction last written, until the next observation shows the id it got. */
  private written: { readonly id: number; readonly text: string } | null = null;
  private leader: ScriptedLeader | null = null;
  /** Its own turn ended (it ended it or passed): the next call begins a new turn. */
  private turnOver = true;
  private lastSteps = 0;

  reset(start: EpisodeStart): void {
    this.draw = new Draw(seedRng(hashString(start.episodeId)));
    this.tasks = new Map();
    this.written = null;
    this.leader = null;
    this.turnOver = true;
  }

  act(observation: LeaderObservation): Answer<LeaderAgentAction> {
    this.checkWritten(observation);
    // A leader's turn ends only by End Turn or its time running out; a fresh step count also shows a new turn.
    if (this.turnOver || observation.stepsLeft > this.lastSteps) this.scripted(observation).startTurn();
    this.lastSteps = observation.stepsLeft;
    const decision = this.scripted(observation).decide(boardOf(observation));
    const answer = agentAction(decision.action);
    this.turnOver = answer === 'END' || answer === null;
    if (answer === null) return [];
    if (decision.task && typeof answer === 'object') {
      const id = nextInstructionId(observation);
      this.tasks.set(id, decision.task);
      this.written = { id, text: answer.instruction };
    }
    return answer;
  }

  private scripted(observation: LeaderObservation): ScriptedLeader {
    this.leader ??= new ScriptedLeader(new PathPlanner(buildWorld(mapFromKnown(observation.map))), this.draw, this.tasks);
    return this.leader;
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
