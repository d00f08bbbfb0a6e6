/**
 * The game server under test, as its own process (spawned by bench/server.bench.ts): startGameServer
 * with the real SqliteGameStore (or PgGameStore, with --store URL) on a fresh temporary data directory, on 127.0.0.1 and a free port. Turn
 * timers are an hour so nothing times out, every game is seeded with `--seed`, and
 * `--patch-rate-ms` sets the patch rate if given (else the room's default); `--data-parent DIR`
 * puts the data directory in DIR instead of the system's temporary directory. With `--redis URL
 * --port P` it is one of several processes (as `serve --redis`), reached at 127.0.0.1:P.
 *
 * It talks to the benchmark over stdin/stdout, one JSON object a line (stdout lines starting with
 * BENCH_PREFIX), not over an IPC channel: with one, Colyseus's optional @pm2/io integration takes
 * the process for a PM2 child and starts talking to it, which production servers do not do.
 * It answers `usage` requests with its CPU, memory and event-loop delay; on `stop` (or when stdin
 * closes: the benchmark went away) it ends every game, closes the store, removes the data
 * directory (unless --keep-data) and exits, which also writes the CPU profile under --cpu-prof.
 */
import './colyseus-cjs'; // first: one copy of @colyseus/core (see there)
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { DEFAULT_MAX_EVENT_LOOP_DELAY_MS } from '../server/admission';
import { Cluster } from '../server/cluster';
import { startGameServer } from '../server/index';
import { makeConfig } from '../shared/engine/config';
import type { RoomSettings } from '../server/rooms/GameRoom';
import { PgGameStore } from '../server/store/PgGameStore';
import { SqliteGameStore } from '../server/store/SqliteGameStore';
import type { GameStore } from '../server/store/types';
import { BENCH_PREFIX, numberFlag, parseFlags, UsageMonitor, type BenchToServer, type ServerToBench, type StoreTimings } from './server-common';

async function main(): Promise<void> {
  const send = (message: ServerToBench) => process.stdout.write(`${BENCH_PREFIX}${JSON.stringify(message)}\n`);
  const sendAndFlush = (message: ServerToBench) =>
    new Promise<void>((resolve) => process.stdout.write(`${BENCH_PREFIX}${JSON.stringify(message)}\n`, () => resolve()));
  const flags = parseFlags(process.argv.slice(2));
  const seed = numberFlag(flags, 'seed', 2);
  const keepData = flags.has('keep-data');
  const roomSettings: RoomSettings = {
    seed,
    leaderTurnSeconds: 3600,
    followerTurnSeconds: 3600,
    ...(flags.has('live-feedback') && { config: makeConfig({ liveFeedback: true }) }),
    ...(flags.has('patch-rate-ms') && { patchRateMs: numberFlag(flags, 'patch-rate-ms', 50, 5, 1000) }),
  };

  const dataDir = mkdtempSync(join(flags.get('data-parent') ?? tmpdir(), 'cerealbar-bench-'));
  const storeUrl = flags.get('store');
  const durability = { syncEachAction: flags.has('sync-each-action') };
  const store: GameStore = storeUrl === undefined ? SqliteGameStore.open(dataDir, durability) : await PgGameStore.open(storeUrl, dataDir, durability);
  // The store's calls are timed: they run synchronously in the room, on the event loop.
  const storeTimes = new StoreTimes();
  const port = numberFlag(flags, 'port', 0, 0, 65535);
  const redis = flags.get('redis');
  const cluster = redis === undefined ? undefined : await Cluster.connect({ redisUrl: redis, publicAddress: `127.0.0.1:${port}` });
  const server = await startGameServer({
    port,
    cluster,
    host: '127.0.0.1',
    services: {
      startLog: (header, info) => {
        const writer = storeTimes.time('startGame', () => store.startGame(header, info));
        return {
          append: (line) => storeTimes.time('append', () => writer.append(line)),
          end: (line) => storeTimes.time('end', () => writer.end(line)),
        };
      },
    },
    roomSettings,
    admission: {
      ...(flags.has('max-games') && { maxGames: numberFlag(flags, 'max-games', 0, 1, 1_000_000) }),
      // As serve: the event loop watched unless the flag says 0.
      maxEventLoopDelayMs: numberFlag(flags, 'max-event-loop-delay-ms', DEFAULT_MAX_EVENT_LOOP_DELAY_MS, 0, 60_000),
    },
  });

  const monitor = new UsageMonitor();

  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    const force = setTimeout(() => process.exit(code || 1), 20_000);
    try {
      await server.close();
      await store.close();
    } catch (error) {
      process.stderr.write(`closing the server: ${(error as Error).stack}\n`);
    }
    try {
      const logs = join(dataDir, 'logs');
      const files = readdirSync(logs);
      const bytes = files.reduce((sum, file) => sum + statSync(join(logs, file)).size, 0);
      await sendAndFlush({ type: 'stopped', logFiles: files.length, logBytes: bytes });
    } catch (error) {
      process.stderr.write(`counting the logs: ${(error as Error).message}\n`);
    }
    if (!keepData) rmSync(dataDir, { recursive: true, force: true });
    clearTimeout(force);
    process.exit(code);
  };

  const onMessage = (message: BenchToServer) => {
    if (message.type === 'usage') {
      send({ type: 'usage', id: message.id, usage: monitor.snapshot(), store: storeTimes.take() });
    } else if (message.type === 'stop') {
      void stop(0);
    }
  };
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (line.trim() !== '') onMessage(JSON.parse(line) as BenchToServer);
  });
  // The benchmark went away (or was killed): never outlive it.
  process.stdin.on('end', () => void stop(1));
  process.on('SIGTERM', () => void stop(0));
  send({ type: 'ready', port: server.port, dataDir });
}

/** Time spent in the store's calls (SQLite index, log files) since the last report. */
class StoreTimes {
  private times: StoreTimings = {};

  time<T>(kind: string, body: () => T): T {
    const start = performance.now();
    try {
      return body();
    } finally {
      const ms = performance.now() - start;
      const entry = (this.times[kind] ??= { count: 0, ms: 0, maxMs: 0 });
      entry.count += 1;
      entry.ms += ms;
      entry.maxMs = Math.max(entry.maxMs, ms);
    }
  }

  take(): StoreTimings {
    const times = this.times;
    this.times = {};
    return times;
  }
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack ?? error}\n`);
  process.exit(1);
});
