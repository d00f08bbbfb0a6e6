/** `cerealbar serve`'s options for several processes and machines, refused before anything starts when they do not fit together. */
import { studyFolder, validStudy, writeStudy } from '../study/fixtures';
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

test("serve --store with --study is refused: a study's workers are kept on one machine", async () => {
  const file = writeStudy(studyFolder(), validStudy());
  const run = await cerealbar('serve', '--port', '0', '--store', 'postgres://db/games', '--study', file);
  expect(run.status).toBe(2);
  expect(run.stderr).toContain("--study cannot be used with --store yet: a study's workers are kept in the data directory of one machine");
});
