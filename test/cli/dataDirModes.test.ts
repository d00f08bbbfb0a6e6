/**
 * The data directory is its owner's only, whatever the umask: `serve` makes its folders 0700 and
 * its files 0600 (the index and the workers' file with their -wal and -shm, each log, the admin
 * token), and makes an older directory with looser modes so at start, saying what it changed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGame, waitFor } from '../server/harness';
import { studyFolder, validStudy, writeStudy } from '../study/fixtures';

jest.setTimeout(90_000);

const BIN = join(__dirname, '..', '..', 'bin', 'cerealbar.cjs');

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'cerealbar-modes-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

interface Served {
  readonly child: ChildProcess;
  readonly url: string;
  output(): string;
  stop(): Promise<void>;
}

/** `serve` under the usual umask 022, without ADMIN_TOKEN, running `study`. */
async function serveUnderUmask(data: string, study: string): Promise<Served> {
  const env = { ...process.env };
  delete env.ADMIN_TOKEN;
  const args = [BIN, 'serve', '--port', '0', '--host', '127.0.0.1', '--data', data, '--study', study].map((arg) => `'${arg}'`).join(' ');
  const child = spawn('/bin/sh', ['-c', `umask 022 && exec '${process.execPath}' ${args}`], { env });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await waitFor(() => /Admin token/.test(output), 'the server to start', 30_000);
  return {
    child,
    url: `http://127.0.0.1:${/localhost:(\d+)/.exec(output)![1]}`,
    output: () => output,
    stop: async () => {
      child.kill('SIGINT');
      await exited;
    },
  };
}

/** Every folder and file under `root` (itself included) with its permission bits, as "path mode". */
function modes(root: string): string[] {
  const found: string[] = [];
  const walk = (path: string, name: string) => {
    const stats = lstatSync(path);
    found.push(`${name} ${(stats.mode & 0o777).toString(8)}`);
    if (stats.isDirectory()) for (const entry of readdirSync(path).sort()) walk(join(path, entry), `${name}/${entry}`);
  };
  walk(root, '.');
  return found;
}

/** Each file and folder owner-only: the folders 700, the files 600. */
function ownerOnly(root: string): string[] {
  return modes(root).map((line) => line.replace(/ \d+$/, (mode) => (lstatSync(join(root, line.slice(0, -mode.length))).isDirectory() ? ' 700' : ' 600')));
}

test("P-128: under umask 022, the data directory serve makes, with its index, workers' file, logs and token, is its owner's only", async () => {
  const study = writeStudy(studyFolder(join(dir, 'study')), validStudy());
  const data = join(dir, 'data');
  const served = await serveUnderUmask(data, study);
  try {
    const { leader, follower } = await startGame(served.url);
    // While it runs: the SQLite files' -wal and -shm exist, and a log is being written.
    const running = modes(data);
    expect(running).toEqual(expect.arrayContaining(['. 700', './logs 700', './games.sqlite 600', './games.sqlite-wal 600', './games.sqlite-shm 600', './workers.sqlite 600', './workers.sqlite-wal 600', './workers.sqlite-shm 600', './admin-token 600']));
    expect(running.filter((line) => /^\.\/logs\/.+\.jsonl 600$/.test(line))).toHaveLength(1);
    expect(running).toEqual(ownerOnly(data));
    await leader.room.leave();
    await follower.room.leave();
  } finally {
    await served.stop();
  }
  expect(served.output()).not.toMatch(/other users had access/);
});

test('P-128: a data directory made with looser modes is made its owner\'s only at start, and serve says what it changed', async () => {
  const study = writeStudy(studyFolder(join(dir, 'study')), validStudy());
  const data = join(dir, 'data');
  await (await serveUnderUmask(data, study)).stop();
  // As an earlier version (or a copy made by hand) left it: readable by everyone.
  mkdirSync(join(data, 'logs'), { recursive: true });
  writeFileSync(join(data, 'logs', 'old.jsonl'), '');
  mkdirSync(join(data, 'llm', 'older'), { recursive: true });
  writeFileSync(join(data, 'llm', 'older', 'a.leader.llm.jsonl'), '{}\n');
  for (const path of [data, join(data, 'logs'), join(data, 'llm'), join(data, 'llm', 'older')]) chmodSync(path, 0o755);
  for (const path of [join(data, 'games.sqlite'), join(data, 'workers.sqlite'), join(data, 'logs', 'old.jsonl'), join(data, 'llm', 'older', 'a.leader.llm.jsonl')]) chmodSync(path, 0o644);
  // Files that are not the server's are left as they are.
  writeFileSync(join(data, 'notes.txt'), 'mine\n');
  chmodSync(join(data, 'notes.txt'), 0o644);

  const served = await serveUnderUmask(data, study);
  try {
    await waitFor(() => served.output().includes('other users had access'), 'the warning', 10_000);
    expect(served.output()).toContain(
      `cerealbar: warning: ${data}: other users had access to 8 of the data directory's folders and files: ${data} (mode 755), ${join(data, 'games.sqlite')} (mode 644), ${join(data, 'workers.sqlite')} (mode 644), and 5 more; made them its owner's only (folders 700, files 600). Whoever could read them may have copied the logs and the workers' ids\n`,
    );
    expect(modes(data).filter((line) => !line.startsWith('./notes.txt'))).toEqual(ownerOnly(data).filter((line) => !line.startsWith('./notes.txt')));
    expect(modes(data)).toContain('./notes.txt 644');
  } finally {
    await served.stop();
  }
});
