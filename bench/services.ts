/**
 * The servers the scale-out tests and benchmark need, each started from Debian's package on a free port in a
 * temporary directory and stopped after: Redis (`redis-server`), nginx (`nginx`) and PostgreSQL
 * (`postgresql`).
 * Without the package a test fails with the package's name, never passes silently.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A free TCP port on 127.0.0.1 (free when asked; the caller binds it soon after). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function findProgram(name: string, debianPackage: string, candidates: readonly string[] = []): string {
  for (const path of candidates) if (existsSync(path)) return path;
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).stdout.trim();
  if (!found) throw new Error(`${name} is not installed: the scale-out tests need Debian's ${debianPackage} package (apt-get install ${debianPackage}); .ci/run installs it`);
  return found;
}

export interface RunningService {
  readonly url: string;
  stop(): Promise<void>;
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

async function waitUntil(check: () => boolean, what: string, timeoutMs: number): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Redis, nothing saved to disk. */
/** redis-server on `port` (a free one by default), empty, keeping nothing on disk. */
export async function startRedis(port?: number): Promise<RunningService> {
  const program = findProgram('redis-server', 'redis-server');
  const dir = mkdtempSync(join(tmpdir(), 'cerealbar-redis-'));
  port ??= await freePort();
  const child = spawn(program, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  await waitUntil(() => /Ready to accept connections/.test(output) || child.exitCode !== null, 'redis-server to start', 10_000);
  if (child.exitCode !== null) throw new Error(`redis-server did not start: ${output}`);
  return {
    url: `redis://127.0.0.1:${port}`,
    stop: async () => {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * nginx with the server block in `siteConfig` (the repository's deploy/nginx-cerealbar.conf, its
 * ports changed by the caller), under a temporary prefix.
 */
export async function startNginx(siteConfig: string, port: number): Promise<RunningService> {
  const program = findProgram('nginx', 'nginx', ['/usr/sbin/nginx']);
  const dir = mkdtempSync(join(tmpdir(), 'cerealbar-nginx-'));
  const main = `
    daemon off;
    worker_processes 1;
    pid ${dir}/nginx.pid;
    error_log ${dir}/error.log warn;
    events { worker_connections 4096; }
    http {
      access_log off;
      client_body_temp_path ${dir}/body;
      proxy_temp_path ${dir}/proxy;
      fastcgi_temp_path ${dir}/fastcgi;
      uwsgi_temp_path ${dir}/uwsgi;
      scgi_temp_path ${dir}/scgi;
      ${siteConfig}
    }`;
  writeFileSync(join(dir, 'nginx.conf'), main);
  const child = spawn(program, ['-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stderr!.on('data', (chunk) => (output += chunk));
  const start = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx did not start: ${output}${readError(join(dir, 'error.log'))}`);
    const answered = await fetch(`http://127.0.0.1:${port}/healthz`).then(() => true, () => false);
    if (answered) break;
    if (Date.now() - start > 10_000) throw new Error(`nginx did not answer on port ${port}: ${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      await stopChild(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function readError(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** Debian installs PostgreSQL's programs under /usr/lib/postgresql/<version>/bin, off the PATH. */
function postgresProgram(name: string): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  return findProgram(name, 'postgresql', versions.map((version) => join(root, version, 'bin', name)));
}

/** PostgreSQL that can be stopped and started again on the same data (an outage of the database). */
export interface PostgresService extends RunningService {
  /** Stops the server (a fast shutdown: its connections are cut); its data stays. */
  stopServer(): Promise<void>;
  /** Starts it again on the same port and data. */
  startServer(): Promise<void>;
}

/**
 * PostgreSQL with one database, `cerealbar`, trusting local connections, its data in a temporary
 * directory. PostgreSQL refuses to run as root, so as root it runs as the package's `postgres` user.
 */
export async function startPostgres(): Promise<PostgresService> {
  const initdb = postgresProgram('initdb');
  const postgres = postgresProgram('postgres');
  const dir = mkdtempSync(join(tmpdir(), 'cerealbar-postgres-'));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const ids = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    if (ids.status !== 0) throw new Error('PostgreSQL will not run as root, and there is no postgres user (Debian\'s postgresql package makes it)');
    const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout);
    chownSync(dir, Number(ids.stdout), gid);
  }
  const run = (program: string, args: string[]) => (asRoot ? ['runuser', ['-u', 'postgres', '--', program, ...args]] : [program, args]) as [string, string[]];
  const data = join(dir, 'data');
  const [initProgram, initArgs] = run(initdb, ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const init = spawnSync(initProgram, initArgs, { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.stdout}`);
  const port = await freePort();
  const settings = ['-c', 'fsync=off', '-c', 'full_page_writes=off', '-c', 'synchronous_commit=off', '-c', 'max_connections=200'];
  const [program, args] = run(postgres, ['-D', data, '-p', String(port), '-h', '127.0.0.1', '-k', dir, ...settings]);
  let child: ChildProcess | null = null;
  const startServer = async () => {
    const started = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    started.stdout!.on('data', (chunk) => (output += chunk));
    started.stderr!.on('data', (chunk) => (output += chunk));
    await waitUntil(() => /ready to accept connections/.test(output) || started.exitCode !== null, 'postgres to start', 20_000);
    if (started.exitCode !== null) throw new Error(`postgres did not start: ${output}`);
    child = started;
  };
  // SIGINT is PostgreSQL's fast shutdown: it ends every connection at once, as a failover does.
  // It goes to the server itself (its pid is the first line of postmaster.pid): runuser does not pass it on.
  const stopServer = async () => {
    const running = child;
    child = null;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    process.kill(Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]), 'SIGINT');
    await exited;
  };
  await startServer();
  const [createProgram, createArgs] = run(postgresProgram('createdb'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', 'cerealbar']);
  const created = spawnSync(createProgram, createArgs, { encoding: 'utf8' });
  if (created.status !== 0) throw new Error(`createdb failed: ${created.stderr}`);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/cerealbar`,
    stopServer,
    startServer,
    stop: async () => {
      await stopServer();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
