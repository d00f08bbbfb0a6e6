/**
 * The game server: a process serving the game rooms over WebSockets, the HTTP API and (once
 * built) the browser client, with games indexed and logged under a data directory. Alone by
 * default; with a Cluster, one of several processes sharing matchmaking through Redis.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { matchMaker, RegisteredHandler, Server } from '@colyseus/core';
import { SeatReservationError } from '@colyseus/core/errors/SeatReservationError';
import express from 'express';
import { WebSocket } from 'ws';
import { agentSeatAsked, BUSY_RETRY_AFTER_SECONDS, MAX_MESSAGES_PER_SECOND, ROOM_NAME } from '../shared/protocol/messages';
import { Admission, busyError, type AdmissionLimits } from './admission';
import type { Cluster } from './cluster';
import { DEFAULT_TRUST_PROXY } from './http/clientAddress';
import { tagMatchmakingRequests } from './http/matchmakingClient';
import { httpGuard, withMturk, type HttpPolicy } from './http/guard';
import { mountStudyRoutes, sendNoNewGames } from './http/studies';
import type { GameReader, GameRecord, WorkerStore } from './store/types';
import { GameRoom, parseJoinOptions, studyOf, type GameRoomOptions, type RoomServices, type RoomSettings } from './rooms/GameRoom';
import { AgentGames, type AgentGameLimits } from './rooms/agentGames';
import type { SeatListing } from './rooms/queue';
import { addressOptionOf } from './rooms/studySeats';
import { creationLockKey, releaseCreationLock, takeCreationLock } from './rooms/creationLock';
import type { LoadedStudy } from './study/loadStudy';
import { reconcileStudyRecords } from './study/reconcile';
import { StudyGames } from './study/studyGames';
import { clientLimitedLogger, GuardedTransport } from './transport';
import { waitAtMost } from './waitAtMost';

// @colyseus/core 0.18 reads the global WebSocket (for WebSocket.OPEN) when a player reconnects,
// and Node 20 has none: without this every reconnection is refused.
(globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;

/**
 * Matchmaking for the game room: quick play meets in the pool, a code meets in the game with that
 * code, and the seat asked for must be open. A left-out pool counts as the default and a left-out
 * code as none, so quick play never lands in a private game (Colyseus itself would skip filters a
 * client leaves out). A new private game, and a player asking for the server's agent as its
 * partner (botFollower, botLeader), always get a room of their own.
 */
class GameRoomHandler extends RegisteredHandler<GameRoom> {
  constructor(defaultOptions: Pick<GameRoomOptions, 'services' | 'settings'>) {
    super(GameRoom, defaultOptions);
    this.name = ROOM_NAME;
  }

  override getFilterOptions(options: Record<string, unknown>): Record<string, unknown> {
    const asked = parseJoinOptions(options);
    // A study's game is found by its study too: quick play in a pool named like a study's never meets its workers.
    const filter: Record<string, unknown> = asked.code !== undefined ? { code: asked.code } : { pool: asked.pool, code: '', study: studyOf(options) };
    if (asked.role === 'leader') filter.leaderOpen = true;
    if (asked.role === 'follower') filter.followerOpen = true;
    // No room lists this field, so the matchmaker creates a new room; a value of its own keeps
    // simultaneous requests from waiting for one another's room (Colyseus's lock per filter).
    if (asked.private || agentSeatAsked(asked)) filter.newGame = randomUUID();
    return filter;
  }
}

/**
 * Where Colyseus is about to make a room (its selectProcessIdToCreateRoom step): a quick-play game
 * is made under its pool's lock (released by the room once listed, see rooms/creationLock.ts),
 * and a request that finds, once it holds the lock, a game with its seat open listed meanwhile is
 * sent back to the matchmaker, which retries a SeatReservationError and seats it there. Answers
 * the lock's key (null when none was taken), for a creation that fails after it to release.
 */
async function beforeCreatingRoom(options: Record<string, unknown>): Promise<string | null> {
  const asked = parseJoinOptions(options);
  if (asked.code !== undefined || asked.private || agentSeatAsked(asked)) return null;
  const key = creationLockKey(asked.pool, studyOf(options));
  await takeCreationLock(key);
  const filter = { locked: false, private: false, name: ROOM_NAME, ...matchMaker.getHandler(ROOM_NAME).getFilterOptions(options) };
  // A worker kept apart from its address may not join a game someone from there is in: that one does not count.
  const address = addressOptionOf(options);
  const joinable = (await matchMaker.query(filter)).filter((room) => address === undefined || !((room.metadata as Partial<SeatListing> | undefined)?.addresses ?? []).includes(address));
  if (joinable.length > 0) {
    await releaseCreationLock(key);
    throw new SeatReservationError('a game with this seat open was listed meanwhile');
  }
  return key;
}

export interface GameServerOptions {
  /** 0 picks a free port. */
  readonly port: number;
  readonly host?: string;
  readonly services: RoomServices;
  readonly roomSettings?: RoomSettings;
  /** Frames a connection may send in a second before it is closed (the fuzz benchmark lifts it). */
  readonly maxMessagesPerSecond?: number;
  /** Adds routes (the HTTP API, the client) to the express app before the server listens. */
  readonly routes?: (app: express.Application) => void;
  /** Cross-origin callers and framing sites allowed (none but the server's own origin by default). */
  readonly http?: HttpPolicy;
  /** The studies this server runs, loaded and checked (`serve --study`); their ids must differ. */
  readonly studies?: readonly LoadedStudy[];
  /** Where the studies' workers are kept; without it the worker routes answer 503. */
  readonly workers?: WorkerStore;
  /** One of several processes (Redis); without it, the only one. */
  readonly cluster?: Cluster;
  /** When this process has no room for a new game (admission.ts); by default it always has (`serve` watches its event loop). */
  readonly admission?: AdmissionLimits;
  /** The limits on games with the server's agent partner (rooms/agentGames.ts); the defaults when left out. */
  readonly agentGames?: AgentGameLimits;
  /** Where the researcher is told what a study needs (workers waiting for a partner who cannot come); stderr by default. */
  readonly warn?: (line: string) => void;
  /** Where the call records of the studies' LLM arms go, one file per game; the current directory by default. */
  readonly armRecords?: string;
  /** Express's `trust proxy`: the proxies whose X-Forwarded-For names the client (DEFAULT_TRUST_PROXY when left out). */
  readonly trustProxy?: string | number | boolean;
  /**
   * The key of the address tags a study's admission limits and pairing compare: every process of
   * one server must have the same (`serve` gives the admin token); a random one by default.
   */
  readonly addressKey?: string;
}

export interface RunningGameServer {
  readonly port: number;
  readonly http: HttpServer;
  /** The studies it runs, by id. */
  readonly studies: ReadonlyMap<string, LoadedStudy>;
  /**
   * Makes no new games from now on: `/readyz` answers 503, rooms waiting for a partner close with
   * a word to their player, and matchmaking and a study's `play` answer 503 unless another process
   * takes new games (then they seat players there). Games in play go on (and their players may
   * reconnect). Answers how many games are in play here.
   */
  drain(): Promise<number>;
  /** Games being played now, in this process. */
  gamesInPlay(): Promise<number>;
  /** Whether this process has room for a new game. */
  readonly admission: Admission;
  /**
   * Games recovery closed (their process was gone): a study's workers learn of their end as of any
   * game's; of one another machine took over, as `reread` finds it a while later (P-156).
   */
  gamesRecovered(games: readonly GameRecord[], reread: (gameId: string) => Promise<GameRecord | null>): Promise<void>;
  /**
   * Brings the study workers' records up to the games `games` lists (at start: records a killed
   * process still held for an unreachable database are lost); answers how many it wrote.
   */
  reconcileStudyRecords(games: GameReader): Promise<number>;
  /** Ends every game (logged as 'server-shutdown') and stops listening. */
  close(): Promise<void>;
  /** After close(): a study's records of games (a start, an end) its worker store never took, each in words. */
  unwrittenStudyRecords(): Promise<string[]>;
}

/** How long a stopping server waits for a study's records of its games to be written (the database may be away). */
const STUDY_RECORDS_WAIT_MS = 5000;

/** How long a stopping server waits for Colyseus's own shutdown (which may wait for Redis), once its games have ended. */
const SHUTDOWN_WAIT_MS = 5000;

function warnOnStderr(line: string): void {
  process.stderr.write(`cerealbar: warning: ${line}\n`);
}


export async function startGameServer(options: GameServerOptions): Promise<RunningGameServer> {
  const studies = new Map<string, LoadedStudy>();
  for (const study of options.studies ?? []) {
    if (studies.has(study.id)) throw new Error(`two studies have the id ${JSON.stringify(study.id)}`);
    studies.set(study.id, study);
  }
  const onMturk = [...studies.values()].some((study) => study.platform.kind === 'mturk');
  const { cluster } = options;
  let draining = false;
  // A draining process of several still seats players, on the others, while one takes new games.
  const refusesNewGames = () => draining && !(cluster?.anotherReady() ?? false);
  const admission = new Admission(options.admission ?? {}, () => GameRoom.inThisProcess.size);
  options.services.metrics?.watchAdmission(admission);
  const refusesNewGame = () => {
    const busy = admission.busy();
    if (busy === null || (cluster?.anotherWithRoom() ?? false)) return false;
    admission.count(busy);
    return true;
  };
  const guard = httpGuard(onMturk ? withMturk(options.http ?? {}) : (options.http ?? {}), refusesNewGames, refusesNewGame);
  GameRoom.agentGames = new AgentGames(options.agentGames);
  options.services.metrics?.watchAgentGames(GameRoom.agentGames);
  // The key of the address tags: the study API's limits and the agent games' per client.
  const addressKey = options.addressKey ?? randomUUID();
  const studyGames = options.workers && studies.size > 0 ? new StudyGames(studies, options.workers, options.warn ?? warnOnStderr, options.armRecords) : null;
  const services: RoomServices = studyGames ? { ...options.services, studies: studyGames } : options.services;
  const app = express();
  app.disable('x-powered-by');
  // Whom a reverse proxy forwards: the address a study's admission limits and pairing see (clientAddress.ts).
  app.set('trust proxy', options.trustProxy ?? DEFAULT_TRUST_PROXY);
  // A load balancer sends new players only to a process that is ready: not to one that drains, nor to one without room.
  app.get('/readyz', (_req, res) => {
    const busy = admission.busy();
    const ready = !draining && busy === null;
    if (!ready) res.setHeader('Retry-After', String(BUSY_RETRY_AFTER_SECONDS));
    res.status(ready ? 200 : 503).json({ ready, draining, busy });
  });
  app.post('/api/studies/:id/play', (_req, res, next) => {
    if (!refusesNewGames()) return next();
    sendNoNewGames(res);
  });
  // Ahead of the routes given, whose /api asks for the admin token: a participant's page has none.
  mountStudyRoutes(app, studies, { workers: options.workers, games: studyGames, quickPlay: options.roomSettings?.config, addressKey });
  options.routes?.(app);
  const http = createServer(app);
  const colyseus = new Server({
    transport: new GuardedTransport(http, options.maxMessagesPerSecond ?? MAX_MESSAGES_PER_SECOND),
    logger: clientLimitedLogger(),
    greet: false,
    gracefullyShutdown: false,
    ...(cluster && { presence: cluster.presence, driver: cluster.driver, publicAddress: cluster.publicAddress }),
    selectProcessIdToCreateRoom: async (_roomName: string, options: Record<string, unknown>) => {
      // Refused at once, before the pool's creation lock: a busy process keeps nobody waiting.
      const busy = admission.busy();
      if (busy !== null && !cluster) {
        admission.count(busy);
        throw busyError();
      }
      const lock = await beforeCreatingRoom(options);
      if (!cluster) return matchMaker.processId;
      try {
        return await cluster.selectProcessIdToCreateRoom();
      } catch (error) {
        // No process takes the game (all busy or draining): the next maker in the pool need not wait out the lock.
        if (lock !== null) await releaseCreationLock(lock);
        if (busy !== null) admission.count(busy);
        throw error;
      }
    },
  });
  matchMaker.addRoomType(new GameRoomHandler({ services, settings: options.roomSettings }));
  // Colyseus logs a listen error (a port in use) without rejecting: fail here instead of hanging.
  const listenError = new Promise<never>((_, reject) => http.once('error', reject));
  await Promise.race([colyseus.listen(options.port, options.host), listenError]);
  guard(http);
  tagMatchmakingRequests(http, app, addressKey, (request) => GameRoom.agentGames.answered(request));
  await cluster?.start(() => admission.busy() !== null);
  const port = (http.address() as AddressInfo).port;
  let closing: Promise<void> | null = null;
  const shutDown = async () => {
    // Every game here ends, and its log with it, before anything that may wait for Redis.
    for (const room of GameRoom.inThisProcess) room.onBeforeShutdown();
    admission.stop();
    await cluster?.stop();
    if (!(await waitAtMost(colyseus.gracefullyShutdown(false), SHUTDOWN_WAIT_MS))) {
      (options.warn ?? warnOnStderr)(`the server's shutdown did not finish within ${SHUTDOWN_WAIT_MS / 1000} s (is Redis away?); every game had ended`);
    }
  };
  return {
    port,
    http,
    studies,
    // This process's rooms are its own to drain, count and end: none of it waits for Redis.
    drain: async () => {
      draining = true;
      await cluster?.drain();
      return [...GameRoom.inThisProcess].filter((room) => room.drain()).length;
    },
    gamesRecovered: async (games, reread) => studyGames?.gamesRecovered(games, reread),
    reconcileStudyRecords: async (games) => (studyGames ? reconcileStudyRecords(studyGames, studies, games) : 0),
    admission,
    gamesInPlay: async () => [...GameRoom.inThisProcess].filter((room) => room.playing).length,
    // Once: a second call waits for the first (Colyseus's own shutdown, called twice, leaves a handle open).
    close: () => (closing ??= shutDown()),
    unwrittenStudyRecords: async () => (studyGames ? studyGames.recordsSettled(STUDY_RECORDS_WAIT_MS) : []),
  };
}
