/**
 * One player's connection to a game room: it turns the synchronised schema state into a plain
 * `GameView`, keeps the seat, the map and the server's clock offset, and passes the server's
 * notices, errors and connection changes on. Nothing here decides a rule: the server does.
 */
import { Client, type Room, type SeatReservation } from '@colyseus/sdk';
import type { PlayerAction } from '../../../shared/engine/actions';
import type { GameConfig } from '../../../shared/engine/config';
import type { KnownMap } from '../../../shared/engine/playerView';
import type { Role } from '../../../shared/engine/state';
import { Events } from './events';
import { forgetSeat, loadSeat, saveSeat } from './savedSeat';
import { ACTION_MESSAGE, applyViewMessage, ROOM_NAME, type ClientView, type JoinOptions, type Notice, type SeatMessage, type ViewMessage } from '../../../shared/protocol/messages';

/** The game as this player's server sent it (its playerView), with the deadline in this machine's clock. */
export type GameView = ClientView;

/** The server's answer to a reconnection token whose player is still connected. */
const SEAT_IN_USE = 409;

/** How the connection closed for good: the WebSocket's close code and reason (or the SDK's, after failed reconnections). */
export interface Closed {
  readonly code: number;
  readonly reason: string;
}

export interface ServerRefusal {
  readonly code: string;
  readonly message: string;
  readonly refused: string;
}

export interface SessionEvents {
  /** The seat; `code` is a new private game's code to share. */
  seat(role: Role, code: string | undefined): void;
  start(map: KnownMap, config: GameConfig): void;
  state(view: GameView): void;
  notice(notice: Notice): void;
  refused(refusal: ServerRefusal): void;
  queue(position: number, waiting: number): void;
  /** `closed` is the close code and reason when the connection closed for good. */
  connection(status: 'dropped' | 'reconnected' | 'closed', closed?: Closed): void;
}

type Listener<K extends keyof SessionEvents> = SessionEvents[K];

/** What a game screen needs of its game: a server's room (GameSession), or the tutorial's game in the page. */
export interface GameConnection {
  readonly view: GameView | null;
  readonly connected: boolean;
  /** Sends an action; false (and nothing sent) while the connection is down. */
  send(action: PlayerAction): boolean;
  on<K extends keyof SessionEvents>(event: K, listener: Listener<K>): void;
}

/** Where the game server is: the page's own origin (Vite's dev server forwards to it). */
export function serverUrl(): string {
  return window.location.origin;
}

export class GameSession implements GameConnection {
  role: Role | null = null;
  /** A private game's code. */
  code: string | undefined;
  view: GameView | null = null;
  connected = true;
  /** The view as received, in the server's clock. */
  private received: ClientView | null = null;
  private clockOffset = 0;
  private readonly events = new Events();
  private leaving = false;
  /** The connection has closed for good (the server sent the player away, or reconnecting failed). */
  private closed = false;

  static async join(options: Partial<JoinOptions>): Promise<GameSession> {
    const room = await new Client(serverUrl()).joinOrCreate(ROOM_NAME, options);
    return new GameSession(room);
  }

  /** The seat the server reserved for this player (a study's `POST play`: the server chose the game and the role). */
  static async consume(reservation: SeatReservation): Promise<GameSession> {
    const room = await new Client(serverUrl()).consumeSeatReservation(reservation);
    return new GameSession(room);
  }

  /**
   * Back in the seat this browser held before a refresh, or null when there is none or the server
   * no longer keeps it. A seat whose player is still connected (another tab) is kept, and refused.
   */
  static async resume(): Promise<GameSession | null> {
    const saved = loadSeat();
    if (!saved) return null;
    try {
      const session = new GameSession(await new Client(serverUrl()).reconnect(saved.token));
      session.role = saved.role;
      session.code = saved.code;
      return session;
    } catch (error) {
      if ((error as { code?: number }).code === SEAT_IN_USE) throw new Error('your game is open in another tab or window', { cause: error });
      forgetSeat();
      return null;
    }
  }

  /** Handlers are registered at once: the server sends the seat right after the join. */
  private constructor(readonly room: Room) {
    // Reconnect also after a drop in the first seconds of a game.
    room.reconnection.minUptime = 0;
    // Nothing typed while the connection is down is replayed later.
    room.reconnection.maxEnqueuedMessages = 0;
    room.onMessage('seat', (message: SeatMessage) => {
      this.role = message.role;
      this.code = message.code;
      this.keepSeat();
      this.emit('seat', message.role, message.code);
    });
    room.onMessage('view', (message: ViewMessage) => {
      this.clockOffset = Date.now() - message.serverNow;
      const first = this.received === null;
      this.received = applyViewMessage(this.received, message);
      const view = this.received;
      this.view = { ...view, turnDeadline: view.turnDeadline > 0 ? view.turnDeadline + this.clockOffset : 0 };
      if (first) this.emit('start', view.map, view.config);
      this.emit('state', this.view);
    });
    room.onMessage('notice', (notice: Notice) => {
      if (notice.kind === 'gameOver') forgetSeat();
      this.emit('notice', notice);
    });
    room.onMessage('error', (refusal: ServerRefusal) => this.emit('refused', refusal));
    room.onMessage('queue', (message: { position: number; waiting: number }) => this.emit('queue', message.position, message.waiting));
    room.onDrop(() => {
      this.connected = false;
      this.emit('connection', 'dropped');
    });
    room.onReconnect(() => {
      this.connected = true;
      this.keepSeat();
      this.emit('connection', 'reconnected');
    });
    room.onLeave((code, reason) => {
      this.connected = false;
      this.closed = true;
      forgetSeat();
      if (!this.leaving) this.emit('connection', 'closed', { code, reason: reason ?? '' });
    });
  }

  on<K extends keyof SessionEvents>(event: K, listener: Listener<K>): void {
    this.events.on(event, listener);
  }

  /** Sends an action; false (and nothing sent) while the connection is down. */
  send(action: PlayerAction): boolean {
    if (!this.connected) return false;
    this.room.send(ACTION_MESSAGE, action);
    return true;
  }

  /** Leaves on purpose (cancel while waiting, or after the game). */
  async leave(): Promise<void> {
    this.leaving = true;
    forgetSeat();
    // A room that closed the connection answers no request to leave: waiting for its answer would never end.
    if (this.closed) return;
    // A dropped connection would otherwise go on reconnecting behind the lobby.
    this.room.reconnection.enabled = false;
    await this.room.leave(true).catch(() => undefined);
  }

  /** Kept for a refresh; the token may change with a reconnection. */
  private keepSeat(): void {
    if (this.role) saveSeat({ token: this.room.reconnectionToken, role: this.role, ...(this.code && { code: this.code }) });
  }

  private emit<K extends keyof SessionEvents>(event: K, ...args: Parameters<Listener<K>>): void {
    this.events.emit(event, ...args);
  }
}
