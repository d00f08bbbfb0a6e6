/** `cerealbar llm reparse`, and the --llm-* options any command can add. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { addLlmOptions, llmConfigFromOptions, startLlmFromOptions, type LlmCliOptions } from '../../cli/llmOptions';
import { LLM_DEFAULTS } from '../../shared/agents/node/llm/config';
import { cerealbar } from '../cli/run';
import { startStubLlm, STUB_MODEL, type StubLlm } from '../helpers/stubLlm';

let dir: string;
let stub: StubLlm | null = null;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'llm-cli-'))));
afterEach(async () => {
  await stub?.close();
  stub = null;
  rmSync(dir, { recursive: true, force: true });
});

const FOLLOWER_CHECK = { role: 'follower', legal: ['MF', 'MB', 'RL', 'RR', 'DONE'] };

function call(n: number, reply: string | null, status: string, actions: unknown, extra: object = {}): object {
  return { kind: 'llm-call', call: n, role: 'follower', event: n * 10, observation: n - 1, ask: 1, request: null, check: FOLLOWER_CHECK, reply, status, actions, thought: null, error: null, attempts: [], latencyMs: 1, tokens: null, requestId: null, responseId: null, fallback: null, time: '2026-01-01T00:00:00.000Z', ...extra };
}

function recordFile(name: string, calls: object[]): string {
  const path = join(dir, name);
  const header = { kind: 'llm-header', v: 1, episode: 'g', role: 'follower', model: 'm', baseUrl: 'http://x/v1', template: { path: 't', sha256: 'h' }, settings: {}, time: '' };
  writeFileSync(path, [header, ...calls].map((line) => `${JSON.stringify(line)}\n`).join(''));
  return path;
}

describe('cerealbar llm reparse', () => {
  test('says per file how many replies parse the same and lists the first differences', async () => {
    const same = recordFile('a.follower.llm.jsonl', [call(1, '{"actions": ["MF"]}', 'ok', ['MF']), call(2, null, 'timeout', null)]);
    const changed = recordFile('b.follower.llm.jsonl', [
      call(1, '{"actions": ["MF"]}', 'ok', ['MF']),
      // Recorded by an older parser that refused lower case and read fences differently.
      call(2, '{"actions": ["mf", "done"]}', 'format_error', null),
      call(3, '{"actions": ["RL"]}', 'ok', ['RR']),
      call(4, 'nonsense', 'format_error', null),
    ]);
    const { status, stdout, stderr } = await cerealbar('llm', 'reparse', same, changed, '--show', '1');
    expect({ status, stderr }).toEqual({ status: 0, stderr: '' });
    expect(stdout.split('\n')).toEqual([
      `${same}: 1 calls (and 1 without a reply), 1 same, 0 changed`,
      `${changed}: 4 calls, 2 same, 2 changed`,
      '  call 2 (observation 1, event 20): format_error null -> ok ["MF","DONE"]',
      '  ... and 1 more',
      '',
    ]);
    const json = await cerealbar('llm', 'reparse', changed, '--json');
    expect(JSON.parse(json.stdout)).toMatchObject({ calls: 4, same: 2, changed: 2, differences: [{ call: 2 }, { call: 3, recorded: { actions: ['RR'] }, now: { status: 'ok', actions: ['RL'] } }] });
  });

  test('a missing file, and a file that is not call records, stop it with one line and exit 2', async () => {
    const missing = await cerealbar('llm', 'reparse', join(dir, 'none.jsonl'));
    expect(missing).toEqual({ status: 2, stdout: '', stderr: `cerealbar: ${join(dir, 'none.jsonl')}: cannot read: no such file\n` });
    const log = join(dir, 'game.jsonl');
    writeFileSync(log, '{"type":"header"}\n');
    expect(await cerealbar('llm', 'reparse', log)).toEqual({ status: 2, stdout: '', stderr: `cerealbar: ${log}:1: not an LLM call record (kind undefined)\n` });
  });
});

describe('the --llm-* options', () => {
  function parse(...args: string[]): LlmCliOptions {
    const command = addLlmOptions(new Command('x').exitOverride()).action(() => {});
    command.parse(args, { from: 'user' });
    return command.opts<LlmCliOptions>();
  }

  test('options over the config file over the defaults', () => {
    const file = join(dir, 'llm.yaml');
    writeFileSync(file, 'model: from-file\nmax-calls: 9\ntimeout-s: 5\n');
    expect(llmConfigFromOptions(parse('--llm-config', file, '--llm-timeout-s', '2.5', '--llm-seed', '4'))).toEqual({
      ...LLM_DEFAULTS, model: 'from-file', maxCalls: 9, timeoutS: 2.5, seed: 4,
    });
  });

  test.each([
    [['--llm-temperature', 'hot'], '--llm-temperature must be a number from 0 up to 2, got "hot"'],
    [['--llm-timeout-s', '0'], '--llm-timeout-s must be a number above 0 up to 3600, got "0"'],
    [['--llm-max-calls', '0'], '--llm-max-calls must be between 1 and 1000000, got 0'],
  ])('%j is refused', (args, message) => {
    expect(() => parse(...args)).toThrow(message);
  });

  test('a bad base URL, a missing model, a malformed config are one-line CliErrors', () => {
    expect(() => llmConfigFromOptions(parse('--llm-model', 'm', '--llm-base-url', 'localhost:8000'))).toThrow('--llm-base-url: must be an http:// or https:// URL');
    expect(() => llmConfigFromOptions(parse())).toThrow('the LLM agent needs a model');
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'model: [\n');
    expect(() => llmConfigFromOptions(parse('--llm-config', file))).toThrow(/bad\.yaml: not valid YAML/);
  });

  test.each([
    [['--llm-images', 'sideways'], '--llm-images must be one of follower, leader, both, none, got "sideways"'],
    [['--llm-image-size', '0x0'], "--llm-image-size: a frame's sides are 1 to 4096 pixels, not 0x0"],
    [['--llm-image-size', 'large'], '--llm-image-size: a frame size is WIDTHxHEIGHT in pixels, e.g. 320x240, not "large"'],
    [['--llm-image-detail', 'max'], '--llm-image-detail: must be one of low, high, auto'],
  ])('the image option %j is refused in one line', (args, message) => {
    expect(() => llmConfigFromOptions(parse('--llm-model', 'm', ...args), { role: 'follower' })).toThrow(message);
  });

  test('--llm-images names the seats sent images; a seat\'s section or own file says images, image-size, image-detail over it', () => {
    const images = (role: 'leader' | 'follower', ...args: string[]) => llmConfigFromOptions(parse('--llm-model', 'm', ...args), { role }).images;
    expect([images('follower', '--llm-images', 'follower'), images('leader', '--llm-images', 'follower')]).toEqual([true, false]);
    expect([images('follower', '--llm-images', 'both'), images('leader', '--llm-images', 'both')]).toEqual([true, true]);
    expect([images('follower', '--llm-images', 'none'), images('leader', '--llm-images', 'leader')]).toEqual([false, true]);
    // Not given: the configuration is as before images existed.
    expect(llmConfigFromOptions(parse('--llm-model', 'm'), { role: 'follower' })).toEqual({ ...LLM_DEFAULTS, model: 'm' });
    expect(llmConfigFromOptions(parse('--llm-model', 'm', '--llm-image-size', '320x240', '--llm-image-detail', 'low'), { role: 'leader' })).toMatchObject({ imageSize: { width: 320, height: 240 }, imageDetail: 'low' });
    const config = join(dir, 'two.yaml');
    writeFileSync(config, 'model: m\nimage-size: 160x120\nfollower:\n  images: true\n  image-detail: high\n');
    const own = join(dir, 'leader.yaml');
    writeFileSync(own, 'images: true\nimage-size: 64x48\n');
    const options = parse('--llm-config', config, '--llm-images', 'none');
    expect(llmConfigFromOptions(options, { role: 'follower' })).toMatchObject({ images: true, imageSize: { width: 160, height: 120 }, imageDetail: 'high' });
    expect(llmConfigFromOptions(options, { role: 'leader' })).toMatchObject({ images: false, imageSize: { width: 160, height: 120 } });
    expect(llmConfigFromOptions(options, { role: 'leader', file: own })).toMatchObject({ images: true, imageSize: { width: 64, height: 48 } });
    writeFileSync(own, 'images: yes\n');
    expect(() => llmConfigFromOptions(options, { role: 'leader', file: own })).toThrow(`${own}: images: Invalid input: expected boolean, received string`);
    writeFileSync(own, 'leader:\n  image-detail: max\n');
    expect(() => llmConfigFromOptions(options, { role: 'leader', file: own })).toThrow(`${own}: leader.image-detail: must be one of low, high, auto`);
  });

  test('startLlmFromOptions: a template that does not exist and a refused key say why in one line', async () => {
    stub = await startStubLlm({ key: 'right' });
    const base = ['--llm-base-url', stub.url, '--llm-model', STUB_MODEL, '--llm-api-key-env', 'CEREALBAR_TEST_NO_KEY'];
    await expect(startLlmFromOptions('follower', parse(...base, '--llm-prompt', join(dir, 'none.txt')), dir)).rejects.toThrow(
      `${join(dir, 'none.txt')}: cannot read the prompt template: no such file`,
    );
    await expect(startLlmFromOptions('leader', parse(...base), dir)).rejects.toThrow(`${stub.url} refused the key from CEREALBAR_TEST_NO_KEY (HTTP 401)`);
  });
});
