/** The `cerealbar` command as a user runs it: a real process, its output and its exit status. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sampleLog } from './log/sample';

const BIN = join(__dirname, '..', 'bin', 'cerealbar.cjs');

function cerealbar(...args: string[]) {
  const run = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 60_000 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

const dir = mkdtempSync(join(tmpdir(), 'cerealbar-cli-'));

describe('cerealbar selfplay and replay', () => {
  test('self-play writes one log per game, and replay accepts them all', () => {
    const out = join(dir, 'games');
    const played = cerealbar('selfplay', '--games', '3', '--seed', '7', '--out', out);
    expect(played.stderr).toBe('');
    expect(played.status).toBe(0);
    expect(played.stdout).toMatch(/3 games written to .*games in [\d.]+ s; mean score [\d.]+/);
    const files = readdirSync(out).sort();
    expect(files).toEqual(['run.json', 'selfplay-7.jsonl', 'selfplay-8.jsonl', 'selfplay-9.jsonl']);

    // What selfplay tells to run: replay DIR/*.jsonl (run.json is the run's manifest).
    const replayed = cerealbar('replay', ...files.filter((f) => f.endsWith('.jsonl')).map((f) => join(out, f)));
    expect(replayed.status).toBe(0);
    expect(replayed.stdout.trim().split('\n')).toHaveLength(3);
    expect(replayed.stdout).toMatch(/selfplay-7.jsonl: ok: \d+ events, score \d+, ended: turns-exhausted/);
  });

  test('replay --json prints a summary and the final snapshot', () => {
    const file = join(dir, 'sample.jsonl');
    writeFileSync(file, sampleLog().text);
    const run = cerealbar('replay', '--json', file);
    expect(run.status).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({ file, ok: true, summary: { gameId: 'sample', events: 16, score: 1, endReason: 'abandoned' } });
    expect(Object.keys(report.final)).toEqual(['turn', 'turnsLeft', 'score', 'queue', 'previousInstruction', 'leader', 'follower', 'cards', 'gameOver']);
  });

  test('an inconsistent log fails with the file and the line, without a stack trace', () => {
    const good = join(dir, 'good.jsonl');
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(good, sampleLog().text);
    writeFileSync(bad, sampleLog().text.replace('"score":1,"gameOver":false}}\n{"kind":"event","seq":8', '"score":2,"gameOver":false}}\n{"kind":"event","seq":8'));
    const run = cerealbar('replay', good, bad);
    expect(run.status).toBe(1);
    expect(run.stdout).toMatch(/good.jsonl: ok/);
    expect(run.stderr).toContain(`${bad}: line 8: outcome differs from the rules: outcome.score: recorded 2, replay gives 1`);
    expect(run.stderr).toContain('cerealbar: 1 of 2 logs failed to replay');
    expect(run.stderr).not.toMatch(/\s+at /);
  });

  test('a reader that stops early (| head) ends the command quietly, status 0', () => {
    const out = join(dir, 'many');
    expect(cerealbar('selfplay', '--games', '12', '--seed', '30', '--out', out).status).toBe(0);
    const files = readdirSync(out).filter((f) => f.endsWith('.jsonl')).map((f) => join(out, f));
    // The shell's `| head -c 10`: the pipe closes after the first bytes, with most of the output
    // unwritten; PIPESTATUS[0] is cerealbar's status.
    const command = `"${process.execPath}" "${BIN}" replay --json ${files.map((f) => `"${f}"`).join(' ')} | head -c 10; echo " \${PIPESTATUS[0]}"`;
    const run = spawnSync('bash', ['-c', command], { encoding: 'utf8', timeout: 60_000 });
    expect(run.stdout).toBe(`{"file":"/ 0\n`);
    expect(run.stderr).toBe('');
  });

  test('a missing file and a binary file are reported, not thrown', () => {
    const binary = join(dir, 'binary.jsonl');
    writeFileSync(binary, Buffer.from([0, 159, 146, 150, 255, 10]));
    const run = cerealbar('replay', '--json', join(dir, 'nope.jsonl'), binary);
    expect(run.status).toBe(1);
    const reports = run.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(reports[0]).toMatchObject({ ok: false, error: expect.stringMatching(/nope.jsonl: cannot read: no such file/) });
    expect(reports[1]).toMatchObject({ ok: false, line: 1, error: expect.stringMatching(/binary.jsonl: line 1: the last line is cut off or not JSON/) });
  });
});

describe('usage errors exit with status 2 and one line', () => {
  test.each([
    [['selfplay', '--games', 'many', '--out', dir], /--games must be an integer, got "many"/],
    [['selfplay', '--games', '0', '--out', dir], /--games must be between 1 and 1000000, got 0/],
    [['selfplay', '--games', '1'], /required option '--out <dir>' not specified/],
    [['selfplay', '--out', dir, '--map', join(dir, 'missing.json')], /missing.json: cannot read: no such file/],
    [['replay'], /missing required argument 'files'/],
    [['frobnicate'], /unknown command 'frobnicate'/],
  ])('%j', (args, message) => {
    const run = cerealbar(...(args as string[]));
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stderr).not.toMatch(/\s+at /);
  });

  test('--help lists every command', () => {
    const run = cerealbar('--help');
    expect(run.status).toBe(0);
    for (const command of ['replay', 'selfplay', 'maps']) expect(run.stdout).toContain(command);
  });
});

test('self-play on the tutorial map', () => {
  const out = join(dir, 'tutorial');
  const run = cerealbar('selfplay', '--games', '1', '--seed', '1', '--out', out, '--map', join(__dirname, '..', 'maps', 'tutorial.json'));
  expect(run.status).toBe(0);
  const header = JSON.parse(readFileSync(join(out, 'selfplay-1.jsonl'), 'utf8').split('\n')[0]);
  expect(header.map.name).toBe('tutorial');
});

describe('cerealbar agent: usage errors', () => {
  test('an oracle agent cannot play live: it needs a recorded game', () => {
    const run = cerealbar('agent', '--server', 'http://127.0.0.1:1', '--agent', 'static-oracle');
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/the static-oracle agent needs a recorded game; it can only be evaluated over logs \(cerealbar eval --agent static-oracle --logs PATH\)/);
  });

  test('a server that does not answer is reported in one line', () => {
    const run = cerealbar('agent', '--server', 'http://127.0.0.1:1', '--agent', 'random');
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/cannot join a game on http:\/\/127.0.0.1:1/);
    expect(run.stderr).not.toMatch(/\s+at /);
  });

  test('a bad pool name is refused before connecting', () => {
    const run = cerealbar('agent', '--server', 'http://127.0.0.1:1', '--agent', 'random', '--pool', 'has spaces');
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(/bad option: pool/);
  });
});

describe('serve', () => {
  test.each([
    ['--frame-ancestors', "https://app.prolific.com; script-src *", /--frame-ancestors: "https:\/\/app\.prolific\.com;" is not a frame source/],
    ['--frame-ancestors', '*', /--frame-ancestors: "\*" is not a frame source/],
    ['--cors-origin', 'https://a.example/path', /--cors-origin: "https:\/\/a\.example\/path" is not an origin/],
    ['--cors-origin', ' ', /--cors-origin: the list is empty/],
  ])('P-89: %s %j is refused before anything starts', (option, value, message) => {
    const run = cerealbar('serve', '--port', '0', option, value);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(message);
  });
});
