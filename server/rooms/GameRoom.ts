/**
 * The `cerealbar` room: one game between a leader and a follower. It validates messages, routes
 * them to the engine, keeps the turn clock, mirrors the state to each player's view and logs every
 * accepted action before anyone sees its effect. Every rule lives in shared/engine.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { matchMaker, Room, ServerError, type Client, type Delayed } from '@colyseus/core';
import { StateView } from '@colyseus/schema';
import { z } from 'zod';
import type { GameConfig } from '../../shared/engine/config';
import { makeConfig } from '../../shared/engine/config';
import type { GameMap } from '../../shared/engine/map';
import { drawSetup, MAX_SEED, ROLES, type Role } from '../../shared/engine/state';
import type { Action, Move, StepResult } from '../../shared/engine/transition';
import type { EndReason, LogLine } from '../../shared/log/format';
import { GameRecorder, makeHeader } from '../../shared/log/recorder';
import { generateMap } from '../../shared/maps/generate';
import {
  clientMessageSchemas,
  DEFAULT_PATCH_RATE_MS,
  joinOptionsSchema,
  MAX_INSTRUCTION_LENGTH,
  sanitizeInstruction,
  type ClientMessageType,
  type ErrorCode,
  type JoinOptions,
  type MapMessage,
  type QueueMessage,
} from '../../shared/protocol/messages';
import { GameRoomState, LeaderOnlyState, PlayerState } from '../state/schema';
import type { GameLogWriter, SeatRecord } from '../store/types';
import { HeuristicAgent } from '../../shared/agents/builtin';
import { ObservationTracker } from '../../shared/agents/observation';
import type { FollowerAgent } from '../../shared/agents/types';
import { queuePlace } from './queue';
import { fillLeaderView, mirrorState, updateFollowerView } from './sync';

/** How often a waiting player's place in the matchmaking queue is checked. */
const QUEUE_POLL_MS = 1000;

/** What the room needs from the process that runs it. */
export interface RoomServices {
  startLog(header: ReturnType<typeof makeHeader>, info: { pool: string; seats: SeatRecord[] }): GameLogWriter;
}

export const roomSettingsSchema = z.object({
  leaderTurnSeconds: z.number().positive().max(3600).default(45),
  followerTurnSeconds: z.number().positive().max(3600).default(15),
  /** How long a dropped player's seat is kept. */
  reconnectSeconds: z.number().min(0).max(3600).default(30),
  /** Milliseconds between the scripted follower's actions, so that a human leader can follow them. */
  botStepMs: z.number().int().min(0).max(10_000).default(400),
  /** Milliseconds between state patches (Colyseus's patch rate; the turn clock ticks with it too). */
  patchRateMs: z.number().int().min(5).max(1000).default(DEFAULT_PATCH_RATE_MS),
  /** Fixes the game's seed (tests, studies); otherwise each game draws one. */
  seed: z.number().int().min(0).max(MAX_SEED).optional(),
  /** Plays on this map instead of one generated from the seed. */
  map: z.custom<GameMap>().optional(),
  config: z.custom<GameConfig>().optional(),
});
export type RoomSettings = z.input<typeof roomSettingsSchema>;

export interface GameRoomOptions extends Partial<JoinOptions> {
  services: RoomServices;
  settings?: RoomSettings;
}

interface Seat {
  readonly role: Role;
  readonly record: SeatRecord;
  client: Client | null;
}

export class GameRoom extends Room<{ state: GameRoomState }> {
  maxClients = 2;
  /** Far above what a person or a sane bot sends; a client over it is disconnected by Colyseus. */
  maxMessagesPerSecond = 100;
  state = new GameRoomState({
    phase: 'waiting',
    gameId: '',
    pool: 'default',
    seq: 0,
    turnRole: 'leader',
    stepsLeft: 0,
    turnsLeft: 0,
    score: 0,
    turnDeadline: 0,
    leaderTurnSeconds: 45,
    followerTurnSeconds: 15,
    leader: new PlayerState({ x: 0, y: 0, heading: 'NE', connected: false }),
    follower: new PlayerState({ x: 0, y: 0, heading: 'NE', connected: false }),
    leaderInView: false,
    leaderOnly: new LeaderOnlyState(),
    endReason: '',
  });

  private services!: RoomServices;
  /** The private game's code ('' for quick play). */
  private code = '';
  private settings!: z.output<typeof roomSettingsSchema>;
  private readonly seats = new Map<Role, Seat>();
  private recorder: GameRecorder | null = null;
  private writer: GameLogWriter | null = null;
  private startedAt = 0;
  private turnTimer: Delayed | null = null;
  /** Ids of instructions the follower has been able to see (sent at the start of its turn). */
  private readonly sent = new Set<number>();
  private readonly views = new Map<Role, StateView>();
  /** The scripted follower: a built-in agent that sees what a human follower would. */
  private bot: { agent: FollowerAgent; tracker: ObservationTracker } | null = null;
  private botTimer: Delayed | null = null;
  private queueTimer: Delayed | null = null;
  /** The last `queue` message sent, so that only changes are sent. */
  private queueSent: QueueMessage | null = null;

  onCreate(options: GameRoomOptions): void {
    this.services = options.services;
    this.settings = roomSettingsSchema.parse(options.settings ?? {});
    this.state.pool = options.pool ?? 'default';
    this.state.leaderTurnSeconds = this.settings.leaderTurnSeconds;
    this.state.followerTurnSeconds = this.settings.followerTurnSeconds;
    this.setPatchRate(this.settings.patchRateMs);
    this.code = options.code ?? '';
    this.listOpenSeats();
    for (const type of Object.keys(clientMessageSchemas) as ClientMessageType[]) {
      this.onMessage(type, (client, message) => this.handle(client, type, message));
    }
    this.onMessage('*', (client, type) => this.refuse(client, String(type), 'UNKNOWN_MESSAGE', `there is no message type ${JSON.stringify(type)}`));
  }

  /** Checks the join options and that the asked-for seat is free; the seat is taken in onJoin. */
  onAuth(_client: Client, options: unknown): JoinOptions {
    const parsed = joinOptionsSchema.safeParse(options ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ServerError(400, `bad join option ${issue.path.join('.')}: ${issue.message}`);
    }
    if (this.state.phase !== 'waiting') throw new ServerError(409, 'this game has already started');
    if (parsed.data.botFollower) {
      if (parsed.data.role === 'follower') throw new ServerError(400, 'only a leader can ask for the scripted follower');
      if (this.seats.size > 0) throw new ServerError(409, 'this game already has players; ask for the scripted follower in a new game');
      return { ...parsed.data, role: 'leader' };
    }
    if (!this.freeRole(parsed.data.role)) throw new ServerError(409, `the ${parsed.data.role} seat is taken`);
    return parsed.data;
  }

  onJoin(client: Client, _options: unknown, auth: JoinOptions): void {
    const role = this.freeRole(auth.role)!;
    this.seats.set(role, {
      role,
      client,
      record: {
        role,
        playerId: randomUUID(),
        kind: 'human',
        ...(auth.workerId && { workerId: auth.workerId }),
        ...(auth.assignmentId && { assignmentId: auth.assignmentId }),
        ...(auth.hitId && { hitId: auth.hitId }),
      },
    });
    this.state[role].connected = true;
    const view = new StateView();
    client.view = view;
    this.views.set(role, view);
    if (role === 'leader') fillLeaderView(view, this.state);
    client.send('seat', { role, playerId: this.seats.get(role)!.record.playerId });
    if (auth.botFollower) this.seatBot();
    if (this.listOpenSeats().length === 0) this.startGame();
    else this.watchQueue();
  }

  /** A dropped player keeps its seat for the reconnection window. */
  async onDrop(client: Client): Promise<void> {
    const seat = this.seatOf(client);
    if (!seat || this.state.phase === 'ended') return;
    this.state[seat.role].connected = false;
    this.notifyPartner(seat.role, 'partnerDisconnected');
    await this.allowReconnection(client, this.settings.reconnectSeconds);
  }

  onReconnect(client: Client): void {
    const seat = this.seatOf(client);
    if (!seat) return;
    // The returning connection is a new Client object with the same session id.
    seat.client = client;
    client.view = this.views.get(seat.role);
    this.state[seat.role].connected = true;
    this.notifyPartner(seat.role, 'partnerReconnected');
    if (this.state.phase === 'waiting') this.watchQueue();
    if (this.recorder) client.send('map', this.mapMessage());
  }

  /** A player gone for good (left, or did not come back in time) abandons the game. */
  onLeave(client: Client): void {
    const seat = this.seatOf(client);
    if (!seat) return;
    seat.client = null;
    this.state[seat.role].connected = false;
    if (this.state.phase === 'playing') {
      this.notifyPartner(seat.role, 'partnerLeft');
      this.finish('abandoned');
    } else if (this.state.phase === 'waiting') {
      this.seats.delete(seat.role);
      this.views.delete(seat.role);
      this.listOpenSeats();
    }
  }

  /** Seats the scripted follower, which acts from the server on its turns. */
  private seatBot(): void {
    this.bot = { agent: new HeuristicAgent(), tracker: new ObservationTracker() };
    this.seats.set('follower', { role: 'follower', client: null, record: { role: 'follower', playerId: randomUUID(), kind: 'bot' } });
    this.state.follower.connected = true;
  }

  onBeforeShutdown(): void {
    this.finish('server-shutdown');
    void this.disconnect();
  }

  onDispose(): void {
    this.finish('server-shutdown');
  }

  /** Publishes the open seats with the matchmaking fields (setMetadata replaces, so all of them). */
  private listOpenSeats(): Role[] {
    const open = ROLES.filter((role) => !this.seats.has(role));
    void this.setMetadata({ pool: this.state.pool, code: this.code, leaderOpen: open.includes('leader'), followerOpen: open.includes('follower') });
    return open;
  }

  /** Tells the waiting player its place in the matchmaking queue now, then whenever it changes. */
  private watchQueue(): void {
    this.queueSent = null;
    this.queueTimer ??= this.clock.setInterval(() => void this.sendQueue(), QUEUE_POLL_MS);
    void this.sendQueue();
  }

  private async sendQueue(): Promise<void> {
    const rooms = await matchMaker.query({ name: this.roomName });
    if (this.state.phase !== 'waiting') return; // the game started during the query
    const place = queuePlace(this.roomId, rooms);
    if (!place || (place.position === this.queueSent?.position && place.waiting === this.queueSent.waiting)) return;
    this.queueSent = place;
    this.broadcast('queue', place);
  }

  private stopWatchingQueue(): void {
    this.queueTimer?.clear();
    this.queueTimer = null;
  }

  private mapMessage(): MapMessage {
    return { map: this.recorder!.header.map, config: this.recorder!.header.config, serverNow: Date.now() };
  }

  /** The seat for a player asking for `wanted`: either seat is drawn at random when both are open. */
  private freeRole(wanted: JoinOptions['role']): Role | null {
    if (wanted !== 'any') return this.seats.has(wanted) ? null : wanted;
    const open = ROLES.filter((role) => !this.seats.has(role));
    return open.length === 0 ? null : open[randomInt(open.length)];
  }

  private seatOf(client: Client): Seat | undefined {
    return [...this.seats.values()].find((seat) => seat.client?.sessionId === client.sessionId);
  }

  private startGame(): void {
    this.stopWatchingQueue();
    void this.lock();
    const seed = this.settings.seed ?? randomInt(0, MAX_SEED);
    const config = this.settings.config ?? makeConfig();
    const map = this.settings.map ?? generateMap(seed);
    const gameId = `g${Date.now().toString(36)}-${this.roomId}`;
    const header = makeHeader({
      gameId,
      startedAt: new Date(),
      seed,
      config,
      map,
      setup: drawSetup(config, map, seed),
      meta: { source: 'server', pool: this.state.pool, players: [...this.seats.values()].map((seat) => seat.record) },
    });
    this.writer = this.services.startLog(header, { pool: this.state.pool, seats: [...this.seats.values()].map((seat) => seat.record) });
    this.recorder = new GameRecorder(header, (line) => this.writeLog(line));
    if (this.bot) void this.bot.agent.reset({ map, episodeId: gameId });
    this.startedAt = Date.now();
    this.state.gameId = gameId;
    this.state.phase = 'playing';
    this.broadcast('map', this.mapMessage());
    this.beginTurn();
    this.sync();
  }

  private writeLog(line: LogLine): void {
    if (line.kind === 'header') return; // startLog wrote it
    if (line.kind === 'end') this.writer?.end(line);
    else this.writer?.append(line);
  }

  private handle(client: Client, type: ClientMessageType, message: unknown): void {
    const seat = this.seatOf(client);
    if (!seat) return this.refuse(client, type, 'NOT_A_PLAYER', 'you have no seat in this game');
    if (this.state.phase === 'waiting') return this.refuse(client, type, 'GAME_NOT_STARTED', 'waiting for the other player');
    if (this.state.phase === 'ended') return this.refuse(client, type, 'GAME_ENDED', `the game is over (${this.state.endReason})`);
    const parsed = clientMessageSchemas[type].safeParse(message ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
      return this.refuse(client, type, 'BAD_MESSAGE', `bad ${type} message: ${where}${issue.message}`);
    }
    const action = this.toAction(seat.role, type, parsed.data);
    if ('code' in action) return this.refuse(client, type, action.code, action.message);
    const result = this.apply(action);
    if (!result.ok) this.refuse(client, type, result.error.code, result.error.message);
  }

  private toAction(role: Role, type: ClientMessageType, message: Record<string, unknown>): Action | { code: ErrorCode; message: string } {
    switch (type) {
      case 'move':
        return { type: 'move', actor: role, move: message.action as Move };
      case 'instruction': {
        const text = sanitizeInstruction(message.text as string);
        if (text.length === 0) return { code: 'EMPTY_INSTRUCTION', message: 'an instruction needs some text' };
        if (text.length > MAX_INSTRUCTION_LENGTH) {
          return { code: 'INSTRUCTION_TOO_LONG', message: `instructions are at most ${MAX_INSTRUCTION_LENGTH} characters, this one has ${text.length}` };
        }
        return { type: 'instruction', actor: role, text };
      }
      case 'endTurn':
        return { type: 'endTurn', actor: role };
      case 'done':
        return { type: 'done', actor: role };
    }
  }

  /** Applies an action: logged first, then mirrored to the clients. */
  private apply(action: Action): StepResult {
    const result = this.recorder!.apply(action, Date.now() - this.startedAt);
    if (!result.ok) return result;
    this.state.seq += 1;
    const ended = result.outcome.turnEnded;
    if (ended?.followerSkipped) this.notify('follower', 'turnSkipped');
    if (ended?.reason === 'timeout') this.broadcast('notice', { kind: 'timeout', role: action.type === 'timeout' ? action.role : action.actor });
    if (result.state.gameOver) {
      this.finish('turns-exhausted');
      return result;
    }
    if (ended) this.beginTurn();
    this.sync();
    return result;
  }

  /** A turn begins: the follower now sees the queued instructions, and the clock restarts. */
  private beginTurn(): void {
    const state = this.recorder!.state;
    if (state.turn.role === 'follower') for (const instruction of state.queue) this.sent.add(instruction.id);
    this.turnTimer?.clear();
    const role = state.turn.role;
    const seconds = role === 'leader' ? this.settings.leaderTurnSeconds : this.settings.followerTurnSeconds;
    this.state.turnDeadline = Date.now() + seconds * 1000;
    this.turnTimer = this.clock.setTimeout(() => this.apply({ type: 'timeout', actor: 'server', role }), seconds * 1000);
    if (role === 'follower' && this.bot) this.scheduleBot();
  }

  /** The bot acts every botStepMs until its turn ends. */
  private scheduleBot(): void {
    this.botTimer?.clear();
    this.botTimer = this.clock.setTimeout(async () => {
      const state = this.recorder!.state;
      if (this.state.phase !== 'playing' || state.turn.role !== 'follower') return;
      const choice = await this.bot!.agent.act(this.bot!.tracker.observe(state));
      const action: Action = choice === 'DONE' ? { type: 'done', actor: 'follower' } : { type: 'move', actor: 'follower', move: choice };
      const result = this.apply(action);
      if (!result.ok) throw new Error(`the scripted follower's action was refused: ${result.error.code}`);
      if (this.recorder!.state.turn.role === 'follower' && !result.outcome.turnEnded) this.scheduleBot();
    }, this.settings.botStepMs);
  }

  /** Brings the synced state and the follower's view up to date. */
  private sync(): void {
    const state = this.recorder!.state;
    mirrorState(this.state, state, this.sent);
    const followerView = this.views.get('follower');
    if (followerView) updateFollowerView(followerView, this.state, state);
  }

  /** Ends the game once, for whatever reason, and closes its log. */
  private finish(reason: EndReason): void {
    if (this.state.phase === 'ended') return;
    this.turnTimer?.clear();
    this.turnTimer = null;
    this.botTimer?.clear();
    this.stopWatchingQueue();
    const wasPlaying = this.state.phase === 'playing';
    this.state.phase = 'ended';
    this.state.turnDeadline = 0;
    if (!wasPlaying || !this.recorder) return;
    const end = this.recorder.end(Date.now() - this.startedAt, reason);
    this.state.endReason = end.reason;
    if (this.recorder.state.gameOver) this.sync();
    this.broadcast('notice', { kind: 'gameOver', reason: end.reason, score: end.score });
  }

  private refuse(client: Client, refused: string, code: ErrorCode, message: string): void {
    client.send('error', { code, message, refused });
  }

  private notify(role: Role, kind: string): void {
    this.seats.get(role)?.client?.send('notice', { kind });
  }

  private notifyPartner(role: Role, kind: string): void {
    this.notify(role === 'leader' ? 'follower' : 'leader', kind);
  }
}
