/**
 * The `cerealbar` room: one game between a leader and a follower. It only routes: a table of
 * message handlers validates each message at the edge (the seat, the phase, zod) and hands it to
 * the game session (gameSession.ts), which checks it against the engine's legal actions, logs it
 * and sends each player its view. Each other job is a module of its own, which the room wires to
 * Colyseus's lifecycle: the seats and their claims (seats.ts), the listing and the checks before a
 * join (listing.ts), a study's seats (studySeats.ts) and the queue messages (queueWatch.ts).
 */
import { CloseCode, logger, matchMaker, Room, ServerError, type AuthContext, type Client, type RoomException, type RoomMethodName } from '@colyseus/core';
import type { z } from 'zod';
import type { PlayerAction } from '../../shared/engine/actions';
import { ROLES } from '../../shared/engine/state';
import { ACTION_MESSAGE, agentSeatAsked, clientMessageSchemas, NO_GAME_WITH_CODE, type ClientMessageType, type ErrorCode, type SeatMessage } from '../../shared/protocol/messages';
import { matchmakingRequestOf } from '../http/matchmakingClient';
import { timed, type LiveRoom } from '../metrics';
import { AgentGames, agentJoinOf, type AgentAdmission } from './agentGames';
import { expulsionOf } from '../transport';
import { creationLockKey } from './creationLock';
import { GameSession } from './gameSession';
import { checkJoin, drawPrivateCode, parseJoinOptions, RoomListing, roomsWaitingWith, seatsWorker, studyOf, studyRoomsApartFrom } from './listing';
import { QueueWatch } from './queueWatch';
import { ownFields, roomSettingsSchema, type GameRoomOptions, type ParsedRoomSettings, type RoomServices } from './roomOptions';
import { droppingAgent, startAskedAgent } from './seatAgents';
import { claimSeatsOnReservation, SEAT_RESERVATION_SECONDS, Seats, type Seat } from './seats';
import { addressOptionOf, armOf, ROLE_CHANGED_MESSAGE, STUDY_ENDED_MESSAGE, StudySeats } from './studySeats';

export { NOT_SAVED_MESSAGE, NOT_STARTED_MESSAGE } from './gameSession';
export { parseJoinOptions, PRIVATE_CODE_LENGTH, STUDY_OPTION, studyOf } from './listing';
export type { GameRoomOptions, RoomServices, RoomSettings } from './roomOptions';
export { SEAT_RESERVATION_SECONDS } from './seats';
export { ADDRESS_OPTION, ARM_OPTION, ROLE_CHANGED_MESSAGE, STUDY_ENDED_MESSAGE, type DrawnArm, type StudyGameHooks, type StudyHeaderMeta } from './studySeats';

/** Why a waiting player is sent away when the server drains (the browser shows it as the reason). */
export const SERVER_DRAINING_MESSAGE = 'the server is restarting; join again in a minute';
/** Told to a player waiting for a partner when a fault ends its game before it began. */
export const WAIT_FAULT_MESSAGE = 'something went wrong on the server while you waited; join again to find a partner';

export class GameRoom extends Room implements LiveRoom {
  maxClients = 2;
  seatReservationTimeout = SEAT_RESERVATION_SECONDS;

  private services!: RoomServices;
  private settings!: ParsedRoomSettings;
  private seats!: Seats;
  private listing!: RoomListing;
  private study!: StudySeats;
  private queue!: QueueWatch;
  private session!: GameSession;

  /** The message handlers: each message type's schema is checked before its handler runs. */
  private readonly handlers: { [T in ClientMessageType]: (seat: Seat, message: z.output<(typeof clientMessageSchemas)[T]>) => void } = {
    action: (seat, action) => this.act(seat, action),
  };

  /**
   * The limits on games with the server's agent partner (agentGames.ts), which the server sets as
   * it starts: Colyseus's matchmaker, which calls onAuth, is one per process too.
   */
  static agentGames = new AgentGames();

  /**
   * Runs when the matchmaker is asked, before it picks a room: refuses a join with its reason, and
   * admits one asking for an agent partner within the limits (its admission goes to the seat
   * reservation as the auth data).
   */
  static async onAuth(token: string | undefined, options: unknown, context?: AuthContext): Promise<true | AgentAdmission> {
    await checkJoin(token, options, context);
    return (await GameRoom.agentGames.admit(parseJoinOptions(options), matchmakingRequestOf(context))) ?? true;
  }

  /**
   * Has every game waiting with a study's worker check the worker's seat again (recheckWorker),
   * on whichever process it runs: its record changed. Answers whether the worker was sent away.
   */
  static async recheckWorkerSeats(studyId: string, workerId: string): Promise<boolean> {
    const rooms = await roomsWaitingWith(studyId, workerId);
    return (await Promise.all(rooms.map((roomId) => matchMaker.remoteRoomCall<GameRoom>(roomId, 'recheckWorker', [workerId])))).some(Boolean);
  }

  /** This process's game rooms: a server that stops ends their games itself, whatever Redis does. */
  static readonly inThisProcess = new Set<GameRoom>();

  /** Whether a study's worker holds (or is about to take) a seat in a game that has not ended. */
  static readonly seatsWorker = seatsWorker;

  /** A study's games waiting for a player that no one from an address is in. */
  static readonly studyRoomsApartFrom = studyRoomsApartFrom;

  onCreate(created: GameRoomOptions): void {
    // Colyseus made these by merging the join's options into the room type's: only their own
    // fields are read (P-124), so a prototype that merge could set never becomes the game's state.
    const options = ownFields(created);
    const asked = parseJoinOptions(options);
    // A join by code that found no game must not make one: a mistyped code would wait forever.
    if (asked.code !== undefined) throw new ServerError(404, NO_GAME_WITH_CODE);
    this.services = options.services;
    this.settings = roomSettingsSchema.parse(options.settings ?? {});
    this.services.metrics?.track(this);
    GameRoom.inThisProcess.add(this);
    const code = asked.private ? drawPrivateCode() : '';
    const study = studyOf(options);
    this.setPatchRate(this.settings.patchRateMs);
    const waiting = () => this.session.phase === 'waiting';
    this.seats = new Seats(
      this.clock,
      () => {
        if (waiting()) this.listing.publish();
      },
      // The study learns once the listing no longer holds the worker, so that it can tell whether the worker waits elsewhere.
      (claim) => void this.listing.stored().then(() => this.study.reservationLapsed(claim.options.workerId, claim.reservedAt)),
    );
    this.study = new StudySeats(study, this.services.studies, this.seats, this.roomId, armOf(options));
    this.queue = new QueueWatch(this, code, waiting);
    this.session = new GameSession({
      room: this,
      services: this.services,
      settings: this.settings,
      now: this.services.now ?? Date.now,
      pool: asked.pool,
      seats: this.seats,
      study: this.study,
      phaseChanged: () => {
        if (!waiting()) this.queue.stop();
        this.listing.publish();
      },
    });
    // A quick-play game is made under its pool's lock, given back once its first seat is claimed.
    const creationLock = code === '' && !asked.private && !agentSeatAsked(asked) ? creationLockKey(asked.pool, study) : null;
    this.listing = new RoomListing({ pool: asked.pool, code, study }, this.seats, () => this.session.phase, (listing) => this.setMetadata(listing), creationLock);
    claimSeatsOnReservation(this, {
      claim: (sessionId, joinOptions, authData) => this.claim(sessionId, joinOptions, authData),
      release: (sessionId) => this.seats.release(sessionId),
      // The reservation is answered once its listing is stored: every check after the answer sees it (agentGames.ts).
      reserved: async () => {
        await this.listing.stored();
        await this.listing.releaseCreationLock();
      },
    });
    this.listing.publish();
    for (const type of Object.keys(clientMessageSchemas) as ClientMessageType[]) {
      this.onMessage(type, (client, message) => this.receive(client, type, message));
    }
    this.onMessage('*', (client, type) => this.refuse(client, String(type), 'UNKNOWN_MESSAGE', `there is no message type ${JSON.stringify(type)}`));
  }

  /** Claims a seat for the options if this game has one for them: the seat, the code and the worker id are checked here, on every way of joining. */
  private claim(sessionId: string, options: unknown, authData: unknown): boolean {
    if (this.session.phase !== 'waiting') return false;
    const asked = this.listing.admits(options);
    if (!asked || !this.seats.claim(sessionId, asked, this.seatReservationTimeout, addressOptionOf(options), agentJoinOf(authData))) return false;
    this.listing.publish();
    return true;
  }

  /** The player takes the seat claimed when it was reserved. */
  async onJoin(client: Client): Promise<void> {
    const claim = this.seats.claimOf(client.sessionId);
    // Only a player who connects just as its reservation runs out can be without one.
    if (!claim) throw new ServerError(409, 'the seat reservation expired: join again');
    const { role, options } = claim;
    // A study's workers (the joining one, and those waiting here) play only while at the play
    // step, in their seat's role; the study's store is asked first, and the claim holds the seat meanwhile.
    const verdicts = await this.study.verdictsOnJoin(options.workerId, role);
    const agent = await startAskedAgent(this.study.seatAgents(this.services.seatAgents), agentSeatAsked(options), `game room ${this.roomId}`);
    if (this.seats.claimOf(client.sessionId) !== claim) throw droppingAgent(agent, new ServerError(409, 'the seat reservation expired: join again'));
    this.seats.release(client.sessionId);
    if (verdicts?.joining === 'ended') throw new ServerError(403, STUDY_ENDED_MESSAGE);
    if (verdicts?.joining === 'roleChanged') throw new ServerError(409, ROLE_CHANGED_MESSAGE);
    const { record } = this.seats.take(client, claim);
    const { code } = this.listing.fixed;
    const seat: SeatMessage = { role, playerId: record.playerId, ...(code && { code }) };
    client.send('seat', seat);
    if (agent) this.session.seatAgent(agent);
    if (verdicts) this.study.sendAway(verdicts.waiting);
    this.listing.publish();
    if (this.seats.size < ROLES.length) return this.queue.watch();
    this.queue.stop();
    void this.lock();
    this.session.start(client);
  }

  /**
   * The study's record of a worker waiting here changed (the researcher promoted or blocked it):
   * answers whether it was sent away (studySeats.ts). Called through the matchmaker
   * (remoteRoomCall) by the process that made the change, wherever this room runs.
   */
  async recheckWorker(workerId: string): Promise<boolean> {
    if (!(await this.study.recheck(workerId, () => this.session.phase === 'waiting'))) return false;
    this.listing.publish();
    await this.listing.stored();
    return true;
  }

  /** A dropped player keeps its seat for the reconnection window; one the server expelled leaves at once (onLeave). */
  async onDrop(client: Client): Promise<void> {
    const seat = this.seats.of(client);
    if (!seat || this.session.phase === 'ended' || expulsionOf(client.ref)) return;
    // The turn clock runs on (docs/protocol.md, P-90): a partner waits at most the turn's time.
    this.seats.dropped(seat, this.settings.reconnectSeconds);
    this.session.sendViews();
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
    const seat = this.seats.of(client);
    if (!seat) return;
    this.seats.reconnected(seat, client);
    if (this.session.phase === 'waiting') this.queue.watch();
    this.session.sendViews();
  }

  /** A player gone for good (left, expelled, or did not come back in time) abandons the game. */
  onLeave(client: Client): void {
    const seat = this.seats.of(client);
    if (!seat) return;
    seat.client = null;
    seat.connected = false;
    if (this.session.phase === 'playing') {
      const expelled = expulsionOf(client.ref);
      this.seats.notifyPartner(seat.role, { kind: 'partnerLeft', ...(expelled && { reason: expelled.code, message: expelled.message }) });
      this.session.abandonedBy(seat.role);
    } else if (this.session.phase === 'waiting') {
      this.seats.vacate(seat);
      this.listing.publish();
      this.study.stoppedWaiting(seat);
    }
  }

  /** For the metrics: the game is being played. */
  get playing(): boolean {
    return this.session.phase === 'playing';
  }

  /** For the metrics: the seated players connected now. */
  get playersConnected(): number {
    return this.seats.connectedCount;
  }

  /**
   * A fault in any handler or timer ends at most this game, never the process: the game is
   * closed as interrupted (its log keeps everything before) and both players are told. A game
   * that had not started has no log: whoever waits in it is sent away, to join again.
   */
  onUncaughtException(error: RoomException, methodName: RoomMethodName): void {
    // onAuth's ServerErrors, and onJoin's, are answers (the join is refused), not faults.
    if (methodName === 'onAuth' || error.cause instanceof ServerError) return;
    // Through Colyseus's logger, which the server rate-limits when a client's frame caused the fault.
    logger.error(`game room ${this.roomId}: ${methodName} failed:`, error.cause ?? error);
    try {
      const waited = this.session?.phase === 'waiting';
      this.session?.finish('interrupted'); // none when onCreate failed
      if (waited) {
        for (const client of this.clients) client.leave(CloseCode.WITH_ERROR, WAIT_FAULT_MESSAGE);
        void this.disconnect(CloseCode.WITH_ERROR);
      }
    } catch (closing) {
      logger.error(`game room ${this.roomId}: could not close the game:`, closing);
    }
  }

  onBeforeShutdown(): void {
    this.session.finish('server-shutdown');
    void this.disconnect();
  }

  onDispose(): void {
    // Colyseus disposes a room whose only reservation ran out before the room's own timer said so.
    this.seats?.lapseAll();
    this.session?.finish('server-shutdown');
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
    if (this.session.phase === 'waiting') {
      for (const seat of this.seats.values()) seat.client?.leave(CloseCode.WITH_ERROR, SERVER_DRAINING_MESSAGE);
      setImmediate(() => void this.disconnect(CloseCode.WITH_ERROR));
    }
    return this.session.phase === 'playing';
  }

  /** Every message passes here: the seat, the phase and the message's schema are checked, then its handler runs. */
  private receive(client: Client, type: ClientMessageType, message: unknown): void {
    const seat = this.seats.of(client);
    if (!seat) return this.refuse(client, type, 'NOT_A_PLAYER', 'you have no seat in this game');
    if (this.session.phase === 'waiting') return this.refuse(client, type, 'GAME_NOT_STARTED', 'waiting for the other player');
    if (this.session.phase === 'ended') return this.refuse(client, type, 'GAME_ENDED', `the game is over (${this.session.endReason})`);
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
    const refused = timed(this.services.metrics?.actionSeconds, () => this.session.tryAction(seat.role, requested));
    if (refused) this.refuse(seat.client!, ACTION_MESSAGE, refused.code, refused.message);
  }

  private refuse(client: Client, refused: string, code: ErrorCode, message: string): void {
    this.services.metrics?.refusals.inc({ code });
    client.send('error', { code, message, refused });
  }
}
