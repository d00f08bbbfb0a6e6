/**
 * The chaos soak (`npm run soak -- --minutes M`): two `cerealbar serve` processes, each on a data
 * directory of its own (two machines), sharing Redis and PostgreSQL, under a steady load of games
 * (bench/soak-load.ts), some of them a study's. While the load runs, the faults come in turn:
 * one process is killed (SIGKILL) and started again, the other is stopped (SIGSTOP) for 15 s,
 * Redis is restarted empty, PostgreSQL is stopped for up to 60 s, and the database's connections
 * are cut again and again. Then the load stops, both processes are stopped (SIGTERM) and every
 * game is checked (bench/soak-checks.ts). The last line is
 * `soak: N games, A acknowledged actions, L lost, U unreplayable, O open`; the exit code is 1 when
 * anything was lost, unreplayable, open or unexplained.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { PgWorkerStore } from '../server/store/PgWorkerStore';
import { setPath, studyFolder, validStudy, writeStudy } from '../test/study/fixtures';
import { numberFlag, parseFlags } from './server-common';
import { freePort, startPostgres, startRedis, type PostgresService, type RunningService } from './services';
import { checkSoak } from './soak-checks';
import { databaseGames } from './soak-database';
import { SoakLoad, type StudyWorker } from './soak-load';

const HELP = `npm run soak -- [flags]
  --minutes M        how long the load and the faults run          default 30
  --slots N          games played at once (not a study's)          default 12
  --study-slots N    a study's games played at once                default 2
  --think-ms T       mean pause before a player's action, ms       default 300
  --keep             keep the run's directory (data, server output) afterwards`;

const FLAGS = ['help', 'minutes', 'slots', 'study-slots', 'think-ms', 'keep'];
const ADMIN_TOKEN = 'soak-admin-token-0123456789abcdef';
const STUDY = 'soak';
const BIN = join(__dirname, '..', 'bin', 'cerealbar.cjs');

const say = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One `cerealbar serve` process (one machine: its own data directory), started again after a kill. */
class ServeProcess {
  child: ChildProcess | null = null;
  readonly url: string;
  readonly exits: (number | string)[] = [];

  constructor(
    readonly name: string,
    readonly dataDir: string,
    private readonly args: readonly string[],
    private readonly outputFile: string,
    port: number,
  ) {
    this.url = `http://127.0.0.1:${port}`;
  }

  async start(): Promise<void> {
    const child = spawn(process.execPath, [BIN, 'serve', ...this.args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ADMIN_TOKEN } });
    const file = createWriteStream(this.outputFile, { flags: 'a' });
    let output = '';
    const keep = (chunk: Buffer) => {
      file.write(chunk);
      if (output.length < 100_000) output += chunk;
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    child.once('exit', (code, signal) => {
      this.exits.push(code ?? signal ?? '?');
      file.end();
    });
    this.child = child;
    const started = Date.now();
    while (!/Admin token/.test(output)) {
      if (child.exitCode !== null) throw new Error(`${this.name} exited at start (${child.exitCode}): ${output}`);
      if (Date.now() - started > 60_000) throw new Error(`${this.name} did not start within 60 s: ${output}`);
      await sleep(100);
    }
  }

  signal(signal: NodeJS.Signals): void {
    this.child?.kill(signal);
  }

  /** SIGTERM (drain, then stop) and the exit code. */
  async stop(): Promise<number | string> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return this.exits.at(-1) ?? '?';
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    await Promise.race([exited, sleep(120_000)]);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
      return 'did not stop within 120 s';
    }
    return this.exits.at(-1) ?? '?';
  }

  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
  }
}

/** Cuts every connection the servers hold to the database (an administrator's pg_terminate_backend). */
async function dropConnections(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    const { rowCount } = await client.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'cerealbar' AND pid <> pg_backend_pid() AND backend_type = 'client backend'");
    return rowCount ?? 0;
  } finally {
    await client.end();
  }
}

/** The faults, at their share of the run: each says what it did. */
function faults(
  servers: readonly [ServeProcess, ServeProcess],
  redis: { current: RunningService; port: number },
  postgres: PostgresService,
  runMs: number,
): { atMs: number; run: () => Promise<void> }[] {
  const postgresOutageMs = Math.min(60_000, runMs * 0.1);
  return [
    {
      atMs: runMs * 0.12,
      run: async () => {
        say(`fault: SIGKILL ${servers[0].name}`);
        await servers[0].kill();
        await sleep(2000);
        await servers[0].start();
        say(`${servers[0].name} started again`);
      },
    },
    {
      atMs: runMs * 0.27,
      run: async () => {
        say(`fault: SIGSTOP ${servers[1].name} for 15 s`);
        servers[1].signal('SIGSTOP');
        await sleep(15_000);
        servers[1].signal('SIGCONT');
        say(`${servers[1].name} continued`);
      },
    },
    {
      atMs: runMs * 0.42,
      run: async () => {
        say('fault: Redis restarted empty');
        await redis.current.stop();
        await sleep(1000);
        redis.current = await startRedis(redis.port);
      },
    },
    {
      atMs: runMs * 0.55,
      run: async () => {
        say(`fault: PostgreSQL stopped for ${Math.round(postgresOutageMs / 1000)} s`);
        await postgres.stopServer();
        await sleep(postgresOutageMs);
        await postgres.startServer();
        say('PostgreSQL started again');
      },
    },
    {
      atMs: runMs * 0.72,
      run: async () => {
        const until = Date.now() + runMs * 0.15;
        let times = 0;
        let cut = 0;
        while (Date.now() < until) {
          cut += await dropConnections(postgres.url).catch(() => 0);
          times++;
          await sleep(Math.min(5000, runMs * 0.02));
        }
        say(`fault: the database's connections cut ${times} times (${cut} connections)`);
      },
    },
  ];
}


function diskLogs(dataDirs: readonly string[]): Map<string, string> {
  const logs = new Map<string, string>();
  for (const dir of dataDirs) {
    const logsDir = join(dir, 'logs');
    if (!existsSync(logsDir)) continue;
    for (const file of readdirSync(logsDir)) if (file.endsWith('.jsonl')) logs.set(file.slice(0, -'.jsonl'.length), readFileSync(join(logsDir, file), 'utf8'));
  }
  return logs;
}

async function main(): Promise<number> {
  const flags = parseFlags(process.argv.slice(2));
  for (const name of flags.keys()) if (!FLAGS.includes(name)) throw new Error(`unknown flag --${name}\n${HELP}`);
  if (flags.has('help')) {
    process.stdout.write(`${HELP}\n`);
    return 0;
  }
  const runMs = numberFlag(flags, 'minutes', 30, 1, 24 * 60) * 60_000;
  const slots = numberFlag(flags, 'slots', 12, 1, 200);
  const studySlots = numberFlag(flags, 'study-slots', 2, 0, 50);
  const thinkMs = numberFlag(flags, 'think-ms', 300, 10, 10_000);

  const runDir = mkdtempSync(join(tmpdir(), 'cerealbar-soak-'));
  say(`soak: ${runMs / 60_000} minutes in ${runDir}`);
  const postgres = await startPostgres();
  const redisPort = await freePort();
  const redis = { current: await startRedis(redisPort), port: redisPort };
  const study = setPath(validStudy(), 'id', STUDY);
  setPath(study, 'roles', { newWorkersStartAs: 'either' });
  setPath(study, 'time', { waitForPartnerSeconds: 600, sessionMinutes: 600 });
  const studyFile = writeStudy(studyFolder(join(runDir, 'study')), study);
  const servers = [] as unknown as [ServeProcess, ServeProcess];
  for (const name of ['machine-a', 'machine-b']) {
    const port = await freePort();
    const dataDir = join(runDir, name);
    mkdirSync(dataDir);
    // Turns long enough that no turn times out: every action a player takes is one it chose.
    const args = ['--port', String(port), '--host', '127.0.0.1', '--data', dataDir, '--redis', redis.current.url, '--public-address', `127.0.0.1:${port}`, '--store', postgres.url, '--study', studyFile, '--leader-seconds', '3600', '--follower-seconds', '3600', '--reconnect-seconds', '5', '--drain-seconds', '10'];
    servers.push(new ServeProcess(name, dataDir, args, join(runDir, `${name}.out`), port));
  }
  for (const server of servers) await server.start();

  let workersMade = 0;
  const newPair = async (): Promise<StudyWorker[]> => {
    const pair: StudyWorker[] = [];
    for (let i = 0; i < 2; i++) {
      const participantId = `W${String(++workersMade).padStart(5, '0')}`;
      const token = await preparedWorker(servers.map((server) => server.url), participantId);
      pair.push({ token, participantId });
    }
    return pair;
  };
  const load = new SoakLoad({ urls: servers.map((server) => server.url), slots, thinkMs, stuckMs: 90_000, study: { slots: studySlots, newPair, id: STUDY } });
  const started = Date.now();
  load.start();
  for (const fault of faults(servers, redis, postgres, runMs)) {
    await sleep(started + fault.atMs - Date.now());
    await fault.run().catch((error: Error) => say(`the fault failed: ${error.message}`));
  }
  await sleep(started + runMs - Date.now());
  say(`load stopping: ${JSON.stringify(load.figures)}`);
  await load.stop(60_000);
  const exits = await Promise.all(servers.map((server) => server.stop()));
  say(`servers stopped: ${servers.map((server, i) => `${server.name} ${exits[i]} (exits ${server.exits.join(', ')})`).join('; ')}`);

  const workerStore = await PgWorkerStore.open(postgres.url);
  const workers = await Promise.all((await workerStore.list(STUDY)).map(async (worker) => ({ worker, games: await workerStore.games(STUDY, worker.participantId) })));
  await workerStore.close();
  const report = checkSoak({ disk: diskLogs(servers.map((server) => server.dataDir)), database: await databaseGames(postgres.url), seats: load.seats, workers });
  await redis.current.stop();
  await postgres.stop();
  for (const line of report.problems) say(`problem: ${line}`);
  const stoppedBadly = exits.filter((exit) => exit !== 0).length;
  if (stoppedBadly > 0) say(`problem: ${stoppedBadly} server(s) did not stop cleanly (exit ${exits.join(', ')}): see ${runDir}`);
  const failed = report.lost + report.unreplayable + report.open + report.unexplained + report.workersDisagreeing + stoppedBadly > 0;
  if (!failed && !flags.has('keep')) rmSync(runDir, { recursive: true, force: true });
  else say(`the run's data and the servers' output are in ${runDir}`);
  process.stdout.write(
    `${JSON.stringify({ benchmark: 'soak', minutes: runMs / 60_000, load: load.figures, workers: workers.length, ...report, problems: undefined })}\n` +
      `soak: ${report.games} games, ${report.acknowledged} acknowledged actions, ${report.lost} lost, ${report.unreplayable} unreplayable, ${report.open} open` +
      `${report.unexplained > 0 ? `, ${report.unexplained} unexplained` : ''}${report.workersDisagreeing > 0 ? `, ${report.workersDisagreeing} workers disagreeing` : ''}\n`,
  );
  return failed ? 1 : 0;
}

/** A study worker taken through consent, the rules, both tutorials and the quiz by the study API; its session token. */
async function preparedWorker(urls: readonly string[], participantId: string): Promise<string> {
  let calls = 0;
  const call = async (path: string, body: unknown, token?: string): Promise<any> => { // eslint-disable-line @typescript-eslint/no-explicit-any
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(token && { authorization: `Bearer ${token}` }) };
    const response = await fetch(`${urls[calls++ % urls.length]}/api/studies/${STUDY}/${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    const answer = await response.json();
    if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(answer)}`);
    return answer;
  };
  const { token } = await call('session', { PROLIFIC_PID: participantId, STUDY_ID: 'ST', SESSION_ID: `S-${participantId}` });
  await call('consent', { agree: true }, token);
  await call('rules', { read: true }, token);
  for (const role of ['leader', 'follower']) await call('tutorial', { role }, token);
  await call('quiz', { answers: [0, 1, 1] }, token);
  return token;
}

main().then(
  (code) => process.exit(code),
  (error: Error) => {
    process.stderr.write(`soak: ${error.message}\n`);
    process.exit(1);
  },
);
