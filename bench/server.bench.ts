/**
 * Server load benchmark: many concurrent games on one game-server process. Run with
 * `npm run bench:server` (optionally `-- --games N --think-ms T --duration-s D ...`, see --help).
 *
 * Three kinds of process, all on 127.0.0.1:
 *   - the server (bench/server-process.ts): startGameServer with the real SqliteGameStore on a temporary
 *     data directory, every room seeded with one seed, turn timers of an hour;
 *   - client workers (bench/server-clients.ts): two @colyseus/sdk clients per game replaying the
 *     seed's self-play script at a human-like pace, starting a new game when one is over;
 *   - this process, which ramps the games up, samples every process's CPU and memory each second,
 *     measures over a window once all games are running, stops everything and prints a table and
 *     one JSON line.
 *
 * Latency is the time from a client sending an action to the `view` message that shows its result
 * to that client (own) or to the other player (partner, only for the actions it may see). The room
 * sends views as soon as it has applied an action, not at a patch tick.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { summarizeProfileFile, type FocusEntry } from './cpuprofile-summary';
import { freePort } from './services';
import { DEFAULT_PATCH_RATE_MS } from '../shared/protocol/messages';
import {
  BENCH_PREFIX,
  firstTimeoutFreeSeed,
  buildScript,
  numberFlag,
  parseFlags,
  percentile,
  sortedCopy,
  type BenchToServer,
  type BenchToWorker,
  type JoinCounts,
  type ServerToBench,
  type StoreTimings,
  type Usage,
  type WorkerConfig,
  type WorkerReport,
  type WorkerToBench,
} from './server-common';

const HELP = `npm run bench:server -- [flags]
  --games N          concurrent games (two clients each)            default 500
  --think-ms T       mean time between a game's actions, ms         default 250
  --jitter F         think times are uniform in T*(1-F .. 1+F)       default 0.5
  --duration-s D     measurement window, seconds                     default 60
  --ramp-s R         games start evenly over R seconds               default games/50, 5 to 30
  --settle-s S       wait after the ramp before measuring            default 5
  --workers W        client worker processes                         default 1
  --servers N        server processes, sharing matchmaking through
                     --redis URL (a game's players join through two
                     processes; each process keeps its own data dir)  default 1
  --redis URL        run the servers on Redis (needed for N > 1)
  --store URL        keep the games in PostgreSQL (postgres://...; each server still writes
                     its logs to its data dir first)                default: SQLite only
  --live-feedback    the games' rules have live feedback, and each follower turn the
                     leader sends a signal after the follower's first move
                                                                     default: off
  --sync-each-action flush each action to disk before its views are sent (serve
                     --sync-each-action)                              default: off
  --no-stagger       all games start at the beginning of the script (by default each slot's
                     first game stops after a random number of actions, so games are at all
                     stages and end and start at a steady rate)
  --seed S           game seed (the first from S whose script has no
                     timeout)                                       default 0 (gives seed 6)
  --patch-rate-ms P  the rooms' tick (the turn clock's resolution)   default: the room's (${DEFAULT_PATCH_RATE_MS})
  --server-runtime R node: the compiled server (dist/); tsx: its TypeScript through tsx,
                     as \`npm start\` runs it                             default node
  --data-parent DIR  where the server's temporary data directory goes     default: os.tmpdir()
                     (e.g. /dev/shm to take the disk out of the measurement)
  --max-games N      each server process holds at most N games (serve --max-games)  default: no limit
  --max-event-loop-delay-ms M
                     a server process is busy while its event loop's p99 delay is over M ms
                     (serve --max-event-loop-delay-ms; 0: never)      default 100
  --profile          run the server with --cpu-prof and summarise the profile
  --top N            functions listed from the profile               default 25
  --timeout-s X      kill everything after X seconds                 default ramp+settle+duration+120
  --quiet            no per-second progress lines`;

const FLAGS = [
  ...['help', 'games', 'think-ms', 'jitter', 'duration-s', 'ramp-s', 'settle-s', 'workers', 'servers', 'redis', 'store', 'live-feedback', 'sync-each-action', 'no-stagger', 'seed', 'patch-rate-ms'],
  ...['server-runtime', 'data-parent', 'profile', 'top', 'timeout-s', 'quiet', 'max-games', 'max-event-loop-delay-ms'],
];

/** Reads the flags; a bad one ends the process with the help text. */
function readFlags() {
  try {
    const flags = parseFlags(process.argv.slice(2));
    if (flags.has('help')) {
      process.stdout.write(`${HELP}\n`);
      process.exit(0);
    }
    const games = numberFlag(flags, 'games', 500, 1, 100_000);
    const rampS = numberFlag(flags, 'ramp-s', Math.min(30, Math.max(5, games / 50)), 0, 3600);
    const settleS = numberFlag(flags, 'settle-s', 5, 0, 3600);
    const durationS = numberFlag(flags, 'duration-s', 60, 1, 86_400);
    const runtime = flags.get('server-runtime') ?? 'node';
    if (runtime !== 'node' && runtime !== 'tsx') throw new Error(`--server-runtime is node or tsx, not ${JSON.stringify(runtime)}`);
    for (const name of flags.keys()) if (!FLAGS.includes(name)) throw new Error(`unknown flag --${name}`);
    const servers = numberFlag(flags, 'servers', 1, 1, 16);
    if (servers > 1 && !flags.has('redis')) throw new Error('--servers above 1 needs --redis URL');
    return {
      flags,
      GAMES: games,
      THINK_MS: numberFlag(flags, 'think-ms', 250, 0, 600_000),
      JITTER: numberFlag(flags, 'jitter', 0.5, 0, 1),
      DURATION_S: durationS,
      RAMP_S: rampS,
      SETTLE_S: settleS,
      WORKERS: Math.min(games, numberFlag(flags, 'workers', 1, 1, 64)),
      PROFILE: flags.has('profile'),
      TOP: numberFlag(flags, 'top', 25, 1, 500),
      TIMEOUT_S: numberFlag(flags, 'timeout-s', rampS + settleS + durationS + 120, 5, 86_400),
      QUIET: flags.has('quiet'),
      STAGGER: !flags.has('no-stagger'),
      PATCH_RATE: flags.has('patch-rate-ms') ? String(numberFlag(flags, 'patch-rate-ms', 50, 5, 1000)) : undefined,
      DATA_PARENT: flags.get('data-parent'),
      RUNTIME: runtime,
      SERVERS: servers,
      REDIS: flags.get('redis'),
      STORE: flags.get('store'),
      SYNC_EACH_ACTION: flags.has('sync-each-action'),
      LIVE_FEEDBACK: flags.has('live-feedback'),
    };
  } catch (error) {
    process.stderr.write(`bench:server: ${(error as Error).message}\n\n${HELP}\n`);
    process.exit(2);
  }
}
const { flags, GAMES, THINK_MS, JITTER, DURATION_S, RAMP_S, SETTLE_S, WORKERS, PROFILE, TOP, TIMEOUT_S, QUIET, STAGGER, PATCH_RATE, DATA_PARENT, RUNTIME, SERVERS, REDIS, STORE, SYNC_EACH_ACTION, LIVE_FEEDBACK } =
  readFlags();
const TICK_MS = 1000;

/**
 * What the profile summary breaks the server's time down into (by function name and a piece of
 * its script's path; functions renamed in the server show as 0 ms here until updated).
 */
const SERVER_FOCUS: FocusEntry[] = [
  { label: 'websocket messages in (ws receiver, all handling)', name: 'startLoop', url: '/ws/lib/receiver' },
  { label: '  msgpack decoding', name: 'unpack', url: '/msgpackr/' },
  { label: '  GameRoom.receive (one client message)', name: 'receive', url: '/rooms/GameRoom' },
  { label: '    zod message validation', name: 'safeParse', url: '/zod/' },
  { label: '    checkPlayerAction (legal actions)', name: 'checkPlayerAction', url: '/engine/legal' },
  { label: '    recorder.apply (engine + log line)', name: 'apply', url: '/log/recorder' },
  { label: '      engine step', name: 'step', url: '/engine/transition' },
  { label: '      serializeLine (JSON.stringify)', name: 'serializeLine', url: '/log/recorder' },
  { label: '      store append (write(2), SQLite score)', name: 'append', url: '/store/SqliteGameStore' },
  { label: "    sendViews (each player's view)", name: 'sendViews', url: '/rooms/gameSession' },
  { label: '      playerView', name: 'playerView', url: '/engine/playerView' },
  { label: '      viewChanges (compare with the last sent)', name: 'viewChanges', url: '/protocol/messages' },
  { label: '      websocket send (ws)', name: 'sendFrame', url: '/ws/lib/sender' },
  { label: 'room ticks (timers: turn clock, scripted follower)', name: 'processTimers', url: 'node:internal/timers' },
  { label: 'game start (GameSession.start)', name: 'start', url: '/rooms/gameSession' },
  { label: '  generateMap', name: 'generateMap', url: '/maps/generate' },
  { label: '  store.startGame (log file, SQLite insert)', name: 'startGame', url: '/store/SqliteGameStore' },
  { label: 'game end (GameSession.finish)', name: 'finish', url: '/rooms/gameSession' },
  { label: '  store end (write, fsync, SQLite)', name: 'end', url: '/store/SqliteGameStore' },
  { label: 'matchmaking HTTP requests', name: 'parserOnIncoming', url: 'node:_http_server' },
  // With --redis; these lines overlap (the driver's and the cluster's calls send commands).
  { label: 'Redis: commands sent (ioredis, with the socket write)', name: 'sendCommand', url: '/ioredis/built/Redis' },
  { label: 'Redis: replies read (ioredis)', name: '*', url: '/ioredis/built/DataHandler' },
  { label: "Redis: room listings (Colyseus's RedisDriver, parsing included)", name: '*', url: '/@colyseus/redis-driver/' },
  { label: "Redis: presence (Colyseus's RedisPresence: rooms' channels, IPC)", name: '*', url: '/@colyseus/redis-presence/' },
  { label: 'Redis: server/cluster.ts (registry, live processes, codes)', name: '*', url: '/server/cluster' },
  { label: 'garbage collection', name: '(garbage collector)', url: '' },
];

const log = (line: string) => process.stderr.write(`${line}\n`);
const children: ChildProcess[] = [];

/** Never hang: whatever happens, everything is killed after the global timeout. */
const globalTimer = setTimeout(() => {
  log(`bench:server: global timeout after ${TIMEOUT_S} s, killing everything`);
  killAll();
  process.exit(3);
}, TIMEOUT_S * 1000);

/** The servers' temporary data directories, removed here if a server is killed before it could. */
const serverDataDirs = new Set<string>();

function killAll(): void {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const dir of serverDataDirs) {
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // best effort: it is in the temporary directory
    }
  }
  serverDataDirs.clear();
}
process.on('SIGINT', () => {
  killAll();
  process.exit(130);
});
process.on('exit', killAll);

/**
 * Starts a compiled script of bench/ as a child process. Workers get an IPC channel; the server
 * does not (see server-process.ts): its messages come as stdout lines starting with BENCH_PREFIX,
 * re-emitted here as 'message' events, and it reads its requests from stdin. Other output lines
 * are passed on to stderr with the process's name.
 */
function startChild(script: string, args: string[], name: string, options: { ipc: boolean; execArgv?: string[] }): ChildProcess {
  const path = join(__dirname, script);
  const child = options.ipc
    ? fork(path, args, { stdio: ['ignore', 'pipe', 'pipe', 'ipc'], execArgv: options.execArgv ?? [] })
    : spawn(process.execPath, [...(options.execArgv ?? []), path, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  children.push(child);
  const forward = (stream: NodeJS.ReadableStream | null) => {
    let buffered = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        if (!options.ipc && line.startsWith(BENCH_PREFIX)) child.emit('message', JSON.parse(line.slice(BENCH_PREFIX.length)));
        else log(`[${name}] ${line}`);
      }
    });
  };
  forward(child.stdout);
  forward(child.stderr);
  return child;
}

function sendServer(server: ChildProcess, message: BenchToServer): void {
  server.stdin!.write(`${JSON.stringify(message)}\n`);
}

/** The next message from `child` that `pick` accepts, or an error after `timeoutMs` or on exit. */
function nextMessage<M, R>(child: ChildProcess, what: string, pick: (message: M) => R | undefined, timeoutMs = 20_000): Promise<R> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    const onMessage = (message: M) => {
      const picked = pick(message);
      if (picked !== undefined) {
        cleanup();
        resolve(picked);
      }
    };
    const onExit = (code: number | null, signal: string | null) => {
      cleanup();
      reject(new Error(`${what}: the process exited (${code ?? signal})`));
    };
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`${what}: no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

function waitExit(child: ChildProcess, timeoutMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      log(`a child process (pid ${child.pid}) did not exit within ${timeoutMs} ms: killed`);
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

const cpuMs = (u: Usage) => (u.userUs + u.systemUs) / 1000;

/** The machine's CPU time (/proc/stat, all cores), ms by state; null where there is no /proc. */
interface MachineCpu {
  readonly busy: number;
  readonly idle: number;
  readonly iowait: number;
  readonly steal: number;
}

function machineCpu(): MachineCpu | null {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, idle, iowait, irq, softirq, steal] = fields;
    const tick = 10; // USER_HZ is 100 on Linux: 10 ms a tick
    return { busy: (user + nice + system + irq + softirq) * tick, idle: idle * tick, iowait: iowait * tick, steal: steal * tick };
  } catch {
    return null;
  }
}

interface Tick {
  readonly at: number;
  readonly machine: MachineCpu | null;
  /** All server processes together (CPU, memory and GC summed; event-loop delay the worst). */
  readonly server: Usage;
  /** Each server process. */
  readonly servers: Usage[];
  readonly store: StoreTimings;
  readonly workers: WorkerReport[];
  readonly main: NodeJS.CpuUsage;
}

async function main(): Promise<void> {
  // The script: a seed whose self-play game has no timeout, so the games never wait for a timer.
  const seedFrom = numberFlag(flags, 'seed', 0, 0, 2 ** 31);
  const script = flags.has('seed') ? buildScript(seedFrom, LIVE_FEEDBACK) : firstTimeoutFreeSeed(seedFrom, LIVE_FEEDBACK);
  if (script.truncated) log(`seed ${script.seed}: the self-play game has a timeout; each game stops before it (${script.steps.length} actions) and is left`);
  const actionsPerGame = script.steps.length;

  // Is anything else running? The benchmark shares the machine's cores with whatever is.
  const before = machineCpu();
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const after = machineCpu();
  if (before && after) {
    const busy = (after.busy - before.busy) / 10;
    if (busy > OTHER_LOAD_WARNING) log(`bench:server: WARNING: the machine is already busy (${busy.toFixed(0)}% of a core before starting): the figures will be perturbed`);
  }

  // The servers: one, or several on Redis, each on a port of its own that is also its public address.
  const profileDir = PROFILE ? mkdtempSync(join(tmpdir(), 'cerealbar-server-profile-')) : null;
  const serverArgs = [
    ...['--seed', String(script.seed)],
    ...(PATCH_RATE ? ['--patch-rate-ms', PATCH_RATE] : []),
    ...(DATA_PARENT ? ['--data-parent', DATA_PARENT] : []),
    ...(STORE ? ['--store', STORE] : []),
    ...(SYNC_EACH_ACTION ? ['--sync-each-action'] : []),
    ...(LIVE_FEEDBACK ? ['--live-feedback'] : []),
    ...(['max-games', 'max-event-loop-delay-ms'] as const).flatMap((flag) => (flags.has(flag) ? [`--${flag}`, flags.get(flag)!] : [])),
  ];
  const profileArgs = profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [];
  const servers: ChildProcess[] = [];
  const urls: string[] = [];
  for (let i = 0; i < SERVERS; i++) {
    const args = [...serverArgs, ...(REDIS ? ['--redis', REDIS, '--port', String(await freePort())] : [])];
    const name = SERVERS > 1 ? `server ${i}` : 'server';
    // tsx: the TypeScript source next to the compiled script's directory (dist/bench -> bench).
    const server =
      RUNTIME === 'tsx'
        ? startChild(join('..', '..', 'bench', 'server-process.ts'), args, name, { ipc: false, execArgv: [...profileArgs, '--require', 'tsx/cjs'] })
        : startChild('server-process.js', args, name, { ipc: false, execArgv: profileArgs });
    const { port, dataDir } = await nextMessage<ServerToBench, { port: number; dataDir: string }>(server, `starting ${name}`, (m) => (m.type === 'ready' ? m : undefined));
    serverDataDirs.add(dataDir);
    servers.push(server);
    urls.push(`http://127.0.0.1:${port}`);
  }

  // The clients.
  const workers = Array.from({ length: WORKERS }, (_, w) => startChild('server-clients.js', [String(w)], `clients ${w}`, { ipc: true }));
  await Promise.all(workers.map((child, w) => nextMessage<WorkerToBench, true>(child, `starting client worker ${w}`, (m) => (m.type === 'ready' ? true : undefined))));
  const startAt = Date.now() + 200;
  const rampMs = RAMP_S * 1000;
  workers.forEach((child, w) => {
    const slots = Array.from({ length: GAMES }, (_, slot) => slot).filter((slot) => slot % WORKERS === w);
    const config: WorkerConfig = {
      worker: w,
      urls,
      seed: script.seed,
      liveFeedback: LIVE_FEEDBACK,
      slots,
      totalGames: GAMES,
      thinkMs: THINK_MS,
      jitter: JITTER,
      startAt,
      rampMs,
      stagger: STAGGER,
      stuckMs: 15_000,
    };
    child.send({ type: 'start', config } satisfies BenchToWorker);
  });
  log(
    `bench:server: ${GAMES} games (${2 * GAMES} clients in ${WORKERS} worker process(es)), think ${THINK_MS} ms ±${JITTER * 100}%, ` +
      `seed ${script.seed} (${actionsPerGame} actions a game), ramp ${RAMP_S} s, settle ${SETTLE_S} s, measure ${DURATION_S} s, server${SERVERS > 1 ? 's' : ''} on ${urls.join(', ')}${REDIS ? ' (Redis)' : ''} (pid ${servers.map((server) => server.pid).join(', ')})`,
  );

  // Sample every second; the window starts at the first tick after ramp + settle.
  let tickId = 0;
  const tick = async (): Promise<Tick> => {
    const id = ++tickId;
    const serverUsage = servers.map((server) =>
      nextMessage<ServerToBench, { usage: Usage; store: StoreTimings }>(server, 'server usage', (m) => (m.type === 'usage' && m.id === id ? m : undefined), 10_000),
    );
    const reports = workers.map((child, w) =>
      nextMessage<WorkerToBench, WorkerReport>(child, `client worker ${w} report`, (m) => (m.type === 'report' && m.id === id ? m : undefined), 10_000),
    );
    for (const server of servers) sendServer(server, { type: 'usage', id });
    for (const child of workers) child.send({ type: 'report', id } satisfies BenchToWorker);
    const answers = await Promise.all(serverUsage);
    const usages = answers.map((answer) => answer.usage);
    return {
      at: Date.now(),
      machine: machineCpu(),
      server: combineUsage(usages),
      servers: usages,
      store: combineStoreTimings(answers.map((answer) => answer.store)),
      workers: await Promise.all(reports),
      main: process.cpuUsage(),
    };
  };

  const windowStart = startAt + (RAMP_S + SETTLE_S) * 1000;
  const windowEnd = windowStart + DURATION_S * 1000;
  const window: Tick[] = [];
  let baseline: Tick | null = null;
  let previous = await tick();
  let firstErrors: string[] = [];
  const errorsBefore: Record<string, number> = {};
  let allActions = 0;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, TICK_MS - ((Date.now() - startAt) % TICK_MS)));
    const current = await tick();
    allActions += sum(current.workers, (r) => r.actionsSent);
    const inWindow = baseline !== null;
    if (inWindow) window.push(current);
    else for (const report of current.workers) for (const [kind, n] of Object.entries(report.errors)) errorsBefore[kind] = (errorsBefore[kind] ?? 0) + n;
    for (const report of current.workers) if (firstErrors.length < 10) firstErrors = firstErrors.concat(report.errorSamples).slice(0, 10);
    if (!QUIET) log(progressLine(current, previous, startAt, inWindow ? 'measure' : current.at < startAt + rampMs ? 'ramp' : 'settle'));
    previous = current;
    if (baseline === null && current.at >= windowStart) baseline = current;
    else if (baseline !== null && current.at >= windowEnd) break;
  }

  // Stop: clients leave (ending their games), then the servers end the rest and exit.
  log('bench:server: stopping the clients...');
  for (const child of workers) child.send({ type: 'stop' } satisfies BenchToWorker);
  await Promise.all(workers.map((child) => waitExit(child, 30_000)));
  log('bench:server: stopping the server...');
  const stopped = servers.map((server) =>
    nextMessage<ServerToBench, { logFiles: number; logBytes: number }>(server, 'server stop', (m) => (m.type === 'stopped' ? m : undefined), 30_000).catch((error: Error) => {
      log(error.message);
      return null;
    }),
  );
  for (const server of servers) sendServer(server, { type: 'stop' });
  const counted = await Promise.all(stopped);
  await Promise.all(servers.map((server) => waitExit(server, 30_000)));
  const stored = counted.includes(null) ? null : { logFiles: sum(counted, (c) => c!.logFiles), logBytes: sum(counted, (c) => c!.logBytes) };
  if (stored !== null) serverDataDirs.clear(); // the servers removed them
  clearTimeout(globalTimer);

  const result = summarize(baseline!, window, { actionsPerGame, seed: script.seed, truncated: script.truncated, stored, errorsBefore, firstErrors });
  process.stdout.write(`${table(result)}\n`);
  // Also with --quiet: whoever runs a sweep reads this line.
  process.stdout.write(`${joinsLine(result.joins)}\n`);
  if (profileDir) {
    const files = readdirSync(profileDir).filter((file) => file.endsWith('.cpuprofile'));
    if (files.length === 0) log(`no CPU profile in ${profileDir}`);
    for (const file of files) {
      process.stdout.write(`\nServer CPU profile (whole run, ramp and stop included): ${join(profileDir, file)}\n`);
      process.stdout.write(`${summarizeProfileFile(join(profileDir, file), { top: TOP, focus: SERVER_FOCUS, units: { count: allActions, name: 'action' } })}\n`);
    }
  }
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

/** Several processes' usage as one: CPU, memory and GC add up; the event-loop delay is the worst process's. */
function combineUsage(usages: readonly Usage[]): Usage {
  if (usages.length === 1) return usages[0]!;
  return {
    userUs: sum(usages, (u) => u.userUs),
    systemUs: sum(usages, (u) => u.systemUs),
    rssBytes: sum(usages, (u) => u.rssBytes),
    heapUsedBytes: sum(usages, (u) => u.heapUsedBytes),
    maxRssBytes: sum(usages, (u) => u.maxRssBytes),
    loopDelay: { p50: Math.max(...usages.map((u) => u.loopDelay.p50)), p99: Math.max(...usages.map((u) => u.loopDelay.p99)), max: Math.max(...usages.map((u) => u.loopDelay.max)) },
    gc: { count: sum(usages, (u) => u.gc.count), ms: sum(usages, (u) => u.gc.ms), maxMs: Math.max(...usages.map((u) => u.gc.maxMs)) },
  };
}

function combineStoreTimings(timings: readonly StoreTimings[]): StoreTimings {
  const combined: StoreTimings = {};
  for (const timing of timings) {
    for (const [kind, entry] of Object.entries(timing)) {
      const into = (combined[kind] ??= { count: 0, ms: 0, maxMs: 0 });
      into.count += entry.count;
      into.ms += entry.ms;
      into.maxMs = Math.max(into.maxMs, entry.maxMs);
    }
  }
  return combined;
}

function sum<T>(items: readonly T[], value: (item: T) => number): number {
  return items.reduce((total, item) => total + value(item), 0);
}

function progressLine(current: Tick, previous: Tick, startAt: number, phase: string): string {
  const seconds = (current.at - previous.at) / 1000;
  const pct = (ms: number) => `${(ms / 10 / seconds).toFixed(0).padStart(3)}%`;
  const self = sortedCopy(current.workers.flatMap((r) => r.selfLatency));
  const serverCpu = (cpuMs(current.server) - cpuMs(previous.server)) / 10 / seconds;
  const clientCpu = sum(current.workers, (r) => cpuMs(r.usage)) - sum(previous.workers, (r) => cpuMs(r.usage));
  const errors = sum(current.workers, (r) => sum(Object.values(r.errors), (n) => n));
  return [
    `t=${((current.at - startAt) / 1000).toFixed(0).padStart(4)}s ${phase.padEnd(7)}`,
    `games ${String(sum(current.workers, (r) => r.activeGames)).padStart(5)}`,
    `actions/s ${(sum(current.workers, (r) => r.actionsSent) / seconds).toFixed(0).padStart(5)}`,
    `views/s ${(sum(current.workers, (r) => r.views) / seconds).toFixed(0).padStart(5)}`,
    `latency p50 ${fmtMs(percentile(self, 50))} p99 ${fmtMs(percentile(self, 99))} max ${fmtMs(self[self.length - 1] ?? NaN)}`,
    `server cpu ${serverCpu.toFixed(0).padStart(3)}% rss ${mb(current.server.rssBytes)} loop p99 ${fmtMs(current.server.loopDelay.p99)} gc ${fmtMs(current.server.gc.ms)}/${fmtMs(current.server.gc.maxMs)} store max ${fmtMs(Math.max(0, ...Object.values(current.store).map((e) => e.maxMs)))}`,
    `clients cpu ${(clientCpu / 10 / seconds).toFixed(0).padStart(3)}%`,
    current.machine && previous.machine
      ? `machine busy ${pct(current.machine.busy - previous.machine.busy)} iowait ${pct(current.machine.iowait - previous.machine.iowait)} steal ${pct(current.machine.steal - previous.machine.steal)}`
      : '',
    errors > 0 ? `errors ${errors}` : '',
  ].join('  ');
}

/** Other load on the machine (% of a core) over the window above which the result carries a warning. */
const OTHER_LOAD_WARNING = 15;
/** Other load (% of a core) in one second above which the second counts as perturbed. */
const OTHER_LOAD_PER_SECOND = 25;

/** CPU the machine spent between two ticks on anything but this benchmark's processes, % of a core (null without /proc). */
function otherLoadPercent(previous: Tick, current: Tick): number | null {
  if (!previous.machine || !current.machine) return null;
  const ours =
    cpuMs(current.server) - cpuMs(previous.server) +
    sum(current.workers, (r) => cpuMs(r.usage)) - sum(previous.workers, (r) => cpuMs(r.usage)) +
    (current.main.user + current.main.system - previous.main.user - previous.main.system) / 1000;
  return (current.machine.busy - previous.machine.busy - ours) / 10 / ((current.at - previous.at) / 1000);
}

const fmtMs = (ms: number) => (Number.isFinite(ms) ? `${ms.toFixed(1)}ms` : '-').padStart(7);
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)}MB`;
const round = (n: number, digits = 1) => (Number.isFinite(n) ? Math.round(n * 10 ** digits) / 10 ** digits : null);

function latencyFigures(values: number[]) {
  const sorted = sortedCopy(values);
  return {
    samples: sorted.length,
    p50: round(percentile(sorted, 50), 2),
    p90: round(percentile(sorted, 90), 2),
    p95: round(percentile(sorted, 95), 2),
    p99: round(percentile(sorted, 99), 2),
    p999: round(percentile(sorted, 99.9), 2),
    max: round(sorted[sorted.length - 1] ?? NaN, 2),
    mean: round(sum(sorted, (v) => v) / sorted.length, 2),
  };
}

function storeFigures(window: Tick[], seconds: number) {
  const kinds = [...new Set(window.flatMap((t) => Object.keys(t.store)))].sort();
  return Object.fromEntries(
    kinds.map((kind) => {
      const entries = window.map((t) => t.store[kind]).filter((e) => e !== undefined);
      const count = sum(entries, (e) => e.count);
      const ms = sum(entries, (e) => e.ms);
      return [kind, { calls: count, msPerSecond: round(ms / seconds, 2), meanMs: round(ms / count, 3), maxMs: round(Math.max(...entries.map((e) => e.maxMs)), 1) }];
    }),
  );
}

type Result = ReturnType<typeof summarize>;

function summarize(
  baseline: Tick,
  window: Tick[],
  extra: {
    actionsPerGame: number;
    seed: number;
    truncated: boolean;
    stored: { logFiles: number; logBytes: number } | null;
    errorsBefore: Record<string, number>;
    firstErrors: string[];
  },
) {
  const end = window[window.length - 1];
  const seconds = (end.at - baseline.at) / 1000;
  const reports = window.flatMap((t) => t.workers);
  // Seconds in which other work on the machine took more than OTHER_LOAD_PER_SECOND of a core.
  const otherLoad = window.map((t, i) => otherLoadPercent(i === 0 ? baseline : window[i - 1], t));
  // Quiet: neither the second nor the one before (whose backlog spills over) was perturbed.
  const quiet = (i: number) => (otherLoad[i] ?? 0) <= OTHER_LOAD_PER_SECOND && (i === 0 || (otherLoad[i - 1] ?? 0) <= OTHER_LOAD_PER_SECOND);
  const cleanReports = window.filter((_, i) => quiet(i)).flatMap((t) => t.workers);
  const perSecond = (value: (r: WorkerReport) => number) => round(sum(reports, value) / seconds, 1);
  const errors: Record<string, number> = {};
  for (const report of reports) for (const [kind, n] of Object.entries(report.errors)) errors[kind] = (errors[kind] ?? 0) + n;
  const activeGames = window.map((t) => sum(t.workers, (r) => r.activeGames));
  const serverCpuPerTick = window.map((t, i) => (cpuMs(t.server) - cpuMs((i === 0 ? baseline : window[i - 1]).server)) / 10 / ((t.at - (i === 0 ? baseline : window[i - 1]).at) / 1000));
  const pctOfCore = (before: number, after: number) => round((after - before) / 10 / seconds, 1);
  const clientCpuBefore = sum(baseline.workers, (r) => cpuMs(r.usage));
  const clientCpuAfter = sum(end.workers, (r) => cpuMs(r.usage));
  const mainCpu = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;
  const serverCpu = pctOfCore(cpuMs(baseline.server), cpuMs(end.server));
  const clientCpu = pctOfCore(clientCpuBefore, clientCpuAfter);
  const benchCpu = pctOfCore(mainCpu(baseline.main), mainCpu(end.main));
  return {
    benchmark: 'server',
    date: new Date().toISOString(),
    host: { cores: cpus().length, cpu: cpus()[0]?.model ?? '', node: process.version },
    config: {
      games: GAMES,
      clients: 2 * GAMES,
      workers: WORKERS,
      thinkMs: THINK_MS,
      jitter: JITTER,
      seed: extra.seed,
      actionsPerGame: extra.actionsPerGame,
      scriptTruncated: extra.truncated,
      patchRateMs: PATCH_RATE ? Number(PATCH_RATE) : DEFAULT_PATCH_RATE_MS,
      stagger: STAGGER,
      rampS: RAMP_S,
      settleS: SETTLE_S,
      durationS: round(seconds, 1),
      serverRuntime: RUNTIME,
      dataParent: DATA_PARENT ?? tmpdir(),
      profiled: PROFILE,
      servers: SERVERS,
    },
    games: {
      concurrentMin: Math.min(...activeGames),
      concurrentMean: round(sum(activeGames, (n) => n) / activeGames.length, 1),
      concurrentMax: Math.max(...activeGames),
      started: sum(reports, (r) => r.gamesStarted),
      finished: sum(reports, (r) => r.gamesFinished),
      cutShort: sum(reports, (r) => r.gamesCutShort),
      logFilesWritten: extra.stored?.logFiles ?? null,
      logBytesWritten: extra.stored?.logBytes ?? null,
    },
    rates: {
      actionsPerSecond: perSecond((r) => r.actionsSent),
      viewsPerSecond: perSecond((r) => r.views),
      otherMessagesPerSecond: perSecond((r) => r.messages),
    },
    latencyMs: {
      actionToOwnView: latencyFigures(reports.flatMap((r) => r.selfLatency)),
      actionToPartnerView: latencyFigures(reports.flatMap((r) => r.partnerLatency)),
      /** The same as actionToOwnView, over the seconds in which (and after which) nothing else loaded the machine. */
      actionToOwnViewQuietSeconds: latencyFigures(cleanReports.flatMap((r) => r.selfLatency)),
      joinBothPlayers: latencyFigures(reports.flatMap((r) => r.joinLatency)),
    },
    /** New games asked for in the window: both players seated, refused as busy (503, P-153), failed otherwise. */
    joins: {
      accepted: sum(reports, (r) => r.joins.accepted),
      refusedBusy: sum(reports, (r) => r.joins.refusedBusy),
      failed: sum(reports, (r) => r.joins.failed),
    },
    errors: { total: sum(Object.values(errors), (n) => n), byKind: errors, beforeWindow: extra.errorsBefore, samples: extra.firstErrors },
    server: {
      processes: SERVERS,
      redis: REDIS !== undefined,
      database: STORE === undefined ? 'sqlite' : 'postgres',
      syncEachAction: SYNC_EACH_ACTION,
      liveFeedback: LIVE_FEEDBACK,
      cpuPercentOfCore: serverCpu,
      /** Each server process's share, when there are several. */
      cpuPercentOfCorePerProcess: end.servers.map((usage, i) => pctOfCore(cpuMs(baseline.servers[i]!), cpuMs(usage))),
      cpuPercentOfCorePeakSecond: round(Math.max(...serverCpuPerTick), 1),
      /** Server CPU time in the window over the actions sent in it: everything (views, sockets, logs) per action. */
      cpuUsPerAction: round(((cpuMs(end.server) - cpuMs(baseline.server)) * 1000) / sum(reports, (r) => r.actionsSent), 0),
      rssMB: round(end.server.rssBytes / 2 ** 20, 1),
      peakRssMB: round(end.server.maxRssBytes / 2 ** 20, 1),
      heapUsedMB: round(end.server.heapUsedBytes / 2 ** 20, 1),
      eventLoopDelayP99MsWorstSecond: round(Math.max(...window.map((t) => t.server.loopDelay.p99)), 1),
      eventLoopDelayMaxMs: round(Math.max(...window.map((t) => t.server.loopDelay.max)), 1),
      gcMsPerSecond: round(sum(window, (t) => t.server.gc.ms) / seconds, 1),
      gcLongestPauseMs: round(Math.max(...window.map((t) => t.server.gc.maxMs)), 1),
      /** Synchronous calls to the game store (log files, SQLite index), on the event loop. */
      store: storeFigures(window, seconds),
    },
    loadGenerator: {
      cpuPercentOfCore: clientCpu,
      benchProcessCpuPercentOfCore: benchCpu,
      rssMB: round(sum(end.workers, (r) => r.usage.rssBytes) / 2 ** 20, 1),
      eventLoopDelayP99MsWorstSecond: round(Math.max(...window.flatMap((t) => t.workers.map((r) => r.usage.loopDelay.p99))), 1),
      gcMsPerSecond: round(sum(reports, (r) => r.usage.gc.ms) / seconds, 1),
      gcLongestPauseMs: round(Math.max(...reports.map((r) => r.usage.gc.maxMs)), 1),
    },
    totalCpuPercentOfCore: round((serverCpu ?? 0) + (clientCpu ?? 0) + (benchCpu ?? 0), 1),
    /** The whole machine over the window (/proc/stat), % of one core: busy includes the kernel's work for these processes and anything else running. */
    machine:
      baseline.machine && end.machine
        ? {
            busyPercentOfCore: pctOfCore(baseline.machine.busy, end.machine.busy),
            otherThanBenchmarkPercentOfCore: round((pctOfCore(baseline.machine.busy, end.machine.busy) ?? 0) - ((serverCpu ?? 0) + (clientCpu ?? 0) + (benchCpu ?? 0)), 1),
            iowaitPercentOfCore: pctOfCore(baseline.machine.iowait, end.machine.iowait),
            stealPercentOfCore: pctOfCore(baseline.machine.steal, end.machine.steal),
            secondsPerturbed: otherLoad.filter((load) => load !== null && load > OTHER_LOAD_PER_SECOND).length,
            quietSeconds: window.filter((_, i) => quiet(i)).length,
            worstSecondOtherPercentOfCore: round(Math.max(...otherLoad.map((load) => load ?? 0)), 0),
          }
        : null,
  };
}

function joinsLine(joins: JoinCounts): string {
  return `joins: ${joins.accepted} accepted, ${joins.refusedBusy} refused as busy, ${joins.failed} failed`;
}

function table(r: Result): string {
  const l = r.latencyMs;
  const lat = (x: ReturnType<typeof latencyFigures>) => `p50 ${x.p50}  p95 ${x.p95}  p99 ${x.p99}  max ${x.max}  (${x.samples} samples)`;
  const rows: [string, string][] = [
    ['games (clients, worker processes)', `${r.config.games} (${r.config.clients}, ${r.config.workers})`],
    ['think time per action', `${r.config.thinkMs} ms ±${r.config.jitter * 100}%`],
    ['seed, actions per game', `${r.config.seed}, ${r.config.actionsPerGame}${r.config.scriptTruncated ? ' (cut before a timeout)' : ''}${r.server.liveFeedback ? ', live feedback on (a signal each follower turn)' : ''}`],
    ['room tick; server runtime', `${r.config.patchRateMs} ms; ${r.config.serverRuntime}`],
    ['server data directory in', r.config.dataParent],
    ['measured over', `${r.config.durationS} s after a ${r.config.rampS} s ramp and ${r.config.settleS} s settling`],
    ['games held concurrently (min / mean / max)', `${r.games.concurrentMin} / ${r.games.concurrentMean} / ${r.games.concurrentMax}`],
    ['games started / played to the end / cut short, in the window', `${r.games.started} / ${r.games.finished} / ${r.games.cutShort}${r.config.stagger ? ' (first games, staggered)' : ''}`],
    ['actions sent per second', `${r.rates.actionsPerSecond}`],
    ['view messages received per second (all clients)', `${r.rates.viewsPerSecond}`],
    ['other messages received per second', `${r.rates.otherMessagesPerSecond}`],
    ['action -> own view, ms', lat(l.actionToOwnView)],
    ['action -> partner view, ms', lat(l.actionToPartnerView)],
    [`action -> own view, quiet seconds only, ms`, lat(l.actionToOwnViewQuietSeconds)],
    ['join (both players), ms', lat(l.joinBothPlayers)],
    ['errors in the window', `${r.errors.total}${r.errors.total > 0 ? ` ${JSON.stringify(r.errors.byKind)}` : ''}`],
    [
      `server CPU (% of one core; peak second)${r.server.processes > 1 ? '; each process' : ''}`,
      `${r.server.cpuPercentOfCore}% (${r.server.cpuPercentOfCorePeakSecond}%)${r.server.processes > 1 ? `; ${r.server.cpuPercentOfCorePerProcess.join('% / ')}%` : ''}`,
    ],
    ['server CPU per action (all of its work / actions)', `${r.server.cpuUsPerAction} µs`],
    ['server RSS (peak), heap used', `${r.server.rssMB} MB (${r.server.peakRssMB} MB), ${r.server.heapUsedMB} MB`],
    ['server event-loop delay p99 (worst second), max', `${r.server.eventLoopDelayP99MsWorstSecond} ms, ${r.server.eventLoopDelayMaxMs} ms`],
    ['server GC: ms per second, longest pause', `${r.server.gcMsPerSecond} ms/s, ${r.server.gcLongestPauseMs} ms`],
    [
      'server store calls: ms per second (mean, max per call)',
      Object.entries(r.server.store)
        .map(([kind, f]) => `${kind} ${f.msPerSecond} (${f.meanMs}, ${f.maxMs})`)
        .join('; ') || '-',
    ],
    ['load generator CPU (% of one core), RSS', `${r.loadGenerator.cpuPercentOfCore}% (+ ${r.loadGenerator.benchProcessCpuPercentOfCore}% this process), ${r.loadGenerator.rssMB} MB`],
    ['load generator event-loop delay p99 (worst second)', `${r.loadGenerator.eventLoopDelayP99MsWorstSecond} ms`],
    ['load generator GC: ms per second, longest pause', `${r.loadGenerator.gcMsPerSecond} ms/s, ${r.loadGenerator.gcLongestPauseMs} ms`],
    ['total CPU, all processes (% of one core)', `${r.totalCpuPercentOfCore}% of ${r.host.cores * 100}%`],
    [
      'machine: busy (not these processes), iowait, steal',
      r.machine
        ? `${r.machine.busyPercentOfCore}% (${r.machine.otherThanBenchmarkPercentOfCore}%), ${r.machine.iowaitPercentOfCore}%, ${r.machine.stealPercentOfCore}% of ${r.host.cores * 100}%`
        : 'no /proc/stat',
    ],
    [
      `seconds perturbed (other work > ${OTHER_LOAD_PER_SECOND}% of a core)`,
      r.machine
        ? `${r.machine.secondsPerturbed} of ${Math.round(r.config.durationS ?? 0)} (${r.machine.quietSeconds} quiet seconds), worst ${r.machine.worstSecondOtherPercentOfCore}%`
        : 'no /proc/stat',
    ],
    ['game logs written (whole run)', r.games.logFilesWritten === null ? '?' : `${r.games.logFilesWritten} files, ${mb(r.games.logBytesWritten ?? 0)}`],
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  const lines = rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`);
  const other = r.machine?.otherThanBenchmarkPercentOfCore ?? 0;
  if (other > OTHER_LOAD_WARNING || (r.machine?.secondsPerturbed ?? 0) > 0) {
    lines.push(
      `WARNING: other work on the machine used ${other}% of a core over the window, more than ${OTHER_LOAD_PER_SECOND}% in ${r.machine?.secondsPerturbed} second(s): ` +
        'the figures are perturbed (see the quiet-seconds latency); run again on a quiet machine',
    );
  }
  const samples = r.errors.samples.length > 0 ? `\nfirst errors:\n${r.errors.samples.map((s) => `  ${s}`).join('\n')}` : '';
  return `\nServer benchmark (${r.host.cores} cores, ${r.host.cpu}, Node ${r.host.node})\n${lines.join('\n')}${samples}`;
}

main().catch((error) => {
  log(`bench:server failed: ${(error as Error).stack ?? error}`);
  killAll();
  process.exit(1);
});
