/** The LLM configuration: options over a YAML file over the defaults; every bad value a one-line error. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkPartial, LLM_DEFAULTS, readLlmConfigFile, resolveLlmConfig } from '../../shared/agents/node/llm/config';
import { loadTemplate, parseTemplate, DEFAULT_CORRECTION, defaultTemplatePath } from '../../shared/agents/node/llm/templates';

let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'llm-config-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('LLM configuration', () => {
  test('a YAML file gives the same keys as the options; options win; defaults fill the rest', () => {
    const path = file('llm.yaml', 'base-url: http://localhost:11434/v1\nmodel: llama3.1\ntemperature: 0.5\nmax-calls: 40\n');
    const fromFile = readLlmConfigFile(path);
    expect(fromFile).toEqual({ baseUrl: 'http://localhost:11434/v1', model: 'llama3.1', temperature: 0.5, maxCalls: 40 });
    expect(resolveLlmConfig(fromFile, { temperature: 0.2, seed: 3 })).toEqual({
      ...LLM_DEFAULTS, baseUrl: 'http://localhost:11434/v1', model: 'llama3.1', temperature: 0.2, seed: 3, maxCalls: 40,
    });
  });

  test.each([
    ['model: [a\n', /^.*llm\.yaml: not valid YAML: /],
    ['- a\n- b\n', /llm\.yaml: must be a mapping of keys/],
    ['model: x\nmodle: y\n', /llm\.yaml: unknown key "modle" \(known: base-url, model,/],
    ['model: x\napi-key: sk-123\n', /llm\.yaml: api-key: the key itself never goes in a file; name the variable that holds it with api-key-env$/],
    ['model: x\ntemperature: hot\n', /llm\.yaml: temperature: /],
    ['model: x\nbase-url: ftp://host\n', /llm\.yaml: base-url: must be an http:\/\/ or https:\/\/ URL$/],
    ['model: x\nbase-url: http://user:pw@host/v1\n', /llm\.yaml: base-url: must not hold a user or password/],
    ['model: x\nmax-calls: 0\n', /llm\.yaml: max-calls: /],
    ['model: x\napi-key-env: "not a name"\n', /llm\.yaml: api-key-env: must be the name of an environment variable$/],
  ])('a malformed file %j is refused in one line', (text, message) => {
    const path = file('llm.yaml', text);
    expect(() => readLlmConfigFile(path)).toThrow(message);
    try {
      readLlmConfigFile(path);
    } catch (error) {
      expect((error as Error).message).not.toContain('\n');
    }
  });

  test('a missing file, and a missing model, are refused', () => {
    expect(() => readLlmConfigFile(join(dir, 'none.yaml'))).toThrow(`${join(dir, 'none.yaml')}: cannot read: no such file`);
    expect(() => resolveLlmConfig({ baseUrl: 'http://localhost/v1' })).toThrow('the LLM agent needs a model: give --llm-model, or model in the --llm-config file');
  });

  test('option values are checked by the same rules', () => {
    expect(() => checkPartial({ timeoutS: -1 }, (key) => `--llm-${key}`)).toThrow(/^--llm-timeoutS: /);
  });
});

describe('prompt templates', () => {
  test('the shipped defaults load, one per role', () => {
    for (const role of ['follower', 'leader'] as const) {
      const template = loadTemplate(role);
      expect(template.path).toBe(defaultTemplatePath(role));
      expect(template.messages.map((m) => m.role)).toEqual(['system', 'user']);
      expect(template.correction).toContain('{{error}}');
    }
  });

  test('sections, the note before them, the default correction', () => {
    expect(parseTemplate('a note {{nothing}}\n--- system ---\nBe brief.\n\n--- user ---\n{{observation}}\n', 'follower', 't')).toEqual({
      messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: '{{observation}}' }],
      correction: DEFAULT_CORRECTION,
      image: null,
    });
  });

  test.each([
    ['--- system ---\nhi\n', /t: the prompt template has no "--- user ---" message/],
    ['--- user ---\nhi\n--- assistant ---\nok\n', /must end with a user message/],
    ['--- system ---\n\n--- user ---\nhi\n', /message 1 \(system\) of the prompt template is empty/],
    ['--- user ---\n{{can_instruct}}\n', /t: unknown variable \{\{can_instruct\}\} in the prompt template \(known: observation, legal, instruction/],
    ['--- user ---\nhi\n--- correction ---\n{{observation}}\n', /t \(correction\): unknown variable \{\{observation\}\}/],
    ['--- user ---\nhi\n--- correction ---\na\n--- correction ---\nb\n', /more than one "--- correction ---"/],
  ])('a bad template %j is refused', (text, message) => {
    expect(() => parseTemplate(text, 'follower', 't')).toThrow(message);
  });
});
