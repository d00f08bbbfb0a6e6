/**
 * Several `serve` processes as one server, on Colyseus's own scale-out: RedisPresence and
 * RedisDriver share the room listings and the matchmaking locks, and each process has a public
 * address the players' WebSockets reach it at. On top of them, each process keeps an entry in a
 * registry of processes (`ready` or `draining`, and whether it is busy: admission.ts; renewed every
 * HEARTBEAT_MS), so that:
 * - a new game is made only on a ready process with room, and a draining or busy one may still
 *   answer matchmaking;
 * - a crashed process's rooms are hidden from matchmaking at once, and removed from the listings
 *   once Colyseus's health check confirms it is gone (else a joining player would wait seconds
 *   for a seat reservation there to time out, and fail). A process is alive while its Colyseus
 *   channel (`p:<processId>`) has a subscriber: Redis drops that the moment the process's
 *   connection closes, as it does when the process dies; a machine that vanishes without closing
 *   its connections is caught when its entry runs out (PROCESS_TTL_MS).
 * Without Redis none of this runs: the single process keeps Colyseus's in-process defaults.
 */
import { matchMaker, ServerError, type IRoomCache, type MatchMakerDriver, type SortOptions } from '@colyseus/core';
import { RedisDriver } from '@colyseus/redis-driver';
import { RedisPresence } from '@colyseus/redis-presence';
import { Redis } from 'ioredis';
import { busyError } from './admission';
import { waitAtMost } from './waitAtMost';

/** How often a process renews its entry; an entry not renewed for PROCESS_TTL_MS is a process gone. */
export const HEARTBEAT_MS = 500;
export const PROCESS_TTL_MS = 2500;
const REGISTRY_KEY = 'cerealbar:processes';
/** How long rooms placed on another process are counted here after the last: longer than Colyseus takes to share its count. */
const PLACEMENT_MEMORY_MS = 2000;

/** The rooms this process placed on another lately, and that process's shared count when the first of them was placed. */
interface Placements {
  readonly countBefore: number;
  readonly placed: number;
  readonly lastAt: number;
}
/** Private games' codes to their room ids, so that a join by code reads one listing, not all. */
const CODES_KEY = 'cerealbar:codes';
/** Deletes a code's entry only while it names the room given: a later room may have taken the code. */
const DELETE_CODE_OF_ROOM = "if redis.call('hget', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('hdel', KEYS[1], ARGV[1]) end return 0";
/** Colyseus's channel of a process, which it subscribes to while it runs. */
const PROCESS_CHANNEL_PREFIX = 'p:';
const CONNECT_TIMEOUT_MS = 3000;
/** How long draining and stopping wait for Redis: the registry entry runs out by itself (PROCESS_TTL_MS). */
const REDIS_WAIT_MS = 2000;

export const NO_READY_PROCESS_MESSAGE = 'the server is restarting and takes no new games; try again in a minute';

type ProcessState = 'ready' | 'draining';

interface ProcessEntry {
  readonly state: ProcessState;
  /** It has no room for a new game now (admission.ts). */
  readonly busy: boolean;
  /** Epoch ms until which the entry holds without a renewal. */
  readonly until: number;
}

export interface ClusterOptions {
  /** redis://[user:password@]host:port[/db] */
  readonly redisUrl: string;
  /** host[:port][/path] at which players reach this process (Colyseus's publicAddress). */
  readonly publicAddress: string;
  /** Told when Redis goes away and when it is back (a line each); by default they go to stderr. */
  readonly onRedisChange?: (line: string) => void;
}

/**
 * Says once that Redis went away, and once that it is back: each connection to it (this
 * module's, the presence's two, the driver's) would otherwise log every failed reconnection,
 * several a second, some with stack traces.
 */
class RedisWatch {
  private away = false;

  constructor(
    private readonly where: string,
    private readonly say: (line: string) => void,
  ) {}

  watch(connection: Redis): void {
    connection.removeAllListeners('error');
    connection.on('error', (error: Error) => {
      if (this.away) return;
      this.away = true;
      this.say(`Redis at ${this.where} is unreachable (${error.message}): the games in play here go on; new games and joins wait for it`);
    });
    connection.on('ready', () => {
      if (!this.away) return;
      this.away = false;
      this.say(`Redis at ${this.where} is reachable again`);
    });
  }
}

/** Checks a public address's form (`host[:port][/path]`); answers the problem or null. */
export function checkPublicAddress(address: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(address)) return `${JSON.stringify(address)}: give host[:port][/path] without the scheme (the client keeps its page's ws or wss)`;
  return /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?(\/[A-Za-z0-9._~/-]*)?$/.test(address) ? null : `${JSON.stringify(address)} is not host[:port][/path]`;
}

/** Opens a Redis connection and checks it answers, with a clear error when it does not. */
async function connectRedis(url: string): Promise<Redis> {
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: CONNECT_TIMEOUT_MS, maxRetriesPerRequest: 2 });
  // Without a listener ioredis prints every failed reconnection attempt.
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    redis.disconnect();
    throw new Error(`cannot reach Redis at ${redactUrl(url)}: ${(error as Error).message}`);
  }
  return redis;
}

/** The URL without its password, to print. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(an invalid URL)';
  }
}

export class Cluster {
  private entries = new Map<string, ProcessEntry>();
  /** Processes with a subscriber on their channel, as of the last heartbeat. */
  private subscribed = new Set<string>();
  private state: ProcessState = 'ready';
  private timer: NodeJS.Timeout | null = null;
  /** Processes whose entry ran out and whose health check is under way. */
  private readonly checking = new Set<string>();
  /** When this process had rooms made on each other process, lately (see selectProcessIdToCreateRoom). */
  private readonly placed = new Map<string, Placements>();
  /** Whether this process has no room for a new game now (set by start). */
  private busy: () => boolean = () => false;

  private constructor(
    private readonly redis: Redis,
    readonly presence: RedisPresence,
    readonly driver: MatchMakerDriver,
    readonly publicAddress: string,
  ) {}

  static async connect(options: ClusterOptions): Promise<Cluster> {
    const problem = checkPublicAddress(options.publicAddress);
    if (problem) throw new Error(`public address ${problem}`);
    const redis = await connectRedis(options.redisUrl);
    const presence = new RedisPresence(options.redisUrl);
    const driverConnection = new Redis(options.redisUrl);
    const watch = new RedisWatch(redactUrl(options.redisUrl), options.onRedisChange ?? ((line) => process.stderr.write(`cerealbar: ${line}\n`)));
    // The presence's connections are not part of its API (RedisPresence 0.18.5 names them pub and sub).
    const { pub, sub } = presence as unknown as { pub: Redis; sub: Redis };
    for (const connection of [redis, pub, sub, driverConnection]) watch.watch(connection);
    const cluster: Cluster = new Cluster(redis, presence, undefined as unknown as MatchMakerDriver, options.publicAddress);
    (cluster as { driver: MatchMakerDriver }).driver = new LiveRoomsDriver(new RedisDriver(driverConnection), redis, () => cluster.liveProcesses());
    return cluster;
  }

  /** The processes running now: those subscribed to their channel. */
  async liveProcesses(): Promise<Set<string>> {
    const channels = await this.presence.channels(`${PROCESS_CHANNEL_PREFIX}*`);
    return new Set(channels.map((channel) => channel.slice(PROCESS_CHANNEL_PREFIX.length)));
  }

  /**
   * Colyseus asks where to make a new room: the ready process with room (not busy) with the fewest
   * rooms (a tie drawn at random), never a draining or gone one; when every ready process is busy,
   * the join is refused as busy (503). Another process's count, as Colyseus shares it, is
   * renewed at most once a second, so the rooms this process has placed there lately are added to
   * the count it had before them (not to a count that may already hold them): a burst of new games
   * is spread instead of all going to the process that looked emptiest.
   */
  readonly selectProcessIdToCreateRoom = async (): Promise<string> => {
    // Who runs and who is ready are asked now, not taken from the last heartbeat: a process that
    // died since would take seconds to refuse, and one that started since would get no game (all
    // of a burst's new games would go to the processes already known).
    const [stats, live, entries] = await Promise.all([matchMaker.stats.fetchAll(), this.liveProcesses(), this.readEntries()]);
    const now = Date.now();
    const ready = stats.filter(({ processId }) => {
      if (processId === matchMaker.processId) return this.state === 'ready';
      const entry = entries.get(processId);
      return live.has(processId) && entry?.state === 'ready' && entry.until >= now;
    });
    if (ready.length === 0) throw new ServerError(503, NO_READY_PROCESS_MESSAGE);
    const withRoom = ready.filter(({ processId }) => (processId === matchMaker.processId ? !this.busy() : !entries.get(processId)!.busy));
    if (withRoom.length === 0) throw busyError();
    const recent = (processId: string) => {
      const placements = this.placed.get(processId);
      return placements && placements.lastAt > now - PLACEMENT_MEMORY_MS ? placements : undefined;
    };
    // This process's own count is its live one; another's is at least what it had plus what was placed there since.
    const rooms = (processId: string, counted: number) => {
      const placements = processId === matchMaker.processId ? undefined : recent(processId);
      return placements ? Math.max(counted, placements.countBefore + placements.placed) : counted;
    };
    const candidates = withRoom.map(({ processId, roomCount }) => ({ processId, rooms: rooms(processId, roomCount), draw: Math.random() }));
    candidates.sort((a, b) => a.rooms - b.rooms || a.draw - b.draw);
    const chosen = candidates[0]!.processId;
    if (chosen !== matchMaker.processId) {
      const before = recent(chosen) ?? { countBefore: withRoom.find((stat) => stat.processId === chosen)!.roomCount, placed: 0 };
      this.placed.set(chosen, { countBefore: before.countBefore, placed: before.placed + 1, lastAt: now });
    }
    return chosen;
  };

  /**
   * Starts renewing this process's entry (call once the server listens, when matchMaker.processId
   * is set); `busy` says whether it has room for a new game, read at each heartbeat.
   */
  async start(busy: () => boolean = () => false): Promise<void> {
    this.busy = busy;
    await this.beat();
    this.timer = setInterval(() => void this.beat().catch(() => undefined), HEARTBEAT_MS);
    this.timer.unref();
  }

  /** From now on no new game is made here; matchmaking here still seats players on the ready processes. */
  async drain(): Promise<void> {
    this.state = 'draining';
    await waitAtMost(this.beat(), REDIS_WAIT_MS);
  }

  /** Whether some process other than this one takes new games (as of the last heartbeat). */
  anotherReady(): boolean {
    return [...this.entries].some(([processId, entry]) => processId !== matchMaker.processId && entry.state === 'ready' && !this.isGone(processId));
  }

  /** Whether some process other than this one takes new games and has room for one (as of the last heartbeat). */
  anotherWithRoom(): boolean {
    return [...this.entries].some(([processId, entry]) => processId !== matchMaker.processId && entry.state === 'ready' && !entry.busy && !this.isGone(processId));
  }

  /** Leaves the registry (Colyseus's shutdown closes the presence and the driver). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await waitAtMost(this.redis.hdel(REGISTRY_KEY, matchMaker.processId), REDIS_WAIT_MS);
    this.redis.disconnect();
  }

  private isGone(processId: string): boolean {
    if (processId === matchMaker.processId) return false;
    const entry = this.entries.get(processId);
    return !this.subscribed.has(processId) || (entry !== undefined && entry.until < Date.now());
  }

  /**
   * Renews this process's entry, reads everyone's and who runs, and has Colyseus check the
   * processes listed (in the registry or Colyseus's room counts) that seem gone.
   */
  private async beat(): Promise<void> {
    const own: ProcessEntry = { state: this.state, busy: this.busy(), until: Date.now() + PROCESS_TTL_MS };
    await this.redis.hset(REGISTRY_KEY, matchMaker.processId, JSON.stringify(own));
    const [entries, subscribed, stats] = await Promise.all([this.readEntries(), this.liveProcesses(), matchMaker.stats.fetchAll()]);
    this.entries = entries;
    this.subscribed = subscribed;
    const listed = new Set([...entries.keys(), ...stats.map((stat) => stat.processId)]);
    for (const processId of listed) if (this.isGone(processId)) this.confirmGone(processId);
  }

  /** Every process's entry in the registry. */
  private async readEntries(): Promise<Map<string, ProcessEntry>> {
    const entries = new Map<string, ProcessEntry>();
    for (const [processId, value] of Object.entries(await this.redis.hgetall(REGISTRY_KEY))) {
      const entry = parseEntry(value);
      if (entry) entries.set(processId, entry);
    }
    return entries;
  }

  /**
   * A process whose entry ran out may only be slow (a long pause): its rooms stay hidden from
   * matchmaking meanwhile, and Colyseus's health check (an IPC ping) decides. If it fails,
   * Colyseus has already removed the process's rooms and its room count; its entry goes too.
   */
  private confirmGone(processId: string): void {
    if (this.checking.has(processId)) return;
    this.checking.add(processId);
    void matchMaker
      .healthCheckProcessId(processId)
      .then(async (alive) => {
        if (!alive) await this.redis.hdel(REGISTRY_KEY, processId);
      })
      .catch(() => undefined)
      .finally(() => this.checking.delete(processId));
  }
}

function parseEntry(value: string): ProcessEntry | null {
  try {
    const entry = JSON.parse(value) as ProcessEntry;
    if ((entry.state !== 'ready' && entry.state !== 'draining') || typeof entry.until !== 'number') return null;
    // An entry written before processes said whether they were busy has room.
    return { ...entry, busy: entry.busy === true };
  } catch {
    return null;
  }
}

/**
 * RedisDriver, except that matchmaking never finds a room of a process that is not running (asked
 * of Redis with every query): Colyseus would reserve a seat there and wait for it to time out.
 * RedisDriver reads every room's listing for every query; two queries need not: a new game's
 * filter (`newGame`, a value no room lists) matches nothing, and a private game's code is looked
 * up in an index of codes kept here.
 * Colyseus writes a room's whole listing at each change, and one step of a room often makes
 * several (a seat's claim and the client count; a player seated, the claim that ends and the
 * game's start and lock): a room's listing is written once at the end of the step, as it is then.
 */
class LiveRoomsDriver implements MatchMakerDriver {
  /** The codes this process indexed, by room: removed with the room. */
  private readonly codes = new Map<string, string>();
  /** The write of each room's listing waiting for the end of the step, by room id. */
  private readonly unwritten = new Map<string, Promise<boolean>>();

  constructor(
    private readonly inner: RedisDriver,
    private readonly redis: Redis,
    private readonly liveProcesses: () => Promise<Set<string>>,
  ) {}

  has(roomId: string): Promise<boolean> {
    return this.inner.has(roomId);
  }

  async query(conditions: Partial<IRoomCache>, sortOptions?: SortOptions): Promise<IRoomCache[]> {
    if ('newGame' in conditions) return [];
    const code = (conditions as { code?: unknown }).code;
    const [rooms, live] = await Promise.all([
      typeof code === 'string' && code !== '' ? this.byCode(code, conditions) : this.inner.query(conditions, sortOptions),
      this.liveProcesses(),
    ]);
    return rooms.filter((room) => live.has(room.processId));
  }

  cleanup(processId: string): Promise<void> {
    return this.inner.cleanup(processId);
  }

  findByIds(roomIds: string[]): Promise<Map<string, IRoomCache>> {
    return this.inner.findByIds(roomIds);
  }

  async findOne(conditions: Partial<IRoomCache>, sortOptions?: SortOptions): Promise<IRoomCache> {
    if (conditions.roomId !== undefined) return this.inner.findOne(conditions, sortOptions);
    const rooms = await this.query(conditions, sortOptions);
    return rooms[0] as IRoomCache;
  }

  /** Changes the listing at once, as RedisDriver does; writes it at the end of the step. */
  update(room: IRoomCache, operations: Parameters<RedisDriver['update']>[1]): Promise<boolean> {
    const fields = room as unknown as Record<string, unknown>;
    Object.assign(room, operations.$set);
    for (const [field, by] of Object.entries(operations.$inc ?? {})) fields[field] = (fields[field] as number) + (by as number);
    return this.persist(room);
  }

  /** The room's listing is written at the end of this step, with every change made in it. */
  persist(room: IRoomCache): Promise<boolean> {
    const queued = this.unwritten.get(room.roomId);
    if (queued) return queued;
    const written: Promise<boolean> = Promise.resolve().then(async () => {
      if (this.unwritten.get(room.roomId) !== written) return false; // removed meanwhile
      this.unwritten.delete(room.roomId);
      const persisted = await this.inner.persist(room);
      await this.indexCode(room);
      return persisted;
    });
    this.unwritten.set(room.roomId, written);
    return written;
  }

  async remove(roomId: string): Promise<boolean> {
    this.unwritten.delete(roomId);
    const code = this.codes.get(roomId);
    if (code !== undefined) {
      this.codes.delete(roomId);
      await this.deleteCode(code, roomId);
    }
    return this.inner.remove(roomId);
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  clear(): Promise<void> {
    return this.inner.clear();
  }

  /**
   * The room with this code, if it meets the conditions. The entry of a room gone without
   * removing it (its process was killed) finds nothing, and is deleted here.
   */
  private async byCode(code: string, conditions: Partial<IRoomCache>): Promise<IRoomCache[]> {
    const roomId = await this.redis.hget(CODES_KEY, code);
    if (!roomId) return [];
    const room = (await this.inner.findByIds([roomId])).get(roomId);
    if (!room) await this.deleteCode(code, roomId);
    return room && meets(room, conditions) ? [room] : [];
  }

  private async deleteCode(code: string, roomId: string): Promise<void> {
    await this.redis.eval(DELETE_CODE_OF_ROOM, 1, CODES_KEY, code, roomId);
  }

  private async indexCode(room: IRoomCache): Promise<void> {
    const code = (room.metadata as { code?: unknown } | undefined)?.code;
    if (typeof code !== 'string' || code === '' || this.codes.has(room.roomId)) return;
    this.codes.set(room.roomId, code);
    await this.redis.hset(CODES_KEY, code, room.roomId);
  }
}

/** RedisDriver's test of a listing against conditions: each field equal in the listing or its metadata. */
function meets(room: IRoomCache, conditions: Partial<IRoomCache>): boolean {
  return Object.entries(conditions).every(([field, value]) => {
    if (Object.hasOwn(room, field)) return (room as unknown as Record<string, unknown>)[field] === value;
    const metadata = room.metadata as Record<string, unknown> | undefined;
    return metadata !== undefined && Object.hasOwn(metadata, field) && metadata[field] === value;
  });
}
