/**
 * Runs at once and runs stopped: `--concurrency K` gives the report of K = 1 with a deterministic
 * agent (agent-vs-agent and over logs); `--llm-rpm`/`--llm-tpm` pace every agent of the process
 * asking one endpoint; an evaluation over logs resumes after a SIGKILL; Ctrl-C ends what is under
 * way, keeps it, and a second Ctrl-C leaves no call records without a log.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chat, chatClient } from '../../shared/agents/node/llm/chat';
import { estimatedTokens, RateLimiter, sharedRateLimiter } from '../../shared/agents/node/llm/rateLimit';
import type { EvalReport } from '../../shared/eval/report';
import { cerealbar } from '../cli/run';
import { signalled } from '../cli/signalled';
import { followerByContent, startStubLlm, STUB_MODEL, type StubLlm } from '../helpers/stubLlm';

jest.setTimeout(600_000);

let dir: string;
let stub: StubLlm;
let logs: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'eval-concurrency-'));
  stub = await startStubLlm({ respond: followerByContent });
  logs = join(dir, 'logs');
  expect((await cerealbar('selfplay', '--games', '6', '--seed', '40', '--out', logs)).status).toBe(0);
});
afterAll(async () => {
  await stub.close();
  rmSync(dir, { recursive: true, force: true });
});


const llm = () => ['--llm-base-url', stub.url, '--llm-model', STUB_MODEL, '--llm-max-calls', '20'];

/** A report without what differs between runs of the same settings: when it was made, how long calls took. */
function comparable(file: string): unknown {
  const { createdAt: _, ...rest } = JSON.parse(readFileSync(file, 'utf8')) as { createdAt: string };
  return JSON.parse(JSON.stringify(rest), (key, value) => (key === 'latencyMs' ? null : value));
}

test('E-60: --concurrency 4 gives the report of --concurrency 1, agent-vs-agent and over logs', async () => {
  const pairs = (k: string) => cerealbar('eval', '--pair', 'scripted:llm', '--pair', 'scripted:heuristic', '--games', '6', '--seed', '3', '--bootstrap', '200', '--out', join(dir, `pairs-${k}`), '--concurrency', k, ...llm());
  expect((await pairs('1')).status).toBe(0);
  expect((await pairs('4')).status).toBe(0);
  expect(comparable(join(dir, 'pairs-4', 'report.json'))).toEqual(comparable(join(dir, 'pairs-1', 'report.json')));
  expect(JSON.parse(readFileSync(join(dir, 'pairs-4', 'run.json'), 'utf8')).covered.concurrency).toBe(4);

  const overLogs = (k: string) => cerealbar('eval', '--agent', 'llm', '--logs', logs, '--mode', 'cascaded', '--max-actions', '5', '--out', join(dir, `logs-${k}`, 'report.json'), '--concurrency', k, ...llm());
  expect((await overLogs('1')).status).toBe(0);
  const four = await overLogs('4');
  expect(four.status).toBe(0);
  const report = JSON.parse(readFileSync(join(dir, 'logs-4', 'report.json'), 'utf8')) as EvalReport;
  expect(report.episodes.length).toBeGreaterThan(20);
  expect(comparable(join(dir, 'logs-4', 'report.json'))).toEqual(comparable(join(dir, 'logs-1', 'report.json')));
  // Nothing of the run is left beside the report but its manifest and the call records.
  expect(readdirSync(join(dir, 'logs-4')).filter((name) => !name.endsWith('.llm.ndjson')).sort()).toEqual(['report.json', 'report.run.json']);

  const both = await cerealbar('eval', '--agent', 'heuristic', '--logs', logs, '--workers', '2', '--concurrency', '2');
  expect(both.stderr).toBe('cerealbar: --workers and --concurrency: give one (threads for agents that compute, episodes at once in one thread for agents that wait on a server)\n');
});

describe('E-61: requests and tokens a minute, shared by the agents of an endpoint', () => {
  /** A clock that moves only when the limiter sleeps. */
  function fakeClock() {
    let now = 0;
    return { now: () => now, sleep: async (ms: number) => void (now += ms), at: () => now };
  }

  test('rpm: the fourth request of a minute waits for the first to leave the window', async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ rpm: 3 }, clock.now, clock.sleep);
    const started: number[] = [];
    for (let i = 0; i < 5; i++) {
      await limiter.take(10);
      started.push(clock.at());
    }
    expect(started).toEqual([0, 0, 0, 60_000, 60_000]);
  });

  test('tpm: estimates count until the reply tells the tokens; a request larger than the limit goes alone', async () => {
    const clock = fakeClock();
    const limiter = new RateLimiter({ tpm: 100 }, clock.now, clock.sleep);
    const settle = await limiter.take(60);
    await limiter.take(30); // 90 of 100
    settle(20); // the reply counted 20: 50 of 100
    await limiter.take(40);
    expect(clock.at()).toBe(0);
    await limiter.take(40); // 130 > 100: waits for the window to empty
    expect(clock.at()).toBe(60_000);
    await limiter.take(500); // alone in a new window
    expect(clock.at()).toBe(120_000);
  });

  test('every HTTP attempt takes its turn, retries included, and is settled with the tokens counted', async () => {
    const retried = await startStubLlm({ replies: [{ status: 429, retryAfter: '0' }, { content: '{"actions": ["MF"]}', promptTokens: 70, completionTokens: 7 }] });
    try {
      const takes: number[] = [];
      const settled: (number | null)[] = [];
      const limiter = { take: async (tokens: number) => (takes.push(tokens), (counted: number | null) => void settled.push(counted)) } as unknown as RateLimiter;
      const request = { model: STUB_MODEL, messages: [{ role: 'user' as const, content: 'x'.repeat(400) }], temperature: 0, max_tokens: 50 };
      const result = await chat(chatClient(retried.url, null), request, { timeoutMs: 5000, maxRetries: 2, retryBaseMs: 1, redact: (text) => text, limiter });
      expect(result.status).toBe('ok');
      expect(takes).toEqual([estimatedTokens(request), estimatedTokens(request)]);
      expect(settled).toEqual([0, 77]);
    } finally {
      await retried.close();
    }
  });

  test('one limiter for the agents of an endpoint and model; its limits in the call records', async () => {
    expect(sharedRateLimiter('http://a/v1', 'm', { rpm: 5 })).toBe(sharedRateLimiter('http://a/v1', 'm', { rpm: 5 }));
    expect(sharedRateLimiter('http://a/v1', 'm', { rpm: 5 })).not.toBe(sharedRateLimiter('http://a/v1', 'n', { rpm: 5 }));
    expect(sharedRateLimiter('http://a/v1', 'm', {})).toBeNull();
    const out = join(dir, 'limited');
    const run = await cerealbar('eval', '--leader', 'scripted', '--follower', 'llm', '--games', '2', '--out', out, '--concurrency', '2', ...llm(), '--llm-rpm', '1000', '--llm-tpm', '1000000');
    expect(run.status).toBe(0);
    const header = JSON.parse(readFileSync(join(out, 'pair-1', 'eval-1.follower.llm.ndjson'), 'utf8').split('\n')[0]);
    expect(header.settings).toMatchObject({ rpm: 1000, tpm: 1000000 });
    const bad = await cerealbar('eval', '--leader', 'scripted', '--follower', 'llm', '--out', join(dir, 'bad'), ...llm(), '--llm-rpm', '0');
    expect(bad.stderr).toBe('cerealbar: --llm-rpm must be between 1 and 1000000, got 0\n');
  });
});

const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter((line) => line.trim() !== '').length : 0);

test('E-62: an evaluation over logs killed on the way resumes, and gives the report of a run never stopped; a finished one is replaced', async () => {
  const args = (out: string) => ['eval', '--agent', 'llm', '--logs', logs, '--mode', 'cascaded', '--max-actions', '5', '--out', out, ...llm()];
  const whole = join(dir, 'whole', 'report.json');
  expect((await cerealbar(...args(whole))).status).toBe(0);
  const killed = join(dir, 'killed', 'report.json');
  const progress = join(dir, 'killed', 'report.episodes.ndjson');
  const { signal } = await signalled(args(killed), () => lines(progress) >= 5, ['SIGKILL']);
  expect(signal).toBe('SIGKILL');
  const kept = lines(progress);
  const refused = await cerealbar(...args(killed));
  expect(refused.stderr).toMatch(/report\.episodes\.ndjson: a run of .*report\.json did not finish: give --resume to continue it, --overwrite to replace it, or another --out\n$/);
  const resumed = await cerealbar(...args(killed), '--resume');
  expect(resumed.status).toBe(0);
  expect(resumed.stderr).toMatch(new RegExp(`^${kept} episodes kept from the run before\\n`));
  expect(comparable(killed)).toEqual(comparable(whole));
  expect(existsSync(progress)).toBe(false);
  expect(JSON.parse(readFileSync(join(dir, 'killed', 'report.run.json'), 'utf8')).covered).toMatchObject({ keptFromBefore: kept });
  // A finished run's report is one file, written whole: the same command replaces it.
  expect((await cerealbar(...args(killed))).status).toBe(0);
  expect(comparable(killed)).toEqual(comparable(whole));
});

test('E-63: Ctrl-C ends the games under way and keeps them; a second Ctrl-C discards them whole; --resume finishes the run', async () => {
  const args = (out: string) => ['eval', '--leader', 'scripted', '--follower', 'llm', '--games', '8', '--seed', '20', '--bootstrap', '200', '--out', out, ...llm()];
  const once = join(dir, 'ctrl-c');
  const first = await signalled(args(once), () => lines(join(once, 'pair-1', 'games.ndjson')) >= 2, ['SIGINT']);
  expect(first.code).toBe(130);
  expect(first.stderr).toContain('cerealbar: interrupted: finishing what is under way, then stopping');
  expect(first.stderr).toMatch(/cerealbar: interrupted: the games finished are kept in .*; the same command with --resume continues\n$/);
  /** Every game on record has its log and its call records, and no call records lack a game. */
  const whole = (out: string) => {
    const finished = readFileSync(join(out, 'pair-1', 'games.ndjson'), 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line).gameId as string);
    const files = readdirSync(join(out, 'pair-1'));
    expect(files.filter((name) => name.endsWith('.jsonl')).sort()).toEqual(finished.map((id) => `${id}.jsonl`).sort());
    expect(files.filter((name) => name.endsWith('.llm.ndjson')).sort()).toEqual(finished.map((id) => `${id}.follower.llm.ndjson`).sort());
    return finished.length;
  };
  expect(whole(once)).toBeGreaterThanOrEqual(2);

  const twice = join(dir, 'ctrl-c-twice');
  const second = await signalled(args(twice), () => lines(join(twice, 'pair-1', 'games.ndjson')) >= 1, ['SIGINT', 'SIGINT']);
  expect(second.code).toBe(130);
  expect(second.stderr).toContain('stopped at once; what was under way is discarded.');
  whole(twice);

  const resumed = await cerealbar(...args(twice), '--resume');
  expect(resumed.status).toBe(0);
  expect(whole(twice)).toBe(8);
});
