/**
 * A CB2 game (its server's raw message logs) as one of our game logs: the map with its walls, the
 * cards, both players' moves, the instructions, DONEs, the leader's live feedback and cancels, turn
 * ends and timeouts, replayed through our
 * engine under the `cb2` rules profile. The engine computes every outcome; the importer checks
 * each against what CB2 sent (its card lists, poses, scores and turn states) and stops at the first
 * difference, naming the file and line. The format is described in docs/data.md.
 */
import { COLORS, SHAPES, type Card, type Color, type Shape } from '../engine/cards';
import { profileConfig } from '../engine/config';
import { HEADINGS, opposite, stepFrom, type Heading, type Pose } from '../engine/hex';
import { mapSchema, type GameMap, type Prop, type PropType } from '../engine/map';
import { seedRng } from '../engine/rng';
import type { Action, FeedbackSignal } from '../engine/actions';
import type { Role } from '../engine/state';
import type { Outcome } from '../engine/transition';
import type { LogLine } from '../log/format';
import { GameRecorder, makeHeader } from '../log/recorder';

/** The files of one CB2 game folder, as text. */
export interface Cb2Game {
  /** The folder's name, `<YYYY-MM-DDTHHh.MMm.SSs>_<id>_GAME`. */
  readonly name: string;
  /** Where it came from (the folders above it), for the log's meta. */
  readonly origin: string;
  readonly gameInfo: string;
  readonly messagesFromServer: string;
}

export const CB2_FILES = { gameInfo: 'game_info.jsonl.log', messagesFromServer: 'messages_from_server.jsonl.log' } as const;

/** Why a game cannot be imported, with the file and the 1-based line. */
export class Cb2ImportError extends Error {
  override name = 'Cb2ImportError';
  constructor(
    readonly file: string,
    readonly line: number,
    readonly detail: string,
  ) {
    super(`${file}${line > 0 ? `: line ${line}` : ''}: ${detail}`);
  }
}

export interface Cb2Import {
  readonly lines: LogLine[];
  readonly gameId: string;
  readonly score: number;
  readonly events: number;
  readonly gameOver: boolean;
  /** Live feedback CB2's server would have dropped on arrival, which the import leaves out too (docs/data.md). */
  readonly droppedFeedback: readonly DroppedFeedback[];
}

/** A live-feedback message left out of the import, with its line and why. */
export interface DroppedFeedback {
  readonly line: number;
  readonly reason: string;
}

// CB2's enums (cb2-log-format.md, section 2).
const LEADER = 2;
const FOLLOWER = 1;
const MESSAGE = { actions: 0, mapUpdate: 1, stateSync: 2, objective: 4, gameState: 5, liveFeedback: 8, propUpdate: 9, tick: 10 } as const;
/** CB2's FeedbackType: NONE (which its server drops), POSITIVE, NEGATIVE. */
const FEEDBACK_NONE = 0;
const FEEDBACK_SIGNAL: Readonly<Record<number, FeedbackSignal>> = { 1: 'positive', 2: 'negative' };
const ACTION = { rotate: 2, translate: 3 } as const;
const CB2_COLORS: Readonly<Record<number, Color>> = { 1: 'black', 2: 'blue', 3: 'green', 4: 'orange', 5: 'pink', 6: 'red', 7: 'yellow' };
const CB2_SHAPES: Readonly<Record<number, Shape>> = { 1: 'plus', 2: 'torus', 3: 'heart', 4: 'diamond', 5: 'cube', 6: 'star', 7: 'triangle' };
/** Tiles: open ground, path, and mountain tops and ramps (snowy too), which the cb2 profile walks on. */
const OPEN_TILES: Readonly<Record<number, string>> = { 3: 'G', 28: 'P', 30: 'H', 31: 'H', 36: 'H', 37: 'H' };
const WATER = 29;
const CLOSED = 63;

/** What a closed tile shows, for the picture only: every closed tile is an obstacle whatever it shows. */
function propOf(asset: number): PropType {
  if (asset >= 4 && asset <= 8) return 'plant';
  if (asset >= 17 && asset <= 26) return 'house';
  if (asset === 27) return 'lamp';
  return 'tree';
}

interface Hecs {
  readonly a: number;
  readonly r: number;
  readonly c: number;
}

/** The reader of one file's lines: each JSON line parsed, errors naming the line. */
class Lines {
  constructor(
    readonly file: string,
    private readonly text: string,
  ) {}

  *entries(): Generator<{ line: number; value: any }> {
    const lines = this.text.split('\n');
    for (let i = 0; i < lines.length; i++) {
      if (lines[i].trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(lines[i]);
      } catch {
        const last = lines.slice(i + 1).every((rest) => rest.trim() === '');
        throw new Cb2ImportError(this.file, i + 1, last ? 'the last line is cut off (a truncated file?)' : `not JSON: ${lines[i].slice(0, 80)}`);
      }
      yield { line: i + 1, value };
    }
  }
}

export function importCb2Game(game: Cb2Game): Cb2Import {
  const infoFile = `${game.name}/${CB2_FILES.gameInfo}`;
  const messagesFile = `${game.name}/${CB2_FILES.messagesFromServer}`;
  const info = [...new Lines(infoFile, game.gameInfo).entries()][0]?.value;
  if (!info || !Array.isArray(info.roles) || !Array.isArray(info.ids)) throw new Cb2ImportError(infoFile, 1, 'no roles and ids: not a CB2 game_info');
  const leaderId: number = info.ids[info.roles.indexOf(LEADER)];
  const followerId: number = info.ids[info.roles.indexOf(FOLLOWER)];
  if (leaderId === undefined || followerId === undefined) throw new Cb2ImportError(infoFile, 1, 'the game has no leader or no follower');

  // Both players get the same actions and turn states: read the leader's copy.
  const messages: { line: number; message: any }[] = [];
  for (const { line, value } of new Lines(messagesFile, game.messagesFromServer).entries()) {
    const message = value?.message_from_server;
    if (value?.player_id === leaderId && message && typeof message.type === 'number') messages.push({ line, message });
  }
  const first = (type: number) => {
    const found = messages.find(({ message }) => message.type === type);
    if (!found) throw new Cb2ImportError(messagesFile, 0, `no message of type ${type} to the leader: the file is cut short or not a CB2 game`);
    return found;
  };
  const mapMessage = first(MESSAGE.mapUpdate);
  const rows: number = mapMessage.message.map_update.rows;
  const toCell = (hecs: Hecs) => ({ x: hecs.c, y: rows - 1 - (2 * hecs.r + hecs.a) });
  const startState = first(MESSAGE.stateSync);
  const poses = new Map<number, Pose>();
  for (const actor of startState.message.state.actors) {
    poses.set(actor.actor_id, { ...toCell(actor.location), heading: headingOf(actor.rotation_degrees, messagesFile, startState.line) });
  }
  const start = (id: number): Pose => {
    const pose = poses.get(id);
    if (!pose) throw new Cb2ImportError(messagesFile, startState.line, `the first state has no actor ${id}`);
    return pose;
  };
  const spawn = { leader: start(leaderId), follower: start(followerId) };
  const map = mapOf(mapMessage.message.map_update, spawn, messagesFile, mapMessage.line);
  const firstCards = first(MESSAGE.propUpdate);
  // CB2 numbers cards and actors from one counter (cards 0-20, the actors 21 and 22, new cards 23 on);
  // ours numbers cards alone, so a CB2 card id above an actor's is ours plus the actors below it.
  const cardId = (id: number) => id - [leaderId, followerId].filter((actor) => actor < id).length;
  const cardsAt = (entry: { line: number; message: any }) => cardsOf(entry.message.prop_update.props, toCell, cardId, messagesFile, entry.line);
  const gameStates = messages.filter(({ message }) => message.type === MESSAGE.gameState);
  if (gameStates.length === 0) throw new Cb2ImportError(messagesFile, 0, 'no turn state: the file is cut short');
  const gameStart = Date.parse(`${gameStates[0].message.turn_state.game_start}Z`);
  const config = profileConfig('cb2', { turnSeconds: clocks(gameStates), cardCount: cardsAt(firstCards).length });

  const lines: LogLine[] = [];
  const gameId = `cb2-${game.name.replace(/_GAME$/, '')}`;
  let recorder: GameRecorder;
  try {
    recorder = new GameRecorder(
      makeHeader({
        gameId,
        startedAt: new Date(gameStart),
        seed: 0,
        config,
        map,
        setup: { ...spawn, cards: cardsAt(firstCards), rng: seedRng(0) },
        meta: { source: 'cb2', profile: 'cb2', cb2: { game: game.name, gameId: info.game_id, origin: game.origin, cardIds: 'CB2 card ids above 22 are ours plus 2 (its actors 21 and 22 take two ids)' } },
        replacementCards: 'recorded',
      }),
      (line) => lines.push(line),
    );
  } catch (error) {
    throw new Cb2ImportError(messagesFile, firstCards.line, `the game cannot start under the cb2 rules: ${(error as Error).message}`);
  }
  const replayer = new Replayer(recorder, feedbackFirst(messages), { leaderId, followerId, gameStart, toCell, cardsAt, file: messagesFile });
  const lastT = replayer.run();
  // A game CB2 did not play to its end was left by a player: abandoned.
  recorder.end(lastT, 'abandoned');
  return { lines, gameId, score: recorder.state.score, events: lines.length - 2, gameOver: recorder.state.gameOver, droppedFeedback: replayer.droppedFeedback };
}

/**
 * The messages with each live-feedback message moved to the start of its update (after the tick
 * that ended the update before). CB2's server takes a signal as it arrives, checks it against the
 * turn as the last update left it, and handles it at the end of its next update, after that
 * update's moves, DONEs and turn changes: a signal sent in the follower's last moment is reported
 * after the turn state that gave the leader the turn. At the update's start it meets the turn it
 * was checked against.
 */
function feedbackFirst<T extends { message: any }>(messages: readonly T[]): T[] {
  const ordered: T[] = [];
  let insertAt = 0;
  for (const entry of messages) {
    if (entry.message.type === MESSAGE.liveFeedback) ordered.splice(insertAt++, 0, entry);
    else ordered.push(entry);
    if (entry.message.type === MESSAGE.tick) insertAt = ordered.length;
  }
  return ordered;
}

/**
 * The turn clocks: each role's longest turn in whole seconds, from its turns' deadlines. A role
 * that never had a turn (no instruction was ever given) keeps the profile's clock.
 */
function clocks(gameStates: readonly { message: any }[]): { leader?: number; follower?: number } {
  const seconds: { leader?: number; follower?: number } = {};
  let previous: string | null = null;
  for (const { message } of gameStates) {
    const state = message.turn_state;
    if (state.game_over || state.turn_end === previous) continue;
    previous = state.turn_end;
    const role = state.turn === LEADER ? 'leader' : 'follower';
    const began = Date.parse(`${message.transmit_time}Z`);
    const turn = Math.round((Date.parse(`${state.turn_end}Z`) - began) / 1000);
    if (turn >= 1) seconds[role] = Math.max(seconds[role] ?? 0, turn);
  }
  return seconds;
}

function headingOf(degrees: number, file: string, line: number): Heading {
  const turns = Math.round(degrees / 60);
  if (Math.abs(turns * 60 - degrees) > 1e-6) throw new Cb2ImportError(file, line, `a heading of ${degrees} degrees is not a hex direction`);
  return HEADINGS[((turns % 6) + 6) % 6];
}

/** The map: terrain and props from the tiles, walls where an open cell's side is blocked towards another open cell. */
function mapOf(update: any, spawn: { leader: Pose; follower: Pose }, file: string, line: number): GameMap {
  const { rows, cols } = update;
  const terrain = Array.from({ length: rows }, () => Array<string>(cols).fill('G'));
  const edges = new Int32Array(rows * cols).fill(-1);
  const props: Prop[] = [];
  for (const tile of update.tiles) {
    const { a, r, c } = tile.cell.coord;
    const x = c;
    const y = rows - 1 - (2 * r + a);
    if (!(x >= 0 && x < cols && y >= 0 && y < rows)) throw new Cb2ImportError(file, line, `a tile at (${a}, ${r}, ${c}) is off the ${rows} x ${cols} map`);
    const mask: number = tile.cell.boundary.edges;
    edges[y * cols + x] = mask;
    if (mask !== CLOSED) {
      const letter = OPEN_TILES[tile.asset_id];
      if (!letter) throw new Cb2ImportError(file, line, `an open tile of unknown kind ${tile.asset_id} at (${x}, ${y})`);
      terrain[y][x] = letter;
    } else if (tile.asset_id === WATER) {
      terrain[y][x] = 'W';
    } else {
      props.push({ x, y, type: propOf(tile.asset_id), variant: `cb2-${tile.asset_id}`, rotation: 'NE' });
    }
  }
  const missing = edges.indexOf(-1);
  if (missing >= 0) throw new Cb2ImportError(file, line, `no tile for cell (${missing % cols}, ${Math.floor(missing / cols)})`);
  const walls: { x: number; y: number; side: Heading }[] = [];
  for (let y = 0; y < rows; y++) {
    for (let x = 0; x < cols; x++) {
      const here = edges[y * cols + x];
      if (here === CLOSED) continue;
      HEADINGS.forEach((side, i) => {
        const next = stepFrom({ x, y }, side);
        if (!(next.x >= 0 && next.x < cols && next.y >= 0 && next.y < rows)) return;
        const there = edges[next.y * cols + next.x];
        if (there === CLOSED) return;
        // A side blocked from either cell is a wall; list it once, from the cell with the lower index.
        const blocked = (here >> i) & 1 || (there >> ((i + 3) % 6)) & 1;
        if (blocked && y * cols + x < next.y * cols + next.x) walls.push({ x, y, side });
      });
    }
  }
  const parsed = mapSchema.safeParse({
    format: 'cerealbar-map',
    version: 1,
    name: 'CB2 map',
    width: cols,
    height: rows,
    terrain: terrain.map((row) => row.join('')),
    props,
    spawn,
    walls,
  });
  if (!parsed.success) throw new Cb2ImportError(file, line, `the map does not convert: ${parsed.error.issues[0].message}`);
  return parsed.data;
}

function cardsOf(props: any[], toCell: (hecs: Hecs) => { x: number; y: number }, cardId: (id: number) => number, file: string, line: number): Card[] {
  return props
    .filter((prop) => prop.card_init)
    .map((prop) => {
      const { color, shape, count, selected } = prop.card_init;
      const card = { id: cardId(prop.id), ...toCell(prop.prop_info.location), color: CB2_COLORS[color], shape: CB2_SHAPES[shape], count, selected: selected === true };
      if (!COLORS.includes(card.color) || !SHAPES.includes(card.shape) || ![1, 2, 3].includes(count)) {
        throw new Cb2ImportError(file, line, `card ${prop.id} has an unknown face (colour ${color}, shape ${shape}, count ${count})`);
      }
      return card as Card;
    })
    .sort((a, b) => a.id - b.id);
}

interface ReplayContext {
  readonly leaderId: number;
  readonly followerId: number;
  readonly gameStart: number;
  readonly toCell: (hecs: Hecs) => { x: number; y: number };
  readonly cardsAt: (entry: { line: number; message: any }) => Card[];
  readonly file: string;
}

/** Feeds CB2's messages to our recorder in order, checking every state CB2 sent against ours. */
class Replayer {
  /** CB2's instructions by uuid: our id for each, and whether it is done or cancelled yet. */
  private readonly instructions = new Map<string, { id: number; done: boolean; cancelled: boolean }>();
  readonly droppedFeedback: DroppedFeedback[] = [];
  private turnEnd = 0;
  private line = 0;

  constructor(
    private readonly recorder: GameRecorder,
    private readonly messages: readonly { line: number; message: any }[],
    private readonly context: ReplayContext,
  ) {}

  /** Plays every message; returns the time of the last one, in ms since the game started. */
  run(): number {
    let t = 0;
    this.messages.forEach(({ line, message }, index) => {
      this.line = line;
      t = this.timeOf(index);
      switch (message.type) {
        case MESSAGE.actions:
          for (const action of message.actions) this.act(action, t, index);
          break;
        case MESSAGE.objective:
          this.objectives(message.objectives, t);
          break;
        case MESSAGE.gameState:
          // One update may send states on the way (before a set's point, before game over, a follower
          // with no moves left before the leader's turn starts): its last one is where the turn stands.
          if (!this.stateFollowsInUpdate(index)) this.turnState(message.turn_state, t);
          break;
        case MESSAGE.propUpdate:
          this.expectCards(this.context.cardsAt({ line, message }));
          break;
        case MESSAGE.stateSync:
          this.expectPoses(message.state.actors);
          break;
        case MESSAGE.liveFeedback:
          this.feedback(message.live_feedback?.signal, t);
          break;
      }
    });
    return t;
  }

  /**
   * When the message at `index` was sent, in ms since the game started. A live-feedback message,
   * moved to the start of its update (feedbackFirst), takes no later time than the update's next
   * message, so that the log's times never decrease.
   */
  private timeOf(index: number): number {
    const stamp = (at: number) => Math.max(0, Date.parse(`${this.messages[at].message.transmit_time}Z`) - this.context.gameStart);
    if (this.messages[index].message.type !== MESSAGE.liveFeedback) return stamp(index);
    const next = this.messages.findIndex((entry, at) => at > index && entry.message.type !== MESSAGE.liveFeedback);
    return next < 0 ? stamp(index) : Math.min(stamp(index), stamp(next));
  }

  /**
   * Whether another turn state of the same update follows this one. CB2 sends an update's turn states
   * one after another and ends an update that changed anything with a tick message, so a state
   * directly after this one is the same update's. Send times cannot tell: CB2 stamps each message as
   * it is built, on a clock that moves in steps of about a millisecond.
   */
  private stateFollowsInUpdate(index: number): boolean {
    return this.messages[index + 1]?.message.type === MESSAGE.gameState;
  }

  private fail(detail: string): never {
    throw new Cb2ImportError(this.context.file, this.line, detail);
  }

  private apply(action: Action, t: number, replacementCards?: readonly Card[]): Outcome {
    const result = this.recorder.apply(action, t, { replacementCards });
    if (!result.ok) this.fail(`our engine refuses the ${action.type}${action.type === 'timeout' ? ` of the ${action.role}` : ` by the ${action.actor}`}: ${result.error.code}: ${result.error.message}`);
    return result.outcome;
  }

  private roleOf(id: number): Role | null {
    return id === this.context.leaderId ? 'leader' : id === this.context.followerId ? 'follower' : null;
  }

  /** One actor step: a translation is MF or MB along the heading, a rotation RR (+60) or RL (-60). */
  private act(action: any, t: number, index: number): void {
    const role = this.roleOf(action.id);
    if (!role || (action.action_type !== ACTION.rotate && action.action_type !== ACTION.translate)) return;
    const pose = this.recorder.state[role];
    let move: 'MF' | 'MB' | 'RL' | 'RR';
    if (action.action_type === ACTION.rotate) {
      if (Math.abs(Math.abs(action.rotation) - 60) > 1e-6) this.fail(`the ${role} turns by ${action.rotation} degrees`);
      move = action.rotation > 0 ? 'RR' : 'RL';
    } else {
      const { a, r, c } = action.displacement;
      // The step's destination: our pose in CB2's coordinates, plus the displacement (HECS addition).
      const row = this.context.toCell({ a: 0, r: 0, c: 0 }).y - pose.y;
      const from = { a: row % 2, r: Math.floor(row / 2), c: pose.x };
      const to = this.context.toCell({ a: from.a ^ a, r: from.r + r + (from.a & a), c: from.c + c + (from.a & a) });
      const ahead = stepFrom(pose, pose.heading);
      const behind = stepFrom(pose, opposite(pose.heading));
      if (to.x === ahead.x && to.y === ahead.y) move = 'MF';
      else if (to.x === behind.x && to.y === behind.y) move = 'MB';
      else this.fail(`the ${role} at (${pose.x}, ${pose.y}) facing ${pose.heading} steps to (${to.x}, ${to.y}), not straight ahead or back`);
    }
    const result = this.apply({ type: 'move', actor: role, move }, t, this.replacementsAfter(index));
    // CB2 logs only the moves it made: one our rules block means the maps or the rules differ.
    if (result.blocked) this.fail(`CB2 moves the ${role} ${move} from (${pose.x}, ${pose.y}) facing ${pose.heading}, which our map blocks (a wall, an obstacle or the edge)`);
  }

  /** The cards a set made now is replaced with: the new ones in the next card list CB2 sent. */
  private replacementsAfter(index: number): Card[] | undefined {
    const next = this.messages.slice(index + 1).find(({ message }) => message.type === MESSAGE.propUpdate);
    if (!next) return undefined;
    return this.context.cardsAt(next).filter((card) => card.id >= this.recorder.state.nextCardId);
  }

  /**
   * New instructions (the leader's), newly completed ones (the follower's DONE), in list order, and
   * newly cancelled ones (the leader's cancel, which cancels every instruction still open).
   */
  private objectives(list: any[], t: number): void {
    const cancelled: number[] = [];
    for (const objective of list) {
      let known = this.instructions.get(objective.uuid);
      if (!known) {
        known = { id: this.apply({ type: 'instruction', actor: 'leader', text: objective.text }, t).instruction!, done: false, cancelled: false };
        this.instructions.set(objective.uuid, known);
      }
      if (objective.completed && !known.done) {
        known.done = true;
        this.apply({ type: 'done', actor: 'follower' }, t);
      }
      if (objective.cancelled && !known.cancelled) {
        known.cancelled = true;
        cancelled.push(known.id);
      }
    }
    if (cancelled.length === 0) return;
    const ours = this.apply({ type: 'cancel', actor: 'leader' }, t).cancelled ?? [];
    const key = (ids: readonly number[]) => [...ids].sort((a, b) => a - b).join(', ');
    if (key(ours) !== key(cancelled)) this.fail(`CB2 cancels instructions ${key(cancelled)} (our ids), ours ${key(ours)}`);
  }

  /**
   * The leader's live feedback, as CB2's server takes it: a signal of NONE, or one outside the
   * follower's turn, is dropped (its server drops both on arrival, so neither should be in its
   * messages; each left out is listed); any other signal is not CB2's.
   */
  private feedback(signal: unknown, t: number): void {
    if (signal === FEEDBACK_NONE) {
      this.droppedFeedback.push({ line: this.line, reason: 'a signal of NONE, which CB2 drops' });
      return;
    }
    const ours = typeof signal === 'number' ? FEEDBACK_SIGNAL[signal] : undefined;
    if (!ours) this.fail(`live feedback with the signal ${JSON.stringify(signal)}: CB2's are 1 (positive) and 2 (negative)`);
    const state = this.recorder.state;
    if (state.gameOver || state.turn.role !== 'follower') {
      this.droppedFeedback.push({ line: this.line, reason: `${ours} feedback in the ${state.gameOver ? 'finished game' : "leader's turn"}, which CB2 drops` });
      return;
    }
    this.apply({ type: 'feedback', actor: 'leader', signal: ours }, t);
  }

  /** CB2's turn state: a turn that changed hands here ended by End Turn or by its clock; the rest must agree with ours. */
  private turnState(cb2: any, t: number): void {
    const ours = () => this.recorder.state;
    const role: Role = cb2.turn === LEADER ? 'leader' : 'follower';
    // A follower with no moves left, or after its last DONE, still holds the turn in CB2's state
    // until the next tick hands it over; in ours that turn is already over.
    if (role === 'follower' && cb2.moves_remaining === 0 && ours().turn.role !== 'follower' && !cb2.game_over) return;
    if (!ours().gameOver && !cb2.game_over) {
      const changed = ours().turn.role !== role || ours().turnsLeft !== cb2.turns_left + 1;
      if (changed && ours().turn.role === 'leader') {
        // The leader's turn ended: by End Turn before its deadline, else by its clock.
        const byClock = t >= this.turnEnd - 50 || ours().queue.length === 0;
        this.apply(byClock ? { type: 'timeout', actor: 'server', role: 'leader' } : { type: 'endTurn', actor: 'leader' }, t);
      } else if (changed && ours().turn.role === 'follower') {
        this.apply({ type: 'timeout', actor: 'server', role: 'follower' }, t);
      }
    } else if (cb2.game_over && !ours().gameOver) {
      this.apply({ type: 'timeout', actor: 'server', role: ours().turn.role }, t);
    }
    this.turnEnd = Date.parse(`${cb2.turn_end}Z`) - this.context.gameStart;
    const state = ours();
    if (state.gameOver !== cb2.game_over) this.fail(`CB2 says the game is ${cb2.game_over ? '' : 'not '}over, ours ${state.gameOver ? 'is' : 'is not'}`);
    if (state.score !== cb2.score) this.fail(`CB2's score is ${cb2.score}, ours ${state.score}`);
    if (state.gameOver) return;
    if (state.turn.role !== role) this.fail(`CB2 gives the turn to the ${role}, ours to the ${state.turn.role}`);
    if (state.turnsLeft !== cb2.turns_left + 1) this.fail(`CB2 has ${cb2.turns_left} turns left (${cb2.turns_left + 1} in our count), ours ${state.turnsLeft}`);
    if (state.turn.stepsLeft !== cb2.moves_remaining) this.fail(`CB2 leaves the ${role} ${cb2.moves_remaining} moves, ours ${state.turn.stepsLeft}`);
  }

  private expectCards(cb2: readonly Card[]): void {
    const ours = [...this.recorder.state.cards].sort((a, b) => a.id - b.id);
    const key = (card: Card) => `${card.id}@${card.x},${card.y}:${card.color}/${card.shape}/${card.count}${card.selected ? '*' : ''}`;
    const theirs = cb2.map(key).join(' ');
    const mine = ours.map(key).join(' ');
    if (theirs !== mine) this.fail(`the cards differ: CB2 has ${theirs}; ours ${mine}`);
  }

  private expectPoses(actors: any[]): void {
    for (const actor of actors) {
      const role = this.roleOf(actor.actor_id);
      if (!role) continue;
      const pose = this.recorder.state[role];
      const cell = this.context.toCell(actor.location);
      const heading = headingOf(actor.rotation_degrees, this.context.file, this.line);
      if (cell.x !== pose.x || cell.y !== pose.y || heading !== pose.heading) {
        this.fail(`CB2 has the ${role} at (${cell.x}, ${cell.y}) facing ${heading}, ours at (${pose.x}, ${pose.y}) facing ${pose.heading}`);
      }
    }
  }
}
