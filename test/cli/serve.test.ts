/** `cerealbar serve`'s options for several processes and machines, refused before anything starts when they do not fit together. */
import { studyFolder, validStudy, writeStudy } from '../study/fixtures';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cerealbar } from './run';

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
