/**
 * The seats of one game: those the matchmaker has reserved for players who have not connected yet
 * (claims), and those taken, by a player or an agent. A seat's role is claimed at the moment
 * Colyseus reserves it, so that simultaneous players never meet in the same seat; a dropped
 * player keeps its seat for a window to come back in.
 */
import { randomInt, randomUUID } from 'node:crypto';
import type { Client, Clock, Deferred, Delayed, Room } from '@colyseus/core';
import { ROLES, type Role } from '../../shared/engine/state';
import { agentSeatAsked, playerSeatAsked, type JoinOptions, type Notice } from '../../shared/protocol/messages';
import type { SeatRecord } from '../store/types';
import type { AgentJoin, SeatListing } from './queue';
import { ViewFeed } from './viewFeed';

/**
 * How long a seat reserved by the matchmaker waits for its player's websocket before it is free
 * again: long enough for a slow connection, short enough that a reservation nobody uses does not
 * keep a partner waiting.
 */
export const SEAT_RESERVATION_SECONDS = 3;

/** A seat the matchmaker has reserved for a player who has not connected yet. */
export interface Claim {
  readonly role: Role;
  readonly options: JoinOptions;
  /** The study's tag of the worker's address, when its study keeps workers at one address apart (studySeats.ts). */
  readonly address?: string;
  /** The join's admission, when it asked for the server's agent partner (agentGames.ts). */
  readonly agentJoin?: AgentJoin;
  /** When it was made (epoch ms). */
  readonly reservedAt: number;
  readonly expiry: Delayed;
}

export interface Seat {
  readonly role: Role;
  readonly record: SeatRecord;
  /** As its claim's: never logged. */
  readonly address?: string;
  /** As its claim's. */
  readonly agentJoin?: AgentJoin;
  client: Client | null;
  connected: boolean;
  /** A dropped player's window to come back in (allowReconnection), while it is open. */
  reconnection: Deferred<Client> | null;
  readonly feed: ViewFeed;
}

const partnerOf = (role: Role): Role => (role === 'leader' ? 'follower' : 'leader');

/** Colyseus 0.18's seat reservation: private in its types, and with no hook of its own. */
type ReserveSeat = (sessionId: string, joinOptions: unknown, authData: unknown, seconds?: number, reconnecting?: boolean, ...rest: unknown[]) => Promise<boolean>;

/** What a room does when Colyseus reserves one of its seats. */
export interface Reservations {
  /** Claims a seat for the join options (and what the room's onAuth said of the join), or answers false when the room has none for them. */
  claim(sessionId: string, joinOptions: unknown, authData: unknown): boolean;
  /** Gives up a claim whose reservation was not made. */
  release(sessionId: string): void;
  /** Runs after every new reservation, made or refused. */
  reserved(): Promise<void>;
}

/**
 * Colyseus 0.18 reserves a seat when the matchmaker answers, before the player connects, and has
 * no hook there. The seat is claimed in that same step (and the listing updated at once), so that
 * the next reservation already sees the seat taken: a refused reservation makes the matchmaker
 * look for another room (or make one) instead of seating two leaders together.
 */
export function claimSeatsOnReservation(room: Room, reservations: Reservations): void {
  const reservable = room as unknown as { _reserveSeat: ReserveSeat };
  const reserve = reservable._reserveSeat.bind(room);
  reservable._reserveSeat = async (sessionId, joinOptions, authData, seconds, reconnecting, ...rest) => {
    // allowReconnection keeps a dropped player's seat through the same method.
    if (reconnecting) return reserve(sessionId, joinOptions, authData, seconds, reconnecting, ...rest);
    try {
      if (!reservations.claim(sessionId, joinOptions, authData)) return false;
      const made = await reserve(sessionId, joinOptions, authData, seconds, reconnecting, ...rest);
      if (!made) reservations.release(sessionId);
      return made;
    } finally {
      await reservations.reserved();
    }
  };
}

export class Seats {
  /** Reserved seats by session id, until their players connect. */
  private readonly claims = new Map<string, Claim>();
  private readonly taken = new Map<Role, Seat>();

  /** `released` runs when a claim is given up (its listing changed); `lapsed` when one runs out unused, after `released`. */
  constructor(
    private readonly clock: Clock,
    private readonly released: () => void,
    private readonly lapsed: (claim: Claim) => void = () => undefined,
  ) {}

  get(role: Role): Seat | undefined {
    return this.taken.get(role);
  }

  values(): IterableIterator<Seat> {
    return this.taken.values();
  }

  get size(): number {
    return this.taken.size;
  }

  /** The seats' records, for the log and the study. */
  records(): SeatRecord[] {
    return [...this.taken.values()].map((seat) => seat.record);
  }

  of(client: Client): Seat | undefined {
    return [...this.taken.values()].find((seat) => seat.client?.sessionId === client.sessionId);
  }

  heldBy(workerId: string): Seat | undefined {
    return [...this.taken.values()].find((seat) => seat.record.workerId === workerId);
  }

  claimOf(sessionId: string): Claim | undefined {
    return this.claims.get(sessionId);
  }

  /**
   * Claims a seat for `asked` if one is free, the worker (if any) holds none here yet, and no one
   * here came from the same `address` (when one is given), for `seconds` unless its player connects.
   * `agentJoin`: the join's admission, when it asks for the server's agent partner.
   */
  claim(sessionId: string, asked: JoinOptions, seconds: number, address?: string, agentJoin?: AgentJoin): boolean {
    if (asked.workerId !== undefined && this.holdsWorker(asked.workerId)) return false;
    if (address !== undefined && this.holdsAddress(address)) return false;
    const role = this.freeRole(playerSeatAsked(asked));
    if (!role) return false;
    const expiry = this.clock.setTimeout(() => {
      const claim = this.claims.get(sessionId);
      this.release(sessionId);
      if (claim) this.lapsed(claim);
    }, seconds * 1000);
    this.claims.set(sessionId, { role, options: asked, ...(address !== undefined && { address }), ...(agentJoin && { agentJoin }), reservedAt: Date.now(), expiry });
    return true;
  }

  /** The room goes: claims still waiting for their players lapse with it (their timers would never run). */
  lapseAll(): void {
    const pending = [...this.claims.values()];
    for (const claim of pending) claim.expiry.clear();
    this.claims.clear();
    for (const claim of pending) this.lapsed(claim);
  }

  release(sessionId: string): void {
    const claim = this.claims.get(sessionId);
    if (!claim) return;
    claim.expiry.clear();
    this.claims.delete(sessionId);
    this.released();
  }

  /** The player takes the seat `role` its claim had, with the claim's options, address and admission. */
  take(client: Client, { role, options, address, agentJoin }: Claim): Seat {
    const record: SeatRecord = {
      role,
      playerId: randomUUID(),
      kind: 'human',
      ...(options.workerId && { workerId: options.workerId }),
      ...(options.assignmentId && { assignmentId: options.assignmentId }),
      ...(options.hitId && { hitId: options.hitId }),
    };
    return this.seat({ role, client, record, ...(address !== undefined && { address }), ...(agentJoin && { agentJoin }), connected: true, reconnection: null, feed: new ViewFeed(role) });
  }

  seat(seat: Seat): Seat {
    this.taken.set(seat.role, seat);
    return seat;
  }

  /** The seat's player dropped: its partner is told how long the seat waits for it to come back. */
  dropped(seat: Seat, seconds: number): void {
    seat.connected = false;
    this.notifyPartner(seat.role, { kind: 'partnerDisconnected', seconds });
  }

  /** The seat's player is back, on a new Client object with the same session id: its next view is whole. */
  reconnected(seat: Seat, client: Client): void {
    seat.client = client;
    seat.connected = true;
    seat.reconnection = null;
    this.notifyPartner(seat.role, { kind: 'partnerReconnected' });
    seat.feed.resend();
  }

  /** The seat is free again. */
  vacate(seat: Seat): void {
    this.taken.delete(seat.role);
  }

  /**
   * What the listing says of the seats: which are open, the study workers seated or about to be
   * with their address tags, and the admission of the join that asked for the agent partner.
   */
  listed(): Pick<SeatListing, 'leaderOpen' | 'followerOpen' | 'workers' | 'addresses' | 'agentJoin'> {
    const open = this.openRoles();
    const held = [...this.taken.values()].map((seat) => ({ workerId: seat.record.workerId, address: seat.address, agentJoin: seat.agentJoin }));
    const claimed = [...this.claims.values()].map((claim) => ({ workerId: claim.options.workerId, address: claim.address, agentJoin: claim.agentJoin }));
    const present = held.concat(claimed);
    return {
      leaderOpen: open.includes('leader'),
      followerOpen: open.includes('follower'),
      workers: present.flatMap(({ workerId }) => (workerId === undefined ? [] : [workerId])),
      addresses: present.flatMap(({ address }) => (address === undefined ? [] : [address])),
      agentJoin: present.find((seat) => seat.agentJoin)?.agentJoin ?? null,
    };
  }

  /** For the metrics: the seated players connected now. */
  get connectedCount(): number {
    return [...this.taken.values()].filter((seat) => seat.client && seat.connected).length;
  }

  partnerConnected(role: Role): boolean {
    return this.taken.get(partnerOf(role))?.connected ?? false;
  }

  /** Sends the player in seat `role` (if it has a client) a notice. */
  notify(role: Role, notice: Notice): void {
    this.taken.get(role)?.client?.send('notice', notice);
  }

  notifyPartner(role: Role, notice: Notice): void {
    this.notify(partnerOf(role), notice);
  }

  /** The seats neither taken nor claimed (a claim for a game with an agent takes both). */
  private openRoles(): Role[] {
    const claimed = [...this.claims.values()].flatMap((claim): Role[] => (agentSeatAsked(claim.options) ? [...ROLES] : [claim.role]));
    return ROLES.filter((role) => !this.taken.has(role) && !claimed.includes(role));
  }

  private holdsAddress(address: string): boolean {
    return [...this.taken.values()].some((seat) => seat.address === address) || [...this.claims.values()].some((claim) => claim.address === address);
  }

  private holdsWorker(workerId: string): boolean {
    return this.heldBy(workerId) !== undefined || [...this.claims.values()].some((claim) => claim.options.workerId === workerId);
  }

  /** The seat for a player asking for `wanted`: either seat is drawn at random when both are open. */
  private freeRole(wanted: JoinOptions['role']): Role | null {
    const open = this.openRoles();
    if (wanted !== 'any') return open.includes(wanted) ? wanted : null;
    return open.length === 0 ? null : open[randomInt(open.length)];
  }
}
