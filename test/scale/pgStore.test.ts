/**
 * The PostgreSQL game store, on Debian's postgresql started for the test: the tests every store
 * passes (test/server/storeContract.ts), then what it is for, processes on several machines
 * sharing one database (each machine here is a data directory of its own).
 */
import { spawn } from 'node:child_process';
import * as nodeFs from 'node:fs';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort, startPostgres, startRedis, type RunningService } from '../../bench/services';
import { COPY_NOTE, PgGameStore } from '../../server/store/PgGameStore';
import { RECOVERY_NOTE } from '../../server/store/closing';
import { LEASE_MS, OWN_PROCESS_START } from '../../server/store/leases';
import { inTransaction } from '../../server/store/pgTransaction';
import { replay } from '../../shared/log/replay';
import { join as joinGame, SERVE_ADMIN_TOKEN, startServeProcess, track, waitFor, type Player, type ServeProcess } from '../server/harness';
import { describeGameStore, endedPid, eventsOf, recordGame, selfPlayLines, toText } from '../server/storeContract';
import type { LogEnd } from '../../shared/log/format';
import { describeWorkerStore, ids, studyIn } from '../study/workerContract';
import { setPath, studyFolder, validStudy, writeStudy } from '../study/fixtures';
import { api, preparedWorker } from '../browser/studyWorkers';
import { Client } from '@colyseus/sdk';
import { PgWorkerStore } from '../../server/store/PgWorkerStore';
import { hashToken } from '../../server/store/workerChanges';
import Database from 'better-sqlite3';
import { gunzipSync } from 'node:zlib';
import { cerealbar } from '../cli/run';

jest.setTimeout(60_000);

let postgres: RunningService;
let admin: pg.Client;
let databases = 0;

beforeAll(async () => {
  postgres = await startPostgres();
  admin = new pg.Client(postgres.url);
  await admin.connect();
});

afterAll(async () => {
  await admin?.end();
  await postgres?.stop();
});

/** A fresh database on the server; its URL. */
async function newDatabase(): Promise<string> {
  const name = `store_${++databases}`;
  await admin.query(`CREATE DATABASE ${name}`);
  return postgres.url.replace(/\/cerealbar$/, `/${name}`);
}

describeGameStore('every store, on PostgreSQL', async () => {
  const url = await newDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'cerealbar-pg-store-'));
  return {
    open: () => PgGameStore.open(url, dataDir),
    makeGone: async (storeId) => {
      const pid = endedPid();
      const db = new Database(join(dataDir, 'games.sqlite'));
      db.prepare('UPDATE stores SET pid = ? WHERE store_id = ?').run(pid, storeId);
      db.close();
      const client = new pg.Client(url);
      await client.connect();
      await client.query('UPDATE stores SET pid = $1 WHERE store_id = $2', [pid, storeId]);
      await client.end();
    },
    remove: async () => rmSync(dataDir, { recursive: true, force: true }),
  };
});

describeWorkerStore('every worker store, on PostgreSQL', async () => {
  const url = await newDatabase();
  return { open: (now) => PgWorkerStore.open(url, { now }), remove: async () => undefined };
});

describe('the PostgreSQL worker store', () => {
  test('keeps a session token only as its SHA-256', async () => {
    const url = await newDatabase();
    const store = await PgWorkerStore.open(url);
    try {
      const study = studyIn(mkdtempSync(join(tmpdir(), 'cerealbar-pg-workers-')));
      const { token } = await store.startSession(study, ids);
      const client = new pg.Client(url);
      await client.connect();
      const { rows } = await client.query('SELECT * FROM worker_sessions');
      await client.end();
      expect(rows.map((row) => row.token_hash)).toEqual([hashToken(token)]);
      expect(JSON.stringify(rows)).not.toContain(token);
    } finally {
      await store.close();
    }
  });
});

describe('a connection the database ends while a store holds it', () => {
  test('fails that transaction only: the process goes on, and the pool serves the next one on a new connection', async () => {
    const pool = new pg.Pool({ connectionString: await newDatabase(), max: 1 });
    pool.on('error', () => undefined);
    try {
      const transaction = inTransaction(pool, async (client) => {
        const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
        // As a failover or an administrator would, while the client is out of the pool and idle.
        await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
        await new Promise((resolve) => setTimeout(resolve, 300));
        await client.query('SELECT 1');
      });
      await expect(transaction).rejects.toThrow(/terminat|not queryable/i);
      expect((await inTransaction(pool, (client) => client.query<{ one: number }>('SELECT 1 AS one'))).rows).toEqual([{ one: 1 }]);
    } finally {
      await pool.end();
    }
  });
});

describe('P-113: two machines on one database', () => {
  let url: string;
  const dirs: string[] = [];
  const stores: PgGameStore[] = [];
  const machine = () => {
    const dir = mkdtempSync(join(tmpdir(), 'cerealbar-pg-machine-'));
    dirs.push(dir);
    return dir;
  };
  const open = async (dataDir: string) => {
    const store = await PgGameStore.open(url, dataDir);
    stores.push(store);
    return store;
  };

  beforeEach(async () => {
    url = await newDatabase();
  });

  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  test("a game written on one machine is listed and read, as it is played, on the other", async () => {
    const [a, b] = [await open(machine()), await open(machine())];
    const { writer, written } = recordGame(a, { gameId: 'on-a', crashAfter: 30 });
    await a.synced();
    expect(await b.getGame('on-a')).toMatchObject({ endedAt: null, score: eventsOf(written).at(-1)!.outcome.score });
    expect(await b.readLog('on-a')).toBe(toText(written));
    const end = { kind: 'end', t: eventsOf(written).at(-1)!.t + 10, reason: 'abandoned', score: eventsOf(written).at(-1)!.outcome.score } as const;
    writer.end(end);
    await a.synced();
    expect(await b.readLog('on-a')).toBe(toText([...written, end]));
    expect((await b.listGames({})).map((game) => [game.gameId, game.endReason])).toEqual([['on-a', 'abandoned']]);
  });

  test("a machine where no store runs any more: another machine closes its games from the database's copy, once, and says so", async () => {
    const [a, b, c] = [await open(machine()), await open(machine()), await open(machine())];
    const { written } = recordGame(a, { gameId: 'orphan', crashAfter: 40 });
    await a.close(); // leaves the game open, as a machine that stops does
    expect((await b.recover()).recovered).toEqual(['orphan']);
    expect((await c.recover()).recovered).toEqual([]);
    const text = (await b.readLog('orphan'))!;
    const last = eventsOf(written).at(-1)!;
    expect(text).toBe(toText([...written, { kind: 'end', t: last.t, reason: 'interrupted', score: last.outcome.score }]));
    expect(replay(text).end?.reason).toBe('interrupted');
    expect(await b.getGame('orphan')).toMatchObject({ endReason: 'interrupted', note: COPY_NOTE });
  });

  test("while a store runs on its machine, another machine leaves its games alone; that store closes them from the log file", async () => {
    const onA = machine();
    const [writerA, siblingA, b] = [await open(onA), await open(onA), await open(machine())];
    recordGame(writerA, { gameId: 'sibling', crashAfter: 20 });
    await writerA.close();
    expect((await b.recover()).recovered).toEqual([]);
    expect(await b.getGame('sibling')).toMatchObject({ endedAt: null });
    expect((await siblingA.recover()).recovered).toEqual(['sibling']);
    expect(await b.getGame('sibling')).toMatchObject({ endReason: 'interrupted' });
    expect((await b.getGame('sibling'))!.note).toBe(RECOVERY_NOTE);
  });

  test("another machine is known by its data directory's id, not its hostname: its pids are never checked here", async () => {
    const [a, b] = [await open(machine()), await open(machine())];
    recordGame(b, { gameId: 'elsewhere', crashAfter: 20 });
    await b.synced();
    // b's lease now names a pid that runs on no process here, as a machine with the same hostname has.
    const client = new pg.Client(url);
    await client.connect();
    await client.query('UPDATE stores SET pid = $1 WHERE store_id = $2', [endedPid(), b.storeId]);
    await client.end();
    expect((await a.recover()).recovered).toEqual([]);
    expect(await a.getGame('elsewhere')).toMatchObject({ endedAt: null });
  });

  test("a lease of this machine whose pid now belongs to another process is gone: its process's start tells them apart", async () => {
    const onA = machine();
    const [a, b] = [await open(onA), await open(onA)];
    recordGame(a, { gameId: 'reused', crashAfter: 20 });
    await a.synced();
    // The pid runs (it is this process's), but started at another time than the leases' process.
    const local = new Database(join(onA, 'games.sqlite'));
    local.prepare('UPDATE stores SET pid_start = ? WHERE store_id = ?').run('another start', a.storeId);
    local.close();
    const client = new pg.Client(url);
    await client.connect();
    try {
      await client.query('UPDATE stores SET pid_start = $1 WHERE store_id = $2', ['another start', a.storeId]);
      expect((await b.recover()).recovered).toEqual(['reused']);
      expect((await client.query('SELECT store_id FROM stores')).rows).toEqual([{ store_id: b.storeId }]);
    } finally {
      await client.end();
    }
  });

  test('a database of the release before leases named their process start is upgraded in place, its games and leases kept', async () => {
    const onA = machine();
    const first = await open(onA);
    const { written } = recordGame(first, { gameId: 'before' });
    await first.close();
    const client = new pg.Client(url);
    await client.connect();
    try {
      // That release's stores table, holding the lease of a store of that release still running here (its pid is this process's).
      await client.query('ALTER TABLE stores DROP COLUMN pid_start');
      await client.query(
        `INSERT INTO stores (store_id, host, data_dir, machine, pid, renewed_at) SELECT 'of-that-release', host, data_dir, machine, $1, 0 FROM games WHERE game_id = 'before'`,
        [process.pid],
      );
      const again = await open(onA);
      expect(await again.readLog('before')).toBe(toText(written));
      await again.recover();
      const { rows } = await client.query('SELECT store_id, pid_start FROM stores ORDER BY store_id = $1', [again.storeId]);
      expect(rows).toEqual([
        { store_id: 'of-that-release', pid_start: null },
        { store_id: again.storeId, pid_start: OWN_PROCESS_START },
      ]);
    } finally {
      await client.end();
    }
  });

  test("after an outage a store judges other machines by their leases only a full lease after it reached the database again", async () => {
    const [a, b] = [await open(machine()), await open(machine())];
    recordGame(b, { gameId: 'through-outage', crashAfter: 20 });
    await b.synced();
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 200)); // a has been connected a full lease
    const client = new pg.Client(url);
    await client.connect();
    try {
      // The database is away for a (its lease cannot be renewed), and for b, whose lease runs out meanwhile.
      await client.query('ALTER TABLE stores RENAME TO stores_away');
      await expect(a.recover()).rejects.toThrow(/stores/);
      await client.query('ALTER TABLE stores_away RENAME TO stores');
      await client.query('UPDATE stores SET renewed_at = renewed_at - $1 WHERE store_id = $2', [LEASE_MS + 1000, b.storeId]);
      expect((await a.recover()).recovered).toEqual([]);
      expect(await a.getGame('through-outage')).toMatchObject({ endedAt: null });
    } finally {
      await client.query('ALTER TABLE IF EXISTS stores_away RENAME TO stores');
      await client.end();
    }
  }, 30_000);

  test('a machine judged gone while it was only stalled takes its games back: the copy gets the log file\'s lines and real end', async () => {
    const [a, b] = [await open(machine()), await open(machine())];
    const full = selfPlayLines(1);
    const { writer, written } = recordGame(b, { gameId: 'stalled', crashAfter: 20 });
    await b.synced();
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 200)); // a has been connected a full lease
    // b stalls (a long pause): its lease runs out, and a closes its game from the copy.
    const client = new pg.Client(url);
    await client.connect();
    await client.query('UPDATE stores SET renewed_at = renewed_at - $1 WHERE store_id = $2', [LEASE_MS + 1000, b.storeId]);
    await client.end();
    expect((await a.recover()).recovered).toEqual(['stalled']);
    expect(await a.getGame('stalled')).toMatchObject({ endReason: 'interrupted' });
    // b goes on: its next lines, and the game's real end, replace the copy's end.
    const rest = full.slice(written.length);
    for (const line of rest) {
      if (line.kind === 'end') writer.end(line);
      else writer.append(line);
    }
    await b.synced();
    expect(await a.readLog('stalled')).toBe(toText([...written, ...rest]));
    const end = full.at(-1) as LogEnd;
    expect(await a.getGame('stalled')).toMatchObject({ endReason: end.reason, score: end.score });
    expect((await a.getGame('stalled'))!.note).toBeUndefined();
    expect((await a.recover()).recovered).toEqual([]);
  }, 30_000);

  test('a machine that comes back ships the lines its database copy lacks', async () => {
    const onA = machine();
    const a = await open(onA);
    const { written } = recordGame(a, { gameId: 'behind', crashAfter: 50 });
    await a.synced();
    // The database lost the last ten lines (as if the machine died before shipping them).
    const client = new pg.Client(url);
    await client.connect();
    await client.query('DELETE FROM log_lines WHERE game_id = $1 AND n > $2', ['behind', written.length - 11]);
    await client.query('UPDATE games SET lines = $2 WHERE game_id = $1', ['behind', written.length - 10]);
    await client.end();
    await a.close();
    const again = await open(onA);
    expect((await again.recover()).recovered).toEqual(['behind']);
    const text = (await again.readLog('behind'))!;
    expect(text.startsWith(toText(written))).toBe(true);
    expect(replay(text).end?.reason).toBe('interrupted');
  });

  test('the database failing ends no game: the lines wait on disk, the failure is told, and they are shipped once it works again', async () => {
    const failures: Error[] = [];
    const a = await PgGameStore.open(url, machine(), { onShipError: (error) => failures.push(error) });
    stores.push(a);
    const client = new pg.Client(url);
    await client.connect();
    try {
      await client.query('ALTER TABLE log_lines RENAME TO log_lines_away');
      const { written } = recordGame(a, { gameId: 'patient', crashAfter: 30 });
      await waitFor(() => failures.length > 0, 'the failure to be told');
      expect(failures[0].message).toMatch(/log_lines/);
      expect(await a.getGame('patient')).toBeNull();
      await client.query('ALTER TABLE log_lines_away RENAME TO log_lines');
      await a.synced();
      expect(await a.readLog('patient')).toBe(toText(written));
      expect(failures).toHaveLength(1); // told once, not once a second
    } finally {
      await client.end();
    }
  });

  test('the log files are read for shipping through the file operations the store was given: a failing read is told, and tried again', async () => {
    const failures: Error[] = [];
    let failing = true;
    const readSync = ((...args: Parameters<typeof nodeFs.readSync>) => {
      if (failing) throw Object.assign(new Error('EIO: injected fault, read'), { code: 'EIO' });
      return nodeFs.readSync(...args);
    }) as typeof nodeFs.readSync;
    const a = await PgGameStore.open(url, machine(), { fs: { ...nodeFs, readSync }, onShipError: (error) => failures.push(error) });
    stores.push(a);
    const { written } = recordGame(a, { gameId: 'unread', crashAfter: 30 });
    await waitFor(() => failures.length > 0, 'the failure to be told');
    expect(failures[0].message).toMatch(/EIO/);
    failing = false;
    await a.synced();
    expect(await a.readLog('unread')).toBe(toText(written));
  });

  test('a game that ended while the database was away is copied once it is back, even if its process restarted in between', async () => {
    const onA = machine();
    const failures: Error[] = [];
    const a = await PgGameStore.open(url, onA, { onShipError: (error) => failures.push(error) });
    const client = new pg.Client(url);
    await client.connect();
    try {
      await client.query('ALTER TABLE log_lines RENAME TO log_lines_away');
      const { written } = recordGame(a, { gameId: 'ended-away' });
      await waitFor(() => failures.length > 0, 'the failure to be told');
      await a.close(); // gives up shipping after a few seconds: the game is only in its log file
      await client.query('ALTER TABLE log_lines_away RENAME TO log_lines');
      const again = await open(onA);
      await again.synced();
      expect(await again.readLog('ended-away')).toBe(toText(written));
      expect(await again.getGame('ended-away')).toMatchObject({ endReason: (written.at(-1) as { reason: string }).reason });
    } finally {
      await client.end();
    }
  });

  test('a process closing the store while the database is away exits only once its local store is closed', async () => {
    const dataDir = machine();
    const script = join(dataDir, 'close-while-away.js');
    const module = (path: string) => JSON.stringify(join(__dirname, '..', '..', path));
    // Nothing but the store's own timers keeps this process alive while it closes.
    writeFileSync(
      script,
      `
      const pg = require(${module('node_modules/pg')});
      const { PgGameStore } = require(${module('server/store/PgGameStore.ts')});
      const { playSelfPlayGame } = require(${module('shared/selfplay/game.ts')});
      const { generateMap } = require(${module('shared/maps/generate.ts')});
      const [url, postgresUrl, dataDir] = process.argv.slice(2);
      PgGameStore.open(url, dataDir, { onShipError: () => undefined }).then(async (store) => {
        // The database goes away: no connection to it is allowed, and the store's are ended.
        const database = new URL(url).pathname.slice(1);
        const client = new pg.Client(postgresUrl);
        await client.connect();
        await client.query('ALTER DATABASE ' + database + ' WITH ALLOW_CONNECTIONS false');
        await client.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [database]);
        await client.end();
        const lines = [];
        playSelfPlayGame({ seed: 1, map: generateMap(1), gameId: 'in-play' }, (line) => lines.push(line));
        const writer = store.startGame(lines[0], { pool: 'p', seats: [] });
        for (const line of lines.slice(1, 10)) writer.append(line);
        await store.close();
        process.stdout.write('closed');
      });
      `,
    );
    const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ['--require', require.resolve('tsx/cjs'), script, url, postgres.url, dataDir], { cwd: join(__dirname, '..', '..'), stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      child.on('exit', (code) => resolve({ code, stdout, stderr }));
    });
    expect(result).toMatchObject({ code: 0, stdout: 'closed', stderr: '' });
  });
});

describe('P-113: cerealbar serve --store on two machines', () => {
  const STUDY = 'pilot-1';
  let url: string;
  let redis: RunningService;
  let studyFile: string;
  const dirs: string[] = [];
  const processes: ServeProcess[] = [];
  const players: Player[] = [];
  const get = async (serve: ServeProcess, path: string) => fetch(`${serve.url}${path}`, { headers: { authorization: `Bearer ${SERVE_ADMIN_TOKEN}` } });

  beforeAll(async () => {
    url = await newDatabase();
    redis = await startRedis();
    studyFile = writeStudy(studyFolder(), setPath(validStudy(), 'id', STUDY));
    for (let i = 0; i < 2; i++) {
      const dir = mkdtempSync(join(tmpdir(), 'cerealbar-pg-serve-'));
      dirs.push(dir);
      const port = await freePort();
      processes.push(await startServeProcess(dir, ['--port', String(port), '--redis', redis.url, '--public-address', `127.0.0.1:${port}`, '--store', url, '--study', studyFile]));
    }
  });

  afterAll(async () => {
    await Promise.all(players.map((player) => Promise.race([player.room.leave(true).catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 1000))])));
    for (const serve of processes) if (serve.child.exitCode === null && serve.child.signalCode === null) serve.child.kill('SIGINT');
    await Promise.all(processes.map((serve) => (serve.child.exitCode !== null || serve.child.signalCode !== null ? undefined : new Promise((resolve) => serve.child.once('exit', resolve)))));
    await redis?.stop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test("a study's workers go through their steps, are paired and get their codes through processes of two machines", async () => {
    const [a, b] = processes;
    expect(a.output()).toMatch(/Games in PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:\d+\/store_\d+, for every process of every machine/);
    expect(a.output()).toContain('its workers and bonuses (kept in the database): cerealbar study workers (or bonuses) --study FILE --store URL, or the admin page');
    const urls = [a.url, b.url];
    const prolific = (pid: string) => ({ PROLIFIC_PID: pid, STUDY_ID: 'ST', SESSION_ID: `S-${pid}` });
    const leaderToken = await preparedWorker(urls, STUDY, prolific('L1'), { promote: true, adminToken: SERVE_ADMIN_TOKEN });
    const followerToken = await preparedWorker([b.url, a.url], STUDY, prolific('F1'));
    const asked = await Promise.all([api(a.url, `studies/${STUDY}/play`, {}, leaderToken), api(b.url, `studies/${STUDY}/play`, {}, followerToken)]);
    const [leader, follower] = await Promise.all(asked.map(async ({ reservation }, i) => track(await new Client(urls[i]).consumeSeatReservation(reservation))));
    players.push(leader, follower);
    await waitFor(() => leader.phase === 'playing' && follower.phase === 'playing', 'the study game to start');
    expect(leader.room.roomId).toBe(follower.room.roomId);
    await expect(api(b.url, `studies/${STUDY}/play`, {}, leaderToken)).rejects.toThrow(/409 .*ALREADY_SEATED/);
    await leader.room.leave(true);
    const completion = async (serve: string) => (await api(serve, `studies/${STUDY}/me`, undefined, followerToken)).worker.completion;
    const deadline = Date.now() + 5000;
    while ((await completion(b.url)) === null && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    for (const serve of urls) {
      expect(await completion(serve)).toMatchObject({ outcome: 'partnerLeft', code: 'CLEFT' });
      const { workers } = await api(serve, `studies/${STUDY}/workers`, undefined, SERVE_ADMIN_TOKEN);
      expect(workers.map((worker: { participantId: string }) => worker.participantId).sort()).toEqual(['F1', 'L1']);
    }
    // The game, and its log (which the bonus sheet and the logs archive read), are in the database too.
    const { games } = await (await get(b, `/api/games?pool=${STUDY}`)).json();
    expect(games).toEqual([expect.objectContaining({ endReason: 'abandoned' })]);
    const archive = await get(a, `/api/studies/${STUDY}/logs.tar.gz`);
    expect(archive.status).toBe(200);
    expect(gunzipSync(Buffer.from(await archive.arrayBuffer())).toString('latin1')).toContain(`${games[0].gameId}.jsonl`);

    // The researcher's commands read the same workers and write the same bonus sheet from the database.
    const listed = await cerealbar('study', 'workers', '--study', studyFile, '--store', url, '--json');
    expect(listed.stderr).toBe('');
    const { workers } = await api(a.url, `studies/${STUDY}/workers`, undefined, SERVE_ADMIN_TOKEN);
    const steps = (list: { participantId: string; step: string }[]) => list.map(({ participantId, step }) => [participantId, step]).sort();
    expect(steps(JSON.parse(listed.stdout).workers)).toEqual(steps(workers));
    expect(JSON.parse(listed.stdout).workers.find((worker: { participantId: string }) => worker.participantId === 'F1').gameList).toEqual([
      expect.objectContaining({ gameId: games[0].gameId, endReason: 'abandoned' }),
    ]);
    const sheet = join(dirs[0]!, 'bonuses.csv');
    const bonuses = await cerealbar('study', 'bonuses', '--study', studyFile, '--store', url, '--format', 'prolific', '--out', sheet);
    // F1's partner left within seconds: its code was earned without a game played (P-138).
    expect(bonuses).toMatchObject({ status: 0, stderr: 'cerealbar: warning: 1 completion code(s) were earned without a game played, check them before approving: F1 (cerealbar study workers shows why)\n' });
    expect(bonuses.stdout).toMatch(/^L1 +- +1 .*\n^F1 +- +1 /m);
    expect(readFileSync(sheet, 'utf8')).toBe(await (await get(b, `/api/studies/${STUDY}/bonuses.csv?format=prolific`)).text());
    // A database serve --store never used is refused, and nothing is made in it.
    const empty = await newDatabase();
    for (const command of [['workers'], ['bonuses', '--format', 'prolific', '--out', sheet]]) {
      const refused = await cerealbar('study', ...command, '--study', studyFile, '--store', empty);
      expect(refused.status).toBe(2);
      expect(refused.stderr).toMatch(/postgres:\/\/postgres@127\.0\.0\.1:\d+\/store_\d+: cannot (open the worker store|read the games): the database has no (workers|games) table: is it the one serve --store/);
    }
    const made = new pg.Client(empty);
    await made.connect();
    expect((await made.query("SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'")).rows[0].n).toBe(0);
    await made.end();
  });

  test("a game played through both is listed and read through either; when its process is killed, the other closes it from the copy", async () => {
    const [a, b] = processes;
    const pair = [await joinGame(a.url, { role: 'leader', pool: 'pg' }), await joinGame(b.url, { role: 'follower', pool: 'pg' })];
    players.push(...pair);
    const [leader] = pair;
    await waitFor(() => pair.every((player) => player.phase === 'playing'), 'the game to start');
    leader.act({ type: 'instruction', text: 'turn around' });
    await waitFor(() => leader.view!.instructions.length === 1, 'the instruction to be accepted');
    let gameId = '';
    for (const serve of processes) {
      const deadline = Date.now() + 5000;
      let log = '';
      while (!log.includes('turn around') && Date.now() < deadline) {
        const { games } = await (await get(serve, '/api/games?pool=pg')).json();
        gameId = games[0]?.gameId ?? '';
        log = gameId ? await (await get(serve, `/api/games/${gameId}/log`)).text() : '';
      }
      expect(log).toContain('"text":"turn around"');
      expect(replay(log, { allowOpen: true }).header.gameId).toBe(gameId);
    }
    // The process that holds the game dies; no other process runs on its "machine" (its data directory).
    const running = async (serve: ServeProcess) => Number(/^cerealbar_games_running (\d+)/m.exec(await (await get(serve, '/metrics')).text())![1]);
    const [holder, other] = (await running(a)) === 1 ? [a, b] : [b, a];
    holder.child.kill('SIGKILL');
    // Another machine cannot see the process end: it waits for its lease to run out.
    const deadline = Date.now() + LEASE_MS + 10_000;
    let closed = null;
    while (!closed && Date.now() < deadline) {
      const record = await (await get(other, `/api/games/${gameId}`)).json();
      closed = record.endedAt === null ? null : record;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(closed).toMatchObject({ endReason: 'interrupted', note: COPY_NOTE });
    const log = await (await get(other, `/api/games/${gameId}/log`)).text();
    expect(replay(log).end?.reason).toBe('interrupted');
  });
});
