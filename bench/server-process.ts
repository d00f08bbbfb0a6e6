/**
 * The game server under test, as its own process (forked by bench/server.bench.ts with an IPC
 * channel): startGameServer with the real GameStore on a fresh temporary data directory, on
 * 127.0.0.1 and a free port. Turn timers are long (an hour) so nothing times out, every game is
 * seeded with `--seed`, and `--patch-rate-ms` sets the patch rate if given (else the room's
 * default). It answers `usage` requests with its CPU, memory and event-loop delay, and on `stop`
 * ends every game, closes the store, removes the data directory (unless --keep-data) and exits,
 * which also writes the CPU profile when run with --cpu-prof. It exits too if the benchmark goes.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startGameServer } from '../server/index';
import type { RoomSettings } from '../server/rooms/GameRoom';
import { GameStore } from '../server/store/GameStore';
import { numberFlag, parseFlags, usageSnapshot, type BenchToServer, type ServerToBench } from './server-common';

async function main(): Promise<void> {
  if (!process.send) throw new Error('bench/server-process must be forked with an IPC channel (it is started by server.bench)');
  const send = (message: ServerToBench) => process.send!(message);
  const sendAndFlush = (message: ServerToBench) => new Promise<void>((resolve) => process.send!(message, undefined, {}, () => resolve()));
  const flags = parseFlags(process.argv.slice(2));
  const seed = numberFlag(flags, 'seed', 2);
  const keepData = flags.has('keep-data');
  const roomSettings: RoomSettings = {
    seed,
    leaderTurnSeconds: 3600,
    followerTurnSeconds: 3600,
    ...(flags.has('patch-rate-ms') && { patchRateMs: numberFlag(flags, 'patch-rate-ms', 50, 5, 1000) }),
  };

  const dataDir = mkdtempSync(join(tmpdir(), 'cerealbar-bench-'));
  const store = GameStore.open(dataDir);
  const server = await startGameServer({
    port: 0,
    host: '127.0.0.1',
    services: { startLog: (header, info) => store.startGame(header, info) },
    roomSettings,
  });

  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();

  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    const force = setTimeout(() => process.exit(code || 1), 20_000);
    try {
      await server.close();
      store.close();
    } catch (error) {
      process.stderr.write(`closing the server: ${(error as Error).stack}\n`);
    }
    try {
      const logs = join(dataDir, 'logs');
      const files = readdirSync(logs);
      const bytes = files.reduce((sum, file) => sum + statSync(join(logs, file)).size, 0);
      if (process.connected) await sendAndFlush({ type: 'stopped', logFiles: files.length, logBytes: bytes });
    } catch (error) {
      process.stderr.write(`counting the logs: ${(error as Error).message}\n`);
    }
    if (!keepData) rmSync(dataDir, { recursive: true, force: true });
    clearTimeout(force);
    process.exit(code);
  };

  process.on('message', (message: BenchToServer) => {
    if (message.type === 'usage') {
      send({ type: 'usage', id: message.id, usage: usageSnapshot(delay) });
    } else if (message.type === 'stop') {
      void stop(0);
    }
  });
  // The benchmark went away (or was killed): never outlive it.
  process.on('disconnect', () => void stop(1));
  process.on('SIGTERM', () => void stop(0));
  send({ type: 'ready', port: server.port, dataDir });
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack ?? error}\n`);
  process.exit(1);
});
