/**
 * Synthetic CB2 games for the importer's tests: a real game's messages up to a moment in the
 * leader's turn, then a scripted continuation in CB2's own message shapes (the leader's copy, as
 * the importer reads it). The follower only rotates, so no step can meet a wall or a card; the
 * instructions, DONEs, live feedback and cancels are what the tests are about. Each method sends
 * what CB2's server sends for it; `tick()` ends an update, as CB2's tick message does.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { CB2_FILES, type Cb2Game } from '../../shared/cb2/import';

interface TurnState {
  turn: number;
  moves_remaining: number;
  turns_left: number;
  turn_end: string;
  game_start: string;
  sets_collected: number;
  score: number;
  game_over: boolean;
  turn_number: number;
}

interface Objective {
  sender: number;
  text: string;
  uuid: string;
  completed: boolean;
  cancelled: boolean;
  feedback_text: string;
  pos_feedback: number;
  neg_feedback: number;
}

const LEADER = 2;
const FOLLOWER = 1;
const FIXTURES = join(__dirname, '..', 'fixtures', 'cb2-logs');

/** A CB2 stamp: naive UTC with microseconds. */
const stampOf = (ms: number) => `${new Date(ms).toISOString().slice(0, 23)}000`;
const msOf = (stamp: string) => Date.parse(`${stamp.slice(0, 23)}Z`);

export class Cb2Script {
  private readonly gameInfo: string;
  private readonly lines: string[];
  private readonly leaderId: number;
  private readonly followerId: number;
  private state: TurnState;
  private readonly objectives: Objective[];
  private clock: number;
  private ticks = 1000;

  /**
   * @param folder a fixture game, under test/fixtures/cb2-logs
   * @param lines how many lines of its messages to keep: they must end in the leader's turn with
   *   nothing queued, after the update's tick
   */
  constructor(
    private readonly folder: string,
    lines: number,
  ) {
    const unzip = (name: string) => gunzipSync(readFileSync(join(FIXTURES, folder, `${name}.gz`))).toString('utf8');
    const info = JSON.parse(unzip(CB2_FILES.gameInfo).split('\n')[0]);
    this.leaderId = info.ids[info.roles.indexOf(LEADER)];
    this.followerId = info.ids[info.roles.indexOf(FOLLOWER)];
    this.gameInfo = unzip(CB2_FILES.gameInfo);
    this.lines = unzip(CB2_FILES.messagesFromServer).split('\n').slice(0, lines);
    const mine = this.lines.map((line) => JSON.parse(line)).filter((entry) => entry.player_id === this.leaderId).map((entry) => entry.message_from_server);
    const last = <T>(pick: (message: any) => T | null): T | undefined => mine.map(pick).filter((value) => value !== null).at(-1);
    this.state = { ...last((message) => message.turn_state)! };
    this.objectives = (last((message) => message.objectives) ?? []).map((objective: Objective) => ({ ...objective }));
    this.clock = msOf(mine.at(-1).transmit_time);
    if (this.state.turn !== LEADER || this.objectives.some((objective) => !objective.completed && !objective.cancelled)) {
      throw new Error("the kept messages must end in the leader's turn with nothing queued");
    }
  }

  private send(type: number, fields: Record<string, unknown>): this {
    this.clock += 250;
    const message = { transmit_time: stampOf(this.clock), type, ...fields };
    this.lines.push(JSON.stringify({ message_direction: 2, player_id: this.leaderId, message_from_server: message, message_to_server: null }));
    return this;
  }

  private sendTurnState(): this {
    return this.send(5, { turn_state: { ...this.state } });
  }

  private sendObjectives(): this {
    return this.send(4, { objectives: this.objectives.map((objective) => ({ ...objective })) });
  }

  private open(): Objective[] {
    return this.objectives.filter((objective) => !objective.completed && !objective.cancelled);
  }

  /** The turn goes to the leader: a new round. */
  private leaderTurn(): void {
    this.state = { ...this.state, turn: LEADER, moves_remaining: 5, turns_left: this.state.turns_left - 1, turn_number: this.state.turn_number + 1, turn_end: stampOf(this.clock + 60_000) };
  }

  /** Ends an update. */
  tick(): this {
    return this.send(10, { state_machine_tick: { iter: this.ticks++ } });
  }

  /** The leader writes an instruction (in its turn). */
  instruction(text: string): this {
    this.objectives.push({ sender: LEADER, text, uuid: `synthetic${this.objectives.length}`, completed: false, cancelled: false, feedback_text: '', pos_feedback: 0, neg_feedback: 0 });
    return this.sendObjectives();
  }

  /** The leader's End Turn: the follower's turn, 10 moves. */
  endTurn(): this {
    this.state = { ...this.state, turn: FOLLOWER, moves_remaining: 10, turn_end: stampOf(this.clock + 180_000) };
    return this.sendTurnState();
  }

  /** A follower's rotation (+60 right, -60 left); its last move hands the turn to the leader in the same update. */
  rotate(degrees: 60 | -60): this {
    this.send(0, { actions: [{ id: this.followerId, action_type: 2, animation_type: 7, displacement: { a: 0, r: 0, c: 0 }, rotation: degrees, duration_s: 0.33 }] });
    this.state = { ...this.state, moves_remaining: this.state.moves_remaining - 1 };
    this.sendTurnState();
    if (this.state.moves_remaining > 0) return this;
    this.leaderTurn();
    return this.sendTurnState();
  }

  /** The follower's DONE on the head of the queue; the last one hands the turn to the leader. */
  done(): this {
    this.open()[0].completed = true;
    this.sendObjectives();
    if (this.open().length > 0) return this;
    this.leaderTurn();
    return this.sendTurnState();
  }

  /**
   * The live feedback CB2's server sends both players (1 positive, 2 negative, 0 NONE), counted on
   * the current instruction as CB2 counts it.
   */
  feedback(signal: number): this {
    const current = this.open()[0];
    if (current && signal === 1) current.pos_feedback++;
    if (current && signal === 2) current.neg_feedback++;
    return this.send(8, { live_feedback: { signal } });
  }

  /** The leader's cancel: every open instruction cancelled (or only the first `only` of them, which CB2 never does), then the leader's turn. */
  cancel(only?: number): this {
    for (const objective of this.open().slice(0, only)) objective.cancelled = true;
    this.sendObjectives();
    this.leaderTurn();
    return this.sendTurnState();
  }

  game(): Cb2Game {
    return { name: this.folder.split('/').at(-1)!, origin: this.folder.split('/').slice(0, -1).join('/'), gameInfo: this.gameInfo, messagesFromServer: this.lines.join('\n') };
  }
}

/** Game 34 of the fixture up to its first leader turn after the first instruction was done (turn number 1, nothing queued). */
export const FEEDBACK_GAME = 'gemini_text/bot-sandbox/2024-05-03T01h.40m.28s_34_GAME';
export const scriptAfterFirstInstruction = () => new Cb2Script(FEEDBACK_GAME, 63);

/**
 * Game 34's start, then: two instructions; live feedback after the follower's first step (positive)
 * and its second (negative); the leader cancels both (the second never shown to the follower); a
 * third instruction, positive feedback before the follower's first step of its turn, two steps and
 * DONE. Engine ids: 0 (the real game's), 1 and 2 cancelled, 3 (the follower knows it as 2).
 */
export function feedbackAndCancelGame(): Cb2Game {
  return scriptAfterFirstInstruction()
    .instruction('turn right twice')
    .instruction('then wait')
    .tick()
    .endTurn()
    .tick()
    .rotate(60)
    .tick()
    .feedback(1)
    .tick()
    .rotate(60)
    .tick()
    .feedback(2)
    .tick()
    .cancel()
    .tick()
    .instruction('turn left twice')
    .tick()
    .endTurn()
    .tick()
    .feedback(1)
    .tick()
    .rotate(-60)
    .tick()
    .rotate(-60)
    .tick()
    .done()
    .tick()
    .game();
}
