/**
 * One player's connection to a game room: it turns the synchronised schema state into a plain
 * `GameView`, keeps the seat, the map and the server's clock offset, and passes the server's
 * notices, errors and connection changes on. Nothing here decides a rule: the server does.
 */
import { Client, type Room } from '@colyseus/sdk';
import type { Card, Color, Count, Shape } from '../../../shared/engine/cards';
import { makeConfig, type GameConfig } from '../../../shared/engine/config';
import type { Heading, Pose } from '../../../shared/engine/hex';
import { mapSchema, type GameMap } from '../../../shared/engine/map';
import type { Role } from '../../../shared/engine/state';
import { ROOM_NAME, type ClientMessageType, type JoinOptions } from '../../../shared/protocol/messages';

export type InstructionStatus = 'done' | 'current' | 'queued';
export interface InstructionView {
  readonly id: number;
  readonly text: string;
  readonly status: InstructionStatus;
  /** The follower has been able to see it. */
  readonly sent: boolean;
}

export interface PlayerView extends Pose {
  readonly connected: boolean;
}

/** The room state as this player received it (the follower receives less: docs/protocol.md). */
export interface GameView {
  readonly phase: 'waiting' | 'playing' | 'ended';
  readonly gameId: string;
  readonly turnRole: Role;
  readonly stepsLeft: number;
  readonly turnsLeft: number;
  readonly score: number;
  /** When the turn times out, in this machine's clock (0 when no turn runs). */
  readonly turnDeadline: number;
  readonly turnSeconds: Readonly<Record<Role, number>>;
  readonly follower: PlayerView;
  /** For the follower: the last place it saw the leader, current only when `leaderInView`. */
  readonly leader: PlayerView | null;
  readonly leaderInView: boolean;
  readonly cards: readonly Card[];
  readonly instructions: readonly InstructionView[];
  /** Selected cards that cannot make a set (the leader's red marks; always empty for the follower). */
  readonly invalidCards: ReadonlySet<number>;
  readonly endReason: string;
}

export type Notice =
  | { kind: 'turnSkipped' | 'partnerDisconnected' | 'partnerReconnected' | 'partnerLeft' }
  | { kind: 'timeout'; role: Role }
  | { kind: 'gameOver'; reason: string; score: number };

export interface ServerRefusal {
  readonly code: string;
  readonly message: string;
  readonly refused: string;
}

export interface SessionEvents {
  seat(role: Role): void;
  start(map: GameMap, config: GameConfig): void;
  state(view: GameView): void;
  notice(notice: Notice): void;
  refused(refusal: ServerRefusal): void;
  queue(position: number, waiting: number): void;
  connection(status: 'dropped' | 'reconnected' | 'closed', detail?: string): void;
}

type Listener<K extends keyof SessionEvents> = SessionEvents[K];

/** Where the game server is: the page's own origin (Vite's dev server forwards to it). */
export function serverUrl(): string {
  return window.location.origin;
}

export class GameSession {
  role: Role | null = null;
  map: GameMap | null = null;
  config: GameConfig | null = null;
  view: GameView | null = null;
  connected = true;
  private clockOffset = 0;
  private readonly listeners: { [K in keyof SessionEvents]: Listener<K>[] } = {
    seat: [], start: [], state: [], notice: [], refused: [], queue: [], connection: [],
  };
  private leaving = false;

  static async join(options: Partial<JoinOptions>): Promise<GameSession> {
    const room = await new Client(serverUrl()).joinOrCreate(ROOM_NAME, options);
    return new GameSession(room);
  }

  /** Handlers are registered at once: the server sends the seat right after the join. */
  private constructor(readonly room: Room) {
    // Reconnect also after a drop in the first seconds of a game.
    room.reconnection.minUptime = 0;
    // Nothing typed while the connection is down is replayed later.
    room.reconnection.maxEnqueuedMessages = 0;
    room.onMessage('seat', (message: { role: Role }) => {
      this.role = message.role;
      this.emit('seat', message.role);
    });
    room.onMessage('map', (message: { map: unknown; config: unknown; serverNow?: number }) => {
      if (typeof message.serverNow === 'number') this.clockOffset = Date.now() - message.serverNow;
      const first = this.map === null;
      this.map = mapSchema.parse(message.map);
      this.config = makeConfig(message.config as never);
      if (first) this.emit('start', this.map, this.config);
      this.publish();
    });
    room.onMessage('notice', (notice: Notice) => this.emit('notice', notice));
    room.onMessage('error', (refusal: ServerRefusal) => this.emit('refused', refusal));
    room.onMessage('queue', (message: { position: number; waiting: number }) => this.emit('queue', message.position, message.waiting));
    room.onStateChange(() => this.publish());
    room.onDrop(() => {
      this.connected = false;
      this.emit('connection', 'dropped');
    });
    room.onReconnect(() => {
      this.connected = true;
      this.emit('connection', 'reconnected');
    });
    room.onLeave((code, reason) => {
      this.connected = false;
      if (!this.leaving) this.emit('connection', 'closed', reason ? `${reason} (code ${code})` : `code ${code}`);
    });
  }

  on<K extends keyof SessionEvents>(event: K, listener: Listener<K>): void {
    this.listeners[event].push(listener);
  }

  /** Sends a message; false (and nothing sent) while the connection is down. */
  send(type: ClientMessageType, payload: Record<string, unknown> = {}): boolean {
    if (!this.connected) return false;
    this.room.send(type, payload);
    return true;
  }

  /** Leaves on purpose (cancel while waiting, or after the game). */
  async leave(): Promise<void> {
    this.leaving = true;
    // A dropped connection would otherwise go on reconnecting behind the lobby.
    this.room.reconnection.enabled = false;
    await this.room.leave(true).catch(() => undefined);
  }

  private emit<K extends keyof SessionEvents>(event: K, ...args: Parameters<Listener<K>>): void {
    for (const listener of this.listeners[event]) (listener as (...a: Parameters<Listener<K>>) => void)(...args);
  }

  private publish(): void {
    this.view = readView(this.room.state, this.clockOffset);
    this.emit('state', this.view);
  }
}

// `any`: the SDK decodes the state by reflection, without the server's schema classes.
function readView(state: any, clockOffset: number): GameView {
  const cards: Card[] = [];
  state.cards?.forEach((c: any) =>
    cards.push({ id: c.id, x: c.x, y: c.y, color: c.color as Color, shape: c.shape as Shape, count: c.count as Count, selected: c.selected }),
  );
  const instructions: InstructionView[] = [];
  state.instructions?.forEach((i: any) => instructions.push({ id: i.id, text: i.text, status: i.status, sent: i.sent }));
  instructions.sort((a, b) => a.id - b.id);
  const player = (p: any): PlayerView | null => (p && p.heading ? { x: p.x, y: p.y, heading: p.heading as Heading, connected: p.connected } : null);
  return {
    phase: state.phase,
    gameId: state.gameId,
    turnRole: state.turnRole,
    stepsLeft: state.stepsLeft,
    turnsLeft: state.turnsLeft,
    score: state.score,
    turnDeadline: state.turnDeadline > 0 ? state.turnDeadline + clockOffset : 0,
    turnSeconds: { leader: state.leaderTurnSeconds, follower: state.followerTurnSeconds },
    follower: player(state.follower) ?? { x: 0, y: 0, heading: 'NE', connected: false },
    leader: player(state.leader),
    leaderInView: state.leaderInView === true,
    cards,
    instructions,
    invalidCards: new Set<number>(state.leaderOnly?.invalidCards ? [...state.leaderOnly.invalidCards] : []),
    endReason: state.endReason,
  };
}
