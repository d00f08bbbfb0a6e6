/**
 * The chaos soak, one minute of it (`npm run soak` runs it for longer): two machines' `serve`
 * processes on Redis and PostgreSQL under load, through a SIGKILL, a SIGSTOP, a Redis restart, a
 * PostgreSQL outage and cut connections; no acknowledged action is lost, every log replays and
 * ends, and the study's workers agree with the logs.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

jest.setTimeout(420_000);

test('a minute of faults under load loses no acknowledged action and leaves every game replayable and closed', () => {
  const run = spawnSync(process.execPath, [join(__dirname, '..', '..', 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(__dirname, '..', '..', 'bench', 'soak.ts'), '--minutes', '1', '--slots', '3', '--study-slots', '1'], {
    encoding: 'utf8',
    timeout: 400_000,
  });
  const summary = /^soak: (\d+) games, (\d+) acknowledged actions, (.*)$/m.exec(run.stdout);
  expect({ status: run.status, summary: summary?.[3], problems: run.stderr.split('\n').filter((line) => line.includes('problem:')) }).toEqual({ status: 0, summary: '0 lost, 0 unreplayable, 0 open', problems: [] });
  // The load played real games through the faults.
  expect(Number(summary![1])).toBeGreaterThanOrEqual(5);
  expect(Number(summary![2])).toBeGreaterThan(300);
  for (const fault of ['SIGKILL machine-a', 'SIGSTOP machine-b', 'Redis restarted empty', 'PostgreSQL stopped', "the database's connections cut"]) expect(run.stderr).toContain(`fault: ${fault}`);
});
