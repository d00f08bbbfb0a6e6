/**
 * The API key in the call records: replaced inside the records' strings only (never in a name, a
 * number or a null of the line), and a key too short to be real refused when the agent starts.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LlmKeyError } from '../../shared/agents/node/llm/agent';
import { resolveLlmConfig } from '../../shared/agents/node/llm/config';
import { KEY_PLACEHOLDER, readRecords, RecordWriter, type CallRecord, type RecordHeader, type RecordLine } from '../../shared/agents/node/llm/records';
import { startLlmFollower } from '../../shared/agents/node/llm/seats';
import { cerealbar } from '../cli/run';
import { startStubLlm, STUB_MODEL, type StubLlm } from '../helpers/stubLlm';

jest.setTimeout(60_000);

let dir: string;
let stub: StubLlm | null = null;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'llm-redaction-'))));
afterEach(async () => {
  await stub?.close();
  stub = null;
  rmSync(dir, { recursive: true, force: true });
});

const header: RecordHeader = {
  kind: 'llm-header',
  v: 1,
  episode: 'game-1',
  role: 'follower',
  model: 'stub-model',
  baseUrl: 'http://127.0.0.1:9/v1',
  template: { path: '/prompts/x/follower.txt', sha256: 'abc' },
  settings: { temperature: 0, seed: null, maxTokens: null, timeoutS: 20, maxRetries: 2, maxCalls: 200, maxConsecutiveFailures: 20, apiKeyEnv: 'OPENAI_API_KEY' },
  time: '2026-01-01T00:00:00.000Z',
};

const call: CallRecord = {
  kind: 'llm-call',
  call: 1,
  role: 'follower',
  event: null,
  observation: 0,
  ask: 1,
  request: { model: 'stub-model', messages: [{ role: 'user', content: 'Reply with maxTokens in mind; null is not an action' }], temperature: 0, max_tokens: 50 },
  check: { role: 'follower', legal: ['MF', 'DONE'] },
  reply: '{"thought": "the key is SECRET", "actions": ["MF"]}',
  status: 'ok',
  actions: ['MF'],
  thought: 'the key is SECRET',
  error: null,
  attempts: [{ status: 200, ms: 3 }],
  latencyMs: 3,
  tokens: { prompt: 1, completion: 1, total: 2 },
  requestId: null,
  responseId: null,
  fallback: null,
  time: '2026-01-01T00:00:01.000Z',
};

/** The lines written with `secret` as the key, read back. */
function written(secret: string, lines: readonly RecordLine[] = [header, call]): { text: string; read: RecordLine[] } {
  const path = join(dir, `with-${secret.length}.records`);
  const writer = new RecordWriter(path, secret);
  for (const line of lines) writer.write(line);
  writer.close();
  return { text: readFileSync(path, 'utf8'), read: readRecords(path) };
}

describe('the record writer replaces the key inside strings only', () => {
  test('a key that is a JSON word (null) leaves every line valid JSON and every null a null', () => {
    const { read } = written('null');
    expect((read[0] as RecordHeader).settings).toEqual(header.settings);
    const line = read[1] as CallRecord;
    expect([line.event, line.error, line.fallback, line.requestId]).toEqual([null, null, null, null]);
    expect(line.request!.messages[0].content).toBe(`Reply with maxTokens in mind; ${KEY_PLACEHOLDER} is not an action`);
  });

  test("a key found in the line's names or its template path alters neither; in the recorded strings it is replaced", () => {
    const { read } = written('x');
    expect(read[0]).toEqual({ ...header, template: { ...header.template, path: `/prompts/${KEY_PLACEHOLDER}/follower.t${KEY_PLACEHOLDER}t` } });
    const line = read[1] as CallRecord;
    expect(Object.keys(line)).toEqual(Object.keys(call));
    expect(line.request).toEqual({ ...call.request, max_tokens: 50, messages: [{ role: 'user', content: `Reply with ma${KEY_PLACEHOLDER}Tokens in mind; null is not an action` }] });
    const { read: again } = written('maxTokens');
    expect((again[0] as RecordHeader).settings).toEqual(header.settings);
    expect((again[1] as CallRecord).request!.max_tokens).toBe(50);
  });

  test('the real key, wherever a string holds it, is written nowhere', () => {
    const { text, read } = written('SECRET');
    expect(text).not.toContain('SECRET');
    expect((read[1] as CallRecord).thought).toBe(`the key is ${KEY_PLACEHOLDER}`);
    expect((read[1] as CallRecord).reply).toBe(`{"thought": "the key is ${KEY_PLACEHOLDER}", "actions": ["MF"]}`);
  });
});

describe('a key too short to be real is refused at start', () => {
  test('the agent does not start, and the message names the variable, never the key', async () => {
    stub = await startStubLlm({ key: 'abc' });
    const error = await startLlmFollower({
      config: resolveLlmConfig({ baseUrl: stub.url, model: STUB_MODEL, apiKeyEnv: 'CEREALBAR_TEST_SHORT_KEY' }),
      recordDir: dir,
      env: { CEREALBAR_TEST_SHORT_KEY: 'abc' },
    }).catch((e: Error) => e);
    expect(error).toBeInstanceOf(LlmKeyError);
    expect((error as Error).message).toBe('CEREALBAR_TEST_SHORT_KEY holds fewer than 8 characters, too short to be an API key: set it to the key, or unset it for an endpoint that needs none');
    expect(stub.requests).toEqual([]);
  });

  test('through the command line: exit 2, one line naming the variable, no game and no request', async () => {
    stub = await startStubLlm({ key: 'k3y' });
    process.env.CEREALBAR_TEST_SHORT_KEY = 'k3y';
    try {
      const out = join(dir, 'runs');
      const run = await cerealbar('selfplay', '--follower', 'llm', '--out', out, '--llm-base-url', stub.url, '--llm-model', STUB_MODEL, '--llm-api-key-env', 'CEREALBAR_TEST_SHORT_KEY');
      expect(run).toEqual({
        status: 2,
        stdout: '',
        stderr: 'cerealbar: cannot start the follower "llm": CEREALBAR_TEST_SHORT_KEY holds fewer than 8 characters, too short to be an API key: set it to the key, or unset it for an endpoint that needs none\n',
      });
      expect(readdirSync(out)).toEqual([]);
      expect(stub.requests).toEqual([]);
    } finally {
      delete process.env.CEREALBAR_TEST_SHORT_KEY;
    }
  });
});

test('through the command line: a key that is also a word of the records leaves them whole', async () => {
  // A local server's key may be any word; this one is a name in every call line and header.
  const key = 'temperature';
  stub = await startStubLlm({ key, replies: [JSON.stringify({ thought: `the ${key} is low`, actions: ['RR'] })] });
  process.env.CEREALBAR_TEST_WORD_KEY = key;
  try {
    const out = join(dir, 'runs');
    const run = await cerealbar('selfplay', '--follower', 'llm', '--out', out, '--llm-base-url', stub.url, '--llm-model', STUB_MODEL, '--llm-api-key-env', 'CEREALBAR_TEST_WORD_KEY', '--llm-max-calls', '2', '--llm-temperature', '0.5');
    expect(run.status).toBe(0);
    const [file] = readdirSync(out).filter((name) => name.includes('.follower.llm.'));
    const [first, ...calls] = readRecords(join(out, file));
    expect((first as RecordHeader).settings.temperature).toBe(0.5);
    const sent = calls.filter((line): line is CallRecord => line.kind === 'llm-call' && line.request !== null);
    expect(sent.length).toBeGreaterThan(0);
    for (const line of sent) {
      expect(line.request!.temperature).toBe(0.5);
      expect(line.thought).toBe(`the ${KEY_PLACEHOLDER} is low`);
    }
    expect(stub.chatRequests().every((request) => request.authorization === `Bearer ${key}`)).toBe(true);
  } finally {
    delete process.env.CEREALBAR_TEST_WORD_KEY;
  }
});
