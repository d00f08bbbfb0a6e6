/**
 * The `cerealbar` room: one game between a leader and a follower. It routes: a table of message
 * handlers validates at the edge (zod, then the engine's legal actions), the recorder logs every
 * accepted action before anyone sees its effect, and each seat's ViewFeed sends its player what
 * its playerView holds. The rules live in shared/engine; the turn clock and the scripted follower
 * are small parts of their own.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { logger, matchMaker, Room, ServerError, type Client, type Delayed, type RoomException, type RoomMethodName } from '@colyseus/core';
import { z } from 'zod';
import { byActor, sanitizeInstruction, type Action, type PlayerAction } from '../../shared/engine/actions';
import { makeConfig, type GameConfig } from '../../shared/engine/config';
import type { ActionError } from '../../shared/engine/errors';
import { checkPlayerAction } from '../../shared/engine/legal';
import type { GameMap } from '../../shared/engine/map';
import { drawSetup, MAX_SEED, ROLES, type Role } from '../../shared/engine/state';
import type { StepResult } from '../../shared/engine/transition';
import type { EndReason, LogLine } from '../../shared/log/format';
import { GameRecorder, makeHeader } from '../../shared/log/recorder';
import { generateMap } from '../../shared/maps/generate';
import {
  ACTION_MESSAGE,
  clientMessageSchemas,
  DEFAULT_PATCH_RATE_MS,
  joinOptionsSchema,
  type ClientMessageType,
  type ErrorCode,
  type JoinOptions,
  type QueueMessage,
} from '../../shared/protocol/messages';
import type { GameLogWriter, SeatRecord } from '../store/types';
import { expulsionOf } from '../transport';
import { BotSeat } from './botSeat';
import { queuePlace } from './queue';
import { TurnClock } from './turnClock';
import { ViewFeed } from './viewFeed';

/** How often a waiting player's place in the matchmaking queue is checked. */
const QUEUE_POLL_MS = 1000;

/** What the room needs from the process that runs it. */
export interface RoomServices {
  startLog(header: ReturnType<typeof makeHeader>, info: { pool: string; seats: SeatRecord[] }): GameLogWriter;
  /** The clock for deadlines and the log's times (epoch ms); Date.now unless a test fixes it. */
  now?(): number;
}

export const roomSettingsSchema = z.object({
  /** Override the config's turn seconds (`serve --leader-seconds`, tests). */
  leaderTurnSeconds: z.number().positive().max(3600).optional(),
  followerTurnSeconds: z.number().positive().max(3600).optional(),
  /** How long a dropped player's seat is kept. */
  reconnectSeconds: z.number().min(0).max(3600).default(30),
  /** Milliseconds between the scripted follower's actions, so that a human leader can follow them. */
  botStepMs: z.number().int().min(0).max(10_000).default(400),
  /** Milliseconds between Colyseus's ticks (the turn clock's resolution). */
  patchRateMs: z.number().int().min(5).max(1000).default(DEFAULT_PATCH_RATE_MS),
  /** Fixes the game's seed (tests, studies): the map's, and the draw of start poses and cards. */
  seed: z.number().int().min(0).max(MAX_SEED).optional(),
  /** Plays on this map instead of a generated one. */
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
  connected: boolean;
  readonly feed: ViewFeed;
}

type Phase = 'waiting' | 'playing' | 'ended';

const partnerOf = (role: Role): Role => (role === 'leader' ? 'follower' : 'leader');

export class GameRoom extends Room {
  maxClients = 2;

  private services!: RoomServices;
  private now: () => number = Date.now;
  private pool = 'default';
  /** The private game's code ('' for quick play). */
  private code = '';
  private settings!: z.output<typeof roomSettingsSchema>;
  private phase: Phase = 'waiting';
  private endReason = '';
  private readonly seats = new Map<Role, Seat>();
  private recorder: GameRecorder | null = null;
  private writer: GameLogWriter | null = null;
  private startedAt = 0;
  private clockOfTurns!: TurnClock;
  private bot: BotSeat | null = null;
  private queueTimer: Delayed | null = null;
  /** The last `queue` message sent, so that only changes are sent. */
  private queueSent: QueueMessage | null = null;

  /** The message handlers: each message type's schema is checked before its handler runs. */
  private readonly handlers: { [T in ClientMessageType]: (seat: Seat, message: z.output<(typeof clientMessageSchemas)[T]>) => void } = {
    action: (seat, action) => this.act(seat, action),
  };

  onCreate(options: GameRoomOptions): void {
    this.services = options.services;
    this.now = options.services.now ?? Date.now;
    this.settings = roomSettingsSchema.parse(options.settings ?? {});
    this.pool = options.pool ?? 'default';
    this.setPatchRate(this.settings.patchRateMs);
    this.clockOfTurns = new TurnClock(this.clock, this.now, (role) => this.apply({ type: 'timeout', actor: 'server', role }));
    this.code = options.code ?? '';
    this.listOpenSeats();
    for (const type of Object.keys(clientMessageSchemas) as ClientMessageType[]) {
      this.onMessage(type, (client, message) => this.receive(client, type, message));
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
    if (this.phase !== 'waiting') throw new ServerError(409, 'this game has already started');
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
    const record: SeatRecord = {
      role,
      playerId: randomUUID(),
      kind: 'human',
      ...(auth.workerId && { workerId: auth.workerId }),
      ...(auth.assignmentId && { assignmentId: auth.assignmentId }),
      ...(auth.hitId && { hitId: auth.hitId }),
    };
    this.seats.set(role, { role, client, record, connected: true, feed: new ViewFeed(role) });
    client.send('seat', { role, playerId: record.playerId });
    if (auth.botFollower) this.seatBot();
    if (this.listOpenSeats().length === 0) this.startGame();
    else this.watchQueue();
  }

  /** A dropped player keeps its seat for the reconnection window; one the server expelled leaves at once (onLeave). */
  async onDrop(client: Client): Promise<void> {
    const seat = this.seatOf(client);
    if (!seat || this.phase === 'ended' || expulsionOf(client.ref)) return;
    seat.connected = false;
    this.notifyPartner(seat.role, 'partnerDisconnected');
    this.sendViews();
    // A window that closes unused rejects: Colyseus then calls onLeave, which abandons the game.
    await this.allowReconnection(client, this.settings.reconnectSeconds).catch(() => undefined);
  }

  onReconnect(client: Client): void {
    const seat = this.seatOf(client);
    if (!seat) return;
    // The returning connection is a new Client object with the same session id.
    seat.client = client;
    seat.connected = true;
    this.notifyPartner(seat.role, 'partnerReconnected');
    if (this.phase === 'waiting') this.watchQueue();
    seat.feed.resend();
    this.sendViews();
  }

  /** A player gone for good (left, expelled, or did not come back in time) abandons the game. */
  onLeave(client: Client): void {
    const seat = this.seatOf(client);
    if (!seat) return;
    seat.client = null;
    seat.connected = false;
    if (this.phase === 'playing') {
      const expelled = expulsionOf(client.ref);
      this.notifyPartner(seat.role, 'partnerLeft', expelled && { reason: expelled.code, message: expelled.message });
      this.finish('abandoned');
    } else if (this.phase === 'waiting') {
      this.seats.delete(seat.role);
      this.listOpenSeats();
    }
  }

  /** Seats the scripted follower, which acts from the server on its turns, through the same checks as a person. */
  private seatBot(): void {
    this.bot = new BotSeat(this.clock, this.settings.botStepMs, (action) => {
      const refused = this.tryAction('follower', action);
      // Like a person's, a move into an obstacle is refused; the bot chooses again at its next step.
      if (refused && refused.code !== 'MOVE_BLOCKED') throw new Error(`the scripted follower's action was refused: ${refused.code}`);
      return this.phase === 'playing' && this.recorder!.state.turn.role === 'follower';
    });
    const record: SeatRecord = { role: 'follower', playerId: randomUUID(), kind: 'bot' };
    this.seats.set('follower', { role: 'follower', client: null, record, connected: true, feed: new ViewFeed('follower') });
  }

  /**
   * A fault in any handler or timer ends at most this game, never the process: the game is
   * closed as interrupted (its log keeps everything before) and both players are told.
   */
  onUncaughtException(error: RoomException, methodName: RoomMethodName): void {
    // onAuth's ServerErrors are its answers (the join is refused), not faults.
    if (methodName === 'onAuth') return;
    // Through Colyseus's logger, which the server rate-limits when a client's frame caused the fault.
    logger.error(`game room ${this.roomId}: ${methodName} failed:`, error.cause ?? error);
    try {
      this.finish('interrupted');
    } catch (closing) {
      logger.error(`game room ${this.roomId}: could not close the game:`, closing);
    }
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
    void this.setMetadata({ pool: this.pool, code: this.code, leaderOpen: open.includes('leader'), followerOpen: open.includes('follower') });
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
    if (this.phase !== 'waiting') return; // the game started during the query
    const place = queuePlace(this.roomId, rooms);
    if (!place || (place.position === this.queueSent?.position && place.waiting === this.queueSent.waiting)) return;
    this.queueSent = place;
    this.broadcast('queue', place);
  }

  private stopWatchingQueue(): void {
    this.queueTimer?.clear();
    this.queueTimer = null;
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
    // The map and the draw of poses and cards use independent seeds unless a study fixes one: the
    // terrain a follower sees then says nothing about the cards or the leader it does not see.
    const seed = this.settings.seed ?? randomInt(0, MAX_SEED);
    const base = this.settings.config ?? makeConfig();
    const config = makeConfig({
      ...base,
      turnSeconds: { leader: this.settings.leaderTurnSeconds ?? base.turnSeconds.leader, follower: this.settings.followerTurnSeconds ?? base.turnSeconds.follower },
    });
    const map = this.settings.map ?? generateMap(this.settings.seed ?? randomInt(0, MAX_SEED));
    const gameId = `g${this.now().toString(36)}-${this.roomId}`;
    const seats = [...this.seats.values()].map((seat) => seat.record);
    const header = makeHeader({
      gameId,
      startedAt: new Date(this.now()),
      seed,
      config,
      map,
      setup: drawSetup(config, map, seed),
      meta: { source: 'server', pool: this.pool, players: seats },
    });
    this.writer = this.services.startLog(header, { pool: this.pool, seats });
    this.recorder = new GameRecorder(header, (line) => this.writeLog(line));
    if (this.bot) void this.bot.start(gameId);
    this.startedAt = this.now();
    this.phase = 'playing';
    for (const seat of this.seats.values()) seat.feed.witness(this.recorder.state);
    this.beginTurn();
    this.sendViews();
  }

  private writeLog(line: LogLine): void {
    if (line.kind === 'header') return; // startLog wrote it
    if (line.kind === 'end') this.writer?.end(line);
    else this.writer?.append(line);
  }

  /** Every message passes here: the seat, the phase and the message's schema are checked, then its handler runs. */
  private receive(client: Client, type: ClientMessageType, message: unknown): void {
    const seat = this.seatOf(client);
    if (!seat) return this.refuse(client, type, 'NOT_A_PLAYER', 'you have no seat in this game');
    if (this.phase === 'waiting') return this.refuse(client, type, 'GAME_NOT_STARTED', 'waiting for the other player');
    if (this.phase === 'ended') return this.refuse(client, type, 'GAME_ENDED', `the game is over (${this.endReason})`);
    const parsed = clientMessageSchemas[type].safeParse(message ?? {});
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
      return this.refuse(client, type, 'BAD_MESSAGE', `bad ${type} message: ${where}${issue.message}`);
    }
    this.handlers[type](seat, parsed.data);
  }

  /** A player's message asks for an action: refused in words, or applied. */
  private act(seat: Seat, requested: PlayerAction): void {
    const refused = this.tryAction(seat.role, requested);
    if (refused) this.refuse(seat.client!, ACTION_MESSAGE, refused.code, refused.message);
  }

  /** Checks `role`'s action against the legal actions and applies it; the refusal, or null. */
  private tryAction(role: Role, requested: PlayerAction): ActionError | null {
    const action: PlayerAction = requested.type === 'instruction' ? { type: 'instruction', text: sanitizeInstruction(requested.text) } : requested;
    const refused = checkPlayerAction(this.recorder!.state, role, action);
    if (!refused) this.apply(byActor(role, action));
    return refused;
  }

  /** Applies an action: logged first, then each player is sent what it may know of the result. */
  private apply(action: Action): StepResult {
    const result = this.recorder!.apply(action, this.now() - this.startedAt);
    if (!result.ok) return result;
    for (const seat of this.seats.values()) seat.feed.witness(result.state);
    const ended = result.outcome.turnEnded;
    if (ended?.followerSkipped) this.notify('follower', 'turnSkipped');
    if (ended?.reason === 'timeout') this.broadcast('notice', { kind: 'timeout', role: action.type === 'timeout' ? action.role : action.actor });
    if (result.state.gameOver) {
      this.finish('turns-exhausted');
      return result;
    }
    if (ended) this.beginTurn();
    this.sendViews();
    return result;
  }

  /** A turn begins: the clock restarts with the role's seconds, and the scripted follower plays its turn. */
  private beginTurn(): void {
    const state = this.recorder!.state;
    const role = state.turn.role;
    this.clockOfTurns.start(role, state.config.turnSeconds[role]);
    if (role === 'follower' && this.bot) this.bot.takeTurn(() => (this.phase === 'playing' ? this.recorder!.state : null));
  }

  /** Sends each connected player what changed in its view. */
  private sendViews(): void {
    if (!this.recorder) return;
    const state = this.recorder.state;
    for (const seat of this.seats.values()) {
      if (!seat.client || !seat.connected) continue;
      const message = seat.feed.message(
        state,
        {
          phase: this.phase === 'ended' ? 'ended' : 'playing',
          turnDeadline: this.phase === 'playing' ? this.clockOfTurns.deadline : 0,
          partnerConnected: this.seats.get(partnerOf(seat.role))?.connected ?? false,
          endReason: this.endReason,
        },
        this.now(),
      );
      if (message) seat.client.send('view', message);
    }
  }

  /** Ends the game once, for whatever reason, and closes its log. */
  private finish(reason: EndReason): void {
    if (this.phase === 'ended') return;
    this.clockOfTurns?.stop();
    this.bot?.stop();
    this.stopWatchingQueue();
    const wasPlaying = this.phase === 'playing';
    this.phase = 'ended';
    if (!wasPlaying || !this.recorder) return;
    const end = this.recorder.end(this.now() - this.startedAt, reason);
    this.endReason = end.reason;
    this.sendViews();
    this.broadcast('notice', { kind: 'gameOver', reason: end.reason, score: end.score });
  }

  private refuse(client: Client, refused: string, code: ErrorCode, message: string): void {
    client.send('error', { code, message, refused });
  }

  private notify(role: Role, kind: string, details?: object): void {
    this.seats.get(role)?.client?.send('notice', { kind, ...details });
  }

  private notifyPartner(role: Role, kind: string, details?: object): void {
    this.notify(partnerOf(role), kind, details);
  }
}
