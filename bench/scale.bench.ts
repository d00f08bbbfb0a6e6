/**
 * Scale-out benchmark (`npm run bench:scale`): the server load benchmark (real games, real
 * clients) against 1, 2, ... processes sharing Redis (`--servers 1,2,4,8`), each count offered
 * `--games-per-process` games per process (sized to saturate a process: each then admits what it
 * can serve and refuses the rest as busy, P-153); then one process keeping its games in
 * PostgreSQL (the store for several machines); then matchmaking latency without and with Redis.
 * Redis and PostgreSQL are started here from Debian's packages on free ports. Prints a table of
 * actions/s, the ratio to one process, server CPU per action, p99 and joins, and ends with the
 * line `scale-out: N processes / 1 process = R.RRx` for the largest count.
 *
 * The load generator runs on the same machine: on a machine with few cores it takes CPU the
 * server processes would need, so the ratios measured there are bounded by the machine, not by
 * the server; the CPU each action costs the servers is printed beside them.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ROOM_NAME } from '../shared/protocol/messages';
import { numberFlag, parseFlags, percentile, sortedCopy } from './server-common';
import { freePort, startPostgres, startRedis } from './services';

const HELP = `npm run bench:scale -- [flags]
  --servers LIST     the process counts swept, on Redis             default 1,2
  --games-per-process N
                     games offered per process in each run          default 1000
  --think-ms T       mean time between a game's actions, ms         default 250
  --duration-s D     measurement window of each run, seconds        default 30
  --matchmaking N    matchmaking calls timed in each setting (0: none) default 200
  --no-postgres      leave out the run on the PostgreSQL store
  --profile          profile the servers of the one- and two-process runs (bench:server --profile)
                     and print where their time went; profiling costs CPU, so compare the
                     figures of profiled runs only with each other`;

const FLAGS = ['help', 'servers', 'games-per-process', 'think-ms', 'duration-s', 'matchmaking', 'no-postgres', 'profile'];

interface ServerBenchResult {
  readonly config: { readonly games: number };
  readonly rates: { readonly actionsPerSecond: number };
  readonly joins: { readonly accepted: number; readonly refusedBusy: number; readonly failed: number };
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

/** The process counts of --servers: distinct, from 1 to 16, in the order given. */
function serverCounts(text: string): number[] {
  const counts = text.split(',').map((part) => Number(part.trim()));
  if (counts.length === 0 || counts.some((n) => !Number.isInteger(n) || n < 1 || n > 16)) throw new Error(`--servers takes counts from 1 to 16, as in 1,2,4,8, not ${JSON.stringify(text)}`);
  return [...new Set(counts)];
}

async function main(): Promise<void> {
  const flags = parseFlags(process.argv.slice(2));
  if (flags.has('help')) return void process.stdout.write(`${HELP}\n`);
  for (const name of flags.keys()) if (!FLAGS.includes(name)) throw new Error(`unknown flag --${name}\n${HELP}`);
  const counts = serverCounts(flags.get('servers') ?? '1,2');
  const gamesPerProcess = numberFlag(flags, 'games-per-process', 1000, 1, 100_000);
  const thinkMs = numberFlag(flags, 'think-ms', 250, 0, 600_000);
  const durationS = numberFlag(flags, 'duration-s', 30, 1, 3600);
  const matchmakingCalls = numberFlag(flags, 'matchmaking', 200, 0, 100_000);
  const load = (games: number) => ['--games', String(games), '--think-ms', String(thinkMs), '--duration-s', String(durationS)];
  const profile = flags.has('profile') ? ['--profile'] : [];
  const cores = availableParallelism();
  if (Math.max(...counts) >= cores) log(`bench:scale: this machine has ${cores} cores: runs of ${cores} processes or more share them with each other and with the load generator`);

  const redis = await startRedis();
  const postgres = flags.has('no-postgres') ? null : await startPostgres();
  try {
    const sweep: { servers: number; result: ServerBenchResult }[] = [];
    for (const servers of counts) {
      log(`bench:scale: ${servers} process(es) on Redis (${redis.url}), ${gamesPerProcess * servers} games offered, think ${thinkMs} ms`);
      sweep.push({ servers, result: await runServerBench([...load(gamesPerProcess * servers), ...profile, '--servers', String(servers), '--redis', redis.url]) });
    }
    let onPostgres: ServerBenchResult | null = null;
    if (postgres) {
      log(`bench:scale: one process keeping its games in PostgreSQL (${postgres.url}), ${gamesPerProcess} games offered`);
      onPostgres = await runServerBench([...load(gamesPerProcess), '--store', postgres.url]);
    }
    const matchmaking: string[] = [];
    if (matchmakingCalls > 0) {
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
      const mm = (name: string, m: { mean: number; p50: number; p95: number }) => `| ${name} | ${m.mean} ms | ${m.p50} ms | ${m.p95} ms |`;
      matchmaking.push(
        `Matchmaking (${matchmakingCalls} quick-play seat reservations each)`,
        '| setting | mean | p50 | p95 |',
        '|---|---|---|---|',
        mm('1 process, no Redis', withoutRedis),
        mm('1 process, Redis', oneOnRedis),
        mm('2 processes, Redis, alternately', acrossTwo),
        '',
      );
    }

    const base = sweep.find((run) => run.servers === 1)?.result ?? null;
    const ratio = (r: ServerBenchResult) => (base ? `${(r.rates.actionsPerSecond / base.rates.actionsPerSecond).toFixed(2)}` : '-');
    const row = (name: string, r: ServerBenchResult) =>
      `| ${name} | ${r.config.games} | ${r.rates.actionsPerSecond} | ${ratio(r)} | ${r.server.cpuUsPerAction} µs | ${r.latencyMs.actionToOwnView.p50} / ${r.latencyMs.actionToOwnView.p99} ms | ${r.server.cpuPercentOfCorePerProcess.join('% / ')}% | ${r.loadGenerator.cpuPercentOfCore}% | ${r.joins.accepted} / ${r.joins.refusedBusy} / ${r.joins.failed} |`;
    const largest = sweep[sweep.length - 1]!;
    process.stdout.write(
      [
        '',
        `Scale-out (${gamesPerProcess} games offered per process, think ${thinkMs} ms, ${durationS} s each, ${cores} cores)`,
        '| servers | games offered | actions/s | ratio to 1 process | server CPU per action | action -> own view p50 / p99 | CPU per process (% of a core) | load generator CPU | joins accepted / refused as busy / failed |',
        '|---|---|---|---|---|---|---|---|---|',
        ...sweep.map(({ servers, result }) => row(`${servers} process${servers > 1 ? 'es' : ''}, Redis`, result)),
        ...(onPostgres ? [row('1 process, PostgreSQL store', onPostgres)] : []),
        '',
        ...matchmaking,
        ...(onPostgres && base ? [`server CPU per action, PostgreSQL store / Redis and SQLite = ${(onPostgres.server.cpuUsPerAction / base.server.cpuUsPerAction).toFixed(2)}`] : []),
        ...(base && largest.servers > 1 ? [`scale-out: ${largest.servers} processes / 1 process = ${ratio(largest.result)}x`] : []),
        '',
      ].join('\n'),
    );
  } finally {
    await redis.stop();
    await postgres?.stop();
  }
}

main().catch((error) => {
  process.stderr.write(`bench:scale: ${(error as Error).message}\n`);
  process.exit(1);
});
