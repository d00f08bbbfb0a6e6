/**
 * `cerealbar serve`'s options for several processes and machines, refused before anything starts
 * when they do not fit together; the admin token it keeps from one start to the next.
 */
import { studyFolder, validStudy, writeStudy } from '../study/fixtures';
import { spawn } from 'node:child_process';
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

  /** Starts `serve` on `data` without ADMIN_TOKEN; the token it prints, checked against its API; then stops it. */
  async function servedToken(data: string): Promise<string> {
    const env = { ...process.env };
    delete env.ADMIN_TOKEN;
    const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--host', '127.0.0.1', '--data', data], { env });
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      await waitFor(() => /Admin token/.test(output), 'the server to start', 30_000);
      const [, token] = /^Admin token \(.*\): (\S+)$/m.exec(output)!;
      const port = /localhost:(\d+)/.exec(output)![1];
      const games = (auth: string) => fetch(`http://127.0.0.1:${port}/api/games`, { headers: { authorization: `Bearer ${auth}` } });
      expect((await games(token)).status).toBe(200);
      expect((await games(`${token}x`)).status).toBe(403);
      return token;
    } finally {
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  }

  test('serve keeps the token it makes in the data directory, readable by its owner only, and uses it again after a restart', async () => {
    const data = join(mkdtempSync(join(tmpdir(), 'cerealbar-serve-')), 'data');
    const first = await servedToken(data);
    const file = join(data, 'admin-token');
    expect(readFileSync(file, 'utf8')).toBe(`${first}\n`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(await servedToken(data)).toBe(first);
  }, 90_000);
});
