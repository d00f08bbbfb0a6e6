/**
 * The game session of one room, from its start to its end: the engine's state (held by the
 * recorder, which logs every accepted action before anyone sees its effect), the turn clock, an
 * agent's seat, each seat's view (ViewFeed) and the notices an action gives the players. It
 * applies what the room routes to it, through the engine's checks; the rules live in shared/engine.
 */
import { randomInt } from 'node:crypto';
import { CloseCode, logger, ServerError, type Client, type Room } from '@colyseus/core';
import { byActor, sanitizeInstruction, type Action, type PlayerAction } from '../../shared/engine/actions';
import { makeConfig, profileConfig, type GameConfig } from '../../shared/engine/config';
import type { ActionError } from '../../shared/engine/errors';
import { checkPlayerAction } from '../../shared/engine/legal';
import { drawSetup, MAX_SEED, type Role } from '../../shared/engine/state';
import type { Outcome } from '../../shared/engine/transition';
import type { AgentSeatFact, EndReason, LogLine } from '../../shared/log/format';
import { GameRecorder, makeHeader } from '../../shared/log/recorder';
import { generateMap } from '../../shared/maps/generate';
import type { Notice } from '../../shared/protocol/messages';
import { timed } from '../metrics';
import type { GameLogWriter } from '../store/types';
import { AgentSeat, type SeatedAgent } from './botSeat';
import type { ParsedRoomSettings, RoomServices } from './roomOptions';
import { agentSeatRecord } from './seatAgents';
import type { Seat, Seats } from './seats';
import type { StudySeats } from './studySeats';
import { processStalls } from '../processStalls';
import { TurnClock } from './turnClock';
import { ViewFeed } from './viewFeed';

/** Told to both players when storage fails mid-game, with the end reason 'storage-failed'. */
export const NOT_SAVED_MESSAGE = 'this game could not be saved and has ended';
/** Told to both players when the game's log cannot be created: the game does not start. */
export const NOT_STARTED_MESSAGE = 'the server cannot save games right now, so this game did not start; please try again later';

/** The store could not take a log line: the action it records never happened. */
class LogNotWritten extends Error {
  constructor(cause: unknown) {
    super('the log could not be written', { cause });
  }
}

export type Phase = 'waiting' | 'playing' | 'ended';

/** A notice for one player, or for both. */
export interface Addressed {
  readonly to: Role | 'both';
  readonly notice: Notice;
}

/**
 * The notices an accepted action's outcome gives the players besides their views: the follower's
 * turn skipped (it had no instruction), a turn that ran out, and the leader's live feedback and
 * cancel, told to both at once (`afterStep`: the steps the follower had taken in its turn).
 */
export function outcomeNotices(action: Action, outcome: Outcome, config: GameConfig): Addressed[] {
  const ended = outcome.turnEnded;
  const notices: Addressed[] = [];
  if (ended?.followerSkipped) notices.push({ to: 'follower', notice: { kind: 'turnSkipped' } });
  if (ended?.reason === 'timeout') notices.push({ to: 'both', notice: { kind: 'timeout', role: action.type === 'timeout' ? action.role : action.actor } });
  if (outcome.feedback) notices.push({ to: 'both', notice: { kind: 'feedback', signal: outcome.feedback.signal, afterStep: config.followerSteps - outcome.turn.stepsLeft } });
  if (outcome.cancelled) notices.push({ to: 'both', notice: { kind: 'cancelled' } });
  return notices;
}

/** What the session works with: its room's parts. */
export interface SessionParts {
  readonly room: Pick<Room, 'roomId' | 'clock' | 'broadcast' | 'disconnect'>;
  readonly services: RoomServices;
  readonly settings: ParsedRoomSettings;
  readonly now: () => number;
  readonly pool: string;
  readonly seats: Seats;
  readonly study: StudySeats;
  /** The phase changed: the room's listing shows it. */
  phaseChanged(): void;
}

export class GameSession {
  private current: Phase = 'waiting';
  private reasonEnded = '';
  /** The role whose leaving ended the game. */
  private leaver: Role | null = null;
  private recorder: GameRecorder | null = null;
  private writer: GameLogWriter | null = null;
  private startedAt = 0;
  private readonly turnClock: TurnClock;
  private agentSeat: AgentSeat | null = null;
  /** Stops telling the players of the process's stalls (from the game's start to its end). */
  private stopHearingStalls: (() => void) | null = null;

  constructor(private readonly parts: SessionParts) {
    this.turnClock = new TurnClock(
      parts.room.clock,
      parts.now,
      (role) => this.apply({ type: 'timeout', actor: 'server', role }),
      () => this.sendViews(),
    );
  }

  get phase(): Phase {
    return this.current;
  }

  /** Why the game ended ('' until it has). */
  get endReason(): string {
    return this.reasonEnded;
  }

  /** Seats the agent, which plays its turns from the server through a person's checks, seeing the seat's own view (botSeat.ts). */
  seatAgent(seated: SeatedAgent): Seat {
    const { room, settings, seats } = this.parts;
    const feed = new ViewFeed(seated.role);
    this.agentSeat = new AgentSeat(seated, {
      clock: room.clock,
      stepMs: settings.botStepMs,
      view: () => (this.current === 'playing' && this.recorder ? feed.view(this.recorder.state) : null),
      events: () => this.recorder!.events,
      play: (action) => this.tryAction(seated.role, action),
      // In an arm's game an agent's own explanations would tell the participant which agent it has.
      tellPartner: (notice) => {
        if (!this.parts.study.armGame) seats.notifyPartner(seated.role, notice);
      },
      log: (line) => logger.warn(`game room ${room.roomId}: ${line}`),
      record: (fact) => this.recordAgentSeat(fact),
    });
    return seats.seat({ role: seated.role, client: null, record: agentSeatRecord(seated), connected: true, reconnection: null, feed });
  }

  /** Starts the game `joining` completes. */
  start(joining: Client): void {
    const { room, services, settings, now, pool, seats, study } = this.parts;
    // The map and the draw of poses and cards use independent seeds unless a study fixes one: the
    // terrain a follower sees then says nothing about the cards or the leader it does not see.
    const seed = settings.seed ?? randomInt(0, MAX_SEED);
    const { profile, config: base } = study.gameRules() ?? { profile: settings.rules, config: settings.config ?? profileConfig(settings.rules) };
    const studyTurns = study.turnSeconds();
    const config = makeConfig({
      ...base,
      turnSeconds: {
        leader: studyTurns?.leader ?? settings.leaderTurnSeconds ?? base.turnSeconds.leader,
        follower: studyTurns?.follower ?? settings.followerTurnSeconds ?? base.turnSeconds.follower,
      },
    });
    const map = settings.map ?? generateMap(settings.seed ?? randomInt(0, MAX_SEED));
    const gameId = `g${now().toString(36)}-${room.roomId}`;
    const records = seats.records();
    const header = makeHeader({
      gameId,
      startedAt: new Date(now()),
      seed,
      config,
      map,
      setup: drawSetup(config, map, seed),
      meta: { source: 'server', profile, pool, players: records, ...this.agentSeat?.headerMeta(), ...study.headerMeta() },
    });
    try {
      this.writer = services.startLog(header, { pool, seats: records });
    } catch (error) {
      this.cancelStart(joining, error);
    }
    this.recorder = new GameRecorder(header, (line) => this.writeLog(line));
    study.gameStarted(gameId, records);
    this.agentSeat?.start(gameId);
    this.startedAt = now();
    this.current = 'playing';
    this.parts.phaseChanged();
    for (const seat of seats.values()) seat.feed.witness(this.recorder.state);
    // Nobody could be told while the process was stopped: they are told once it runs again.
    this.stopHearingStalls = processStalls.onStall((stall) => this.tell('both', { kind: 'serverStalled', seconds: Math.round((stall.to - stall.from) / 1000) }));
    this.beginTurn();
    this.sendViews();
  }

  /** Checks `role`'s action against the legal actions and applies it; the refusal, or null. */
  tryAction(role: Role, requested: PlayerAction): ActionError | null {
    const action: PlayerAction = requested.type === 'instruction' ? { type: 'instruction', text: sanitizeInstruction(requested.text) } : requested;
    const refused = checkPlayerAction(this.recorder!.state, role, action);
    if (!refused) this.apply(byActor(role, action));
    return refused;
  }

  /** The player in seat `role` left the game for good, which ends it. */
  abandonedBy(role: Role): void {
    this.leaver = role;
    this.finish('abandoned');
  }

  /** Ends the game once, for whatever reason, and closes its log. */
  finish(reason: EndReason): void {
    void this.agentSeat?.stop(); // also for a game that never started (its program is stopped)
    if (this.current === 'ended') return;
    this.turnClock.stop();
    this.stopHearingStalls?.();
    const wasPlaying = this.current === 'playing';
    this.current = 'ended';
    this.parts.phaseChanged();
    if (!wasPlaying || !this.recorder) return;
    const end = this.recorder.end(this.parts.now() - this.startedAt, reason);
    this.reasonEnded = end.reason;
    this.parts.services.metrics?.gamesFinished.inc({ reason: end.reason });
    this.parts.study.gameEnded(this.recorder.header.gameId, this.parts.seats.records(), { reason: end.reason, score: end.score, leaver: this.leaver });
    this.sendViews();
    this.parts.room.broadcast('notice', { kind: 'gameOver', reason: end.reason, score: end.score, ...(end.reason === 'storage-failed' && { message: NOT_SAVED_MESSAGE }) } satisfies Notice);
  }

  /** Sends each connected player what changed in its view. */
  sendViews(): void {
    if (!this.recorder) return;
    const { seats, now } = this.parts;
    const state = this.recorder.state;
    for (const seat of seats.values()) {
      if (!seat.client || !seat.connected) continue;
      const message = seat.feed.message(
        state,
        {
          phase: this.current === 'ended' ? 'ended' : 'playing',
          turnDeadline: this.current === 'playing' ? this.turnClock.deadline : 0,
          partnerConnected: seats.partnerConnected(seat.role),
          endReason: this.reasonEnded,
        },
        now(),
      );
      if (message) seat.client.send('view', message);
    }
  }

  /**
   * The game's log could not be created: the joining player's join is refused, the waiting
   * player is sent away with the same words, and the room goes. The cause (with its paths) is
   * for the server's operator only.
   */
  private cancelStart(joining: Client, cause: unknown): never {
    const { room, seats } = this.parts;
    logger.error(`game room ${room.roomId}: the game's log could not be created:`, cause);
    this.current = 'ended';
    for (const seat of seats.values()) {
      if (seat.client && seat.client !== joining) seat.client.leave(CloseCode.WITH_ERROR, NOT_STARTED_MESSAGE);
    }
    // After onJoin has refused the joining player; disconnect() also ends a dropped player's wait to reconnect.
    setImmediate(() => void room.disconnect(CloseCode.WITH_ERROR));
    throw new ServerError(503, NOT_STARTED_MESSAGE);
  }

  private writeLog(line: LogLine): void {
    if (line.kind === 'header') return; // startLog wrote it
    if (line.kind === 'end') return this.writer!.end(line); // closes the game as far as storage allows, without throwing
    try {
      timed(this.parts.services.metrics?.logWriteSeconds, () => this.writer!.append(line));
    } catch (error) {
      throw new LogNotWritten(error);
    }
  }

  /**
   * Writes through the recorder, at the game's time now. A line the log cannot take ends the game,
   * which is all a storage failure may end: then null.
   */
  private logged<T>(write: (recorder: GameRecorder, t: number) => T): T | null {
    try {
      return write(this.recorder!, this.parts.now() - this.startedAt);
    } catch (error) {
      if (!(error instanceof LogNotWritten)) throw error;
      logger.error(`game room ${this.parts.room.roomId}: the game ends because its log could not be written:`, error.cause);
      this.finish('storage-failed');
      return null;
    }
  }

  /** What the agent's seat did about its agent, in the game's log (P-147), while the game is played. */
  private recordAgentSeat(fact: AgentSeatFact): void {
    if (this.current === 'playing') this.logged((recorder, t) => recorder.agentSeat(fact, t));
  }

  /** Applies an action: logged first, then each player is sent what it may know of the result. */
  private apply(action: Action): void {
    const result = this.logged((recorder, t) => recorder.apply(action, t));
    if (!result?.ok) return;
    this.parts.services.metrics?.actions.inc({ actor: action.actor, type: action.type });
    for (const seat of this.parts.seats.values()) seat.feed.witness(result.state);
    for (const { to, notice } of outcomeNotices(action, result.outcome, result.state.config)) this.tell(to, notice);
    if (result.state.gameOver) return this.finish('turns-exhausted');
    if (result.outcome.turnEnded) this.beginTurn();
    this.sendViews();
  }

  private tell(to: Role | 'both', notice: Notice): void {
    if (to === 'both') this.parts.room.broadcast('notice', notice);
    else this.parts.seats.notify(to, notice);
    // An agent's seat has no client: it hears the notices its player is sent here.
    if (this.agentSeat && (to === 'both' || to === this.agentSeat.role)) this.agentSeat.hear(notice);
  }

  /** A turn begins: the clock restarts with the role's seconds, and an agent in that seat plays its turn. */
  private beginTurn(): void {
    const state = this.recorder!.state;
    const role = state.turn.role;
    this.turnClock.start(role, state.config.turnSeconds[role]);
    if (this.agentSeat?.role === role) this.agentSeat.takeTurn();
  }
}
