/**
 * A load-generating worker of the server benchmark (forked by bench/server.bench.ts): plays its
 * share of the game slots, each with two @colyseus/sdk clients (leader and follower, a private
 * code per game) replaying the seed's self-play script. Each slot starts at its point of the ramp
 * and, when a game's script is over, leaves and starts a new game, so the number of games stays
 * up. An action is sent a think time after the game's previous action, and never before the
 * acting client has seen that previous action. On `report` it sends what it measured since the
 * last report; on `stop` it leaves every room and exits.
 */
import { performance } from 'node:perf_hooks';
import { Client, type Room } from '@colyseus/sdk';
import WebSocket from 'ws';
import type { PlayerAction } from '../shared/engine/actions';
import { ACTION_MESSAGE, BUSY_RETRY_AFTER_SECONDS, BUSY_STATUS, ROOM_NAME, type SeatMessage, type ViewMessage } from '../shared/protocol/messages';
import { buildScript, UsageMonitor, type BenchToWorker, type Script, type WorkerConfig, type WorkerToBench } from './server-common';

// Node 20 has no global WebSocket, and the SDK's reconnection looks for one.
(globalThis as { WebSocket?: unknown }).WebSocket ??= WebSocket;

type Role = 'leader' | 'follower';
type WaitResult = 'ok' | 'stuck' | 'stopped' | 'aborted';

const send = (message: WorkerToBench) => process.send!(message);
const monitor = new UsageMonitor();

// What is reported, reset at each report.
let counters = fresh();
function fresh() {
  return {
    gamesStarted: 0,
    gamesFinished: 0,
    gamesCutShort: 0,
    actionsSent: 0,
    views: 0,
    messages: 0,
    selfLatency: [] as number[],
    partnerLatency: [] as number[],
    joinLatency: [] as number[],
    joins: { accepted: 0, refusedBusy: 0, failed: 0 },
    errors: {} as Record<string, number>,
    errorSamples: [] as string[],
  };
}
let activeGames = 0;

function error(kind: string, detail: string): void {
  counters.errors[kind] = (counters.errors[kind] ?? 0) + 1;
  if (counters.errorSamples.length < 5) counters.errorSamples.push(`${kind}: ${detail}`);
}

let stopping = false;
const onStop = new Set<() => void>();

/** Resolves after `ms`, or at once when the worker stops. */
function sleep(ms: number): Promise<void> {
  if (stopping || ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      onStop.delete(done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    onStop.add(done);
  });
}

const round2 = (ms: number) => Math.round(ms * 100) / 100;

/** For cumulative view counts by seq, the seq each view message (1-based) shows. */
function seqsOfViews(counts: readonly number[]): number[] {
  const seqs: number[] = [];
  counts.forEach((count, seq) => {
    if (seq === 0 || count > counts[seq - 1]) seqs[count] = seq;
  });
  return seqs;
}

/** One game: two rooms, how many views each client has received, and the send time of each action. */
class Game {
  readonly views: Record<Role, number> = { leader: 0, follower: 0 };
  readonly feedback: Record<Role, number> = { leader: 0, follower: 0 };
  readonly phase: Record<Role, string> = { leader: '', follower: '' };
  private readonly sentAt: number[] = [];
  private readonly actorOf: Role[] = [];
  /** seqOfView[role][n]: the action whose result the role's n-th view message shows. */
  private readonly seqOfView: Record<Role, number[]>;
  private waiter: (() => void) | null = null;
  aborted = false;
  leaving = false;
  /** The private game's code, from the leader's seat message. */
  code = '';

  readonly rooms: Partial<Record<Role, Room>> = {};

  constructor(private readonly script: Script) {
    this.seqOfView = { leader: seqsOfViews(script.views.leader), follower: seqsOfViews(script.views.follower) };
  }

  /** Listens to a player's room from the moment it joined (the seat message comes at once). */
  attach(role: Role, room: Room): void {
    this.rooms[role] = room;
    room.reconnection.enabled = false;
    room.onMessage('view', (message: ViewMessage) => this.onView(role, message));
    room.onMessage('notice', (notice: { kind?: string }) => {
      if (notice?.kind !== 'feedback') return;
      this.feedback[role] += 1;
      this.waiter?.();
    });
    room.onMessage('seat', (message: SeatMessage) => {
      if (message.code) this.code = message.code;
    });
    room.onMessage('*', (type, payload: any) => {
      counters.messages += 1;
      if (type === 'error') error(`server error ${payload?.code}`, `${role}: ${payload?.message} (refused ${payload?.refused})`);
    });
    room.onError((code, message) => error('room error', `${role}: ${code} ${message ?? ''}`));
    room.onLeave((code, reason) => {
      if (this.leaving || stopping) return;
      error('left', `${role}: the connection closed (${code} ${reason ?? ''})`);
      this.abort();
    });
  }

  /** Whether `role` has seen the result of action `seq` (it holds every view the room sent it up to it). */
  hasSeen(role: Role, seq: number): boolean {
    return this.views[role] >= this.script.views[role][seq] && this.feedback[role] >= this.script.feedback[role][seq];
  }

  private onView(role: Role, message: ViewMessage): void {
    counters.views += 1;
    this.views[role] += 1;
    const seq = this.seqOfView[role][this.views[role]];
    const sentAt = seq === undefined ? undefined : this.sentAt[seq];
    if (sentAt !== undefined) (this.actorOf[seq] === role ? counters.selfLatency : counters.partnerLatency).push(round2(performance.now() - sentAt));
    if (message.changes.phase) this.phase[role] = message.changes.phase;
    this.waiter?.();
  }

  /** Waits until `condition` holds (checked at each patch), at most `timeoutMs`. */
  waitFor(condition: () => boolean, timeoutMs: number): Promise<WaitResult> {
    if (this.aborted) return Promise.resolve('aborted');
    if (stopping) return Promise.resolve('stopped');
    if (condition()) return Promise.resolve('ok');
    return new Promise((resolve) => {
      const finish = (result: WaitResult) => {
        clearTimeout(timer);
        onStop.delete(stopped);
        this.waiter = null;
        resolve(result);
      };
      const stopped = () => finish('stopped');
      const timer = setTimeout(() => finish('stuck'), timeoutMs);
      onStop.add(stopped);
      this.waiter = () => {
        if (this.aborted) finish('aborted');
        else if (condition()) finish('ok');
      };
    });
  }

  act(role: Role, seq: number, action: PlayerAction): void {
    this.sentAt[seq] = performance.now();
    this.actorOf[seq] = role;
    this.rooms[role]!.send(ACTION_MESSAGE, action);
    counters.actionsSent += 1;
  }

  abort(): void {
    this.aborted = true;
    this.waiter?.();
  }

  async leave(): Promise<void> {
    this.leaving = true;
    await Promise.all(Object.values(this.rooms).map((room) => leaveRoom(room!)));
  }
}

const rooms = new Set<Room>();

async function leaveRoom(room: Room): Promise<void> {
  try {
    await Promise.race([room.leave(true), new Promise((resolve) => setTimeout(resolve, 5000))]);
  } catch {
    // already closed
  }
  rooms.delete(room);
}

async function join(client: Client, options: Record<string, unknown>): Promise<Room> {
  const room = await client.joinOrCreate(ROOM_NAME, options);
  rooms.add(room);
  return room;
}

/** Plays the first `length` actions of the script (all of them: a whole game), then leaves. */
async function playGame(config: WorkerConfig, script: Script, clients: { leader: Client; follower: Client }, label: string, length: number): Promise<void> {
  const joinStart = performance.now();
  const game = new Game(script);
  try {
    // The leader creates the private game; the follower joins it with the code the server drew.
    game.attach('leader', await join(clients.leader, { role: 'leader', private: true }));
    while (game.code === '') await sleep(5);
    game.attach('follower', await join(clients.follower, { role: 'follower', code: game.code }));
  } catch (caught) {
    await game.leave();
    // A server without room says so at once (P-153): the slot asks again when told, as the lobby does.
    if ((caught as { code?: number }).code === BUSY_STATUS) {
      counters.joins.refusedBusy += 1;
      await sleep(BUSY_RETRY_AFTER_SECONDS * 1000 * (0.5 + Math.random()));
      return;
    }
    counters.joins.failed += 1;
    error('join failed', (caught as Error).message);
    await sleep(1000);
    return;
  }
  counters.joins.accepted += 1;
  counters.joinLatency.push(round2(performance.now() - joinStart));
  const think = () => config.thinkMs * (1 - config.jitter + 2 * config.jitter * Math.random());
  let active = false;
  try {
    if ((await game.waitFor(() => game.phase.leader === 'playing' && game.phase.follower === 'playing', config.stuckMs)) !== 'ok') {
      if (!stopping && !game.aborted) error('stuck', `game ${label} did not start`);
      return;
    }
    active = true;
    activeGames += 1;
    counters.gamesStarted += 1;
    let next = performance.now() + think();
    const steps = script.steps.slice(0, length);
    for (const step of steps) {
      await sleep(next - performance.now());
      const seen = await game.waitFor(() => game.hasSeen(step.actor, step.seq - 1), config.stuckMs);
      if (seen === 'stuck') error('stuck', `game ${label}: the ${step.actor} did not see seq ${step.seq - 1} within ${config.stuckMs} ms`);
      if (seen !== 'ok') return;
      game.act(step.actor, step.seq, step.action);
      next = performance.now() + think();
    }
    const last = steps[steps.length - 1]?.seq ?? 0;
    const end = await game.waitFor(() => game.hasSeen('leader', last) && game.hasSeen('follower', last), config.stuckMs);
    if (end === 'stuck') error('stuck', `game ${label}: the last action was not seen`);
    if (end === 'ok' && length === script.steps.length) counters.gamesFinished += 1;
    else if (end === 'ok') counters.gamesCutShort += 1;
  } finally {
    if (active) activeGames -= 1;
    await game.leave();
  }
}

/**
 * Plays game after game in one slot. With `stagger`, the slot's first game stops after a random
 * number of actions (and is left, so the server logs it as abandoned): the slots' games are then
 * at all stages, and end and start at a steady rate, as on a server that has been up for a while.
 */
async function runSlot(config: WorkerConfig, script: Script, clients: { leader: Client; follower: Client }, slot: number): Promise<void> {
  await sleep(config.startAt + (slot * config.rampMs) / config.totalGames - Date.now());
  const total = script.steps.length;
  for (let round = 0; !stopping; round++) {
    const length = round === 0 && config.stagger ? 1 + Math.floor(Math.random() * total) : total;
    await playGame(config, script, clients, `bench-${slot}-${round}`, length);
  }
}

let running: Promise<unknown> | null = null;

function start(config: WorkerConfig): void {
  const script = buildScript(config.seed, config.liveFeedback);
  const clients = config.urls.map((url) => new Client(url));
  const of = (slot: number) => ({ leader: clients[slot % clients.length]!, follower: clients[(slot + 1) % clients.length]! });
  running = Promise.all(config.slots.map((slot) => runSlot(config, script, of(slot), slot)));
}

async function stop(worker: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  for (const wake of [...onStop]) wake();
  const force = setTimeout(() => process.exit(1), 20_000);
  await running;
  await Promise.all([...rooms].map(leaveRoom));
  clearTimeout(force);
  if (process.connected) await new Promise<void>((resolve) => process.send!({ type: 'stopped', worker } satisfies WorkerToBench, undefined, {}, () => resolve()));
  process.exit(0);
}

if (!process.send) throw new Error('bench/server-clients must be forked with an IPC channel (it is started by server.bench)');
const worker = Number(process.argv[2] ?? 0);
process.on('message', (message: BenchToWorker) => {
  if (message.type === 'start') start(message.config);
  else if (message.type === 'stop') void stop(worker);
  else if (message.type === 'report') {
    const report = counters;
    counters = fresh();
    send({ type: 'report', id: message.id, worker, usage: monitor.snapshot(), activeGames, ...report });
  }
});
process.on('unhandledRejection', (reason) => error('unhandled rejection', String((reason as Error)?.message ?? reason)));
process.on('disconnect', () => process.exit(1));
send({ type: 'ready', worker });
