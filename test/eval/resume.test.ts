/**
 * Runs that are safe to repeat: `eval` refuses a used --out unless told to resume or overwrite;
 * `--resume` after a SIGKILL in the middle of a 20-game agent-vs-agent run with an LLM follower
 * (a stub whose replies depend on the request alone) gives the report an uninterrupted run gives;
 * run.json says what ran, never the key.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PairsReport } from '../../shared/eval/pairs';
import { cerealbar } from '../cli/run';
import { followerByContent, startStubLlm, STUB_MODEL, type StubLlm } from '../helpers/stubLlm';

jest.setTimeout(600_000);

const BIN = join(__dirname, '..', '..', 'bin', 'cerealbar.cjs');
const KEY = 'sk-test-resume-NEVER-WRITTEN-1234';

let dir: string;
let stub: StubLlm;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'eval-resume-'));
  stub = await startStubLlm({ respond: followerByContent, key: KEY });
});
afterAll(async () => {
  await stub.close();
  rmSync(dir, { recursive: true, force: true });
});


const args = (out: string, ...more: string[]) => [
  'eval', '--leader', 'scripted', '--follower', 'llm', '--games', '20', '--seed', '7', '--bootstrap', '500', '--out', out,
  '--llm-base-url', stub.url, '--llm-model', STUB_MODEL, '--llm-api-key-env', 'RESUME_TEST_KEY', '--llm-max-calls', '25', ...more,
];
const env = { ...process.env, RESUME_TEST_KEY: KEY };

/** The report without what differs between two runs of the same settings: when it was made, and how long calls took. */
function comparable(out: string): unknown {
  const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as PairsReport & { createdAt?: string };
  const { createdAt: _, ...rest } = report;
  return JSON.parse(JSON.stringify(rest), (key, value) => (key === 'latencyMs' ? null : value));
}

const finishedLines = (out: string) => {
  const path = join(out, 'pair-1', 'games.ndjson');
  return existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter((line) => line.trim() !== '').length : 0;
};

test('E-43, E-44, E-45: --resume after a SIGKILL in the middle of a 20-game run gives the report of an uninterrupted run', async () => {
  process.env.RESUME_TEST_KEY = KEY;
  const whole = join(dir, 'whole');
  const run = await cerealbar(...args(whole));
  expect(run.status).toBe(0);

  const killed = join(dir, 'killed');
  const child = spawn(process.execPath, [BIN, ...args(killed)], { env, stdio: 'ignore' });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
  while (finishedLines(killed) < 6) await new Promise((resolve) => setTimeout(resolve, 50));
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
  const kept = finishedLines(killed);
  expect(kept).toBeGreaterThanOrEqual(6);
  expect(kept).toBeLessThan(20);
  expect(existsSync(join(killed, 'report.json'))).toBe(false);
  expect(JSON.parse(readFileSync(join(killed, 'run.json'), 'utf8')).endedAt).toBeNull();

  const again = await cerealbar(...args(killed));
  expect({ status: again.status, stderr: again.stderr }).toEqual({ status: 2, stderr: expect.stringMatching(/^cerealbar: .*killed is not empty \(.*\): give --resume to continue the run in it, --overwrite to replace it, or another --out\n$/) });

  const resumed = await cerealbar(...args(killed, '--resume'));
  expect(resumed.status).toBe(0);
  expect(resumed.stderr).toContain(`pair 1 (scripted:llm): ${kept} games kept from the run before, ${20 - kept} to play\n`);
  expect(comparable(killed)).toEqual(comparable(whole));
  // Each game's log and call records are whole: one log and one record file per game, nothing left over.
  expect(readdirSync(join(killed, 'pair-1')).sort()).toEqual(readdirSync(join(whole, 'pair-1')).sort());

  const manifest = JSON.parse(readFileSync(join(killed, 'run.json'), 'utf8'));
  expect(manifest).toMatchObject({
    kind: 'cerealbar-run',
    command: ['cerealbar', ...args(killed, '--resume')],
    software: { node: process.version, packages: expect.objectContaining({ zod: expect.any(String) }) },
    settings: { pairs: ['scripted:llm'], games: 20, seed: 7, llm: { 'scripted:llm': { follower: { model: STUB_MODEL, baseUrl: stub.url, apiKeyEnv: 'RESUME_TEST_KEY', maxCalls: 25 } } } },
    covered: { pairs: [{ label: 'scripted:llm', games: 20, keptFromBefore: kept }] },
  });
  expect(Date.parse(manifest.endedAt)).toBeGreaterThanOrEqual(Date.parse(manifest.startedAt));
  for (const out of [whole, killed]) for (const file of ['run.json', 'report.json', 'report.html']) expect(readFileSync(join(out, file), 'utf8')).not.toContain(KEY);
});

test('E-43: --resume with other settings, --resume with --overwrite, and --overwrite replacing a run', async () => {
  const out = join(dir, 'other');
  const first = await cerealbar('eval', '--leader', 'scripted', '--follower', 'heuristic', '--games', '3', '--bootstrap', '100', '--out', out);
  expect(first.status).toBe(0);
  const other = await cerealbar('eval', '--leader', 'scripted', '--follower', 'heuristic', '--games', '4', '--bootstrap', '100', '--out', out, '--resume');
  expect({ status: other.status, stderr: other.stderr }).toEqual({ status: 2, stderr: `cerealbar: --resume: the run in ${out} had other settings (games differs); give the same options, or --overwrite\n` });
  const both = await cerealbar('eval', '--leader', 'scripted', '--follower', 'heuristic', '--games', '3', '--out', out, '--resume', '--overwrite');
  expect(both.stderr).toBe('cerealbar: --resume and --overwrite cannot go together: continue the run in --out, or replace it\n');
  writeFileSync(join(out, 'notes.txt'), 'mine');
  const replaced = await cerealbar('eval', '--leader', 'scripted', '--follower', 'random', '--games', '2', '--bootstrap', '100', '--out', out, '--overwrite');
  expect(replaced.status).toBe(0);
  expect(readdirSync(out).sort()).toEqual(['notes.txt', 'pair-1', 'report.html', 'report.json', 'run.json']);
  expect((JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as PairsReport).pairs[0].games.map((game) => game.seed)).toEqual([1, 2]);
  // A folder with files but no run.json holds no run to continue.
  const foreign = join(dir, 'foreign');
  mkdirSync(foreign);
  writeFileSync(join(foreign, 'x.txt'), '');
  const nothing = await cerealbar('eval', '--leader', 'scripted', '--follower', 'heuristic', '--out', foreign, '--resume');
  expect(nothing.stderr).toBe(`cerealbar: --resume: ${foreign} has no run.json, so it holds no run to continue\n`);
  // Over logs, they need the report they are about.
  const overLogs = await cerealbar('eval', '--agent', 'heuristic', '--logs', out, '--overwrite');
  expect(overLogs.stderr).toBe('cerealbar: --overwrite needs --out FILE: the report, beside which the finished episodes are kept\n');
});
