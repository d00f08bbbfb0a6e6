/**
 * `npm run test:container`: the container image (deploy/Dockerfile) and the compose stack
 * (deploy/compose.yaml) built and run with podman, as an operator would, then played through
 * nginx, with one game server container killed mid-game and started again, another stopped to
 * see it drain, and the chaos soak's checks over what they left (bench/soak-checks.ts): every
 * acknowledged action in the logs on the game servers' volumes and in PostgreSQL, every log
 * replaying (there and with the image's own `cerealbar replay`), none left open.
 *
 * Public images cannot be pulled on every machine (nor on this project's): the test makes its own
 * bases and passes them in place of the public ones (deploy/Dockerfile's BASE, compose.yaml's
 * CEREALBAR_*_IMAGE): Debian bookworm by debootstrap imported into podman, this machine's Node 20
 * on top (node:20-bookworm-slim's layout), and Redis, PostgreSQL and nginx from Debian's packages
 * behind the interface of their official images. They are kept in podman's image store (and the
 * debootstrap tarball in the cache directory, CEREALBAR_CONTAINER_CACHE, default
 * /var/tmp/cerealbar-container), so that a second run builds only the CerealBar image.
 *
 * Needs root's podman, podman-compose, runc and debootstrap (Debian's packages). Each check prints
 * `ok` or `FAIL`; the last line is `test:container: N passed, M failed`, and the exit code is 1 when
 * anything failed, or when the test could not run at all (one line says why).
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../bench/services';
import { checkSoak } from '../bench/soak-checks';
import { databaseGames } from '../bench/soak-database';
import { SoakLoad } from '../bench/soak-load';

const ROOT = join(__dirname, '..');
const COMPOSE_FILE = join(ROOT, 'deploy', 'compose.yaml');
const CACHE = process.env.CEREALBAR_CONTAINER_CACHE ?? '/var/tmp/cerealbar-container';
const DEBIAN_MIRROR = process.env.CEREALBAR_DEBIAN_MIRROR ?? 'http://deb.debian.org/debian';
const PROJECT = 'cerealbar-ctest';
const IMAGE = 'localhost/cerealbar:container-test';
const BASES = {
  debian: 'localhost/cerealbar-test/debian:bookworm',
  node: 'localhost/cerealbar-test/node:20-bookworm-slim',
  redis: 'localhost/cerealbar-test/redis:bookworm',
  postgres: 'localhost/cerealbar-test/postgres:bookworm',
  nginx: 'localhost/cerealbar-test/nginx:bookworm',
};
/** Short, so that the drain's end is seen within the test (compose's default is 35 minutes). */
const DRAIN_SECONDS = 15;
const KEEP = process.argv.includes('--keep');

const started = Date.now();
const elapsed = () => `${((Date.now() - started) / 1000).toFixed(0)} s`;
const say = (line: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Stops the test with one line saying why it could not run. */
class CannotRun extends Error {}

let passed = 0;
let failed = 0;
function check(ok: boolean, what: string, detail = ''): boolean {
  if (ok) passed++;
  else failed++;
  process.stdout.write(`${ok ? 'ok' : 'FAIL'} - ${what}${detail ? `: ${detail}` : ''}\n`);
  return ok;
}

// ---------------------------------------------------------------------------------------------
// Commands

/** The environment of every podman command: CONTAINERS_CONF once the probe has chosen one. */
const podmanEnv: NodeJS.ProcessEnv = { ...process.env };

interface Ran {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function run(command: string, args: readonly string[], options: { input?: string; env?: NodeJS.ProcessEnv } = {}): Ran {
  const result = spawnSync(command, args, { encoding: 'utf8', env: options.env ?? podmanEnv, input: options.input, maxBuffer: 256 * 1024 * 1024 });
  if (result.error) return { status: null, stdout: '', stderr: result.error.message };
  return { status: result.status, stdout: result.stdout, stderr: withoutSystemdNoise(result.stderr) };
}

const podman = (...args: string[]) => run('podman', args);

/**
 * podman's complaint, at each container start, that it cannot make systemd timers for the
 * container's healthcheck where systemd does not run: the test runs the healthchecks itself.
 */
const SYSTEMD_NOISE = /unable to get systemd connection to (add|start) healthchecks/;
const withoutSystemdNoise = (text: string) =>
  text
    .split('\n')
    .filter((line) => !SYSTEMD_NOISE.test(line))
    .join('\n');

/** The last lines of a command's output, for a failure's message. */
const tail = (text: string, lines = 15) => text.trim().split('\n').slice(-lines).join('\n');

/** A long command (a build), its output into `logFile`; throws with the log's tail when it fails. */
function runLogged(what: string, command: string, args: readonly string[], logFile: string, options: { stdin?: string } = {}): Promise<void> {
  return new Promise((resolve, reject) => {
    const log = createWriteStream(logFile);
    const child = spawn(command, args, { env: podmanEnv, stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    child.stdout!.pipe(log, { end: false });
    child.stderr!.pipe(log, { end: false });
    if (options.stdin !== undefined) child.stdin!.end(options.stdin);
    child.once('error', (error) => reject(new Error(`${what}: ${error.message}`)));
    child.once('close', (code) => {
      log.end(() => {
        if (code === 0) resolve();
        else reject(new Error(`${what} failed (exit ${code}); the end of ${logFile}:\n${tail(readFileSync(logFile, 'utf8'), 25)}`));
      });
    });
  });
}

function requireProgram(name: string, debianPackage: string): void {
  if (run('sh', ['-c', `command -v ${name}`]).status !== 0) throw new CannotRun(`${name} is not installed: apt-get install -y podman podman-compose runc debootstrap (missing: ${debianPackage})`);
}

// ---------------------------------------------------------------------------------------------
// podman itself, and the bases

const imageExists = (name: string) => podman('image', 'exists', name).status === 0;
const imageLabel = (name: string, label: string) => podman('image', 'inspect', '--format', `{{index .Labels "${label}"}}`, name).stdout.trim();

/** Debian bookworm by debootstrap, imported as an image; the tarball stays in the cache. */
async function ensureDebianBase(): Promise<void> {
  if (imageExists(BASES.debian)) return;
  const tarball = join(CACHE, 'debian-bookworm-minbase.tar');
  if (!existsSync(tarball)) {
    const rootfs = join(CACHE, 'rootfs');
    rmSync(rootfs, { recursive: true, force: true });
    say(`debootstrap: Debian bookworm into ${rootfs} (once; cached as ${tarball})`);
    await runLogged('debootstrap', 'debootstrap', ['--variant=minbase', 'bookworm', rootfs, DEBIAN_MIRROR], join(CACHE, 'debootstrap.log'));
    rmSync(join(rootfs, 'var/cache/apt/archives'), { recursive: true, force: true });
    mkdirSync(join(rootfs, 'var/cache/apt/archives/partial'), { recursive: true });
    rmSync(join(rootfs, 'var/lib/apt/lists'), { recursive: true, force: true });
    mkdirSync(join(rootfs, 'var/lib/apt/lists/partial'), { recursive: true });
    await runLogged('tar', 'tar', ['-C', rootfs, '-cf', `${tarball}.part`, '.'], join(CACHE, 'tar.log'));
    await runLogged('mv', 'mv', [`${tarball}.part`, tarball], join(CACHE, 'tar.log'));
    rmSync(rootfs, { recursive: true, force: true });
  }
  say(`podman import ${tarball} as ${BASES.debian}`);
  await runLogged('podman import', 'podman', ['import', '--change', 'CMD ["bash"]', tarball, BASES.debian], join(CACHE, 'import.log'));
}

/**
 * Which podman configuration runs a container here: podman's own, else the one this sandbox
 * needs (runc, as crun refuses cgroups in hybrid mode; limits no higher than this process's, as
 * raising them needs CAP_SYS_RESOURCE). Throws when neither does, with podman's error lines.
 */
function chooseRuntime(): void {
  const probe = () => podman('run', '--rm', '--network', 'none', BASES.debian, 'true');
  const first = probe();
  if (first.status === 0) {
    say('podman runs containers with its own configuration');
    return;
  }
  const nofile = Number(run('sh', ['-c', 'ulimit -Hn']).stdout.trim()) || 4096;
  const nproc = Number(run('sh', ['-c', 'ulimit -Hu']).stdout.trim()) || 4096;
  // Below this process's own hard limits: a container's runtime may lower them, never raise them.
  const limit = (hard: number) => Math.max(1024, Math.min(65536, Math.floor(hard / 2)));
  const file = join(CACHE, 'containers.conf');
  writeFileSync(
    file,
    [
      '# Written by tools/test-container.ts: what podman needs to run containers on this machine.',
      '[containers]',
      `default_ulimits = ["nofile=${limit(nofile)}:${limit(nofile)}", "nproc=${limit(nproc)}:${limit(nproc)}"]`,
      '[engine]',
      'runtime = "runc"',
      'cgroup_manager = "cgroupfs"',
      'events_logger = "file"',
      '',
    ].join('\n'),
  );
  podmanEnv.CONTAINERS_CONF = file;
  const second = probe();
  if (second.status !== 0) {
    throw new CannotRun(`podman cannot run a container here: ${tail(first.stderr, 1)} (own configuration); ${tail(second.stderr, 1)} (with ${file})`);
  }
  say(`podman runs containers with ${file} (its own configuration failed: ${tail(first.stderr, 1)})`);
}

const recipeOf = (containerfile: string, files: Record<string, string> = {}) => createHash('sha256').update(containerfile).update(JSON.stringify(files)).digest('hex').slice(0, 16);
const builtFrom = (name: string, recipe: string) => imageExists(name) && imageLabel(name, 'cerealbar.recipe') === recipe;

/** Builds `name` from a Containerfile unless an image built from the same one is there. */
async function ensureImage(name: string, containerfile: string, context: string, files: Record<string, string> = {}): Promise<void> {
  const recipe = recipeOf(containerfile, files);
  if (builtFrom(name, recipe)) return;
  mkdirSync(context, { recursive: true });
  for (const [file, text] of Object.entries(files)) writeFileSync(join(context, file), text, { mode: 0o755 });
  writeFileSync(join(context, 'Containerfile'), `${containerfile}\nLABEL cerealbar.recipe=${recipe}\n`);
  const log = join(CACHE, `${name.split('/').pop()!.replace(/[^a-z0-9.-]/gi, '_')}.log`);
  say(`building ${name} (once; log ${log})`);
  await runLogged(`podman build ${name}`, 'podman', ['build', '--network', 'host', '--format', 'docker', '-t', name, '-f', join(context, 'Containerfile'), context], log);
}

/** node:20-bookworm-slim's layout from this machine's Node 20: node, npm and the headers under /usr/local. */
async function ensureNodeBase(): Promise<void> {
  if (!process.version.startsWith('v20.')) throw new CannotRun(`the base image takes this machine's Node, which must be Node 20 (this is ${process.version})`);
  const nodeBin = process.execPath;
  const prefix = join(nodeBin, '..', '..');
  const npmDir = [join(prefix, 'lib', 'node_modules', 'npm'), '/usr/share/nodejs/npm'].find((dir) => existsSync(join(dir, 'package.json')));
  const headers = [join(prefix, 'include', 'node'), '/usr/include/node'].find((dir) => existsSync(join(dir, 'node.h')));
  if (!npmDir || !headers) throw new CannotRun(`this machine's Node lacks ${npmDir ? "Node's headers (include/node)" : 'npm'}, which the base image takes from it`);
  const version = `${process.version} npm ${JSON.parse(readFileSync(join(npmDir, 'package.json'), 'utf8')).version}`;
  // The machine's CA certificates too: where HTTPS goes through a proxy with a CA of its own
  // (as here), npm in the build trusts what the machine trusts.
  const containerfile = [
    `FROM ${BASES.debian}`,
    'COPY node /usr/local/bin/node',
    'COPY npm /usr/local/lib/node_modules/npm',
    'COPY include /usr/local/include/node',
    'COPY ca-certificates.crt /usr/local/share/cerealbar-test/ca-certificates.crt',
    'RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx && node --version && npm --version',
    'ENV NODE_EXTRA_CA_CERTS=/usr/local/share/cerealbar-test/ca-certificates.crt',
    `LABEL cerealbar.node="${version}"`,
    'CMD ["node"]',
  ].join('\n');
  if (builtFrom(BASES.node, recipeOf(containerfile))) return;
  const context = join(CACHE, 'node-context');
  rmSync(context, { recursive: true, force: true });
  mkdirSync(context, { recursive: true });
  cpSync(nodeBin, join(context, 'node'));
  cpSync(npmDir, join(context, 'npm'), { recursive: true, dereference: true });
  cpSync(headers, join(context, 'include'), { recursive: true, dereference: true });
  const caFile = ['/etc/ssl/certs/ca-certificates.crt'].find(existsSync);
  writeFileSync(join(context, 'ca-certificates.crt'), caFile ? readFileSync(caFile) : '');
  await ensureImage(BASES.node, containerfile, context);
  rmSync(context, { recursive: true, force: true });
}

/** Redis, PostgreSQL and nginx from Debian's packages, each behind its official image's interface as compose.yaml uses it. */
async function ensureServiceImages(): Promise<void> {
  const apt = (packages: string) =>
    `RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${packages} && rm -rf /var/lib/apt/lists/*`;
  // redis:7's defaults: every interface, no protected mode (Debian's binary keeps it on without a password).
  await ensureImage(
    BASES.redis,
    [`FROM ${BASES.debian}`, apt('redis-server'), 'COPY entrypoint.sh /usr/local/bin/entrypoint.sh', 'WORKDIR /data', 'ENTRYPOINT ["/usr/local/bin/entrypoint.sh"]', 'CMD ["redis-server"]'].join('\n'),
    join(CACHE, 'redis-context'),
    { 'entrypoint.sh': '#!/bin/sh\nset -e\nif [ "$1" = redis-server ]; then shift; exec setpriv --reuid=redis --regid=redis --init-groups redis-server "$@" --protected-mode no; fi\nexec "$@"\n' },
  );
  // postgres:16's interface: POSTGRES_USER, POSTGRES_PASSWORD and POSTGRES_DB at the first start, data in PGDATA.
  const postgresEntry = `#!/bin/sh
set -e
export PGDATA="\${PGDATA:-/var/lib/postgresql/data}"
if [ "$1" != postgres ]; then exec "$@"; fi
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  chown -R postgres:postgres "$PGDATA" /var/run/postgresql
  chmod 700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  password=$(mktemp)
  printf '%s\\n' "$POSTGRES_PASSWORD" > "$password"
  initdb -D "$PGDATA" -U "\${POSTGRES_USER:-postgres}" --pwfile="$password" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$password"
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  if [ -n "$POSTGRES_DB" ] && [ "$POSTGRES_DB" != postgres ]; then createdb -U "\${POSTGRES_USER:-postgres}" "$POSTGRES_DB"; fi
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
fi
shift
exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
`;
  await ensureImage(
    BASES.postgres,
    [
      `FROM ${BASES.debian}`,
      apt('postgresql'),
      'RUN ln -s /usr/lib/postgresql/*/bin /usr/local/pgbin',
      'ENV PATH=/usr/local/pgbin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      'COPY entrypoint.sh /usr/local/bin/entrypoint.sh',
      'VOLUME /var/lib/postgresql/data',
      'STOPSIGNAL SIGINT',
      'ENTRYPOINT ["/usr/local/bin/entrypoint.sh"]',
      'CMD ["postgres"]',
    ].join('\n'),
    join(CACHE, 'postgres-context'),
    { 'entrypoint.sh': postgresEntry },
  );
  // nginx's: conf.d/*.conf in the http block (Debian's default site removed), logs to the container's output.
  await ensureImage(
    BASES.nginx,
    [
      `FROM ${BASES.debian}`,
      apt('nginx'),
      'RUN rm -f /etc/nginx/sites-enabled/default && ln -sf /dev/stdout /var/log/nginx/access.log && ln -sf /dev/stderr /var/log/nginx/error.log',
      'STOPSIGNAL SIGQUIT',
      'CMD ["nginx", "-g", "daemon off;"]',
    ].join('\n'),
    join(CACHE, 'nginx-context'),
  );
}

// ---------------------------------------------------------------------------------------------
// The stack

/** compose.yaml's default for `variable` (so that the test uses the documented defaults). */
function composeDefault(variable: string): string {
  const match = new RegExp(`\\$\\{${variable}:-([^}]+)\\}`).exec(readFileSync(COMPOSE_FILE, 'utf8'));
  if (!match) throw new CannotRun(`deploy/compose.yaml has no default for ${variable}`);
  return match[1]!;
}

function compose(env: NodeJS.ProcessEnv, ...args: string[]): Ran {
  return run('podman-compose', ['-p', PROJECT, '-f', COMPOSE_FILE, ...args], { env });
}

/** The stack's containers by service name. */
function containers(): Map<string, string> {
  const listed = podman('ps', '-a', '--filter', `label=io.podman.compose.project=${PROJECT}`, '--format', '{{.Names}}');
  const names = new Map<string, string>();
  for (const name of listed.stdout.split('\n').filter(Boolean)) {
    const service = podman('inspect', '--format', '{{index .Config.Labels "com.docker.compose.service"}}', name).stdout.trim();
    names.set(service, name);
  }
  return names;
}

function removeStack(env: NodeJS.ProcessEnv): void {
  compose(env, 'down', '-v', '-t', '5');
  for (const volume of podman('volume', 'ls', '--format', '{{.Name}}').stdout.split('\n')) if (volume.startsWith(`${PROJECT}_`)) podman('volume', 'rm', '-f', volume);
}

/** `podman healthcheck run` until it passes (no systemd here runs podman's healthcheck timers). */
async function waitHealthy(container: string, timeoutMs: number): Promise<Ran> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const result = podman('healthcheck', 'run', container);
    if (result.status === 0 || Date.now() > deadline) return result;
    await sleep(1000);
  }
}

async function httpStatus(url: string, headers: Record<string, string> = {}): Promise<number> {
  try {
    return (await fetch(url, { headers, signal: AbortSignal.timeout(5000) })).status;
  } catch {
    return 0;
  }
}

async function waitStatus(url: string, status: number, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = await httpStatus(url);
    if (got === status || Date.now() > deadline) return got;
    await sleep(200);
  }
}

/** A process's count of games in play, from its /metrics through nginx (its path). */
async function gamesRunning(front: string, path: string, token: string): Promise<number> {
  try {
    const text = await (await fetch(`${front}/${path}/metrics`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(5000) })).text();
    return Number(/^cerealbar_games_running (\d+)/m.exec(text)?.[1] ?? -1);
  } catch {
    return -1;
  }
}

const state = (container: string) => podman('inspect', '--format', '{{.State.Status}} {{.State.ExitCode}}', container).stdout.trim();

/** Every log file in the game servers' volumes, by game id (as the soak reads each machine's disk). */
function diskLogs(volumes: readonly string[]): Map<string, string> {
  const logs = new Map<string, string>();
  for (const volume of volumes) {
    const mountpoint = podman('volume', 'inspect', '--format', '{{.Mountpoint}}', volume).stdout.trim();
    const dir = join(mountpoint, 'logs');
    if (!mountpoint || !existsSync(dir)) continue;
    for (const file of readdirSync(dir)) if (file.endsWith('.jsonl')) logs.set(file.slice(0, -'.jsonl'.length), readFileSync(join(dir, file), 'utf8'));
  }
  return logs;
}


// ---------------------------------------------------------------------------------------------

async function main(): Promise<number> {
  if (process.getuid?.() !== 0) throw new CannotRun('run it as root: the test uses root podman (its volumes are read from the host)');
  requireProgram('podman', 'podman');
  requireProgram('podman-compose', 'podman-compose');
  requireProgram('debootstrap', 'debootstrap');
  mkdirSync(CACHE, { recursive: true });
  say(`test:container: podman ${podman('--version').stdout.trim().replace(/^podman version /, '')}, ${run('podman-compose', ['--version']).stdout.split('\n').find((line) => line.includes('podman-compose')) ?? 'podman-compose'}; cache ${CACHE}`);

  const basesStarted = Date.now();
  await ensureDebianBase();
  chooseRuntime();
  if (run('sh', ['-c', 'test -d /run/systemd/system']).status !== 0) say('no systemd here: podman cannot time healthchecks, so the test runs them (podman healthcheck run)');
  await ensureNodeBase();
  await ensureServiceImages();
  say(`bases ready in ${((Date.now() - basesStarted) / 1000).toFixed(0)} s`);

  const buildStarted = Date.now();
  const buildLog = join(CACHE, 'cerealbar-image.log');
  say(`building ${IMAGE} from deploy/Dockerfile with BASE=${BASES.node} (log ${buildLog})`);
  await runLogged('podman build deploy/Dockerfile', 'podman', ['build', '--format', 'docker', '--network', 'host', '--build-arg', `BASE=${BASES.node}`, '-f', join(ROOT, 'deploy', 'Dockerfile'), '-t', IMAGE, ROOT], buildLog);
  say(`image built in ${((Date.now() - buildStarted) / 1000).toFixed(0)} s`);
  const config = JSON.parse(podman('image', 'inspect', '--format', '{{json .Config}}', IMAGE).stdout || '{}') as { User?: string; Entrypoint?: string[] };
  const healthcheck = podman('image', 'inspect', '--format', '{{json .HealthCheck}}', IMAGE).stdout;
  check(config.User === 'cerealbar', 'the image runs as the unprivileged user cerealbar', `User ${JSON.stringify(config.User)}`);
  check(healthcheck.includes('/healthz'), 'the image has a HEALTHCHECK on /healthz', healthcheck.includes('/healthz') ? '' : healthcheck.trim());
  check(config.Entrypoint?.[0] === '/usr/bin/tini', 'tini is PID 1, node its child', JSON.stringify(config.Entrypoint));
  const noDev = podman('run', '--rm', '--entrypoint', 'sh', IMAGE, '-c', 'test ! -e node_modules/jest && test ! -e node_modules/@colyseus/testing && test -e node_modules/better-sqlite3/build/Release/better_sqlite3.node && echo clean');
  check(noDev.stdout.trim() === 'clean', 'the image holds production node_modules only, better-sqlite3 built', tail(noDev.stderr, 2));

  // The stack, on free ports, with compose.yaml's defaults otherwise (admin token, database password).
  const [port, dbPort] = [await freePort(), await freePort()];
  const adminToken = composeDefault('CEREALBAR_ADMIN_TOKEN');
  const dbPassword = composeDefault('CEREALBAR_DB_PASSWORD');
  const env: NodeJS.ProcessEnv = {
    ...podmanEnv,
    CEREALBAR_IMAGE: IMAGE,
    CEREALBAR_REDIS_IMAGE: BASES.redis,
    CEREALBAR_POSTGRES_IMAGE: BASES.postgres,
    CEREALBAR_NGINX_IMAGE: BASES.nginx,
    CEREALBAR_PORT: String(port),
    CEREALBAR_PUBLIC_ADDRESS: `127.0.0.1:${port}`,
    CEREALBAR_DB_PORT: String(dbPort),
    CEREALBAR_DRAIN_SECONDS: String(DRAIN_SECONDS),
  };
  for (const name of ['CEREALBAR_ADMIN_TOKEN', 'CEREALBAR_DB_PASSWORD']) delete env[name];
  removeStack(env);
  const front = `http://127.0.0.1:${port}`;
  const runDir = join(CACHE, 'runs', new Date().toISOString().replace(/[:.]/g, '-'));
  mkdirSync(runDir, { recursive: true });
  let load: SoakLoad | null = null;
  try {
    const stackStarted = Date.now();
    say(`podman-compose -p ${PROJECT} -f deploy/compose.yaml up -d (nginx on ${front})`);
    const up = compose(env, 'up', '-d', '--no-build');
    writeFileSync(join(runDir, 'compose-up.log'), `${up.stdout}\n${up.stderr}`);
    if (!check(up.status === 0, 'podman-compose up -d', up.status === 0 ? '' : tail(up.stderr, 5))) return 1;
    const names = containers();
    const [game1, game2] = [names.get('game1'), names.get('game2')];
    if (!check(['redis', 'postgres', 'game1', 'game2', 'nginx'].every((service) => names.has(service)), 'the stack has redis, postgres, game1, game2 and nginx', [...names.keys()].join(', '))) return 1;
    for (const service of ['redis', 'postgres', 'game1', 'game2', 'nginx']) {
      const health = await waitHealthy(names.get(service)!, 180_000);
      check(health.status === 0, `${service} is healthy (its healthcheck)`, health.status === 0 ? '' : `${tail(health.stdout + health.stderr, 2)}; ${state(names.get(service)!)}`);
    }
    say(`stack up and healthy in ${((Date.now() - stackStarted) / 1000).toFixed(0)} s`);
    check((await waitStatus(`${front}/readyz`, 200, 30_000)) === 200, 'through nginx: /readyz 200');
    check((await httpStatus(`${front}/healthz`)) === 200, 'through nginx: /healthz 200');
    check((await httpStatus(`${front}/`)) === 200, 'through nginx: the lobby page (the built client)');
    check((await httpStatus(`${front}/api/games`)) === 401, 'through nginx: the game data API refuses a request without the token');
    check((await httpStatus(`${front}/api/games`, { authorization: `Bearer ${adminToken}` })) === 200, "through nginx: the game data API answers with compose.yaml's default admin token");
    for (const path of ['p1', 'p2']) check((await httpStatus(`${front}/${path}/metrics`, { authorization: `Bearer ${adminToken}` })) === 200, `through nginx: /${path}/metrics reaches its game server`);
    const uid = podman('exec', game1!, 'id', '-u').stdout.trim();
    check(uid === '10001', 'the game server runs as uid 10001, not root', uid);

    // Players meet through nginx: private games, leader and follower both through the front door.
    load = new SoakLoad({ urls: [front], slots: 4, thinkMs: 120, stuckMs: 60_000 });
    load.start();
    say('load: 4 game slots through nginx');
    const bothPlaying = Date.now() + 60_000;
    let running = [0, 0];
    while (Date.now() < bothPlaying) {
      running = [await gamesRunning(front, 'p1', adminToken), await gamesRunning(front, 'p2', adminToken)];
      if (running[0]! > 0 && running[1]! > 0) break;
      await sleep(1000);
    }
    check(running[0]! > 0 && running[1]! > 0, 'games in play on both game servers, their players joined through nginx', `games running: game1 ${running[0]}, game2 ${running[1]}`);
    await sleep(15_000);

    // game1 killed mid-game.
    const address = (container: string) => podman('inspect', '--format', '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}', container).stdout.trim();
    const addressBefore = address(game1!);
    const inPlayAtKill = await gamesRunning(front, 'p1', adminToken);
    say(`fault: podman kill ${game1} (${inPlayAtKill} game(s) in play on it)`);
    const kill = podman('kill', game1!);
    check(kill.status === 0 && inPlayAtKill > 0, 'game1 killed (SIGKILL) with games in play on it', `${inPlayAtKill} game(s); ${state(game1!)}`);
    await sleep(3000);
    check((await waitStatus(`${front}/readyz`, 200, 5000)) === 200, 'with game1 gone, nginx still answers /readyz from game2');
    // Past the lease (10 s): game2 closes game1's games from the database's copy meanwhile.
    await sleep(15_000);
    say(`starting ${game1} again (podman kill counts as a stop by the user: no restart policy applies)`);
    const restart = podman('start', game1!);
    const restartHealth = await waitHealthy(game1!, 120_000);
    check(restart.status === 0 && restartHealth.status === 0, 'game1 started again and healthy', tail(restart.stderr + restartHealth.stdout, 2));
    const addressAfter = address(game1!);
    check((await waitStatus(`${front}/p1/readyz`, 200, 30_000)) === 200, 'nginx reaches the restarted game1 by name (/p1/readyz 200)', `its address ${addressBefore}, now ${addressAfter}`);
    const backDeadline = Date.now() + 60_000;
    let onGame1 = 0;
    while (Date.now() < backDeadline && (onGame1 = await gamesRunning(front, 'p1', adminToken)) <= 0) await sleep(1000);
    check(onGame1 > 0, 'new games are played on the restarted game1', `${onGame1} in play`);

    // game2 stopped (SIGTERM) with games in play: it drains, then exits 0.
    const inPlayAtStop = await gamesRunning(front, 'p2', adminToken);
    say(`podman stop ${game2} (SIGTERM, ${inPlayAtStop} game(s) in play on it; --drain-seconds ${DRAIN_SECONDS})`);
    const stopping = runLogged('podman stop game2', 'podman', ['stop', '-t', '120', game2!], join(runDir, 'stop-game2.log'));
    const draining = await waitStatus(`${front}/p2/readyz`, 503, 5000);
    const drainStarted = Date.now();
    await stopping.catch((error: Error) => say(error.message));
    const drainedIn = (Date.now() - drainStarted) / 1000;
    const game2Logs = podman('logs', game2!).stdout;
    check(draining === 503, 'SIGTERM reached the server through tini: /p2/readyz answers 503 while it drains', `status ${draining}`);
    check(state(game2!) === 'exited 0' && /SIGTERM: draining/.test(game2Logs) && /^stopped$/m.test(game2Logs), 'game2 drained and exited 0', `${state(game2!)} after ${drainedIn.toFixed(1)} s`);
    check((await waitStatus(`${front}/readyz`, 200, 5000)) === 200, 'with game2 stopped, nginx answers /readyz from game1');
    await sleep(10_000);

    say(`load stopping: ${JSON.stringify(load.figures)}`);
    await load.stop(20_000);
    const { figures, seats } = load;
    load = null;
    say(`podman stop ${game1}`);
    const stop1 = podman('stop', '-t', '120', game1!);
    check(stop1.status === 0 && state(game1!) === 'exited 0', 'game1 stopped (SIGTERM) and exited 0', state(game1!));

    // The chaos soak's checks over the volumes and the database.
    const volumes = ['game1-data', 'game2-data'].map((volume) => `${PROJECT}_${volume}`);
    const disk = diskLogs(volumes);
    const database = await databaseGames(`postgres://cerealbar:${dbPassword}@127.0.0.1:${dbPort}/cerealbar`);
    const report = checkSoak({ disk, database, seats, workers: [] });
    for (const line of report.problems) say(`problem: ${line}`);
    const interrupted = [...database.values()].filter(({ record }) => record.endReason === 'interrupted');
    process.stdout.write(
      `${JSON.stringify({ load: figures, logsOnDisk: disk.size, gamesInDatabase: database.size, interrupted: interrupted.length, endReasons: countBy([...database.values()].map(({ record }) => record.endReason ?? 'open')) })}\n`,
    );
    check(report.lost === 0, 'every acknowledged action is in the logs on the volumes and in PostgreSQL', `${report.lost} lost of ${report.acknowledged}`);
    check(report.unreplayable === 0, 'every log replays, on disk and in the database', `${report.unreplayable} unreplayable`);
    check(report.open === 0, 'no game is left open, on disk or in the database', `${report.open} open`);
    check(report.unexplained === 0, 'the database agrees with the disk', `${report.unexplained} unexplained`);
    check(report.games >= 4 && report.acknowledged >= 100, 'the players played real games', `${report.games} games, ${report.acknowledged} acknowledged actions`);
    check(interrupted.length > 0 && interrupted.every(({ record }) => record.note), "game1's games in play at the kill were closed by recovery, with a note", `${interrupted.length} interrupted`);
    const replayAll = podman(
      'run', '--rm', '--entrypoint', 'sh', '-v', `${volumes[0]}:/game1:ro`, '-v', `${volumes[1]}:/game2:ro`, IMAGE,
      '-c', 'node /app/bin/cerealbar.cjs replay /game1/logs/*.jsonl /game2/logs/*.jsonl',
    );
    const replayed = (replayAll.stdout.match(/: ok: /g) ?? []).length;
    check(replayAll.status === 0 && replayed === disk.size, "the image's own `cerealbar replay` replays every log in the volumes", replayAll.status === 0 ? `${replayed} of ${disk.size} logs` : tail(replayAll.stdout + replayAll.stderr, 3));
    process.stdout.write(`test:container: ${report.games} games, ${report.acknowledged} acknowledged actions, ${report.lost} lost, ${report.unreplayable} unreplayable, ${report.open} open\n`);
  } finally {
    if (load) await load.stop(0);
    for (const [service, name] of containers()) {
      const logs = podman('logs', name);
      writeFileSync(join(runDir, `${service}.log`), `${logs.stdout}\n${logs.stderr}`);
    }
    say(`the containers' output is in ${runDir}`);
    if (KEEP) say(`--keep: the stack stays up (podman-compose -p ${PROJECT} -f deploy/compose.yaml down -v removes it)`);
    else removeStack(env);
  }
  say(`test:container: done in ${elapsed()}`);
  return failed > 0 ? 1 : 0;
}

function countBy(items: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[item] = (counts[item] ?? 0) + 1;
  return counts;
}

main().then(
  (code) => {
    process.stdout.write(`test:container: ${passed} passed, ${failed} failed\n`);
    process.exit(code);
  },
  (error: Error) => {
    if (error instanceof CannotRun) process.stdout.write(`test:container: cannot run: ${error.message}\n`);
    else process.stdout.write(`test:container: failed: ${error.message}\n`);
    process.stdout.write(`test:container: ${passed} passed, ${failed + 1} failed\n`);
    process.exit(1);
  },
);
