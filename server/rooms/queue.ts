/**
 * A waiting game's place in the matchmaking queue. Colyseus's matchmaker (0.18, local driver)
 * gives a joining player the first matching open room in the order the rooms were created, so a
 * game waits behind every earlier open game of its pool and code that lacks the same seat.
 */
import type { QueueMessage } from '../../shared/protocol/messages';

/**
 * What a game room lists (RoomListing, listing.ts): the matchmaking fields, and what the
 * matchmaker's checks before a join read in whichever process the room lives.
 */
export interface SeatListing {
  readonly pool: string;
  readonly code: string;
  /** The study whose game this is ('' for none). */
  readonly study: string;
  readonly leaderOpen: boolean;
  readonly followerOpen: boolean;
  readonly phase: 'waiting' | 'playing' | 'ended';
  /** The study workers seated or about to be. */
  readonly workers: readonly string[];
  /** The address tags of those workers, where their study keeps workers at one address apart (studySeats.ts). */
  readonly addresses: readonly string[];
  /** In a game whose agent partner a client's join asked for, that join as it was admitted (agentGames.ts); else null. */
  readonly agentJoin: AgentJoin | null;
}

/** A join admitted to a game with the server's agent partner: its ticket, and the keyed hash of its client's address (never the address). */
export interface AgentJoin {
  readonly ticket: string;
  readonly client: string;
}

/** A room as the matchmaker lists it (matchMaker.query). */
export interface ListedRoom {
  readonly roomId: string;
  readonly locked?: boolean;
  readonly private?: boolean;
  readonly metadata?: Partial<SeatListing>;
}

/**
 * The place of room `roomId` among `rooms`, which are in the matchmaker's order, or null when it
 * is not listed as open. Only rooms lacking exactly the same seats count: a scripted-follower game
 * lists both seats open until its leader is seated and then locks, so it never does.
 */
export function queuePlace(roomId: string, rooms: readonly ListedRoom[]): QueueMessage | null {
  const self = rooms.find((room) => room.roomId === roomId);
  if (!self?.metadata || !isOpen(self)) return null;
  const seats = self.metadata;
  const queue = rooms.filter((room) => isOpen(room) && sameQueue(room.metadata, seats));
  return { position: queue.indexOf(self) + 1, waiting: queue.length };
}

function isOpen(room: ListedRoom): boolean {
  return !room.locked && !room.private;
}

function sameQueue(a: Partial<SeatListing> | undefined, b: Partial<SeatListing>): boolean {
  return a?.pool === b.pool && a?.code === b.code && a?.leaderOpen === b.leaderOpen && a?.followerOpen === b.followerOpen;
}
