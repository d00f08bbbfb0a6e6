/**
 * The LLM agent through the commands: `cerealbar selfplay` with an llm seat plays, reports the
 * agent's counts and writes the call records beside the logs, under a name no glob of the logs
 * (`DIR/*.jsonl`) or command reading a folder of logs takes for one; bad input stops it with one line and
 * exit 2 before any game; the API key appears in no output and no file.
 */
import { mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readRecords, type CallRecord } from '../../shared/agents/node/llm/records';
import { cerealbar } from '../cli/run';
import { startStubLlm, STUB_MODEL, type ChatBody, type StubLlm, type StubReply } from '../helpers/stubLlm';

jest.setTimeout(60_000);

const KEY = 'sk-test-NEVER-WRITTEN-9f8e7d6c5b4a';
const KEY_ENV = 'CEREALBAR_TEST_COMMANDS_KEY';

let dir: string;
let stub: StubLlm | null = null;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'llm-commands-'));
  process.env[KEY_ENV] = KEY;
});
afterEach(async () => {
  delete process.env[KEY_ENV];
  await stub?.close();
  stub = null;
  rmSync(dir, { recursive: true, force: true });
});

/** One step (forward if it can) then DONE; the first reply of all is not JSON, the fifth request gets a 429 first. */
function follower(body: ChatBody, n: number): StubReply {
  if (n === 0) return 'I think I should go forward.';
  if (n === 4) return { status: 429, retryAfter: '0' };
  const legal = /Actions allowed now: (.*)\.$/m.exec(body.messages.find((m) => m.role === 'user')!.content)![1].split(', ');
  return JSON.stringify({ actions: [legal.includes('MF') ? 'MF' : 'RR', 'DONE'] });
}

const llmArgs = (url: string) => ['--llm-base-url', url, '--llm-model', STUB_MODEL, '--llm-api-key-env', KEY_ENV, '--llm-seed', '1'];

function filesIn(path: string): string[] {
  return readdirSync(path).sort();
}

test('selfplay --follower llm: games, call records beside the logs, the counts in the report, the key nowhere', async () => {
  stub = await startStubLlm({ respond: follower, key: KEY });
  const out = join(dir, 'runs');
  const { status, stdout, stderr } = await cerealbar('selfplay', '--leader', 'scripted', '--follower', 'llm', '--games', '2', '--seed', '4', '--out', out, ...llmArgs(stub.url));
  expect({ status, stderr }).toEqual({ status: 0, stderr: '' });
  expect(filesIn(out)).toEqual(['run.json', 'selfplay-4.follower.llm.ndjson', 'selfplay-4.jsonl', 'selfplay-5.follower.llm.ndjson', 'selfplay-5.jsonl']);
  const calls = ['selfplay-4', 'selfplay-5'].flatMap((game) => readRecords(join(out, `${game}.follower.llm.ndjson`)).slice(1) as CallRecord[]);
  // Every request the stub got is an attempt of a call on record, in order (the 429 and its retry are two attempts of one call).
  expect(calls.flatMap((call) => call.attempts.map(() => call.request))).toEqual(stub.chatRequests().map((request) => request.body));
  expect(calls.flatMap((call) => call.attempts.map((attempt) => attempt.status))).toEqual(stub.chatRequests().map((request) => (request.requestId ? 200 : 429)));
  const ok = calls.filter((call) => call.status === 'ok').length;
  expect(calls.filter((call) => call.status !== 'ok').map((call) => call.status)).toEqual(['format_error']);
  expect(stdout).toContain(`llm follower: ${calls.length} calls (${ok} ok, 1 format_error), 0 fallbacks, 1 HTTP retries, `);
  const header = JSON.parse(readFileSync(join(out, 'selfplay-4.jsonl'), 'utf8').split('\n')[0]);
  expect(header.meta.agents.follower).toMatchObject({ name: 'llm', spec: `llm ${STUB_MODEL} at ${stub.url}` });
  // The logs replay.
  const replayed = await cerealbar('replay', join(out, 'selfplay-4.jsonl'), join(out, 'selfplay-5.jsonl'));
  expect(replayed.status).toBe(0);
  // The key went to the server, and nowhere else.
  expect(stub.requests.every((request) => request.authorization === `Bearer ${KEY}`)).toBe(true);
  for (const text of [stdout, stderr, replayed.stdout, ...filesIn(out).map((file) => readFileSync(join(out, file), 'utf8'))]) expect(text).not.toContain(KEY);
});

test('selfplay --leader llm --follower llm: both seats, a record file each', async () => {
  stub = await startStubLlm({ replies: ['{"actions": ["RR"]}'] });
  const out = join(dir, 'runs');
  const { status, stdout } = await cerealbar('selfplay', '--leader', 'llm', '--follower', 'llm', '--out', out, '--llm-base-url', stub.url, '--llm-model', STUB_MODEL, '--llm-max-calls', '3');
  expect(status).toBe(0);
  expect(filesIn(out)).toEqual(['run.json', 'selfplay-1.follower.llm.ndjson', 'selfplay-1.jsonl', 'selfplay-1.leader.llm.ndjson']);
  // The leader turns right until its budget is spent, then passes; the follower never gets an instruction.
  expect(stdout).toMatch(/^llm leader: 3 calls \(3 ok, \d+ budget\), \d+ fallbacks \(\d+ after budget\)/m);
  expect(stdout).toMatch(/^llm follower: 0 calls \(none\), 0 fallbacks/m);
});

/** What a shell makes of `DIR/*.jsonl`: the folder's names ending in .jsonl, sorted. */
const glob = (folder: string) => filesIn(folder).filter((name) => name.endsWith('.jsonl')).map((name) => join(folder, name));

describe('a folder selfplay wrote with an llm seat is a folder of game logs', () => {
  let out: string;
  beforeEach(async () => {
    stub = await startStubLlm({ respond: follower });
    out = join(dir, 'runs');
    const run = await cerealbar('selfplay', '--leader', 'scripted', '--follower', 'llm', '--games', '2', '--seed', '4', '--out', out, ...llmArgs(stub.url));
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(`check them with: npx cerealbar replay ${join(out, '*.jsonl')}\n`);
  });

  test('the replay line selfplay prints replays the logs alone, and eval --logs and dataset stats skip nothing', async () => {
    expect(glob(out)).toEqual([join(out, 'selfplay-4.jsonl'), join(out, 'selfplay-5.jsonl')]);
    const replayed = await cerealbar('replay', ...glob(out));
    expect({ status: replayed.status, stderr: replayed.stderr }).toEqual({ status: 0, stderr: '' });
    expect(replayed.stdout.trim().split('\n')).toHaveLength(2);
    await expectTakenForLogsAlone();
  });

  /** eval --logs and dataset stats take the folder's two games, and nothing else, for logs. */
  async function expectTakenForLogsAlone(): Promise<void> {
    const report = join(dir, 'report.json');
    expect((await cerealbar('eval', '--agent', 'heuristic', '--logs', out, '--workers', '1', '--out', report)).status).toBe(0);
    const json = JSON.parse(readFileSync(report, 'utf8'));
    expect(json.logs).toEqual([join(out, 'selfplay-4.jsonl'), join(out, 'selfplay-5.jsonl')]);
    expect(json.skippedLogs).toEqual([]);
    const stats = await cerealbar('dataset', 'stats', '--data', out, '--json');
    expect({ status: stats.status, stderr: stats.stderr }).toEqual({ status: 0, stderr: '' });
    expect(JSON.parse(stats.stdout).games).toBe(2);
  }

  test("an older run's call records (<game>.<role>.llm.jsonl beside the logs) are not taken for logs by eval --logs or dataset stats", async () => {
    for (const game of ['selfplay-4', 'selfplay-5']) renameSync(join(out, `${game}.follower.llm.ndjson`), join(out, `${game}.follower.llm.jsonl`));
    await expectTakenForLogsAlone();
  });
});

describe('bad input stops selfplay with one line and exit 2, before any game', () => {
  async function refused(args: string[], message: string | RegExp): Promise<void> {
    const out = join(dir, 'runs');
    const { status, stdout, stderr } = await cerealbar('selfplay', '--leader', 'scripted', '--follower', 'llm', '--out', out, ...args);
    expect({ status, stdout }).toEqual({ status: 2, stdout: '' });
    expect(stderr.split('\n')).toHaveLength(2); // one line and its newline
    expect(stderr).toMatch(message);
    expect(stderr).not.toContain(KEY);
    expect(readdirSync(dir).includes('runs') ? filesIn(out) : []).toEqual([]);
  }

  test('an unreachable endpoint', async () => {
    stub = await startStubLlm();
    const url = stub.url;
    await stub.close();
    stub = null;
    await refused(llmArgs(url), new RegExp(`^cerealbar: cannot start the follower "llm": cannot reach ${url.replace(/\./g, '\\.')}: .*ECONNREFUSED`));
  });

  test('a bad key (401)', async () => {
    stub = await startStubLlm({ key: 'sk-another-key' });
    await refused(llmArgs(stub.url), `cerealbar: cannot start the follower "llm": ${stub.url} refused the key from ${KEY_ENV} (HTTP 401)\n`);
  });

  test('a malformed config file', async () => {
    const config = join(dir, 'llm.yaml');
    writeFileSync(config, 'model: stub\ntimeout-s: soon\n');
    await refused(['--llm-config', config], `cerealbar: cannot start the follower "llm": ${config}: timeout-s: Invalid input: expected number, received string\n`);
  });

  test('a template that does not exist', async () => {
    stub = await startStubLlm();
    const prompt = join(dir, 'prompt.txt');
    await refused([...llmArgs(stub.url), '--llm-prompt', prompt], `cerealbar: cannot start the follower "llm": ${prompt}: cannot read the prompt template: no such file\n`);
    expect(stub.requests).toEqual([]);
  });

  test('a missing model, and --llm-* options with no llm seat', async () => {
    await refused([], 'cerealbar: cannot start the follower "llm": the LLM agent needs a model: give --llm-model, or model in the --llm-config file\n');
    const { status, stderr } = await cerealbar('selfplay', '--leader', 'scripted', '--follower', 'heuristic', '--out', join(dir, 'x'), '--llm-model', 'm');
    expect({ status, stderr }).toEqual({ status: 2, stderr: 'cerealbar: the --llm-* options are for the llm agent: give --leader or --follower llm\n' });
  });
});

describe('bad input stops `cerealbar agent --agent llm` with one line and exit 2, before it joins a game', () => {
  test('a refused key, a missing template, --llm-* options for another agent', async () => {
    stub = await startStubLlm({ key: 'sk-another-key' });
    const join_ = ['agent', '--role', 'leader', '--server', 'http://127.0.0.1:9', '--agent', 'llm'];
    expect(await cerealbar(...join_, ...llmArgs(stub.url))).toEqual({
      status: 2,
      stdout: '',
      stderr: `cerealbar: cannot start the leader agent "llm": ${stub.url} refused the key from ${KEY_ENV} (HTTP 401)\n`,
    });
    const prompt = join(dir, 'none.txt');
    expect((await cerealbar(...join_, ...llmArgs(stub.url), '--llm-prompt', prompt)).stderr).toBe(
      `cerealbar: cannot start the leader agent "llm": ${prompt}: cannot read the prompt template: no such file\n`,
    );
    expect(await cerealbar('agent', '--server', 'http://127.0.0.1:9', '--agent', 'heuristic', '--llm-model', 'm')).toEqual({
      status: 2,
      stdout: '',
      stderr: 'cerealbar: the --llm-* options are for the llm agent: give --agent llm\n',
    });
  });
});
