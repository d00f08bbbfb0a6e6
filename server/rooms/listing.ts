/**
 * A game room's listing in the matchmaker (Colyseus's metadata, shared through Redis by several
 * processes), and the checks before a join, which read the listings of every process, never a
 * process's own rooms: the join options, private codes, the study a join is for, and the
 * quick-play creation lock a new room gives back once it is listed (creationLock.ts).
 */
import { randomInt } from 'node:crypto';
import { matchMaker, ServerError, type AuthContext } from '@colyseus/core';
import { agentSeatAsked, joinOptionsSchema, NO_GAME_WITH_CODE, ROOM_NAME, type JoinOptions } from '../../shared/protocol/messages';
import type { Role } from '../../shared/engine/state';
import { releaseCreationLock } from './creationLock';
import type { AgentJoin, SeatListing } from './queue';
import { ownFields, ownOption } from './roomOptions';
import type { Seats } from './seats';
import { ADDRESS_OPTION, ARM_OPTION } from './studySeats';

/**
 * The study a join is for: set only by the study API (server/study/studyGames.ts), which calls the
 * matchmaker itself, in its own process and so without a request's auth context, after checking
 * the worker. A join from a client always comes with one, so onAuth (checkJoin) sees it and
 * refuses every field outside the join's, this one included; the room reads it as an own field
 * only, so no prototype can lend it (P-124).
 */
export const STUDY_OPTION = 'study';

export function studyOf(options: unknown): string {
  const study = ownOption(options, STUDY_OPTION);
  return typeof study === 'string' ? study : '';
}

/** The fields a client's join may have: the join schema's, and no other. */
export const JOIN_OPTION_FIELDS: readonly string[] = Object.keys(joinOptionsSchema.shape);

/** What the server's own joins for a study add to a join's fields: a client's join never has them. */
const STUDY_ONLY_OPTIONS: readonly string[] = [STUDY_OPTION, ARM_OPTION, ADDRESS_OPTION];

/**
 * The refusal of a client's join whose options have a field outside the join's (its own fields:
 * `__proto__` counts as one), or null: a study's fields are 403, any other unknown field 400
 * (P-123, P-124). Anything but an object is left to the join schema, which refuses it in its words.
 */
export function refuseClientJoinFields(options: unknown): ServerError | null {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) return null;
  const keys = Object.keys(options);
  if (keys.some((key) => STUDY_ONLY_OPTIONS.includes(key))) return new ServerError(403, STUDY_JOIN_REFUSED);
  const unknown = keys.find((key) => !JOIN_OPTION_FIELDS.includes(key));
  if (unknown === undefined) return null;
  return new ServerError(400, `unknown join option ${JSON.stringify(unknown)}: a join takes only ${JOIN_OPTION_FIELDS.join(', ')}`);
}

/** What a client's join naming a study (or its arm, or an address tag) is told. */
export const STUDY_JOIN_REFUSED = "a study's games are joined from the study's pages";

/** Private codes read unambiguously (no 0/o, 1/i/l): 31 characters, 10 of them drawn from crypto (49 bits). */
const CODE_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
export const PRIVATE_CODE_LENGTH = 10;

export function drawPrivateCode(): string {
  return Array.from({ length: PRIVATE_CODE_LENGTH }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join('');
}

/** The join options, or the 400 that refuses them. */
export function parseJoinOptions(options: unknown): JoinOptions {
  const parsed = joinOptionsSchema.safeParse(ownFields(options ?? {}));
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new ServerError(400, `bad join option ${issue.path.join('.')}: ${issue.message}`);
}

/** A private game admits its creator (who asked for a new game) and then only its code; quick play, no code. */
function listingAdmits(listing: SeatListing, asked: JoinOptions): boolean {
  if (asked.private || agentSeatAsked(asked)) return listing.leaderOpen && listing.followerOpen;
  return asked.code === (listing.code || undefined);
}

type Listed = SeatListing & { roomId: string };

/** A game room's listing as RoomListing.publish wrote it, with its room id. */
function listingOf(room: { roomId: string; metadata?: unknown } | undefined): Listed | undefined {
  const listing = room?.metadata as Partial<SeatListing> | undefined;
  if (typeof listing?.code !== 'string' || typeof listing.phase !== 'string' || !Array.isArray(listing.workers)) return undefined;
  return { ...(listing as SeatListing), roomId: room!.roomId };
}

/**
 * Every game room's listing, whichever process it lives in (with several processes the listings
 * are shared through Redis): the checks before a join read these, never a process's own rooms.
 */
async function listings(conditions: Partial<SeatListing> = {}): Promise<Listed[]> {
  const listed = await matchMaker.query({ name: ROOM_NAME, ...conditions });
  return listed.flatMap((room) => {
    const listing = listingOf(room);
    return listing ? [listing] : [];
  });
}

/**
 * The room's static onAuth, when the matchmaker is asked (the HTTP request), before it picks a
 * room: bad options, a code that no waiting game has, a seat that game no longer has, and a
 * worker who already waits for a partner are refused there, each with its reason.
 */
export async function checkJoin(_token: string | undefined, options: unknown, context?: AuthContext): Promise<true> {
  const refused = refuseClientJoinFields(options);
  if (refused) throw refused;
  const asked = parseJoinOptions(options);
  // A join by room id names the room in the request's path (context.req is that request).
  const byId = /\/matchmake\/joinById\/([^/?]+)/.exec(String(context?.req?.url ?? ''))?.[1];
  // Quick play needs no look at the listings (with Redis, reading them all is the dear part).
  if (byId === undefined && asked.code === undefined && asked.workerId === undefined) return true;
  const named = byId === undefined ? undefined : listingOf(await matchMaker.getRoomById(byId));
  if (named?.phase === 'waiting' && !listingAdmits(named, asked)) throw new ServerError(404, NO_GAME_WITH_CODE);
  if (asked.code !== undefined) {
    const game = (await listings({ code: asked.code })).find((listing) => listing.phase === 'waiting');
    if (!game) throw new ServerError(404, NO_GAME_WITH_CODE);
    if (asked.role !== 'any' && !game[`${asked.role}Open`]) throw new ServerError(409, `the ${asked.role} seat of this game is taken`);
  }
  // Quick play's own games only: whether a study's worker waits in one of the study's games is
  // none of a client's business (P-125), and the study API keeps its workers to one seat itself.
  const workerId = asked.workerId;
  if (workerId !== undefined && (await listings({ study: '' })).some((listing) => listing.study === '' && listing.phase === 'waiting' && listing.workers.includes(workerId))) {
    throw new ServerError(409, `worker ${workerId} already has a seat in a game waiting for a partner`);
  }
  return true;
}

/** The games whose agent partner a client's join asked for (agentGames.ts), ended or not, on whichever process. */
export async function agentGameListings(): Promise<(Pick<SeatListing, 'phase' | 'workers'> & { agentJoin: AgentJoin })[]> {
  return (await listings()).flatMap(({ phase, workers, agentJoin }) => (agentJoin ? [{ phase, workers, agentJoin }] : []));
}

/** The ids of the games waiting with a study's worker, on whichever process. */
export async function roomsWaitingWith(studyId: string, workerId: string): Promise<string[]> {
  const waiting = (await listings()).filter((listing) => listing.study === studyId && listing.phase === 'waiting' && listing.workers.includes(workerId));
  return waiting.map((listing) => listing.roomId);
}

/**
 * A study's games waiting for a player of `role` ('any': either seat) in which no one came from
 * `address` (a keyed hash, clientAddress.ts), oldest first as the matchmaker lists them, on whichever process.
 */
export async function studyRoomsApartFrom(studyId: string, role: Role | 'any', address: string): Promise<string[]> {
  const open = (await listings({ study: studyId, code: '', phase: 'waiting' })).filter(
    (listing) => (role === 'any' ? listing.leaderOpen || listing.followerOpen : listing[`${role}Open`]) && !(listing.addresses ?? []).includes(address),
  );
  return open.map((listing) => listing.roomId);
}

/** Whether a study's worker holds (or is about to take) a seat in a game that has not ended. */
export async function seatsWorker(studyId: string, workerId: string): Promise<boolean> {
  return (await listings()).some((listing) => listing.study === studyId && listing.phase !== 'ended' && listing.workers.includes(workerId));
}

/** One room's listing: what it is now, written to the matchmaker whenever it changes. */
export class RoomListing {
  /** Settles once the latest listing is stored (in Redis, with several processes). */
  private listed: Promise<unknown> = Promise.resolve();

  /**
   * `store` writes a listing (setMetadata replaces, so all of it); `creationLock` is the quick-play
   * creation lock the room holds until its first seat is claimed.
   */
  constructor(
    readonly fixed: Pick<SeatListing, 'pool' | 'code' | 'study'>,
    private readonly seats: Seats,
    private readonly phase: () => SeatListing['phase'],
    private readonly store: (listing: SeatListing) => Promise<unknown>,
    private creationLock: string | null,
  ) {}

  now(): SeatListing {
    const { leaderOpen, followerOpen, workers, addresses, agentJoin } = this.seats.listed();
    return { ...this.fixed, leaderOpen, followerOpen, phase: this.phase(), workers, addresses, agentJoin };
  }

  /** The join options, if this game admits them: its code, and its study (studyOf). */
  admits(options: unknown): JoinOptions | null {
    const parsed = joinOptionsSchema.safeParse(ownFields(options ?? {}));
    if (!parsed.success || !listingAdmits(this.now(), parsed.data) || studyOf(options) !== this.fixed.study) return null;
    return parsed.data;
  }

  publish(): void {
    // The listing object itself changes now; only its persisting is asynchronous.
    this.listed = this.store(this.now()).catch(() => undefined);
  }

  /** Settles once the latest listing is stored. */
  stored(): Promise<unknown> {
    return this.listed;
  }

  /** The room was made (under its pool's lock) and is listed with its first seat claimed: the next maker may look. */
  async releaseCreationLock(): Promise<void> {
    const key = this.creationLock;
    if (key === null) return;
    this.creationLock = null;
    await this.listed;
    await releaseCreationLock(key);
  }
}
