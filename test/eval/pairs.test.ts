/**
 * `cerealbar eval --leader A --follower B` / `--pair A:B`: agent-vs-agent evaluation. The figures
 * of the report are checked against the logs it wrote (recomputed by the dataset's statistics),
 * the intervals against the bootstrap with the report's seed, the LLM seat's counts against the
 * stub server's requests, and every bad input stops the command before any game.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { datasetStats } from '../../shared/dataset/stats';
import { recordsOf } from '../../shared/dataset/records';
import { bootstrapInterval } from '../../shared/eval/bootstrap';
import { loadRecording } from '../../shared/eval/recording';
import type { PairsReport } from '../../shared/eval/pairs';
import { readRecords, type CallRecord } from '../../shared/agents/node/llm/records';
import { cerealbar } from '../cli/run';
import { startStubLlm, STUB_MODEL, type ChatBody, type StubLlm, type StubReply } from '../helpers/stubLlm';

jest.setTimeout(120_000);

let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eval-pairs-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const readReport = (out: string): PairsReport => JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

describe('real pairs: the scripted leader with the heuristic and with the random follower', () => {
  let out: string;
  let run: Awaited<ReturnType<typeof cerealbar>>;
  let report: PairsReport;
  const shared = mkdtempSync(join(tmpdir(), 'eval-pairs-shared-'));
  beforeAll(async () => {
    out = join(shared, 'out');
    run = await cerealbar('eval', '--leader', 'scripted', '--follower', 'heuristic', '--follower', 'random', '--games', '8', '--seed', '30', '--bootstrap', '2000', '--out', out);
    report = readReport(out);
  });
  afterAll(() => rmSync(shared, { recursive: true, force: true }));

  test('E-27: plays every pair on the same seeds and maps and writes the logs, report.json and report.html', () => {
    expect(run.status).toBe(0);
    expect(run.stderr).toBe('pair 1 (scripted:heuristic): 8 games, mean score ' + report.pairs[0].summary.meanScore.toFixed(2) + '\npair 2 (scripted:random): 8 games, mean score ' + report.pairs[1].summary.meanScore.toFixed(2) + '\n');
    expect(report).toMatchObject({ kind: 'agent-pairs', version: 1, games: 8, seed: 30, bootstrap: { resamples: 2000, seed: 30, level: 0.95, method: 'percentile' } });
    expect(report.pairs.map((p) => [p.index, p.label, p.leader.name, p.follower.name, p.dir])).toEqual([
      [1, 'scripted:heuristic', 'scripted', 'heuristic', 'pair-1'],
      [2, 'scripted:random', 'scripted', 'random', 'pair-2'],
    ]);
    for (const pair of report.pairs) {
      expect(pair.games.map((g) => g.seed)).toEqual([30, 31, 32, 33, 34, 35, 36, 37]);
      expect(readdirSync(join(out, pair.dir)).sort()).toEqual([...pair.games.map((g) => `${g.gameId}.jsonl`), 'games.ndjson'].sort());
      for (const game of pair.games) {
        const header = loadRecording(readFileSync(join(out, game.log), 'utf8')).header;
        expect(header.seed).toBe(game.seed);
        expect(header.meta.agents).toEqual({ leader: pair.leader, follower: pair.follower });
      }
    }
    // Game i of each pair is on the same map.
    const maps = (p: number) => report.pairs[p].games.map((g) => JSON.stringify(loadRecording(readFileSync(join(out, g.log), 'utf8')).header.map));
    expect(maps(0)).toEqual(maps(1));
    expect(run.stdout).toMatch(/agent-vs-agent evaluation: 2 pairs, 8 games each on seeds 30 to 37; score intervals: percentile bootstrap, 2000 resamples, seed 30/);
    expect(run.stdout).toMatch(/pair 2 - pair 1: [-+]\d+\.\d\d points a game/);
    const page = readFileSync(join(out, 'report.html'), 'utf8');
    expect(page).toContain('<svg');
    expect(page).not.toMatch(/<script/);
    expect(page).toContain('95% percentile bootstrap over the games, 2000 resamples, seed 30');
    expect(page).toContain('href="pair-2/eval-37.jsonl"');
  });

  test('E-29, E-31, E-32, E-33: the figures are those of the logs written: score, instructions per game, DONE share, steps per instruction', () => {
    for (const pair of report.pairs) {
      const games = pair.games.map((g) => recordsOf(loadRecording(readFileSync(join(out, g.log), 'utf8'))));
      const stats = datasetStats(games);
      const s = pair.summary;
      expect(s.games).toBe(8);
      expect(pair.games.map((g) => g.score)).toEqual(games.map((g) => g.game.score));
      expect(s.meanScore).toBeCloseTo(stats.score.mean, 10);
      expect(s.instructionsPerGame).toBeCloseTo(stats.instructions_per_game.mean, 10);
      expect(s.doneShare).toBeCloseTo(stats.completed_instructions / stats.instructions, 10);
      expect(s.stepsPerInstruction).toBeCloseTo(stats.follower_actions_per_instruction.mean, 10);
      expect(s.minScore).toBe(Math.min(...games.map((g) => g.game.score)));
      expect(pair.llm).toEqual({});
    }
    // The heuristic follower does better than the random one here: more instructions done, fewer steps each.
    const [heuristic, random] = report.pairs.map((p) => p.summary);
    expect(heuristic.instructionsPerGame).toBeGreaterThan(0);
    expect(heuristic.meanScore).toBeGreaterThanOrEqual(random.meanScore);
  });

  test('E-30, E-34, E-35: the intervals are the percentile bootstrap with the report seed, and hold the mean; the difference is seed by seed', () => {
    for (const pair of report.pairs) {
      const scores = pair.games.map((g) => g.score);
      expect(pair.summary.scoreInterval).toEqual(bootstrapInterval(scores, report.bootstrap));
      expect(pair.summary.scoreInterval.low).toBeLessThanOrEqual(pair.summary.meanScore);
      expect(pair.summary.scoreInterval.high).toBeGreaterThanOrEqual(pair.summary.meanScore);
    }
    const differences = report.pairs[1].games.map((g, i) => g.score - report.pairs[0].games[i].score);
    expect(report.differences).toEqual([
      {
        pair: 2,
        against: 1,
        meanDifference: mean(differences),
        interval: bootstrapInterval(differences, report.bootstrap),
        intervalWarning: 'fewer than 10 seeds',
        wins: differences.filter((d) => d > 0).length,
        ties: differences.filter((d) => d === 0).length,
        losses: differences.filter((d) => d < 0).length,
      },
    ]);
  });

  test('E-27, E-34: the same command gives the same report (but its time); --bootstrap-seed changes only the intervals', async () => {
    const again = join(dir, 'again');
    expect((await cerealbar('eval', '--pair', 'scripted:heuristic', '--pair', 'scripted:random', '--games', '8', '--seed', '30', '--bootstrap', '2000', '--out', again)).status).toBe(0);
    expect({ ...readReport(again), createdAt: '' }).toEqual({ ...report, createdAt: '' });
    expect(readFileSync(join(again, 'pair-1', 'eval-33.jsonl'), 'utf8')).toBe(readFileSync(join(out, 'pair-1', 'eval-33.jsonl'), 'utf8'));
    const reseeded = join(dir, 'reseeded');
    expect((await cerealbar('eval', '--leader', 'scripted', '--follower', 'heuristic', '--games', '8', '--seed', '30', '--bootstrap', '2000', '--bootstrap-seed', '5', '--out', reseeded)).status).toBe(0);
    const other = readReport(reseeded).pairs[0];
    expect(other.games).toEqual(report.pairs[0].games);
    expect(other.summary.scoreInterval).toEqual(bootstrapInterval(other.games.map((g) => g.score), { resamples: 2000, seed: 5, level: 0.95 }));
  });
});

describe('E-28: bad input stops the command with one line and exit 2, before any game', () => {
  test.each([
    [['--leader', 'heuristic', '--follower', 'random'], /^cerealbar: "heuristic" is a built-in follower, not a leader; the built-in leaders are scripted, llm\n$/],
    [['--leader', 'scripted', '--follower', 'scripted'], /^cerealbar: "scripted" is a built-in leader, not a follower; the built-in followers are random, heuristic, llm\n$/],
    [['--leader', 'scripted', '--follower', 'no-such-program-xyz'], /^cerealbar: cannot start the follower "no-such-program-xyz" of pair 1: agent "no-such-program-xyz" exited with code 127 before sending its answer to hello; its last stderr lines: .*not found\n$/],
    [['--pair', 'scripted:heuristic', '--pair', 'no-such-leader-xyz:random'], /^cerealbar: cannot start the leader "no-such-leader-xyz" of pair 2: .+\n$/],
    [['--leader', 'scripted', '--follower', 'oracle'], /^cerealbar: the oracle agent needs a recorded game; it can only be evaluated over logs \(cerealbar eval --agent oracle --logs PATH\)\n$/],
    [['--leader', 'scripted', '--follower', 'heuristic', '--games', '0'], /^cerealbar: --games must be between 1 and 100000, got 0\n$/],
    [['--leader', 'scripted'], /^cerealbar: --leader needs --follower \(or give whole pairs with --pair LEADER:FOLLOWER\)\n$/],
    [['--pair', 'scripted'], /^cerealbar: --pair must be LEADER:FOLLOWER, got "scripted"\n$/],
    [['--pair', 'scripted:heuristic', '--leader', 'scripted', '--follower', 'heuristic'], /^cerealbar: the pair scripted:heuristic is given twice\n$/],
    [['--leader', 'scripted', '--follower', 'heuristic', '--logs', 'x'], /^cerealbar: --logs is for evaluating a follower over logged games, not for agent-vs-agent evaluation \(--leader, --follower, --pair\)\n$/],
    [['--leader', 'scripted', '--follower', 'heuristic', '--llm-model', 'm'], /^cerealbar: the --llm-\* options are for the llm agent: give --leader, --follower or --pair llm\n$/],
    [['--leader', 'scripted', '--follower', 'llm', '--llm-model', 'm', '--llm-base-url', 'http://127.0.0.1:9/v1', '--llm-timeout-s', '2'], /^cerealbar: cannot reach http:\/\/127\.0\.0\.1:9\/v1: .+\n$/],
  ])('%j', async (args, message) => {
    const out = join(dir, 'out');
    const run = await cerealbar('eval', ...args, ...(args.includes('--out') ? [] : ['--out', out]));
    expect(run).toEqual({ status: 2, stdout: '', stderr: expect.stringMatching(message) });
    expect(existsSync(out)).toBe(false);
  });

  test('no --out', async () => {
    expect(await cerealbar('eval', '--leader', 'scripted', '--follower', 'heuristic')).toEqual({
      status: 2,
      stdout: '',
      stderr: 'cerealbar: agent-vs-agent evaluation needs --out DIR (for report.json, report.html and the game logs)\n',
    });
  });

  test('the options of agent-vs-agent evaluation over logged games, and a missing --agent, as before', async () => {
    expect(await cerealbar('eval', '--agent', 'random', '--logs', dir, '--games', '3')).toEqual({
      status: 2,
      stdout: '',
      stderr: 'cerealbar: --games is for agent-vs-agent evaluation: give --leader and --follower, or --pair\n',
    });
    const missing = await cerealbar('eval', '--logs', dir);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/^error: required option '--agent <agent>' not specified\n/);
    const noLogs = await cerealbar('eval', '--agent', 'random');
    expect(noLogs.stderr).toMatch(/^error: required option '--logs <paths...>' not specified\n/);
  });
});

describe('an LLM follower through the stub server', () => {
  let stub: StubLlm;
  afterEach(async () => stub?.close());

  /** One step and DONE; the 2nd call fails with a 500, the 4th is not JSON (asked again). */
  function followerModel(body: ChatBody, n: number): StubReply {
    if (n === 1) return { status: 500 };
    if (n === 3) return 'Let me think about that.';
    const text = body.messages.find((m) => m.role === 'user')!.content;
    const legal = /Actions allowed now: (.*)\.$/m.exec(text)![1].split(', ');
    const step = ['MF', 'RL', 'RR'].find((code) => legal.includes(code))!;
    return { content: JSON.stringify({ actions: [step, 'DONE'] }), promptTokens: 200, completionTokens: 20 };
  }

  test('E-36: its calls, failures by status, tokens and latency are in the report, and its call records beside the logs', async () => {
    stub = await startStubLlm({ respond: followerModel });
    const out = join(dir, 'out');
    const run = await cerealbar(
      'eval', '--pair', 'scripted:llm', '--pair', 'scripted:heuristic', '--games', '2', '--seed', '4', '--out', out,
      '--llm-base-url', stub.url, '--llm-model', STUB_MODEL, '--llm-max-retries', '0', '--llm-api-key-env', 'CEREALBAR_TEST_NO_KEY',
    );
    expect(run.stderr).toMatch(/^pair 1 \(scripted:llm\): 2 games/);
    expect(run.status).toBe(0);
    const report = readReport(out);
    const [llmPair, plain] = report.pairs;
    expect(plain.llm).toEqual({});
    expect(llmPair.follower).toEqual({ name: 'llm', version: expect.stringMatching(/^prompt [0-9a-f]{12}$/), spec: `llm ${STUB_MODEL} at ${stub.url}` });
    const llm = llmPair.llm.follower!;
    expect(llmPair.llm.leader).toBeUndefined();
    const calls: CallRecord[] = llmPair.games.flatMap((g) => readRecords(join(out, 'pair-1', `${g.gameId}.follower.llm.ndjson`)).filter((line): line is CallRecord => line.kind === 'llm-call'));
    const sent = stub.chatRequests();
    expect(llm.calls).toBe(sent.length);
    expect(calls.filter((c) => c.request !== null).length).toBe(sent.length);
    expect(llm.failures).toEqual({ backend_error: 1, format_error: 1 });
    expect(llm.byStatus.ok).toBe(calls.filter((c) => c.status === 'ok').length);
    expect(llm.fallbacks).toBe(1);
    expect(llm.fallbacksBy).toEqual({ backend_error: 1 });
    const ok = calls.filter((c) => c.status === 'ok').length;
    expect(llm.tokens).toEqual({ prompt: 200 * ok + 100 * 1, completion: 20 * ok + 10 * 1, total: 220 * ok + 110 });
    expect(llm.tokensPerGame).toBe(llm.tokens.total / 2);
    expect(llm.latencyMs.mean).toBeCloseTo(calls.reduce((s, c) => s + c.latencyMs, 0) / calls.length, 6);
    expect(llm.latencyMs.max).toBe(Math.max(...calls.map((c) => c.latencyMs)));
    expect(llm.records).toBe('pair-1');
    expect(run.stdout).toMatch(/pair 1 llm follower: \d+ calls, failures 1 format_error, 1 backend_error, 1 fallbacks/);
    const page = readFileSync(join(out, 'report.html'), 'utf8');
    expect(page).toContain('<td class="failures">1 format_error, 1 backend_error</td>');
    // The LLM pair's logs replay like any other.
    for (const game of llmPair.games) expect(loadRecording(readFileSync(join(out, game.log), 'utf8')).header.meta.agents).toMatchObject({ follower: { name: 'llm' } });
  });

  /** Either seat: the leader asks for the first card it lists and ends its turn; the follower takes one step and marks DONE. */
  function bothSeats(body: ChatBody): StubReply {
    const text = body.messages.find((m) => m.role === 'user')!.content;
    if (body.messages[0].content.startsWith('You are the leader')) {
      const card = /^- [^:]+: a card with ([^;,]+)/m.exec(text)?.[1];
      const instruction = text.includes('an instruction to the follower') && card ? [{ instruction: `pick up the ${card}` }] : [];
      return JSON.stringify({ actions: [...instruction, 'END'] });
    }
    const legal = /Actions allowed now: (.*)\.$/m.exec(text)![1].split(', ');
    return JSON.stringify({ actions: [['MF', 'RL', 'RR'].find((code) => legal.includes(code)), 'DONE'] });
  }

  test('E-46, E-47: each LLM seat\'s settings are in report.json, report.html and the table (two runs at different temperatures read differently); an interval from one game says it cannot be trusted', async () => {
    stub = await startStubLlm({ respond: followerModel });
    const settingsOf = async (temperature: string) => {
      const out = join(dir, `t${temperature}`);
      const run = await cerealbar(
        'eval', '--pair', 'scripted:llm', '--games', '1', '--seed', '4', '--out', out, '--llm-base-url', stub!.url, '--llm-model', STUB_MODEL,
        '--llm-temperature', temperature, '--llm-seed', '9', '--llm-max-tokens', '300', '--llm-api-key-env', 'CEREALBAR_TEST_NO_KEY',
      );
      expect(run.status).toBe(0);
      return { run, settings: readReport(out).pairs[0].llm.follower!.settings!, page: readFileSync(join(out, 'report.html'), 'utf8') };
    };
    const cold = await settingsOf('0');
    const warm = await settingsOf('0.7');
    expect(cold.settings).toMatchObject({ model: STUB_MODEL, baseUrl: stub.url, template: { sha256: expect.stringMatching(/^[0-9a-f]{64}$/) }, settings: { temperature: 0, seed: 9, maxTokens: 300, maxRetries: 2, apiKeyEnv: 'CEREALBAR_TEST_NO_KEY' } });
    expect(warm.settings.settings.temperature).toBe(0.7);
    expect(cold.run.stdout).toMatch(new RegExp(`^    ${STUB_MODEL} at .*; temperature 0, seed 9, maxTokens 300, .*; prompt .*follower.*\\(sha256 [0-9a-f]{12}\\)$`, 'm'));
    expect(warm.run.stdout).toContain('temperature 0.7, seed 9');
    expect(cold.page).toContain('temperature 0, seed 9, maxTokens 300');
    expect(warm.page).toContain('temperature 0.7, seed 9, maxTokens 300');
    // One game: the interval says it cannot be trusted, in the table and on the page.
    expect(cold.run.stdout).toContain('  pair 1: the interval is not to be trusted: fewer than 10 games; constant scores: no spread to resample\n');
    expect(cold.page).toContain('<small class="warning">⚠ fewer than 10 games; constant scores: no spread to resample</small>');
  });

  test('E-36: an LLM leader and an LLM follower in two pairs: each its own counts, its records under --llm-records per pair', async () => {
    stub = await startStubLlm({ respond: bothSeats });
    const out = join(dir, 'out');
    const records = join(dir, 'records');
    const run = await cerealbar(
      'eval', '--pair', 'llm:heuristic', '--pair', 'scripted:llm', '--games', '1', '--seed', '4', '--out', out, '--llm-records', records,
      '--llm-base-url', stub.url, '--llm-model', STUB_MODEL, '--llm-max-retries', '0', '--llm-api-key-env', 'CEREALBAR_TEST_NO_KEY',
    );
    expect(run.status).toBe(0);
    const report = readReport(out);
    const leader = report.pairs[0].llm;
    const follower = report.pairs[1].llm;
    expect(Object.keys(leader)).toEqual(['leader']);
    expect(Object.keys(follower)).toEqual(['follower']);
    // Paths in the report are relative to --out.
    expect(leader.leader!.records).toBe(join('..', 'records', 'pair-1'));
    expect(follower.follower!.records).toBe(join('..', 'records', 'pair-2'));
    expect(readdirSync(join(records, 'pair-1'))).toEqual(['eval-4.leader.llm.ndjson']);
    expect(readdirSync(join(records, 'pair-2'))).toEqual(['eval-4.follower.llm.ndjson']);
    expect(readdirSync(join(out, 'pair-1')).sort()).toEqual(['eval-4.jsonl', 'games.ndjson']);
    const sent = (file: string) => readRecords(file).filter((line) => line.kind === 'llm-call' && line.request !== null).length;
    expect(leader.leader!.calls).toBe(sent(join(records, 'pair-1', 'eval-4.leader.llm.ndjson')));
    expect(follower.follower!.calls).toBe(sent(join(records, 'pair-2', 'eval-4.follower.llm.ndjson')));
    expect(leader.leader!.calls + follower.follower!.calls).toBe(stub.chatRequests().length);
    expect(report.pairs[0].summary.instructionsPerGame).toBeGreaterThan(0);
    expect(run.stdout).toMatch(/pair 1 llm leader: \d+ calls/);
    expect(run.stdout).toMatch(/pair 2 llm follower: \d+ calls/);
  });

  test('E-36: a relative --llm-records is the working directory\'s, and report.json and report.html link it from --out', async () => {
    stub = await startStubLlm({ respond: bothSeats });
    const cwd = process.cwd();
    process.chdir(dir);
    let run;
    try {
      run = await cerealbar(
        'eval', '--pair', 'scripted:llm', '--games', '1', '--seed', '4', '--out', join('runs', 'eval'), '--llm-records', 'records',
        '--llm-base-url', stub.url, '--llm-model', STUB_MODEL, '--llm-max-retries', '0', '--llm-api-key-env', 'CEREALBAR_TEST_NO_KEY',
      );
    } finally {
      process.chdir(cwd);
    }
    expect(run.status).toBe(0);
    const out = join(dir, 'runs', 'eval');
    expect(readdirSync(join(dir, 'records', 'pair-1'))).toEqual(['eval-4.follower.llm.ndjson']);
    const { records } = readReport(out).pairs[0].llm.follower!;
    expect(records).toBe(join('..', '..', 'records', 'pair-1'));
    // Followed from the report's folder, the link reaches the records.
    expect(readdirSync(join(out, records))).toEqual(['eval-4.follower.llm.ndjson']);
    const page = readFileSync(join(out, 'report.html'), 'utf8');
    const href = /<a href="([^"]*)">[^<]*<\/a><\/td><td><small>/.exec(page.slice(page.indexOf('<h2>LLM seats</h2>')))![1];
    expect(readdirSync(join(out, href))).toEqual(['eval-4.follower.llm.ndjson']);
  });
});

test('E-28: an agent that fails during a game stops the command naming the pair and the game (exit 1)', async () => {
  const agent = join(dir, 'crash.js');
  writeFileSync(
    agent,
    `let seen = 0;
require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const m = JSON.parse(line);
  const say = (v) => process.stdout.write(JSON.stringify(v) + '\\n');
  if (m.type === 'hello') say({ type: 'hello', protocol: 'cerealbar-agent', version: 2, name: 'crash', oracle: false });
  else if (m.type === 'reset') say({ type: 'ready' });
  else if (m.type === 'observe') { if (++seen === 20) process.exit(3); say({ type: 'act', action: 'DONE' }); }
});`,
  );
  const run = await cerealbar('eval', '--leader', 'scripted', '--follower', `node ${agent}`, '--games', '5', '--seed', '1', '--out', join(dir, 'out'));
  expect(run.status).toBe(1);
  expect(run.stderr).toMatch(new RegExp(`^cerealbar: pair 1 \\(scripted:node ${agent.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\), game \\d: agent "crash" exited with code 3 [^\\n]*\\n$`));
  expect(existsSync(join(dir, 'out', 'report.json'))).toBe(false);
});
