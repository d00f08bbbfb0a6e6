/** The LLM agent against the stub server: plans, the re-ask, every injected failure's fallback, counts and records. */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ObservationTracker } from '../../shared/agents/observation';
import type { FollowerObservation } from '../../shared/agents/types';
import { LlmEndpointError } from '../../shared/agents/node/llm/agent';
import { resolveLlmConfig, type PartialLlmConfig } from '../../shared/agents/node/llm/config';
import { readRecords, type CallRecord, type RecordHeader } from '../../shared/agents/node/llm/records';
import { startLlmFollower, type LlmFollower } from '../../shared/agents/node/llm/seats';
import { TemplateError } from '../../shared/agents/node/llm/templates';
import { makeState } from '../fixtures';
import { endTurn, play, say } from '../engine/helpers';
import { startStubLlm, STUB_MODEL, type StubLlm, type StubReply } from '../helpers/stubLlm';
import { expectGolden } from './golden';

const KEY = 'sk-test-THE-SECRET-KEY-0123456789';
const ENV = { CEREALBAR_TEST_LLM_KEY: KEY };

/** The fixture's first follower turn: "pick up the 3 green cubes", three cards straight ahead. */
export function followerObservation(): FollowerObservation {
  const state = play(makeState({ config: { followerSteps: 30 } }), say('pick up the 3 green cubes'), endTurn).state;
  return new ObservationTracker().observe(state);
}

let stub: StubLlm;
let dir: string;
const agents: LlmFollower[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'llm-agent-'));
});
afterEach(async () => {
  for (const agent of agents.splice(0)) agent.close();
  await stub?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function follower(replies: readonly StubReply[], config: PartialLlmConfig = {}): Promise<LlmFollower> {
  stub = await startStubLlm({ replies, key: KEY });
  const agent = await startLlmFollower({
    config: resolveLlmConfig({ baseUrl: stub.url, model: STUB_MODEL, apiKeyEnv: 'CEREALBAR_TEST_LLM_KEY', seed: 7, ...config }),
    recordDir: dir,
    env: ENV,
    retryBaseMs: 1,
  });
  agents.push(agent);
  agent.reset({ episodeId: 'game-1' });
  return agent;
}

function records(): { header: RecordHeader; calls: CallRecord[] } {
  const [header, ...calls] = readRecords(join(dir, 'game-1.follower.llm.ndjson'));
  return { header: header as RecordHeader, calls: calls as CallRecord[] };
}

/** The key's value appears in no file the agent wrote. */
function expectNoKeyInFiles(): void {
  for (const file of readdirSync(dir)) expect(readFileSync(join(dir, file), 'utf8')).not.toContain(KEY);
}

describe('the LLM follower', () => {
  test('sends the golden prompt for a fixed observation and answers the whole plan of a fenced reply', async () => {
    const agent = await follower(['I will walk.\n```json\n{"thought": "the cubes are 3 ahead", "actions": ["MF", "MF", "mf", "DONE"]}\n```']);
    const plan = await agent.act(followerObservation(), { event: 3 });
    expect(plan).toEqual(['MF', 'MF', 'MF', 'DONE']);
    // One preflight, one chat call, each with the key.
    expect(stub.requests.map((r) => `${r.method} ${r.path} ${r.authorized}`)).toEqual(['GET /v1/models true', 'POST /v1/chat/completions true']);
    expectGolden('follower.json', stub.chatRequests()[0].body);
    const { header, calls } = records();
    expect(header).toMatchObject({ kind: 'llm-header', v: 1, episode: 'game-1', role: 'follower', model: STUB_MODEL, baseUrl: stub.url, settings: { apiKeyEnv: 'CEREALBAR_TEST_LLM_KEY', seed: 7, maxCalls: 200 } });
    expect(header.template.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({
      kind: 'llm-call', call: 1, role: 'follower', event: 3, observation: 0, ask: 1, status: 'ok',
      actions: ['MF', 'MF', 'MF', 'DONE'], thought: 'the cubes are 3 ahead', error: null, fallback: null,
      attempts: [{ status: 200 }], tokens: { prompt: 100, completion: 10, total: 110 }, requestId: 'req-1', responseId: 'chatcmpl-1',
    });
    // The record holds exactly what was sent.
    expect(calls[0].request).toEqual(stub.chatRequests()[0].body);
    expect(calls[0].check).toEqual({ role: 'follower', legal: ['MF', 'MB', 'RL', 'RR', 'DONE'] });
    expect(agent.stats()).toMatchObject({ calls: 1, byStatus: { ok: 1, format_error: 0 }, fallbacks: 0, tokens: { total: 110 }, episodes: 1 });
    expectNoKeyInFiles();
  });

  test('a reply that does not parse is asked again once, with the parser message; the second reply is played', async () => {
    const agent = await follower(['Sure! I go forward.', '{"actions": ["RL"]}']);
    expect(await agent.act(followerObservation())).toEqual(['RL']);
    const [first, second] = stub.chatRequests().map((r) => r.body as { messages: { role: string; content: string }[] });
    expect(second.messages.slice(0, -2)).toEqual(first.messages);
    expect(second.messages.at(-2)).toEqual({ role: 'assistant', content: 'Sure! I go forward.' });
    expect(second.messages.at(-1)!.role).toBe('user');
    expect(second.messages.at(-1)!.content).toMatch(/^Your reply could not be used: the reply is not a usable JSON object: it is not JSON \(/);
    const { calls } = records();
    expect(calls.map((c) => [c.call, c.ask, c.status, c.fallback])).toEqual([[1, 1, 'format_error', null], [2, 2, 'ok', null]]);
    expect(calls[0].error).toMatch(/not JSON/);
    expect(agent.stats()).toMatchObject({ calls: 2, byStatus: { ok: 1, format_error: 1 }, fallbacks: 0 });
  });

  test('a reply that fails twice falls back to passing (an empty plan), counted and on record', async () => {
    const agent = await follower(['{"moves": ["MF"]}', '{"actions": ["JUMP"]}']);
    expect(await agent.act(followerObservation())).toEqual([]);
    const { calls } = records();
    expect(calls.map((c) => [c.status, c.error, c.fallback])).toEqual([
      ['format_error', 'the reply is not a usable JSON object: it has no "actions" list', null],
      ['format_error', 'the reply is not a usable JSON object: actions[0] is "JUMP": not one of MF, MB, RL, RR, DONE', { actions: [] }],
    ]);
    expect(agent.stats()).toMatchObject({ calls: 2, byStatus: { format_error: 2 }, fallbacks: 1, fallbacksBy: { format_error: 1 } });
  });

  test('an illegal first action is asked again with what is allowed; twice illegal falls back', async () => {
    const agent = await follower(['{"actions": ["MF", "DONE"]}']);
    const blocked = { ...followerObservation(), legal: ['MB', 'RL', 'RR', 'DONE'] } as FollowerObservation;
    expect(await agent.act(blocked)).toEqual([]);
    const correction = (stub.chatRequests()[1].body as { messages: { content: string }[] }).messages.at(-1)!.content;
    expect(correction).toContain('MF is not allowed now; allowed now: MB, RL, RR, DONE');
    const { calls } = records();
    expect(calls.map((c) => [c.status, c.actions, c.fallback])).toEqual([
      ['illegal', ['MF', 'DONE'], null],
      ['illegal', ['MF', 'DONE'], { actions: [] }],
    ]);
    expect(agent.stats()).toMatchObject({ byStatus: { illegal: 2 }, fallbacks: 1, fallbacksBy: { illegal: 1 } });
  });

  test('an empty plan is its own status, empty_plan: asked again once with what is allowed, then the fallback (a pass), counted apart from ok', async () => {
    const agent = await follower(['{"thought": "nothing to do", "actions": []}', '{"actions": []}']);
    expect(await agent.act(followerObservation())).toEqual([]);
    const correction = (stub.chatRequests()[1].body as { messages: { content: string }[] }).messages.at(-1)!.content;
    expect(correction).toContain('Your reply could not be used: the plan is empty: give at least one action; allowed now: MF, MB, RL, RR, DONE');
    const { calls } = records();
    expect(calls.map((c) => [c.ask, c.status, c.actions, c.thought, c.fallback])).toEqual([
      [1, 'empty_plan', [], 'nothing to do', null],
      [2, 'empty_plan', [], null, { actions: [] }],
    ]);
    expect(calls[0].error).toBe('the plan is empty: give at least one action; allowed now: MF, MB, RL, RR, DONE');
    expect(agent.stats()).toMatchObject({ calls: 2, byStatus: { ok: 0, empty_plan: 2 }, fallbacks: 1, fallbacksBy: { empty_plan: 1 } });
    // An empty plan then a plan: the plan is played.
    stub.script(['{"actions": []}', '{"actions": ["RR"]}']);
    expect(await agent.act(followerObservation())).toEqual(['RR']);
    expect(records().calls.slice(2).map((c) => [c.ask, c.status, c.fallback])).toEqual([[1, 'empty_plan', null], [2, 'ok', null]]);
  });

  test("each call line keeps the response's finish_reason, model and system_fingerprint when the endpoint gave them, and leaves out those it did not", async () => {
    const completion = (content: string | null, fields: object) =>
      ({ raw: JSON.stringify({ id: 'chatcmpl-x', object: 'chat.completion', created: 0, choices: [{ index: 0, message: { role: 'assistant', content }, ...fields }], ...fields }) }) as const;
    const agent = await follower([
      '{"actions": ["RL"]}',
      completion('{"actions": ["RR"]}', { finish_reason: 'length', model: 'stub-model-2026-01-01', system_fingerprint: 'fp_0123' }),
      completion('{"actions": ["MB"]}', { finish_reason: null, system_fingerprint: null }),
      completion(null, { finish_reason: 'content_filter' }),
    ], { maxRetries: 0 });
    for (let n = 0; n < 4; n++) await agent.act(followerObservation());
    const { calls } = records();
    const provenance = (call: CallRecord) => ({ finishReason: call.finishReason, responseModel: call.responseModel, systemFingerprint: call.systemFingerprint });
    expect(calls.map((call) => [call.status, provenance(call)])).toEqual([
      // The stub answers as most servers do: a finish_reason and its model, no fingerprint.
      ['ok', { finishReason: 'stop', responseModel: STUB_MODEL, systemFingerprint: undefined }],
      ['ok', { finishReason: 'length', responseModel: 'stub-model-2026-01-01', systemFingerprint: 'fp_0123' }],
      ['ok', { finishReason: undefined, responseModel: undefined, systemFingerprint: undefined }],
      // No message, but why: a content filter.
      ['backend_error', { finishReason: 'content_filter', responseModel: undefined, systemFingerprint: undefined }],
    ]);
    // Absent, not null: the lines as written hold no such key.
    const written = readFileSync(join(dir, 'game-1.follower.llm.ndjson'), 'utf8').trim().split('\n').slice(1).map((line) => Object.keys(JSON.parse(line)));
    expect(written.map((keys) => ['finishReason', 'responseModel', 'systemFingerprint'].filter((key) => keys.includes(key)))).toEqual([
      ['finishReason', 'responseModel'],
      ['finishReason', 'responseModel', 'systemFingerprint'],
      [],
      ['finishReason'],
    ]);
  });

  test('HTTP 429 and 500 are retried, every attempt on record; the retry count is bounded', async () => {
    const agent = await follower([{ status: 429, retryAfter: '0' }, { status: 500 }, '{"actions": ["RR"]}'], { maxRetries: 2 });
    expect(await agent.act(followerObservation())).toEqual(['RR']);
    expect(records().calls[0]).toMatchObject({ status: 'ok', attempts: [{ status: 429 }, { status: 500 }, { status: 200 }], requestId: 'req-3' });
    expect(agent.stats()).toMatchObject({ calls: 1, httpRetries: 2, byStatus: { ok: 1 } });

    // Only errors left: the call is a backend error after 1 + maxRetries attempts, and the follower passes.
    stub.script([{ status: 500 }]);
    expect(await agent.act(followerObservation())).toEqual([]);
    const failed = records().calls[1];
    expect(failed).toMatchObject({ status: 'backend_error', reply: null, actions: null, fallback: { actions: [] }, attempts: [{ status: 500 }, { status: 500 }, { status: 500 }] });
    expect(failed.error).toMatch(/^HTTP 500: .*\(after 3 attempts\)$/);
    expect(agent.stats()).toMatchObject({ calls: 2, httpRetries: 4, fallbacks: 1, fallbacksBy: { backend_error: 1 } });
  });

  test('a 4xx other than 408, 409 and 429 is not retried', async () => {
    const agent = await follower([{ status: 400 }], { maxRetries: 3 });
    expect(await agent.act(followerObservation())).toEqual([]);
    expect(records().calls[0]).toMatchObject({ status: 'backend_error', attempts: [{ status: 400 }] });
  });

  test('a hang past the timeout is a timeout, not retried, and falls back', async () => {
    const agent = await follower([{ hang: true }], { timeoutS: 0.3, maxRetries: 2 });
    const started = Date.now();
    expect(await agent.act(followerObservation())).toEqual([]);
    expect(Date.now() - started).toBeLessThan(2_000);
    const [call] = records().calls;
    expect(call).toMatchObject({ status: 'timeout', error: 'no answer within 0.3 s', attempts: [{ status: null, error: 'timeout' }], fallback: { actions: [] } });
    expect(stub.chatRequests()).toHaveLength(1);
    expect(agent.stats()).toMatchObject({ byStatus: { timeout: 1 }, fallbacks: 1, fallbacksBy: { timeout: 1 } });
  });

  test('a response that is not JSON at all is a backend error', async () => {
    const agent = await follower([{ raw: '<html>Bad gateway</html>' }], { maxRetries: 0 });
    expect(await agent.act(followerObservation())).toEqual([]);
    expect(records().calls[0]).toMatchObject({ status: 'backend_error', fallback: { actions: [] } });
    expect(agent.stats().fallbacksBy).toEqual({ backend_error: 1 });
  });

  test('the budget of calls per episode: once spent, nothing is sent and every observation falls back', async () => {
    const agent = await follower(['not json', '{"actions": ["MF"]}'], { maxCalls: 3 });
    expect(await agent.act(followerObservation())).toEqual(['MF']); // calls 1 and 2
    stub.script(['garbage']);
    expect(await agent.act(followerObservation())).toEqual([]); // call 3, then the re-ask is over budget
    expect(await agent.act(followerObservation())).toEqual([]); // over budget at once
    expect(stub.chatRequests()).toHaveLength(3);
    const { calls } = records();
    expect(calls.map((c) => [c.call, c.observation, c.ask, c.status, c.request === null])).toEqual([
      [1, 0, 1, 'format_error', false],
      [2, 0, 2, 'ok', false],
      [3, 1, 1, 'format_error', false],
      [4, 1, 2, 'budget', true],
      [5, 2, 1, 'budget', true],
    ]);
    expect(calls[4]).toMatchObject({ error: 'the budget of 3 calls for game-1 is spent', fallback: { actions: [] } });
    expect(agent.stats()).toMatchObject({ calls: 3, byStatus: { budget: 2 }, fallbacks: 2, fallbacksBy: { budget: 2 } });
    // A new episode has a new budget, and a new file.
    stub.script(['{"actions": ["RL"]}']);
    agent.reset({ episodeId: 'game-2' });
    expect(await agent.act(followerObservation())).toEqual(['RL']);
    expect(readRecords(join(dir, 'game-2.follower.llm.ndjson')).map((line) => line.kind)).toEqual(['llm-header', 'llm-call']);
    expect(agent.stats().episodes).toBe(2);
  });

  test('the API key is sent as the bearer token and written nowhere, even when the server echoes it', async () => {
    const agent = await follower([{ status: 400, body: JSON.stringify({ error: { message: `bad request for key ${KEY}` } }) }], { maxRetries: 0 });
    await agent.act(followerObservation());
    expect(stub.chatRequests()[0].authorization).toBe(`Bearer ${KEY}`);
    expect(records().calls[0].error).toContain('[the API key]');
    // Even a model that repeats it in its reply.
    stub.script([JSON.stringify({ thought: `my key is ${KEY}`, actions: ['RL'] })]);
    expect(await agent.act(followerObservation())).toEqual(['RL']);
    expect(records().calls[1].thought).toBe('my key is [the API key]');
    expectNoKeyInFiles();
  });

  test("the package's own variables (OPENAI_API_KEY, OPENAI_ADMIN_KEY, OPENAI_ORG_ID, OPENAI_PROJECT_ID) are not sent: only the named variable's key", async () => {
    const saved = { ...process.env };
    Object.assign(process.env, { OPENAI_API_KEY: 'sk-default', OPENAI_ADMIN_KEY: 'sk-admin', OPENAI_ORG_ID: 'org-1', OPENAI_PROJECT_ID: 'proj-1', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
    try {
      const agent = await follower(['{"actions": ["RL"]}']);
      expect(await agent.act(followerObservation())).toEqual(['RL']);
      expect(stub.requests.map((r) => [r.authorization, r.organization, r.project])).toEqual([
        [`Bearer ${KEY}`, undefined, undefined],
        [`Bearer ${KEY}`, undefined, undefined],
      ]);
    } finally {
      for (const name of ['OPENAI_API_KEY', 'OPENAI_ADMIN_KEY', 'OPENAI_ORG_ID', 'OPENAI_PROJECT_ID', 'OPENAI_BASE_URL']) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
    }
  });

  test('with the key variable unset, no Authorization header is sent', async () => {
    stub = await startStubLlm({ replies: ['{"actions": ["RL"]}'] });
    const agent = await startLlmFollower({ config: resolveLlmConfig({ baseUrl: stub.url, model: STUB_MODEL, apiKeyEnv: 'CEREALBAR_NO_SUCH_VARIABLE' }), recordDir: dir, env: {} });
    agents.push(agent);
    agent.reset({ episodeId: 'game-1' });
    expect(await agent.act(followerObservation())).toEqual(['RL']);
    expect(stub.requests.map((r) => r.authorization)).toEqual([undefined, undefined]);
    expect(records().calls[0]).toMatchObject({ status: 'ok', actions: ['RL'] });
  });

  test('acting before reset is an error', async () => {
    stub = await startStubLlm();
    const agent = await startLlmFollower({ config: resolveLlmConfig({ baseUrl: stub.url, model: STUB_MODEL }), recordDir: dir, env: {} });
    await expect(agent.act(followerObservation())).rejects.toThrow('before its episode began');
  });
});

describe('starting the LLM agent', () => {
  const start = (config: PartialLlmConfig, env: NodeJS.ProcessEnv = ENV) =>
    startLlmFollower({ config: resolveLlmConfig({ model: STUB_MODEL, apiKeyEnv: 'CEREALBAR_TEST_LLM_KEY', ...config }), recordDir: dir, env });

  test('an endpoint that cannot be reached stops it with one line', async () => {
    stub = await startStubLlm();
    const url = stub.url;
    await stub.close();
    const error = await start({ baseUrl: url, timeoutS: 2 }).catch((e: Error) => e);
    expect(error).toBeInstanceOf(LlmEndpointError);
    expect((error as Error).message).toMatch(new RegExp(`^cannot reach ${url.replace(/[.]/g, '\\.')}: .*ECONNREFUSED`));
    expect((error as Error).message).not.toContain('\n');
  });

  test('a bad key (401) stops it, naming the variable and not the key', async () => {
    stub = await startStubLlm({ key: 'sk-the-right-one' });
    const error = await start({ baseUrl: stub.url }).catch((e: Error) => e);
    expect((error as Error).message).toBe(`${stub.url} refused the key from CEREALBAR_TEST_LLM_KEY (HTTP 401)`);
    expect(stub.requests).toHaveLength(1);
  });

  test('a template that does not exist, or uses a variable its role does not give, stops it before any request', async () => {
    stub = await startStubLlm();
    await expect(start({ baseUrl: stub.url, prompt: join(dir, 'missing.txt') })).rejects.toThrow(new TemplateError(`${join(dir, 'missing.txt')}: cannot read the prompt template: no such file`));
    expect(stub.requests).toHaveLength(0);
  });
});

describe('a plan the game cut short is on the next call line (planCut)', () => {
  /** The fixture's observation after the host played some of a plan: `steps` fewer steps left, and `changes`. */
  const after = (steps: number, changes: Partial<FollowerObservation> = {}): FollowerObservation => {
    const observation = followerObservation();
    return { ...observation, stepsLeft: observation.stepsLeft - steps, ...changes } as FollowerObservation;
  };

  test('an action the game refused: where in which plan, and what was allowed instead; on the first line of the next observation only', async () => {
    const agent = await follower(['{"actions": ["MF", "RL", "MF", "MF"]}', 'not json', '{"actions": ["RR"]}']);
    await agent.act(after(0), { event: 3 });
    // The host played MF and RL (events 4 and 5); the game refused the second MF, and the agent is asked at once.
    await agent.act(after(2, { legal: ['MB', 'RL', 'RR', 'DONE'] }), { event: 5 });
    const { calls } = records();
    expect(calls.map((c) => [c.call, c.ask, c.planCut])).toEqual([
      [1, 1, undefined],
      [2, 1, { call: 1, at: 2, action: 'MF', refused: true, reason: 'MF is not allowed now; allowed now: MB, RL, RR, DONE' }],
      [3, 2, undefined],
    ]);
  });

  test("the rest of a plan the host dropped when the follower's instruction changed", async () => {
    const agent = await follower(['{"actions": ["MF", "DONE", "MF"]}', '{"actions": ["RR"]}']);
    const first = after(0);
    await agent.act(first, { event: 3 });
    const next = { ...first.instruction!, id: first.instruction!.id + 1, text: 'now the red star' };
    await agent.act(after(1, { instruction: next, previousInstruction: first.instruction }), { event: 5 });
    expect(records().calls[1].planCut).toEqual({ call: 1, at: 2, action: 'MF', refused: false, reason: `instruction ${first.instruction!.id} -> instruction ${next.id}` });
  });

  test("the leader's feedback the follower heard is its event, not the plan's", async () => {
    const agent = await follower(['{"actions": ["MF", "MF", "MF", "DONE"]}', '{"actions": ["RR"]}']);
    const first = after(0);
    await agent.act(first, { event: 3 });
    // One MF (event 4), then the leader's feedback (event 5), which has the host ask again.
    await agent.act(after(1, { feedback: [{ signal: 'negative', afterStep: 1 }] }), { event: 5 });
    const id = first.instruction!.id;
    expect(records().calls[1].planCut).toEqual({ call: 1, at: 1, action: 'MF', refused: false, reason: `instruction ${id} -> instruction ${id}, 1 feedback` });
  });

  test('nothing is said of a plan played to its end, of one that met its turn end, or when the host does not tell the events', async () => {
    const plan = (code: string) => JSON.stringify({ actions: Array(8).fill(code) });
    const agent = await follower([plan('MF'), plan('MF'), plan('MB'), plan('MB'), plan('RL')]);
    await agent.act(after(0), { event: 3 });
    await agent.act(after(8), { event: 11 }); // played whole
    // Two of its moves, then the turn ran out: the leader's four events, and the steps renewed (MF is blocked in this one).
    const noMF = ['MB', 'RL', 'RR', 'DONE'] as FollowerObservation['legal'];
    await agent.act(after(0, { legal: noMF }), { event: 17 });
    // No event told: how much was played cannot be known, now or at the next ask.
    await agent.act(after(1, { legal: noMF }));
    await agent.act(after(3, { legal: ['RL', 'RR', 'DONE'] }), { event: 20 });
    expect(records().calls.map((c) => [c.status, c.planCut])).toEqual(Array(5).fill(['ok', undefined]));
  });
});
