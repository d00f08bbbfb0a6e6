/** `cerealbar eval` as a user runs it: reports, worker threads, and agents that fail. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

jest.setTimeout(120_000);

const BIN = join(__dirname, '..', '..', 'bin', 'cerealbar.cjs');
const dir = mkdtempSync(join(tmpdir(), 'cerealbar-eval-cli-'));
const logs = join(dir, 'logs');

function cerealbar(...args: string[]) {
  const run = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 110_000 });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** A protocol agent in Node that misbehaves on its `n`-th observation: `how` is crash, hang, garbage or illegal. */
function badAgent(how: string, n: number): string {
  const file = join(dir, `${how}.js`);
  writeFileSync(
    file,
    `let seen = 0;
require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  const say = (v) => process.stdout.write(JSON.stringify(v) + '\\n');
  if (m.type === 'hello') say({ type: 'hello', protocol: 'cerealbar-agent', version: 2, name: '${how}', oracle: false });
  else if (m.type === 'reset') say({ type: 'ready' });
  else if (m.type === 'observe') {
    if (++seen !== ${n}) return say({ type: 'act', action: 'DONE' });
    if ('${how}' === 'crash') process.exit(3);
    if ('${how}' === 'garbage') return process.stdout.write('I think we should go left\\n');
    if ('${how}' === 'illegal') return say({ type: 'act', action: 'JUMP' });
    // hang: never answer
  }
});`,
  );
  return `node ${file}`;
}

beforeAll(() => {
  const played = cerealbar('selfplay', '--games', '2', '--seed', '40', '--out', logs);
  expect(played.status).toBe(0);
});

test('E-14, E-23: cascaded evaluation of the static oracle over two worker threads writes JSON and HTML reports', () => {
  const out = join(dir, 'report.json');
  const html = join(dir, 'report.html');
  const run = cerealbar('eval', '--agent', 'static-oracle', '--logs', logs, '--mode', 'cascaded', '--max-actions', '500', '--workers', '2', '--out', out, '--html', html);
  expect(run.stderr).toMatch(/\d+\/\d+ episodes/);
  expect(run.status).toBe(0);
  expect(run.stdout).toMatch(/static-oracle, cascaded evaluation \(stop at first failure\), \d+ episodes from 2 logs/);
  expect(run.stdout).toMatch(/proportionFollowed\s+1\n/);
  const report = JSON.parse(readFileSync(out, 'utf8'));
  expect(report.aggregates).toMatchObject({ proportionFollowed: 1, proportionPoints: 1, agentErrors: 0 });
  expect(report.options.cascade).toBe('stop-at-first-failure');
  expect(report.undefinedCounts).toMatchObject({ proportionFollowed: 0, proportionPoints: report.episodes.length - report.aggregates.episodesWithPoints });
  expect(report.episodes.map((e: any) => e.episodeId)).toEqual([...report.episodes.map((e: any) => e.episodeId)].sort((a: string, b: string) => a.localeCompare(b, 'en', { numeric: true })));
  const page = readFileSync(html, 'utf8');
  expect(page).toContain('<svg');
  expect(page).toContain(`?game=selfplay-40&amp;event=`);
  expect(page).not.toMatch(/<script/);
  expect(page).toContain('undefined (episodes not in the mean)');
  // E-14: the points possible, and what they are, in the terminal and on the page.
  expect(run.stdout).toMatch(/\d+ points scored of \d+ possible over \d+ examples\. The points possible for an example are the points the recorded game made from its first follower step to the game's end/);
  expect(page).toMatch(/<p class="points">\d+ points scored of \d+ possible/);
});

test('--cascade continue plays on after failures, and the report says so', () => {
  const out = join(dir, 'continue.json');
  const html = join(dir, 'continue.html');
  const run = cerealbar('eval', '--agent', 'heuristic', '--logs', logs, '--mode', 'cascaded', '--cascade', 'continue', '--workers', '1', '--out', out, '--html', html);
  expect(run.status).toBe(0);
  expect(run.stdout).toMatch(/heuristic, cascaded evaluation \(continue after failures, not the paper\)/);
  const report = JSON.parse(readFileSync(out, 'utf8'));
  expect(report.options.cascade).toBe('continue');
  expect(report.episodes.every((e: any) => e.cascaded.cascade === 'continue')).toBe(true);
  // Somewhere the heuristic fails an instruction and still plays the next one.
  expect(report.episodes.some((e: any) => e.cascaded.played.length > e.cascaded.instructionsFollowed + 1)).toBe(true);
  expect(readFileSync(html, 'utf8')).toContain('continue after failures, not the paper');
});

test.each([
  ['crash', /exit|crash/i],
  ['hang', /did not send its answer to observe within 300 ms/],
  ['garbage', /I think we should go left/],
  ['illegal', /JUMP/],
])('an agent that fails (%s) fails only that example; the others go on', (how, message) => {
  const out = join(dir, `${how}.json`);
  const run = cerealbar('eval', '--agent', badAgent(how, 3), '--logs', join(logs, 'selfplay-40.jsonl'), '--agent-timeout', '300', '--out', out);
  expect(run.status).toBe(0);
  const report = JSON.parse(readFileSync(out, 'utf8'));
  const failed = report.episodes.filter((e: any) => e.error);
  // A fresh agent is started after each failure, and each one fails on its third observation.
  expect(failed.length).toBeGreaterThan(0);
  expect(failed.length).toBeLessThan(report.episodes.length);
  expect(failed[0].error).toMatch(message);
  expect(report.aggregates.agentErrors).toBe(failed.length);
  expect(run.stdout).toMatch(/agent error in selfplay-40#\d+/);
});

test('an agent that cannot start is a usage error, not a crash', () => {
  const run = cerealbar('eval', '--agent', 'no-such-program-xyz', '--logs', logs);
  expect(run.status).toBe(2);
  expect(run.stderr).toMatch(/cannot start the agent "no-such-program-xyz"/);
  expect(run.stderr).not.toMatch(/\s+at /);
});

test('bad options and missing logs', () => {
  expect(cerealbar('eval', '--agent', 'random', '--logs', join(dir, 'nothing')).stderr).toMatch(/no such file or directory/);
  expect(cerealbar('eval', '--agent', 'random', '--logs', logs, '--mode', 'sideways').stderr).toMatch(/--mode must be single or cascaded/);
  expect(cerealbar('eval', '--agent', 'random', '--logs', logs, '--mode', 'cascaded', '--cascade', 'sometimes').stderr).toMatch(
    /--cascade must be stop-at-first-failure or continue, got "sometimes"/,
  );
});
