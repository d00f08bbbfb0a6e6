/**
 * `cerealbar serve`'s options for several processes and machines, refused before anything starts
 * when they do not fit together; the admin token it keeps from one start to the next.
 */
import { studyFolder, validStudy, writeStudy } from '../study/fixtures';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cerealbar } from './run';
import { waitFor } from '../server/harness';

test.each([
  [['--redis', 'redis://127.0.0.1:1'], '--redis and --public-address go together'],
  [['--public-address', '127.0.0.1:2567'], '--redis and --public-address go together'],
  [['--store', 'mysql://user:secret@db/games'], '--store: mysql://user:***@db/games is not a postgres:// URL'],
  [['--store', 'games.sqlite'], '--store: (an invalid URL) is not a postgres:// URL'],
  [['--trust-proxy', 'proxy.example.org'], '--trust-proxy: "proxy.example.org" is not a proxy address, a subnet (10.0.0.0/8) or one of loopback, linklocal, uniquelocal'],
  [['--trust-proxy', 'loopback, 10.0.0.0/8, *'], '--trust-proxy: "*" is not a proxy address'],
])('serve %j is refused: %s', async (args, message) => {
  const run = await cerealbar('serve', '--port', '0', ...args);
  expect(run.status).toBe(2);
  expect(run.stderr).toContain(message);
  expect(run.stdout).toBe('');
});

test('serve --store with a database that does not answer stops with the reason, its password never printed', async () => {
  const file = writeStudy(studyFolder(), validStudy());
  const run = await cerealbar('serve', '--port', '0', '--data', mkdtempSync(join(tmpdir(), 'cerealbar-serve-')), '--store', 'postgres://user:secret@127.0.0.1:1/games', '--study', file);
  expect(run.status).toBe(2);
  expect(run.stderr).toMatch(/postgres:\/\/user:\*\*\*@127\.0\.0\.1:1\/games \(logs first in .*\): cannot open the game store: .*ECONNREFUSED/);
  expect(run.stderr + run.stdout).not.toContain('secret');
});

describe('the admin token', () => {
  const BIN = join(__dirname, '..', '..', 'bin', 'cerealbar.cjs');

  /** Starts `serve` on `data` (with ADMIN_TOKEN only when given), checks `token` against its API, stops it; what it printed. */
  async function serveWith(data: string, token: string | null, adminToken?: string): Promise<string> {
    const env = { ...process.env };
    delete env.ADMIN_TOKEN;
    if (adminToken !== undefined) env.ADMIN_TOKEN = adminToken;
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--host', '127.0.0.1', '--data', data], { env });
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      await waitFor(() => /Admin token/.test(output), 'the server to start', 30_000);
      const port = /localhost:(\d+)/.exec(output)![1];
      const games = (auth: string) => fetch(`http://127.0.0.1:${port}/api/games`, { headers: { authorization: `Bearer ${auth}` } });
      const used = token ?? /^Admin token \(.*\): (\S+)$/m.exec(output)![1];
      expect((await games(used)).status).toBe(200);
      expect((await games(`${used}x`)).status).toBe(403);
      return output;
    } finally {
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  }

  const fingerprintOf = (token: string) => createHash('sha256').update(token).digest('hex').slice(0, 8);

  test('P-129: serve shows the token it makes once, at that start; later starts name its file and fingerprint, never the token', async () => {
    const data = join(mkdtempSync(join(tmpdir(), 'cerealbar-serve-')), 'data');
    const first = await serveWith(data, null);
    const file = join(data, 'admin-token');
    const token = readFileSync(file, 'utf8').trim();
    expect(first).toContain(`Admin token (made now and kept in ${file} for every start, shown only this once; set ADMIN_TOKEN to choose one; fingerprint ${fingerprintOf(token)}): ${token}\n`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // The same token at the next start, which does not print it.
    const second = await serveWith(data, token);
    expect(second).toContain(`Admin token: the one kept in ${file} (fingerprint ${fingerprintOf(token)}; set ADMIN_TOKEN to choose one)\n`);
    expect(second).not.toContain(token);
  }, 90_000);

  test('P-129: with ADMIN_TOKEN, serve prints only its fingerprint', async () => {
    const token = 'an-admin-token-of-the-operator';
    const output = await serveWith(join(mkdtempSync(join(tmpdir(), 'cerealbar-serve-')), 'data'), token, token);
    expect(output).toContain(`Admin token: from ADMIN_TOKEN (fingerprint ${fingerprintOf(token)})\n`);
    expect(output).not.toContain(token);
  }, 60_000);
});
