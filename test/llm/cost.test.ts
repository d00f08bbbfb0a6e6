/**
 * What LLM calls cost: the prices in the configuration, each call line's cost from the tokens the
 * server counted, the reports' cost read from the records (E-48), and --llm-max-cost, which stops a
 * run once its calls have cost that much (E-49). Every bad price or limit stops the command before
 * any game.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readRecords, type CallRecord, type RecordHeader } from '../../shared/agents/node/llm/records';
import type { PairsReport } from '../../shared/eval/pairs';
import type { EvalReport } from '../../shared/eval/report';
import { armChecker, armLlmConfig } from '../../server/study/armAgents';
import type { Arm } from '../../shared/study/arms';
import { cerealbar } from '../cli/run';
import { startStubLlm, STUB_MODEL, type ChatBody, type StubLlm, type StubReply } from '../helpers/stubLlm';

jest.setTimeout(120_000);

let dir: string;
let stub: StubLlm | null = null;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'llm-cost-'))));
afterEach(async () => {
  await stub?.close();
  stub = null;
  rmSync(dir, { recursive: true, force: true });
});

/** Dollars a million prompt and completion tokens in these tests; the stub counts 100 and 10 tokens a reply. */
const PRICES = ['--llm-price-per-million-input', '2', '--llm-price-per-million-output', '8'];
const PER_CALL = (100 * 2 + 10 * 8) / 1_000_000;

/** One legal action chosen by a hash of the prompt, so that a game played again goes the same way; the leader asks for a card and ends its turn. */
function byContent(body: ChatBody): StubReply {
  const user = body.messages.filter((m) => m.role === 'user').map((m) => m.content).join('\n');
  if (body.messages[0].content.startsWith('You are the leader')) {
    const card = /^- [^:]+: a card with ([^;,]+)/m.exec(user)?.[1];
    return JSON.stringify({ actions: [...(user.includes('an instruction to the follower') && card ? [{ instruction: `pick up the ${card}` }] : []), 'END'] });
  }
  const legal = /Actions allowed now: (.*)\.$/m.exec(user)![1].split(', ');
  let hash = 0;
  for (let i = 0; i < user.length; i++) hash = (Math.imul(hash, 31) + user.charCodeAt(i)) >>> 0;
  return JSON.stringify({ actions: [hash % 4 === 0 && legal.includes('DONE') ? 'DONE' : legal[hash % legal.length]] });
}

const stubArgs = () => ['--llm-base-url', stub!.url, '--llm-model', STUB_MODEL, '--llm-max-retries', '0', '--llm-api-key-env', 'CEREALBAR_TEST_NO_KEY'];
const readPairs = (out: string): PairsReport => JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));

/** Every call line of the record files in `path`, file by file. */
function callsIn(path: string): CallRecord[] {
  return readdirSync(path)
    .filter((name) => name.endsWith('.llm.ndjson'))
    .sort()
    .flatMap((name) => readRecords(join(path, name)).filter((line): line is CallRecord => line.kind === 'llm-call'));
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

describe('E-48: each call line has its cost, and every report its cost read from the records', () => {
  test('agent-vs-agent: the lines\' costs from their tokens and the header\'s prices; the report\'s cost, per game, in the table and on the page', async () => {
    // The third call fails: no tokens counted, no cost known.
    stub = await startStubLlm({ respond: (body, n) => (n === 2 ? { status: 500 } : byContent(body)) });
    const out = join(dir, 'out');
    const run = await cerealbar('eval', '--pair', 'scripted:llm', '--games', '2', '--seed', '4', '--out', out, ...stubArgs(), ...PRICES);
    expect(run.status).toBe(0);
    const [header] = readRecords(join(out, 'pair-1', 'eval-4.follower.llm.ndjson')) as [RecordHeader];
    expect(header.settings).toMatchObject({ pricePerMillionInput: 2, pricePerMillionOutput: 8 });
    const calls = callsIn(join(out, 'pair-1'));
    for (const call of calls) expect(call.cost).toBe(call.tokens ? (call.tokens.prompt * 2 + call.tokens.completion * 8) / 1_000_000 : null);
    expect(calls.filter((call) => call.cost === null).map((call) => call.status)).toEqual(['backend_error']);
    const llm = readPairs(out).pairs[0].llm.follower!;
    const fromRecords = sum(calls.map((call) => call.cost ?? 0));
    expect(fromRecords).toBeCloseTo(PER_CALL * (stub.chatRequests().length - 1), 12);
    expect(llm.cost).toBeCloseTo(fromRecords, 12);
    expect(llm.costPerGame).toBeCloseTo(fromRecords / 2, 12);
    expect(llm.settings!.settings).toMatchObject({ pricePerMillionInput: 2, pricePerMillionOutput: 8 });
    expect(run.stdout).toContain(`cost $${fromRecords.toFixed(4)} ($${(fromRecords / 2).toFixed(4)} a game)`);
    expect(run.stdout).toMatch(/pricePerMillionInput 2, pricePerMillionOutput 8/);
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain(`<td class="cost">$${fromRecords.toFixed(4)} ($${(fromRecords / 2).toFixed(4)} a game)</td>`);
  });

  test('without prices the cost is unknown: null on every line and in the report, never 0', async () => {
    stub = await startStubLlm({ respond: byContent });
    const out = join(dir, 'out');
    const run = await cerealbar('eval', '--pair', 'scripted:llm', '--games', '1', '--seed', '4', '--out', out, ...stubArgs());
    expect(run.status).toBe(0);
    const [header] = readRecords(join(out, 'pair-1', 'eval-4.follower.llm.ndjson')) as [RecordHeader];
    expect(header.settings).toMatchObject({ pricePerMillionInput: null, pricePerMillionOutput: null });
    expect(callsIn(join(out, 'pair-1')).every((call) => call.cost === null)).toBe(true);
    expect(readPairs(out).pairs[0].llm.follower).toMatchObject({ cost: null, costPerGame: null });
    expect(run.stdout).toMatch(/completion tokens, mean latency \d+ ms \(max \d+\), cost unknown\n/);
  });

  test('over logs: the report\'s cost and cost per episode are the records\'; selfplay prints each seat\'s cost', async () => {
    stub = await startStubLlm({ respond: byContent });
    const logs = join(dir, 'logs');
    expect((await cerealbar('selfplay', '--games', '1', '--seed', '3', '--out', logs)).status).toBe(0);
    const out = join(dir, 'eval', 'report.json');
    const html = join(dir, 'eval', 'report.html');
    const run = await cerealbar('eval', '--agent', 'llm', '--logs', logs, '--out', out, '--html', html, ...stubArgs(), ...PRICES);
    expect(run.status).toBe(0);
    const report = JSON.parse(readFileSync(out, 'utf8')) as EvalReport;
    const cost = sum(callsIn(join(dir, 'eval')).map((call) => call.cost!));
    expect(cost).toBeCloseTo(PER_CALL * stub.chatRequests().length, 12);
    expect(report.llm!.cost).toBeCloseTo(cost, 12);
    expect(report.llm!.costPerEpisode).toBeCloseTo(cost / report.episodes.length, 12);
    expect(run.stdout).toContain(`, cost $${cost.toFixed(4)}\n`);
    expect(readFileSync(html, 'utf8')).toContain(`<td class="cost">$${cost.toFixed(4)} ($${(cost / report.episodes.length).toFixed(4)} an episode)</td>`);

    const played = await cerealbar('selfplay', '--leader', 'llm', '--follower', 'heuristic', '--games', '1', '--out', join(dir, 'runs'), ...stubArgs(), ...PRICES);
    const leaderCost = sum(callsIn(join(dir, 'runs')).map((call) => call.cost!));
    expect(played.stdout).toContain(`, cost $${leaderCost.toFixed(4)}\n`);
  });

  test("a study's LLM arm takes the prices among its settings; one price alone is refused", () => {
    const arm = { id: 'a', agent: 'llm', weight: 1, llm: { model: 'm', 'price-per-million-input': 0.15, 'price-per-million-output': 0.6 } } as unknown as Arm;
    expect(armChecker(dir)(arm, 'follower')).toEqual([]);
    expect(armLlmConfig(arm)).toMatchObject({ pricePerMillionInput: 0.15, pricePerMillionOutput: 0.6 });
    expect(armChecker(dir)({ ...arm, llm: { model: 'm', 'price-per-million-output': 0.6 } } as unknown as Arm, 'follower')).toEqual([
      { path: ['llm'], message: 'price-per-million-output is given without price-per-million-input: give both prices, or neither (the cost is then unknown)' },
    ]);
    expect(armChecker(dir)({ ...arm, llm: { model: 'm', 'price-per-million-input': -1, 'price-per-million-output': 1 } } as unknown as Arm, 'follower')).toEqual([
      { path: ['llm', 'price-per-million-input'], message: 'must not be negative' },
    ]);
  });
});

describe('E-49: --llm-max-cost stops the run once its calls have cost that much', () => {
  const maxCostArgs = (out: string, games: string, maxCost: number, ...more: string[]) => [
    'eval', '--pair', 'scripted:llm', '--games', games, '--seed', '4', '--out', out, ...stubArgs(), ...PRICES, '--llm-max-cost', String(maxCost), ...more,
  ];

  test('no call beyond it: the ask after it is a cost_limit line without a request or fallback, exit 1 and one line; --resume counts the games kept and goes on with a larger one', async () => {
    stub = await startStubLlm({ respond: byContent });
    // How many calls the first game takes, from a run without a limit.
    const free = join(dir, 'free');
    expect((await cerealbar('eval', '--pair', 'scripted:llm', '--games', '1', '--seed', '4', '--out', free, ...stubArgs())).status).toBe(0);
    const firstGame = stub.chatRequests().length;
    stub.requests.length = 0;

    // Reached on the third call of the second game.
    const maxCost = (firstGame + 2.5) * PER_CALL;
    const out = join(dir, 'out');
    const run = await cerealbar(...maxCostArgs(out, '3', maxCost));
    expect({ status: run.status, stderr: run.stderr }).toEqual({
      status: 1,
      stderr: `cerealbar: pair 1 (scripted:llm), game 5: the llm follower stopped: the run's LLM calls have cost $${((firstGame + 3) * PER_CALL).toFixed(4)}, which reaches its max cost of $${maxCost}\n`,
    });
    expect(stub.chatRequests()).toHaveLength(firstGame + 3);
    expect(existsSync(join(out, 'report.json'))).toBe(false);
    const lines = readRecords(join(out, 'pair-1', 'eval-5.follower.llm.ndjson')).slice(1) as CallRecord[];
    expect(lines.map((line) => line.status)).toEqual(['ok', 'ok', 'ok', 'cost_limit']);
    expect(lines[3]).toMatchObject({ request: null, fallback: null, cost: null, error: expect.stringMatching(/^the run's LLM calls have cost \$/) });

    // Resumed with the same limit: the game kept counts, so the run stops again at the same call.
    stub.requests.length = 0;
    const again = await cerealbar(...maxCostArgs(out, '3', maxCost, '--resume'));
    expect(again.status).toBe(1);
    expect(again.stderr).toContain(`game 5: the llm follower stopped: the run's LLM calls have cost $${((firstGame + 3) * PER_CALL).toFixed(4)}`);
    expect(stub.chatRequests()).toHaveLength(3);

    // With a larger one, the run ends; its report's cost is every call's.
    const done = await cerealbar(...maxCostArgs(out, '3', 1, '--resume'));
    expect(done.status).toBe(0);
    const cost = sum(callsIn(join(out, 'pair-1')).map((call) => call.cost!));
    expect(readPairs(out).pairs[0].llm.follower!.cost).toBeCloseTo(cost, 12);
  });

  test('eval over logs: the one follower stops the run the same way', async () => {
    stub = await startStubLlm({ respond: byContent });
    const logs = join(dir, 'logs');
    expect((await cerealbar('selfplay', '--games', '2', '--seed', '3', '--out', logs)).status).toBe(0);
    const run = await cerealbar('eval', '--agent', 'llm', '--logs', logs, '--out', join(dir, 'eval', 'report.json'), ...stubArgs(), ...PRICES, '--llm-max-cost', '0.0013');
    expect(run.status).toBe(1);
    expect(run.stderr.replace(/^\[=*\s*\].*\n/gm, '')).toMatch(/^cerealbar: the llm follower stopped: the run's LLM calls have cost \$0\.0014, which reaches its max cost of \$0\.0013\b[^\n]*\n$/);
    expect(stub.chatRequests()).toHaveLength(5);
    expect(existsSync(join(dir, 'eval', 'report.json'))).toBe(false);
  });

  test('selfplay: both seats spend from one limit', async () => {
    stub = await startStubLlm({ respond: byContent });
    const out = join(dir, 'runs');
    const run = await cerealbar('selfplay', '--leader', 'llm', '--follower', 'llm', '--games', '3', '--out', out, ...stubArgs(), ...PRICES, '--llm-max-cost', '0.00126');
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^cerealbar: game 1: the llm (leader|follower) stopped: the run's LLM calls have cost \$0\.0014, which reaches its max cost of \$0\.00126\n$/);
    expect(stub.chatRequests()).toHaveLength(5);
    const calls = callsIn(out);
    expect(new Set(calls.filter((call) => call.request).map((call) => call.role))).toEqual(new Set(['leader', 'follower']));
    expect(calls.filter((call) => call.status === 'cost_limit')).toHaveLength(1);
  });
});

describe('bad prices and limits stop the command with one line and exit 2, before any game', () => {
  test.each([
    [['--llm-price-per-million-input', '-1', '--llm-price-per-million-output', '1'], 'cerealbar: --llm-price-per-million-input must be a number from 0 up to 1000000, got "-1"\n'],
    [['--llm-price-per-million-input', '1'], 'cerealbar: price-per-million-input is given without price-per-million-output: give both prices, or neither (the cost is then unknown)\n'],
    [['--llm-max-cost', '0', ...PRICES], 'cerealbar: --llm-max-cost must be a number above 0 up to 1000000, got "0"\n'],
    [['--llm-max-cost', '1'], 'cerealbar: --llm-max-cost needs the prices of every llm seat, and the follower has none: give price-per-million-input and price-per-million-output (--llm-config, or the --llm-price-per-million-* options)\n'],
  ])('%j', async (args, stderr) => {
    stub = await startStubLlm({ respond: byContent });
    const out = join(dir, 'out');
    expect(await cerealbar('eval', '--pair', 'scripted:llm', '--games', '2', '--out', out, ...stubArgs(), ...args)).toEqual({ status: 2, stdout: '', stderr });
    expect(stub.chatRequests()).toEqual([]);
    expect(existsSync(join(out, 'pair-1'))).toBe(false);
  });

  test('a negative price in the config file, and --llm-max-cost where no run is bounded (cerealbar agent)', async () => {
    const config = join(dir, 'llm.yaml');
    writeFileSync(config, `model: ${STUB_MODEL}\nprice-per-million-input: 1\nprice-per-million-output: -3\n`);
    const run = await cerealbar('selfplay', '--follower', 'llm', '--out', join(dir, 'runs'), '--llm-config', config);
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 2, stderr: `cerealbar: cannot start the follower "llm": ${config}: price-per-million-output: must not be negative\n` });
    const live = await cerealbar('agent', '--role', 'follower', '--server', 'http://127.0.0.1:1', '--agent', 'llm', '--llm-model', STUB_MODEL, '--llm-max-cost', '1');
    expect(live.status).toBe(2);
    expect(live.stderr).toContain("unknown option '--llm-max-cost'");
  });
});
