/**
 * The `cerealbar` room: one game between a leader and a follower. It routes: a table of message
 * handlers validates at the edge (zod, then the engine's legal actions), the recorder logs every
 * accepted action before anyone sees its effect, and each seat's ViewFeed sends its player what
 * its playerView holds. The rules live in shared/engine; the turn clock and the agent's seat
 * (botSeat.ts) are small parts of their own.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { CloseCode, logger, matchMaker, Room, ServerError, type AuthContext, type Client, type Deferred, type Delayed, type RoomException, type RoomMethodName } from '@colyseus/core';
import { z } from 'zod';
import { byActor, sanitizeInstruction, type Action, type PlayerAction } from '../../shared/engine/actions';
import { makeConfig, type GameConfig } from '../../shared/engine/config';
import type { ActionError } from '../../shared/engine/errors';
import { checkPlayerAction } from '../../shared/engine/legal';
import type { GameMap } from '../../shared/engine/map';
import { drawSetup, MAX_SEED, ROLES, type Role } from '../../shared/engine/state';
import type { EndReason, LogLine } from '../../shared/log/format';
import { GameRecorder, makeHeader } from '../../shared/log/recorder';
import { generateMap } from '../../shared/maps/generate';
import {
  ACTION_MESSAGE,
  CLOSE_ROLE_CHANGED,
  CLOSE_STUDY_ENDED,
  clientMessageSchemas,
  DEFAULT_PATCH_RATE_MS,
  joinOptionsSchema,
  NO_GAME_WITH_CODE,
  ROOM_NAME,
  agentSeatAsked,
  playerSeatAsked,
  type ClientMessageType,
  type ErrorCode,
  type JoinOptions,
  type QueueMessage,
  type SeatMessage,
} from '../../shared/protocol/messages';
import type { SeatVerdict } from '../../shared/study/worker';
import { timed, type GameMetrics, type LiveRoom } from '../metrics';
import type { Awaitable, GameLogWriter, SeatRecord } from '../store/types';
import { expulsionOf } from '../transport';
import { AgentSeat, type SeatedAgent } from './botSeat';
import { creationLockKey, releaseCreationLock } from './creationLock';
import { queuePlace, type SeatListing } from './queue';
import { agentSeatRecord, droppingAgent, startAskedAgent, type SeatAgentStarter } from './seatAgents';
import { TurnClock } from './turnClock';
import { ViewFeed } from './viewFeed';

/** How often a waiting player's place in the matchmaking queue is checked. */
const QUEUE_POLL_MS = 1000;

/** Told to both players when storage fails mid-game, with the end reason 'storage-failed'. */
export const NOT_SAVED_MESSAGE = 'this game could not be saved and has ended';
/** Said to a study's worker whose session ended while it waited (or before it joined). */
export const STUDY_ENDED_MESSAGE = 'your part of the study has ended: no new game starts for you';
/** Said to a study's worker whose role changed while it waited (or before it joined): its page shows its next step. */
export const ROLE_CHANGED_MESSAGE = 'your role in the study has changed: your page shows what comes next';

/** Told to both players when the game's log cannot be created: the game does not start. */
export const NOT_STARTED_MESSAGE = 'the server cannot save games right now, so this game did not start; please try again later';

/** The store could not take a log line: the action it records never happened. */
class LogNotWritten extends Error {
  constructor(cause: unknown) {
    super('the log could not be written', { cause });
  }
}

/**
 * How long a seat reserved by the matchmaker waits for its player's websocket before it is free
 * again: long enough for a slow connection, short enough that a reservation nobody uses does not
 * keep a partner waiting.
 */
export const SEAT_RESERVATION_SECONDS = 3;

/** Private codes read unambiguously (no 0/o, 1/i/l): 31 characters, 10 of them drawn from crypto (49 bits). */
const CODE_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
export const PRIVATE_CODE_LENGTH = 10;

export function drawPrivateCode(): string {
  return Array.from({ length: PRIVATE_CODE_LENGTH }, () => CODE_ALPHABET[randomInt(CODE_ALPHABET.length)]).join('');
}

/** The join options, or the 400 that refuses them. */
export function parseJoinOptions(options: unknown): JoinOptions {
  const parsed = joinOptionsSchema.safeParse(options ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new ServerError(400, `bad join option ${issue.path.join('.')}: ${issue.message}`);
}

/** Colyseus 0.18's seat reservation: private in its types, and with no hook of its own. */
type ReserveSeat = (sessionId: string, joinOptions: unknown, authData: unknown, seconds?: number, reconnecting?: boolean, ...rest: unknown[]) => Promise<boolean>;

/** What the room needs from the process that runs it. */
export interface RoomServices {
  startLog(header: ReturnType<typeof makeHeader>, info: { pool: string; seats: SeatRecord[] }): GameLogWriter;
  /** The clock for deadlines and the log's times (epoch ms); Date.now unless a test fixes it. */
  now?(): number;
  /** The studies' side of their games (server/study/studyGames.ts); none without studies. */
  studies?: StudyGameHooks;
  /** The server's metrics (served at /metrics); none in most tests. */
  metrics?: GameMetrics;
  /** Starts the agent a player asks for as its partner (botFollower, botLeader); the built-in scripted ones by default. */
  seatAgents?: SeatAgentStarter;
}

/** What a study's game tells the study, and asks of it. A hook that throws is logged; the game goes on. */
export interface StudyGameHooks {
  /** The turn seconds the study sets (time.leaderTurnSeconds, followerTurnSeconds), if any. */
  turnSeconds(studyId: string): { leader?: number; follower?: number };
  /** Whether the worker may still take its seat of `role`: at the play step (not done, blocked or screened out), in that role. */
  seatVerdict(studyId: string, workerId: string, role: Role): Awaitable<SeatVerdict>;
  /** The worker left the game it waited in, before it started. */
  stoppedWaiting(studyId: string, workerId: string): Awaitable<void>;
  gameStarted(studyId: string, gameId: string, seats: readonly SeatRecord[]): Awaitable<void>;
  /** `leaver` is the role whose leaving ended the game ('abandoned'), or null. */
  gameEnded(studyId: string, gameId: string, seats: readonly SeatRecord[], end: { reason: EndReason; score: number; leaver: Role | null }): Awaitable<void>;
}

/**
 * The study a join is for: set only by the study API (server/study/studyGames.ts), which calls the
 * matchmaker itself after checking the worker. A join from a client never has one (onAuth refuses it).
 */
export const STUDY_OPTION = 'study';

/** A private game admits its creator (who asked for a new game) and then only its code; quick play, no code. */
function listingAdmits(listing: SeatListing, asked: JoinOptions): boolean {
  if (asked.private || agentSeatAsked(asked)) return listing.leaderOpen && listing.followerOpen;
  return asked.code === (listing.code || undefined);
}

/** A game room's listing as GameRoom.publishListing wrote it, with its room id. */
function listingOf(room: { roomId: string; metadata?: unknown } | undefined): (SeatListing & { roomId: string }) | undefined {
  const listing = room?.metadata as Partial<SeatListing> | undefined;
  if (typeof listing?.code !== 'string' || typeof listing.phase !== 'string' || !Array.isArray(listing.workers)) return undefined;
  return { ...(listing as SeatListing), roomId: room!.roomId };
}

export function studyOf(options: unknown): string {
  const study = (options as Record<string, unknown> | null | undefined)?.[STUDY_OPTION];
  return typeof study === 'string' ? study : '';
}

export const roomSettingsSchema = z.object({
  /** Override the config's turn seconds (`serve --leader-seconds`, tests). */
  leaderTurnSeconds: z.number().positive().max(3600).optional(),
  followerTurnSeconds: z.number().positive().max(3600).optional(),
  /** How long a dropped player's seat is kept. */
  reconnectSeconds: z.number().min(0).max(3600).default(30),
  /** Milliseconds between an agent's actions (botFollower, botLeader), so that a human partner can follow them. */
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

/** A seat the matchmaker has reserved for a player who has not connected yet. */
interface Claim {
  readonly role: Role;
  readonly options: JoinOptions;
  readonly expiry: Delayed;
}

interface Seat {
  readonly role: Role;
  readonly record: SeatRecord;
  client: Client | null;
  connected: boolean;
  /** A dropped player's window to come back in (allowReconnection), while it is open. */
  reconnection: Deferred<Client> | null;
  readonly feed: ViewFeed;
}

type Phase = 'waiting' | 'playing' | 'ended';

const partnerOf = (role: Role): Role => (role === 'leader' ? 'follower' : 'leader');

/** Why a waiting player is sent away when the server drains (the browser shows it as the reason). */
export const SERVER_DRAINING_MESSAGE = 'the server is restarting; join again in a minute';

export class GameRoom extends Room implements LiveRoom {
  maxClients = 2;
  seatReservationTimeout = SEAT_RESERVATION_SECONDS;

  private services!: RoomServices;
  private now: () => number = Date.now;
  private pool = 'default';
  /** The private game's code ('' for quick play). */
  private code = '';
  /** The study whose game this is ('' for none): only its workers, seated by the study API, join. */
  private studyId = '';
  /** The role whose leaving ended the game. */
  private leaver: Role | null = null;
  /** Reserved seats by session id, until their players connect. */
  private readonly claims = new Map<string, Claim>();
  private settings!: z.output<typeof roomSettingsSchema>;
  private phase: Phase = 'waiting';
  private endReason = '';
  private readonly seats = new Map<Role, Seat>();
  private recorder: GameRecorder | null = null;
  private writer: GameLogWriter | null = null;
  private startedAt = 0;
  private clockOfTurns!: TurnClock;
  private agentSeat: AgentSeat | null = null;
  private queueTimer: Delayed | null = null;
  /** The last `queue` message sent, so that only changes are sent. */
  private queueSent: QueueMessage | null = null;

  /** The message handlers: each message type's schema is checked before its handler runs. */
  private readonly handlers: { [T in ClientMessageType]: (seat: Seat, message: z.output<(typeof clientMessageSchemas)[T]>) => void } = {
    action: (seat, action) => this.act(seat, action),
  };

  /**
   * Runs when the matchmaker is asked (the HTTP request), before it picks a room: bad options, a
   * code that no waiting game has, a seat that game no longer has, and a worker who already waits
   * for a partner are refused there, each with its reason.
   */
  static async onAuth(_token: string | undefined, options: unknown, context?: AuthContext): Promise<true> {
    if (studyOf(options) !== '') throw new ServerError(403, "a study's games are joined from the study's pages");
    const asked = parseJoinOptions(options);
    // A join by room id names the room in the request's path (context.req is that request).
    const byId = /\/matchmake\/joinById\/([^/?]+)/.exec(String(context?.req?.url ?? ''))?.[1];
    // Quick play needs no look at the listings (with Redis, reading them all is the dear part).
    if (byId === undefined && asked.code === undefined && asked.workerId === undefined) return true;
    const named = byId === undefined ? undefined : listingOf(await matchMaker.getRoomById(byId));
    if (named?.phase === 'waiting' && !listingAdmits(named, asked)) throw new ServerError(404, NO_GAME_WITH_CODE);
    if (asked.code !== undefined) {
      const game = (await GameRoom.listings({ code: asked.code })).find((listing) => listing.phase === 'waiting');
      if (!game) throw new ServerError(404, NO_GAME_WITH_CODE);
      if (asked.role !== 'any' && !game[`${asked.role}Open`]) throw new ServerError(409, `the ${asked.role} seat of this game is taken`);
    }
    const workerId = asked.workerId;
    if (workerId !== undefined && (await GameRoom.listings()).some((listing) => listing.phase === 'waiting' && listing.workers.includes(workerId))) {
      throw new ServerError(409, `worker ${workerId} already has a seat in a game waiting for a partner`);
    }
    return true;
  }

  /**
   * Every game room's listing, whichever process it lives in (with several processes the listings
   * are shared through Redis): the checks before a join read these, never a process's own rooms.
   */
  private static async listings(conditions: Partial<SeatListing> = {}): Promise<(SeatListing & { roomId: string })[]> {
    const listed = await matchMaker.query({ name: ROOM_NAME, ...conditions });
    return listed.flatMap((room) => {
      const listing = listingOf(room);
      return listing ? [listing] : [];
    });
  }

  /**
   * Has every game waiting with a study's worker check the worker's seat again (recheckWorker),
   * on whichever process it runs: its record changed. Answers whether the worker was sent away.
   */
  static async recheckWorkerSeats(studyId: string, workerId: string): Promise<boolean> {
    const rooms = (await GameRoom.listings()).filter((listing) => listing.study === studyId && listing.phase === 'waiting' && listing.workers.includes(workerId));
    return (await Promise.all(rooms.map((room) => matchMaker.remoteRoomCall<GameRoom>(room.roomId, 'recheckWorker', [workerId])))).some(Boolean);
  }

  /** This process's game rooms: a server that stops ends their games itself, whatever Redis does. */
  static readonly inThisProcess = new Set<GameRoom>();

  /** Whether a study's worker holds (or is about to take) a seat in a game that has not ended. */
  static async seatsWorker(studyId: string, workerId: string): Promise<boolean> {
    return (await GameRoom.listings()).some((listing) => listing.study === studyId && listing.phase !== 'ended' && listing.workers.includes(workerId));
  }

  onCreate(options: GameRoomOptions): void {
    const asked = parseJoinOptions(options);
    // A join by code that found no game must not make one: a mistyped code would wait forever.
    if (asked.code !== undefined) throw new ServerError(404, NO_GAME_WITH_CODE);
    this.services = options.services;
    this.now = options.services.now ?? Date.now;
    this.settings = roomSettingsSchema.parse(options.settings ?? {});
    this.pool = asked.pool;
    this.services.metrics?.track(this);
    GameRoom.inThisProcess.add(this);
    this.code = asked.private ? drawPrivateCode() : '';
    this.studyId = studyOf(options);
    this.setPatchRate(this.settings.patchRateMs);
    this.clockOfTurns = new TurnClock(this.clock, this.now, (role) => this.apply({ type: 'timeout', actor: 'server', role }));
    this.claimSeatsOnReservation();
    this.publishListing();
    // A quick-play game is made under its pool's lock, given back once its first seat is claimed.
    if (this.code === '' && !asked.private && !agentSeatAsked(asked)) this.creationLock = creationLockKey(this.pool, this.studyId);
    for (const type of Object.keys(clientMessageSchemas) as ClientMessageType[]) {
      this.onMessage(type, (client, message) => this.receive(client, type, message));
    }
    this.onMessage('*', (client, type) => this.refuse(client, String(type), 'UNKNOWN_MESSAGE', `there is no message type ${JSON.stringify(type)}`));
  }

  /**
   * Colyseus 0.18 reserves a seat when the matchmaker answers, before the player connects, and has
   * no hook there. The seat's role is claimed in that same step and the listing updated at once,
   * so that the next reservation already sees the seat taken: a refused reservation makes the
   * matchmaker look for another room (or make one) instead of seating two leaders together.
   */
  private claimSeatsOnReservation(): void {
    const room = this as unknown as { _reserveSeat: ReserveSeat };
    const reserve = room._reserveSeat.bind(this);
    room._reserveSeat = async (sessionId, joinOptions, authData, seconds, reconnecting, ...rest) => {
      // allowReconnection keeps a dropped player's seat through the same method.
      if (reconnecting) return reserve(sessionId, joinOptions, authData, seconds, reconnecting, ...rest);
      try {
        if (!this.claim(sessionId, joinOptions)) return false;
        const reserved = await reserve(sessionId, joinOptions, authData, seconds, reconnecting, ...rest);
        if (!reserved) this.release(sessionId);
        return reserved;
      } finally {
        await this.releaseCreationLock();
      }
    };
  }

  /** The room was made (under its pool's lock) and is listed with its first seat claimed: the next maker may look. */
  private async releaseCreationLock(): Promise<void> {
    const key = this.creationLock;
    if (key === null) return;
    this.creationLock = null;
    await this.listed;
    await releaseCreationLock(key);
  }

  /** Claims a seat for the options if this game has one for them: the seat, the code and the worker id are checked here, on every way of joining. */
  private claim(sessionId: string, options: unknown): boolean {
    const parsed = joinOptionsSchema.safeParse(options ?? {});
    if (!parsed.success || this.phase !== 'waiting') return false;
    const asked = parsed.data;
    if (!this.admits(asked) || studyOf(options) !== this.studyId) return false;
    if (asked.workerId !== undefined && this.holdsWorker(asked.workerId)) return false;
    const role = this.freeRole(playerSeatAsked(asked));
    if (!role) return false;
    const expiry = this.clock.setTimeout(() => this.release(sessionId), this.seatReservationTimeout * 1000);
    this.claims.set(sessionId, { role, options: asked, expiry });
    this.publishListing();
    return true;
  }

  private admits(asked: JoinOptions): boolean {
    return listingAdmits(this.listing(), asked);
  }

  private release(sessionId: string): void {
    const claim = this.claims.get(sessionId);
    if (!claim) return;
    claim.expiry.clear();
    this.claims.delete(sessionId);
    if (this.phase === 'waiting') this.publishListing();
  }

  /** The player takes the seat claimed when it was reserved. */
  async onJoin(client: Client): Promise<void> {
    const claim = this.claims.get(client.sessionId);
    // Only a player who connects just as its reservation runs out can be without one.
    if (!claim) throw new ServerError(409, 'the seat reservation expired: join again');
    const { role, options } = claim;
    // A study's workers (the joining one, and those waiting here) play only while at the play
    // step, in their seat's role; the study's store is asked first, and the claim holds the seat meanwhile.
    const waiting = [...this.seats.values()].filter((seat) => seat.record.workerId !== undefined);
    const verdicts = this.studyId
      ? await Promise.all([this.studyVerdict(options.workerId, role), ...waiting.map((seat) => this.studyVerdict(seat.record.workerId, seat.role))])
      : null;
    const agent = await startAskedAgent(this.services.seatAgents, agentSeatAsked(options), `game room ${this.roomId}`);
    if (this.claims.get(client.sessionId) !== claim) throw droppingAgent(agent, new ServerError(409, 'the seat reservation expired: join again'));
    this.release(client.sessionId);
    if (verdicts?.[0] === 'ended') throw new ServerError(403, STUDY_ENDED_MESSAGE);
    if (verdicts?.[0] === 'roleChanged') throw new ServerError(409, ROLE_CHANGED_MESSAGE);
    const record: SeatRecord = {
      role,
      playerId: randomUUID(),
      kind: 'human',
      ...(options.workerId && { workerId: options.workerId }),
      ...(options.assignmentId && { assignmentId: options.assignmentId }),
      ...(options.hitId && { hitId: options.hitId }),
    };
    this.seats.set(role, { role, client, record, connected: true, reconnection: null, feed: new ViewFeed(role) });
    const seat: SeatMessage = { role, playerId: record.playerId, ...(this.code && { code: this.code }) };
    client.send('seat', seat);
    if (agent) this.seatAgent(agent);
    if (verdicts) this.sendAway(waiting.map((seat, i) => [seat, verdicts[i + 1]]));
    this.publishListing();
    if (this.seats.size === ROLES.length) this.startGame(client);
    else this.watchQueue();
  }

  /** Whether a study's worker may take its seat of `role` (at the play step, in that role); anyone may, outside a study. */
  private async studyVerdict(workerId: string | undefined, role: Role): Promise<SeatVerdict> {
    const hooks = this.services.studies;
    if (!this.studyId || !hooks || workerId === undefined) return 'plays';
    try {
      return await hooks.seatVerdict(this.studyId, workerId, role);
    } catch (error) {
      logger.error(`game room ${this.roomId}: study ${this.studyId} could not look up worker ${workerId}:`, error);
      return 'ended';
    }
  }

  /**
   * Workers who waited here but may no longer take their seat leave before a game could start
   * with them: one whose session has ended (it took the noPartner code, or was blocked), and one
   * whose role changed (it was promoted). The seat is free at once (a dropped player's window to
   * come back closes), the wait ends, and the pages, told why, show the worker's step.
   */
  private sendAway(verdicts: readonly (readonly [Seat, SeatVerdict])[]): void {
    for (const [seat, verdict] of verdicts) {
      if (verdict === 'plays' || this.seats.get(seat.role) !== seat) continue; // gone meanwhile
      this.seats.delete(seat.role);
      seat.reconnection?.reject(new ServerError(CloseCode.NORMAL_CLOSURE, verdict));
      if (seat.connected && verdict === 'ended') seat.client?.leave(CLOSE_STUDY_ENDED, STUDY_ENDED_MESSAGE);
      else if (seat.connected) seat.client?.leave(CLOSE_ROLE_CHANGED, ROLE_CHANGED_MESSAGE);
      const workerId = seat.record.workerId;
      if (workerId !== undefined) this.tellStudy((hooks) => hooks.stoppedWaiting(this.studyId, workerId));
    }
  }

  /**
   * The study's record of a worker waiting here changed (the researcher promoted or blocked it):
   * its seat is checked again at once, and the worker sent away if it may no longer take it.
   * Answers whether it was. Called through the matchmaker (remoteRoomCall) by the process that
   * made the change, wherever this room runs.
   */
  async recheckWorker(workerId: string): Promise<boolean> {
    const seat = [...this.seats.values()].find((held) => held.record.workerId === workerId);
    if (!seat || this.phase !== 'waiting') return false;
    const verdict = await this.studyVerdict(workerId, seat.role);
    if (this.phase !== 'waiting' || verdict === 'plays') return false;
    this.sendAway([[seat, verdict]]);
    this.publishListing();
    await this.listed;
    return true;
  }

  /** A dropped player keeps its seat for the reconnection window; one the server expelled leaves at once (onLeave). */
  async onDrop(client: Client): Promise<void> {
    const seat = this.seatOf(client);
    if (!seat || this.phase === 'ended' || expulsionOf(client.ref)) return;
    seat.connected = false;
    // The turn clock runs on (docs/protocol.md, P-90): a partner waits at most the turn's time.
    this.notifyPartner(seat.role, 'partnerDisconnected', { seconds: this.settings.reconnectSeconds });
    this.sendViews();
    // A window that closes unused (or is closed by sendAway) rejects: Colyseus then calls onLeave, which abandons the game.
    seat.reconnection = this.allowReconnection(client, this.settings.reconnectSeconds);
    await seat.reconnection.catch(() => undefined);
  }

  /**
   * Colyseus hands a seat to whoever presents its reconnection token, closing the connection that
   * holds it; a token copied from a player who is still connected must not take the seat over.
   */
  checkReconnectionToken(reconnectionToken: string): string {
    if (this.clients.some((client) => client.reconnectionToken === reconnectionToken)) {
      throw new ServerError(409, "this seat's player is still connected");
    }
    return super.checkReconnectionToken(reconnectionToken);
  }

  onReconnect(client: Client): void {
    const seat = this.seatOf(client);
    if (!seat) return;
    // The returning connection is a new Client object with the same session id.
    seat.client = client;
    seat.connected = true;
    seat.reconnection = null;
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
      this.leaver = seat.role;
      this.finish('abandoned');
    } else if (this.phase === 'waiting') {
      this.seats.delete(seat.role);
      this.publishListing();
      const workerId = seat.record.workerId;
      if (workerId !== undefined) this.tellStudy((hooks) => hooks.stoppedWaiting(this.studyId, workerId));
    }
  }

  /** Seats the agent, which plays its turns from the server through a person's checks, seeing the seat's own view (botSeat.ts). */
  private seatAgent(seated: SeatedAgent): void {
    const feed = new ViewFeed(seated.role);
    this.agentSeat = new AgentSeat(seated, {
      clock: this.clock,
      stepMs: this.settings.botStepMs,
      view: () => (this.phase === 'playing' && this.recorder ? feed.view(this.recorder.state) : null),
      events: () => this.recorder!.events,
      play: (action) => this.tryAction(seated.role, action),
      tellPartner: (message) => this.notifyPartner(seated.role, 'followerGaveUp', { message }),
      log: (line) => logger.warn(`game room ${this.roomId}: ${line}`),
    });
    this.seats.set(seated.role, { role: seated.role, client: null, record: agentSeatRecord(seated), connected: true, reconnection: null, feed });
  }

  /**
   * A fault in any handler or timer ends at most this game, never the process: the game is
   * closed as interrupted (its log keeps everything before) and both players are told.
   */
  onUncaughtException(error: RoomException, methodName: RoomMethodName): void {
    // onAuth's ServerErrors, and onJoin's, are answers (the join is refused), not faults.
    if (methodName === 'onAuth' || error.cause instanceof ServerError) return;
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
    GameRoom.inThisProcess.delete(this);
    this.services?.metrics?.untrack(this);
  }

  /**
   * The server stops taking games (it drains before it stops): a room still waiting for a partner
   * closes, telling its player to come back, and no one new joins a game in play. Answers whether
   * a game is being played here. Called by the server for each of its rooms (inThisProcess).
   */
  drain(): boolean {
    void this.lock();
    if (this.phase === 'waiting') {
      for (const seat of this.seats.values()) seat.client?.leave(CloseCode.WITH_ERROR, SERVER_DRAINING_MESSAGE);
      setImmediate(() => void this.disconnect(CloseCode.WITH_ERROR));
    }
    return this.phase === 'playing';
  }

  /** For the metrics: the game is being played. */
  get playing(): boolean {
    return this.phase === 'playing';
  }

  /** For the metrics: the seated players connected now. */
  get playersConnected(): number {
    return [...this.seats.values()].filter((seat) => seat.client && seat.connected).length;
  }

  /** The seats neither taken nor claimed (a claim for a game with an agent takes both). */
  private openRoles(): Role[] {
    const claimed = [...this.claims.values()].flatMap((claim): Role[] => (agentSeatAsked(claim.options) ? [...ROLES] : [claim.role]));
    return ROLES.filter((role) => !this.seats.has(role) && !claimed.includes(role));
  }

  private holdsWorker(workerId: string): boolean {
    return [...this.seats.values()].some((seat) => seat.record.workerId === workerId) || [...this.claims.values()].some((claim) => claim.options.workerId === workerId);
  }

  /** The quick-play creation lock this room holds until its first seat is claimed (rooms/creationLock.ts). */
  private creationLock: string | null = null;
  /** Settles once the latest listing is stored (in Redis, with several processes). */
  private listed: Promise<unknown> = Promise.resolve();

  /** Publishes the room's listing (setMetadata replaces, so all of it). */
  private publishListing(): void {
    // The listing object itself changes now; only its persisting is asynchronous.
    this.listed = this.setMetadata(this.listing()).catch(() => undefined);
  }

  private listing(): SeatListing {
    const open = this.openRoles();
    const workers = [...this.seats.values()].map((seat) => seat.record.workerId).concat([...this.claims.values()].map((claim) => claim.options.workerId));
    return {
      pool: this.pool,
      code: this.code,
      study: this.studyId,
      leaderOpen: open.includes('leader'),
      followerOpen: open.includes('follower'),
      phase: this.phase,
      workers: workers.filter((workerId): workerId is string => workerId !== undefined),
    };
  }

  /** Tells the waiting player its place in the matchmaking queue now, then whenever it changes. */
  private watchQueue(): void {
    this.queueSent = null;
    this.queueTimer ??= this.clock.setInterval(() => void this.sendQueue(), QUEUE_POLL_MS);
    void this.sendQueue();
  }

  private async sendQueue(): Promise<void> {
    // A game with a code queues only with games of that code: asked by code, the listings are
    // not all read (with Redis, reading them all is the dear part, and this runs every second).
    const rooms = await matchMaker.query({ name: this.roomName, ...(this.code && { code: this.code }) });
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
    const open = this.openRoles();
    if (wanted !== 'any') return open.includes(wanted) ? wanted : null;
    return open.length === 0 ? null : open[randomInt(open.length)];
  }

  private seatOf(client: Client): Seat | undefined {
    return [...this.seats.values()].find((seat) => seat.client?.sessionId === client.sessionId);
  }

  /** Starts the game `joining` completes. */
  private startGame(joining: Client): void {
    this.stopWatchingQueue();
    void this.lock();
    // The map and the draw of poses and cards use independent seeds unless a study fixes one: the
    // terrain a follower sees then says nothing about the cards or the leader it does not see.
    const seed = this.settings.seed ?? randomInt(0, MAX_SEED);
    const base = this.settings.config ?? makeConfig();
    const study = this.studyId ? this.services.studies?.turnSeconds(this.studyId) : undefined;
    const config = makeConfig({
      ...base,
      turnSeconds: {
        leader: study?.leader ?? this.settings.leaderTurnSeconds ?? base.turnSeconds.leader,
        follower: study?.follower ?? this.settings.followerTurnSeconds ?? base.turnSeconds.follower,
      },
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
      meta: { source: 'server', pool: this.pool, ...(this.studyId && { study: this.studyId }), players: seats, ...this.agentSeat?.headerMeta() },
    });
    try {
      this.writer = this.services.startLog(header, { pool: this.pool, seats });
    } catch (error) {
      this.cancelStart(joining, error);
    }
    this.recorder = new GameRecorder(header, (line) => this.writeLog(line));
    this.tellStudy((hooks) => hooks.gameStarted(this.studyId, gameId, seats));
    this.agentSeat?.start(gameId);
    this.startedAt = this.now();
    this.phase = 'playing';
    this.publishListing();
    for (const seat of this.seats.values()) seat.feed.witness(this.recorder.state);
    this.beginTurn();
    this.sendViews();
  }

  /**
   * The game's log could not be created: the joining player's join is refused, the waiting
   * player is sent away with the same words, and the room goes. The cause (with its paths) is
   * for the server's operator only.
   */
  private cancelStart(joining: Client, cause: unknown): never {
    logger.error(`game room ${this.roomId}: the game's log could not be created:`, cause);
    this.phase = 'ended';
    for (const seat of this.seats.values()) {
      if (seat.client && seat.client !== joining) seat.client.leave(CloseCode.WITH_ERROR, NOT_STARTED_MESSAGE);
    }
    // After onJoin has refused the joining player; disconnect() also ends a dropped player's wait to reconnect.
    setImmediate(() => void this.disconnect(CloseCode.WITH_ERROR));
    throw new ServerError(503, NOT_STARTED_MESSAGE);
  }

  private writeLog(line: LogLine): void {
    if (line.kind === 'header') return; // startLog wrote it
    if (line.kind === 'end') return this.writer!.end(line); // closes the game as far as storage allows, without throwing
    try {
      timed(this.services.metrics?.logWriteSeconds, () => this.writer!.append(line));
    } catch (error) {
      throw new LogNotWritten(error);
    }
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
    const refused = timed(this.services.metrics?.actionSeconds, () => this.tryAction(seat.role, requested));
    if (refused) this.refuse(seat.client!, ACTION_MESSAGE, refused.code, refused.message);
  }

  /** Checks `role`'s action against the legal actions and applies it; the refusal, or null. */
  private tryAction(role: Role, requested: PlayerAction): ActionError | null {
    const action: PlayerAction = requested.type === 'instruction' ? { type: 'instruction', text: sanitizeInstruction(requested.text) } : requested;
    const refused = checkPlayerAction(this.recorder!.state, role, action);
    if (!refused) this.apply(byActor(role, action));
    return refused;
  }

  /**
   * Applies an action: logged first, then each player is sent what it may know of the result. An
   * action the log cannot take ends the game, which is all a storage failure may end.
   */
  private apply(action: Action): void {
    let result;
    try {
      result = this.recorder!.apply(action, this.now() - this.startedAt);
    } catch (error) {
      if (!(error instanceof LogNotWritten)) throw error;
      logger.error(`game room ${this.roomId}: the game ends because its log could not be written:`, error.cause);
      return this.finish('storage-failed');
    }
    if (!result.ok) return;
    this.services.metrics?.actions.inc({ actor: action.actor, type: action.type });
    for (const seat of this.seats.values()) seat.feed.witness(result.state);
    const ended = result.outcome.turnEnded;
    if (ended?.followerSkipped) this.notify('follower', 'turnSkipped');
    if (ended?.reason === 'timeout') this.broadcast('notice', { kind: 'timeout', role: action.type === 'timeout' ? action.role : action.actor });
    if (result.state.gameOver) return this.finish('turns-exhausted');
    if (ended) this.beginTurn();
    this.sendViews();
  }

  /** A turn begins: the clock restarts with the role's seconds, and an agent in that seat plays its turn. */
  private beginTurn(): void {
    const state = this.recorder!.state;
    const role = state.turn.role;
    this.clockOfTurns.start(role, state.config.turnSeconds[role]);
    if (this.agentSeat?.role === role) this.agentSeat.takeTurn();
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
    void this.agentSeat?.stop(); // also for a game that never started (its program is stopped)
    if (this.phase === 'ended') return;
    this.clockOfTurns?.stop();
    this.stopWatchingQueue();
    const wasPlaying = this.phase === 'playing';
    this.phase = 'ended';
    this.publishListing();
    if (!wasPlaying || !this.recorder) return;
    const end = this.recorder.end(this.now() - this.startedAt, reason);
    this.endReason = end.reason;
    this.services.metrics?.gamesFinished.inc({ reason: end.reason });
    const seats = [...this.seats.values()].map((seat) => seat.record);
    this.tellStudy((hooks) => hooks.gameEnded(this.studyId, this.recorder!.header.gameId, seats, { reason: end.reason, score: end.score, leaver: this.leaver }));
    this.sendViews();
    this.broadcast('notice', { kind: 'gameOver', reason: end.reason, score: end.score, ...(end.reason === 'storage-failed' && { message: NOT_SAVED_MESSAGE }) });
  }

  /** A study's game tells its study; the study's store failing is logged and the game goes on. */
  private tellStudy(tell: (hooks: StudyGameHooks) => Awaitable<void>): void {
    const hooks = this.services.studies;
    if (!this.studyId || !hooks) return;
    const failed = (error: unknown) => logger.error(`game room ${this.roomId}: study ${this.studyId} could not record the game:`, error);
    try {
      // Called at once (a store on this machine records it before the room goes on); a database's answer is not waited for.
      void Promise.resolve(tell(hooks)).catch(failed);
    } catch (error) {
      failed(error);
    }
  }

  private refuse(client: Client, refused: string, code: ErrorCode, message: string): void {
    this.services.metrics?.refusals.inc({ code });
    client.send('error', { code, message, refused });
  }

  private notify(role: Role, kind: string, details?: object): void {
    this.seats.get(role)?.client?.send('notice', { kind, ...details });
  }

  private notifyPartner(role: Role, kind: string, details?: object): void {
    this.notify(partnerOf(role), kind, details);
  }
}
