/**
 * A model the endpoint does not offer, and an endpoint that stops answering: the preflight checks
 * the model against GET /models when the endpoint lists models, and a run stops after
 * max-consecutive-failures calls in a row without a reply, every attempt on record.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LlmEndpointError, LlmFailingError } from '../../shared/agents/node/llm/agent';
import { resolveLlmConfig, type PartialLlmConfig } from '../../shared/agents/node/llm/config';
import { readRecords, type CallRecord, type RecordHeader } from '../../shared/agents/node/llm/records';
import { startLlmFollower, type LlmFollower } from '../../shared/agents/node/llm/seats';
import { llmConfigFromOptions } from '../../cli/llmOptions';
import { armChecker, armLlmConfig } from '../../server/study/armAgents';
import type { Arm } from '../../shared/study/arms';
import { cerealbar } from '../cli/run';
import { startStubLlm, STUB_MODEL, type StubLlm, type StubOptions } from '../helpers/stubLlm';
import { ObservationTracker } from '../../shared/agents/observation';
import type { FollowerObservation } from '../../shared/agents/types';
import { makeState } from '../fixtures';
import { endTurn, play, say } from '../engine/helpers';

jest.setTimeout(60_000);

/** A follower's first turn, with an instruction to follow. */
function followerObservation(): FollowerObservation {
  const state = play(makeState({ config: { followerSteps: 30 } }), say('pick up the 3 green cubes'), endTurn).state;
  return new ObservationTracker().observe(state);
}

let dir: string;
let stub: StubLlm | null = null;
const agents: LlmFollower[] = [];
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'llm-failures-'))));
afterEach(async () => {
  for (const agent of agents.splice(0)) agent.close();
  await stub?.close();
  stub = null;
  rmSync(dir, { recursive: true, force: true });
});

async function start(stubOptions: StubOptions, config: PartialLlmConfig = {}, notice?: (line: string) => void): Promise<LlmFollower> {
  stub = await startStubLlm(stubOptions);
  const agent = await startLlmFollower({
    config: resolveLlmConfig({ baseUrl: stub.url, model: STUB_MODEL, apiKeyEnv: 'CEREALBAR_TEST_NO_KEY', maxRetries: 0, ...config }),
    recordDir: dir,
    env: {},
    retryBaseMs: 1,
    notice,
  });
  agents.push(agent);
  return agent;
}

/** The call lines of every record file in `path` (any run's names). */
function callsIn(path: string): CallRecord[] {
  return readdirSync(path)
    .filter((name) => /\.(leader|follower)\.llm\./.test(name))
    .sort()
    .flatMap((name) => readRecords(join(path, name)).filter((line): line is CallRecord => line.kind === 'llm-call'));
}

describe('the preflight checks the model against GET /models', () => {
  test('a model the endpoint does not list stops the agent, naming the models it offers (the nearest first), before any call', async () => {
    const error = await start({ models: ['gpt-4o', 'o3', 'gpt-4o-mini'] }, { model: 'gpt-4o-mnii' }).catch((e: Error) => e);
    expect(error).toBeInstanceOf(LlmEndpointError);
    expect((error as Error).message).toBe(`${stub!.url} does not offer the model "gpt-4o-mnii"; it offers gpt-4o-mini, gpt-4o, o3`);
    expect(stub!.chatRequests()).toEqual([]);
  });

  test('a model listed as models/<name> is offered under its name', async () => {
    const agent = await start({ models: ['models/gemini-2.0-flash'], replies: ['{"actions": ["RL"]}'] }, { model: 'gemini-2.0-flash' });
    agent.reset({ episodeId: 'game-1' });
    expect(await agent.act(followerObservation())).toEqual(['RL']);
  });

  test('a long list is cut after the twelve nearest', async () => {
    const models = Array.from({ length: 30 }, (_, i) => `model-${String(i).padStart(2, '0')}`);
    const error = await start({ models }, { model: 'model-7' }).catch((e: Error) => e);
    expect((error as Error).message).toMatch(/; it offers model-07(, model-\d\d){11} and 18 more$/);
  });

  test.each([
    ['answers GET /models with an error', { models: { status: 404 } }, 'answered GET /models with HTTP 404'],
    ['answers GET /models with a server error', { models: { status: 500 } }, 'answered GET /models with HTTP 500'],
    ['lists no models', { models: [] }, 'lists no models'],
  ] as const)('an endpoint that %s is no reason to stop: one line says the model is not checked', async (_what, options, says) => {
    const lines: string[] = [];
    const agent = await start({ ...options, replies: ['{"actions": ["RL"]}'] }, { model: 'any-model' }, (line) => lines.push(line));
    expect(lines).toEqual([`${stub!.url} ${says}: the model "any-model" is not checked before the calls`]);
    agent.reset({ episodeId: 'game-1' });
    expect(await agent.act(followerObservation())).toEqual(['RL']);
  });
});

describe('calls in a row without a reply stop the run', () => {
  test('the call that reaches the limit is on record without a fallback; the agent then throws at once, without a call', async () => {
    const agent = await start({ replies: [{ status: 404 }] }, { maxConsecutiveFailures: 3 });
    agent.reset({ episodeId: 'game-1' });
    expect(await agent.act(followerObservation())).toEqual([]);
    expect(await agent.act(followerObservation())).toEqual([]);
    const error = await agent.act(followerObservation()).catch((e: Error) => e);
    expect(error).toBeInstanceOf(LlmFailingError);
    expect((error as Error).message).toBe('the llm follower stopped: 3 chat calls in a row got no reply (max-consecutive-failures 3); the last: HTTP 404: 404 injected HTTP 404');
    await expect(agent.act(followerObservation())).rejects.toThrow(error as Error);
    expect(stub!.chatRequests()).toHaveLength(3);
    const [header, ...calls] = readRecords(join(dir, readdirSync(dir)[0]));
    expect((header as RecordHeader).settings.maxConsecutiveFailures).toBe(3);
    expect((calls as CallRecord[]).map((call) => [call.status, call.attempts.map((a) => a.status), call.fallback])).toEqual([
      ['backend_error', [404], { actions: [] }],
      ['backend_error', [404], { actions: [] }],
      ['backend_error', [404], null],
    ]);
    expect(agent.stats()).toMatchObject({ calls: 3, fallbacks: 2 });
  });

  test('a reply, even one that cannot be used, starts the count again; timeouts count', async () => {
    const replies = [{ status: 500 }, 'not JSON', '{"actions": ["RL"]}', { status: 503 }, { hang: true }] as const;
    const agent = await start({ respond: (_body, n) => replies[Math.min(n, replies.length - 1)] }, { maxConsecutiveFailures: 2, timeoutS: 0.2 });
    agent.reset({ episodeId: 'game-1' });
    expect(await agent.act(followerObservation())).toEqual([]); // 500
    expect(await agent.act(followerObservation())).toEqual(['RL']); // not JSON, then RL on the re-ask
    expect(await agent.act(followerObservation())).toEqual([]); // 503
    await expect(agent.act(followerObservation())).rejects.toThrow(/^the llm follower stopped: 2 chat calls in a row got no reply \(max-consecutive-failures 2\); the last: no answer within 0.2 s$/);
  });
});

describe('through the command line', () => {
  const stubArgs = (url: string) => ['--llm-base-url', url, '--llm-api-key-env', 'CEREALBAR_TEST_NO_KEY', '--llm-max-retries', '0'];

  test('eval with a misspelt model: exit 2 naming the models offered, before any game', async () => {
    stub = await startStubLlm({ models: ['gpt-4o-mini', 'gpt-4o'] });
    const out = join(dir, 'eval');
    const run = await cerealbar('eval', '--pair', 'scripted:llm', '--games', '2', '--out', out, ...stubArgs(stub.url), '--llm-model', 'gpt-4o-mnii');
    expect(run).toEqual({
      status: 2,
      stdout: '',
      stderr: `cerealbar: ${stub.url} does not offer the model "gpt-4o-mnii"; it offers gpt-4o-mini, gpt-4o\n`,
    });
    expect(stub.chatRequests()).toEqual([]);
  });

  test('eval whose every call fails stops with a non-zero exit and a line saying why; the records keep every attempt', async () => {
    stub = await startStubLlm({ replies: [{ status: 404 }] });
    const out = join(dir, 'eval');
    const run = await cerealbar('eval', '--pair', 'scripted:llm', '--games', '3', '--out', out, ...stubArgs(stub.url), '--llm-model', STUB_MODEL, '--llm-max-consecutive-failures', '5');
    expect(run.status).toBe(1);
    expect(run.stdout).not.toMatch(/0\.00/);
    expect(run.stderr).toMatch(/^cerealbar: pair 1 \(scripted:llm\), .*the llm follower stopped: 5 chat calls in a row got no reply \(max-consecutive-failures 5\); the last: HTTP 404: .*\n$/);
    expect(readdirSync(out)).not.toContain('report.json');
    const calls = callsIn(join(out, 'pair-1'));
    expect(calls.map((call) => call.status)).toEqual(Array(5).fill('backend_error'));
    expect(calls.flatMap((call) => call.attempts)).toHaveLength(stub.chatRequests().length);
  });

  test('selfplay stops after 20 failed calls in a row by default', async () => {
    stub = await startStubLlm({ replies: [{ status: 404 }] });
    const out = join(dir, 'runs');
    const run = await cerealbar('selfplay', '--follower', 'llm', '--games', '5', '--out', out, ...stubArgs(stub.url), '--llm-model', STUB_MODEL);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^cerealbar: game \d+: the llm follower stopped: 20 chat calls in a row got no reply \(max-consecutive-failures 20\); the last: HTTP 404: .*\n$/);
    expect(stub.chatRequests()).toHaveLength(20);
    expect(callsIn(out)).toHaveLength(20);
  });

  test('an endpoint that answers GET /models with an error: one line, and the run goes on', async () => {
    stub = await startStubLlm({ models: { status: 404 }, replies: ['{"actions": ["RR"]}'] });
    const out = join(dir, 'runs');
    const run = await cerealbar('selfplay', '--follower', 'llm', '--out', out, ...stubArgs(stub.url), '--llm-model', 'whatever-it-serves', '--llm-max-calls', '2');
    expect(run.status).toBe(0);
    expect(run.stderr).toBe(`cerealbar: ${stub.url} answered GET /models with HTTP 404: the model "whatever-it-serves" is not checked before the calls\n`);
    expect(run.stdout).toMatch(/^1 games written to /);
  });

  test('--llm-max-consecutive-failures over max-consecutive-failures in the config file, over the default 20', () => {
    const file = join(dir, 'llm.yaml');
    writeFileSync(file, 'model: m\nmax-consecutive-failures: 4\n');
    expect(llmConfigFromOptions({ llmModel: 'm' }).maxConsecutiveFailures).toBe(20);
    expect(llmConfigFromOptions({ llmConfig: file }).maxConsecutiveFailures).toBe(4);
    expect(llmConfigFromOptions({ llmConfig: file, llmMaxConsecutiveFailures: 7 }).maxConsecutiveFailures).toBe(7);
  });

  test("a study's LLM arm takes max-consecutive-failures among its settings", () => {
    const arm = { id: 'a', agent: 'llm', weight: 1, llm: { model: 'm', 'max-consecutive-failures': 3 } } as unknown as Arm;
    expect(armChecker(dir)(arm, 'follower')).toEqual([]);
    expect(armLlmConfig(arm).maxConsecutiveFailures).toBe(3);
    expect(armChecker(dir)({ ...arm, llm: { model: 'm', 'max-consecutive-failures': 0 } } as unknown as Arm, 'follower')).toEqual([
      { path: ['llm', 'max-consecutive-failures'], message: expect.any(String) },
    ]);
  });

  test.each(['selfplay', 'eval', 'agent', 'serve'])('%s takes --llm-max-consecutive-failures', async (command) => {
    const run = await cerealbar(command, '--help');
    expect(run.stdout).toContain('--llm-max-consecutive-failures <n>');
  });
});
