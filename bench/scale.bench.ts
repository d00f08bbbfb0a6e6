/**
 * Scale-out benchmark (`npm run bench:scale`): the server load benchmark (real games, real
 * clients) against one process and then against two processes on Redis, in one run, under the
 * same load; then one process keeping its games in PostgreSQL (the store for several machines);
 * then matchmaking latency without and with Redis. Redis and PostgreSQL are started here from
 * Debian's packages on free ports. Prints each run's figures and ends with the line
 * `scale-out: 2 processes / 1 process = R.RRx` (actions served per second).
 *
 * The load generator runs on the same machine: on two cores it takes CPU the second server
 * process would need, so the ratio measured here is bounded by the machine, not by the server.
 * The CPU each action costs the servers, on one process and on two, is printed beside it: the
 * ratio of the two is what a second core of its own would give.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOM_NAME } from '../shared/protocol/messages';
import { numberFlag, parseFlags, percentile, sortedCopy } from './server-common';
import { freePort, startPostgres, startRedis } from './services';

const HELP = `npm run bench:scale -- [flags]
  --games N          concurrent games in each run                   default 1000
  --think-ms T       mean time between a game's actions, ms         default 250
  --duration-s D     measurement window of each run, seconds        default 30
  --matchmaking N    matchmaking calls timed in each setting        default 200
  --profile          profile the servers of the one- and two-process runs (bench:server --profile)
                     and print where their time went; profiling costs CPU, so compare the
                     figures of profiled runs only with each other`;

const FLAGS = ['help', 'games', 'think-ms', 'duration-s', 'matchmaking', 'profile'];

interface ServerBenchResult {
  readonly rates: { readonly actionsPerSecond: number };
  readonly latencyMs: { readonly actionToOwnView: { readonly p50: number; readonly p99: number } };
  readonly server: { readonly cpuPercentOfCore: number; readonly cpuPercentOfCorePerProcess: number[]; readonly cpuUsPerAction: number };
  readonly loadGenerator: { readonly cpuPercentOfCore: number };
  readonly errors: { readonly total: number };
}

const log = (line: string) => process.stderr.write(`${line}\n`);

/** Runs the server benchmark (compiled, next to this file) and returns its JSON result line. */
function runServerBench(args: readonly string[]): Promise<ServerBenchResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(__dirname, 'server.bench.js'), '--quiet', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      process.stdout.write(chunk.split('\n').filter((line) => !line.startsWith('{')).join('\n'));
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      const json = output.split('\n').find((line) => line.startsWith('{"benchmark":"server"'));
      if (code !== 0 || !json) reject(new Error(`the server benchmark exited with ${code}`));
      else resolve(JSON.parse(json) as ServerBenchResult);
    });
  });
}

/** `cerealbar serve` (from the repository's bin/, dist/bench's grandparent), for the matchmaking figures. */
async function startServer(redis: string | undefined): Promise<{ url: string; stop(): void }> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'cerealbar-scale-'));
  const child = spawn(process.execPath, [join(__dirname, '..', '..', 'bin', 'cerealbar.cjs'), 'serve', '--port', String(port), '--host', '127.0.0.1', '--data', dataDir, ...(redis ? ['--redis', redis, '--public-address', `127.0.0.1:${port}`] : [])], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ADMIN_TOKEN: 'bench-scale-admin-token-0123456789' },
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const start = Date.now();
  while (!/listening on/.test(output)) {
    if (child.exitCode !== null || Date.now() - start > 30_000) throw new Error(`the server did not start: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () => {
      child.kill('SIGINT');
      child.once('exit', () => rmSync(dataDir, { recursive: true, force: true }));
    },
  };
}

/**
 * Times `calls` quick-play seat reservations (the HTTP matchmaking call, without connecting):
 * leaders and followers in turn, in pools of two, through the given servers in turn. Half make a
 * room, half find one. Unused reservations expire after a few seconds.
 */
async function timeMatchmaking(urls: readonly string[], calls: number): Promise<{ mean: number; p50: number; p95: number }> {
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    const body = JSON.stringify({ role: i % 2 === 0 ? 'leader' : 'follower', pool: `mm-${Math.floor(i / 2)}` });
    const start = performance.now();
    const answer = await fetch(`${urls[i % urls.length]}/matchmake/joinOrCreate/${ROOM_NAME}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    await answer.arrayBuffer();
    times.push(performance.now() - start);
    if (!answer.ok) throw new Error(`matchmaking call ${i} answered ${answer.status}`);
  }
  const sorted = sortedCopy(times);
  const round = (ms: number) => Math.round(ms * 100) / 100;
  return { mean: round(times.reduce((a, b) => a + b, 0) / times.length), p50: round(percentile(sorted, 50)), p95: round(percentile(sorted, 95)) };
}

async function main(): Promise<void> {
  const flags = parseFlags(process.argv.slice(2));
  if (flags.has('help')) return void process.stdout.write(`${HELP}\n`);
  for (const name of flags.keys()) if (!FLAGS.includes(name)) throw new Error(`unknown flag --${name}\n${HELP}`);
  const games = numberFlag(flags, 'games', 1000, 1, 100_000);
  const thinkMs = numberFlag(flags, 'think-ms', 250, 0, 600_000);
  const durationS = numberFlag(flags, 'duration-s', 30, 1, 3600);
  const matchmakingCalls = numberFlag(flags, 'matchmaking', 200, 2, 100_000);
  const load = ['--games', String(games), '--think-ms', String(thinkMs), '--duration-s', String(durationS)];
  const profile = flags.has('profile') ? ['--profile'] : [];

  const redis = await startRedis();
  const postgres = await startPostgres();
  try {
    log(`bench:scale: ${games} games, think ${thinkMs} ms: one process`);
    const one = await runServerBench([...load, ...profile]);
    log(`bench:scale: the same load on two processes with Redis (${redis.url})`);
    const two = await runServerBench([...load, ...profile, '--servers', '2', '--redis', redis.url]);
    log(`bench:scale: the same load on one process keeping its games in PostgreSQL (${postgres.url})`);
    const onPostgres = await runServerBench([...load, '--store', postgres.url]);

    log('bench:scale: matchmaking calls');
    const alone = await startServer(undefined);
    const withoutRedis = await timeMatchmaking([alone.url], matchmakingCalls);
    alone.stop();
    const first = await startServer(redis.url);
    const second = await startServer(redis.url);
    const oneOnRedis = await timeMatchmaking([first.url], matchmakingCalls);
    const acrossTwo = await timeMatchmaking([first.url, second.url], matchmakingCalls);
    first.stop();
    second.stop();

    const row = (name: string, r: ServerBenchResult) =>
      `| ${name} | ${r.rates.actionsPerSecond} | ${r.latencyMs.actionToOwnView.p50} / ${r.latencyMs.actionToOwnView.p99} ms | ${r.server.cpuPercentOfCorePerProcess.join('% / ')}% | ${r.server.cpuUsPerAction} µs | ${r.loadGenerator.cpuPercentOfCore}% | ${r.errors.total} |`;
    const mm = (name: string, m: { mean: number; p50: number; p95: number }) => `| ${name} | ${m.mean} ms | ${m.p50} ms | ${m.p95} ms |`;
    process.stdout.write(
      [
        '',
        `Scale-out (${games} games, think ${thinkMs} ms, ${durationS} s each)`,
        '| servers | actions/s | action -> own view p50 / p99 | CPU per process (% of a core) | server CPU per action | load generator CPU | errors |',
        '|---|---|---|---|---|---|---|',
        row('1 process', one),
        row('2 processes, Redis', two),
        row('1 process, PostgreSQL store', onPostgres),
        '',
        `Matchmaking (${matchmakingCalls} quick-play seat reservations each)`,
        '| setting | mean | p50 | p95 |',
        '|---|---|---|---|',
        mm('1 process, no Redis', withoutRedis),
        mm('1 process, Redis', oneOnRedis),
        mm('2 processes, Redis, alternately', acrossTwo),
        '',
        `server CPU per action, 1 process / 2 processes = ${(one.server.cpuUsPerAction / two.server.cpuUsPerAction).toFixed(2)} (1.00: a second process costs nothing per action)`,
        `server CPU per action, PostgreSQL store / SQLite only = ${(onPostgres.server.cpuUsPerAction / one.server.cpuUsPerAction).toFixed(2)}`,
        `scale-out: 2 processes / 1 process = ${(two.rates.actionsPerSecond / one.rates.actionsPerSecond).toFixed(2)}x`,
        '',
      ].join('\n'),
    );
  } finally {
    await redis.stop();
    await postgres.stop();
  }
}


main().catch((error) => {
  process.stderr.write(`bench:scale: ${(error as Error).message}\n`);
  process.exit(1);
});
