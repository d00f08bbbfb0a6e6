/**
 * Worked examples (few-shot-k) for the LLM follower, drawn from the CB2 games of the fixtures
 * (imported): K examples in the request, the same for a seed and others for another, each with the
 * view the follower is sent at that instruction's start in the evaluation and the human follower's
 * actions; the header names them; a game being evaluated (by its log header's id) is never one;
 * bad settings stop the command with one line and exit 2 before any game.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { resolveLlmConfig, type PartialLlmConfig } from '../../shared/agents/node/llm/config';
import { fewShotFor, FewShotError } from '../../shared/agents/node/llm/fewShot';
import { readRecords, type CallRecord, type RecordHeader } from '../../shared/agents/node/llm/records';
import { startLlmFollower, startLlmLeader, type LlmFollower } from '../../shared/agents/node/llm/seats';
import { loadTemplate } from '../../shared/agents/node/llm/templates';
import { loadRecording, type Recording } from '../../shared/eval/recording';
import { DEFAULT_EVAL_OPTIONS, runEpisode } from '../../shared/eval/runner';
import { armChecker, armLlmConfig, startArmAgent, withStudyPaths } from '../../server/study/armAgents';
import { cerealbar } from '../cli/run';
import { startStubLlm, STUB_MODEL, type ChatBody, type StubLlm } from '../helpers/stubLlm';

jest.setTimeout(120_000);

const FIXTURES = join(__dirname, '..', 'fixtures', 'cb2-logs');
/** A game with one instruction the follower marked DONE, one with two, and one with none. */
const ONE = 'cb2-2024-03-28T20h.46m.31s_14';
const TWO = 'cb2-2024-05-13T16h.09m.51s_143';
const NONE = 'cb2-2024-03-31T14h.36m.55s_17';

let dir: string;
let logs: string;
let games: Map<string, Recording>;
let stub: StubLlm | null = null;
let agent: LlmFollower | null = null;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'llm-few-shot-'));
  logs = join(dir, 'logs');
  expect((await cerealbar('import', 'cb2', FIXTURES, '--out', logs)).status).toBe(0);
  games = new Map(readdirSync(logs).map((name) => [name.replace(/\.jsonl$/, ''), loadRecording(readFileSync(join(logs, name), 'utf8'))]));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  agent?.close();
  agent = null;
  await stub?.close();
  stub = null;
});

const readGame = loadRecording;
/** A folder of its own holding copies of some of the logs (under other names when `rename`). */
function folderOf(name: string, ids: readonly string[], rename = false): string {
  const folder = join(dir, name);
  mkdirSync(folder, { recursive: true });
  for (const id of ids) copyFileSync(join(logs, `${id}.jsonl`), join(folder, rename ? `copy-of-${id.slice(-3)}.jsonl` : `${id}.jsonl`));
  return folder;
}

/** The first request and the header of a follower drawing examples as `config` says, asked once at the start of ONE's instruction. */
async function firstAsk(config: PartialLlmConfig, records: string): Promise<{ system: string; header: RecordHeader }> {
  stub = await startStubLlm({ replies: ['{"actions": ["DONE"]}'] });
  agent = await startLlmFollower({ config: resolveLlmConfig({ baseUrl: stub.url, model: STUB_MODEL, ...config }), recordDir: records, env: {}, fewShot: { readGame } });
  await runEpisode(agent, games.get(ONE)!, 0, DEFAULT_EVAL_OPTIONS);
  const [header] = readRecords(join(records, `${ONE}#0.follower.llm.ndjson`));
  const system = (stub.chatRequests()[0].body as ChatBody).messages[0].content;
  agent.close();
  await stub.close();
  stub = agent = null;
  return { system, header: header as RecordHeader };
}

describe('few-shot examples', () => {
  test('K examples in the request, each instruction with its view and the human follower\'s actions; the same for a seed, others for another; the header names them', async () => {
    const config = { fewShotLogs: [logs], fewShotK: 3, fewShotSeed: 1 };
    const first = await firstAsk(config, join(dir, 'seed-1'));
    const again = await firstAsk(config, join(dir, 'seed-1-again'));
    const other = await firstAsk({ ...config, fewShotSeed: 2 }, join(dir, 'seed-2'));
    expect(again.system).toBe(first.system);
    expect(again.header.fewShotExamples).toEqual(first.header.fewShotExamples);
    expect(other.header.fewShotExamples).not.toEqual(first.header.fewShotExamples);
    expect(other.system).not.toBe(first.system);
    expect(first.header.settings).toMatchObject({ fewShotLogs: [logs], fewShotK: 3, fewShotSeed: 1 });
    for (const { system, header } of [first, other]) {
      expect(header.fewShotExamples).toHaveLength(3);
      expect(system.match(/^Example \d of 3: /gm)).toHaveLength(3);
      // Each example, in the header's order: its instruction, then the human follower's actions for it.
      let from = 0;
      for (const [i, { gameId, instructionId }] of header.fewShotExamples!.entries()) {
        const instruction = games.get(gameId)!.instructions.find((candidate) => candidate.id === instructionId)!;
        const at = system.indexOf(`Example ${i + 1} of 3: the instruction "${instruction.text}"`, from);
        expect(at).toBeGreaterThanOrEqual(from);
        from = system.indexOf(`The human follower's actions: ${instruction.actions.join(', ')}`, at);
        expect(from).toBeGreaterThan(at);
      }
    }
  });

  test("an example's view is the text the LLM follower is sent at that instruction's start in the evaluation", async () => {
    // Every instruction of TWO drawn: its examples' views against the evaluation's first observations.
    const { system } = await firstAsk({ fewShotLogs: [folderOf('two', [TWO])], fewShotK: 2 }, join(dir, 'two-records'));
    for (const index of [0, 1]) {
      stub = await startStubLlm({ replies: ['{"actions": ["DONE"]}'] });
      agent = await startLlmFollower({ config: resolveLlmConfig({ baseUrl: stub.url, model: STUB_MODEL }), recordDir: join(dir, 'two-eval'), env: {} });
      await runEpisode(agent, games.get(TWO)!, index, DEFAULT_EVAL_OPTIONS);
      const observation = (stub.chatRequests()[0].body as ChatBody).messages[1].content.split('\n\nActions allowed now:')[0];
      expect(system).toContain(`What the follower saw:\n${observation}\nThe human follower's actions: `);
      agent.close();
      await stub.close();
    }
    stub = agent = null;
  });

  test('K = 0 (the default): no examples, the header as before', async () => {
    const { system, header } = await firstAsk({ fewShotLogs: [logs] }, join(dir, 'k-0'));
    expect(system).not.toContain('Example');
    expect(system.endsWith('Its first action must be one of the actions allowed now.')).toBe(true);
    expect(header).not.toHaveProperty('fewShotExamples');
    expect(header.settings).not.toHaveProperty('fewShotK');
  });

  test('a game being evaluated is never drawn, whatever its file is called; too few left is refused', () => {
    const ids = [...games.keys()];
    const kept = games.get(TWO)!;
    const config = (k: number, seed: number) => ({ fewShotLogs: [logs, folderOf('renamed', ids, true)], fewShotK: k, fewShotSeed: seed });
    const draw = (k: number, seed: number, excludeGames: readonly string[]) => fewShotFor('follower', loadTemplate('follower'), config(k, seed), { readGame, excludeGames }, () => {});
    for (const seed of [0, 1, 2, 3]) {
      expect(draw(2, seed, ids.filter((id) => id !== TWO)).examples).toEqual(expect.arrayContaining(kept.instructions.map((instruction) => ({ gameId: TWO, instructionId: instruction.id }))));
    }
    expect(() => draw(3, 0, ids.filter((id) => id !== TWO))).toThrow(new FewShotError(`few-shot-k 3: few-shot-logs (${logs}, ${join(dir, 'renamed')}) hold only 2 instructions a follower marked DONE outside the games evaluated`));
    expect(() => draw(1, 0, ids)).toThrow(/no instruction a follower marked DONE outside the games evaluated, so no example to draw$/);
  });

  test('a template without {{examples}} is refused: the examples would not be sent', async () => {
    const template = join(dir, 'no-examples.txt');
    writeFileSync(template, '--- system ---\nFollow the instruction.\n--- user ---\n{{observation}}\n');
    stub = await startStubLlm({});
    const start = startLlmFollower({ config: resolveLlmConfig({ baseUrl: stub.url, model: STUB_MODEL, prompt: template, fewShotLogs: [logs], fewShotK: 1 }), recordDir: dir, env: {}, fewShot: { readGame } });
    await expect(start).rejects.toThrow(new FewShotError(`few-shot-k 1: the prompt template ${template} has no {{examples}}, so the examples would not be sent`));
    expect(stub.requests).toEqual([]);
  });

  test('the leader takes no examples: it says so, and its prompt and header are unchanged', async () => {
    stub = await startStubLlm({});
    const notices: string[] = [];
    const leader = await startLlmLeader({ config: resolveLlmConfig({ baseUrl: stub.url, model: STUB_MODEL, fewShotLogs: [logs], fewShotK: 2 }), recordDir: dir, env: {}, fewShot: { readGame }, notice: (line) => notices.push(line) });
    leader.reset({ episodeId: 'leader-game' });
    leader.close();
    expect(notices).toEqual(["few-shot-k: the llm leader takes no worked examples (they are a follower's); its prompt is unchanged"]);
    expect(readRecords(join(dir, 'leader-game.leader.llm.ndjson'))[0]).not.toHaveProperty('fewShotExamples');
  });
});

describe('through the commands', () => {
  const llm = (url: string) => ['--llm-base-url', url, '--llm-model', STUB_MODEL];

  test('eval --agent llm --logs: the games evaluated are left out of the draw, by their header\'s id', async () => {
    stub = await startStubLlm({ replies: ['{"actions": ["DONE"]}'] });
    const out = join(dir, 'eval', 'report.json');
    for (const folder of ['eval', 'eval-2']) mkdirSync(join(dir, folder), { recursive: true });
    const evaluated = [join(logs, `${TWO}.jsonl`), join(logs, `${ONE}.jsonl`)];
    const run = await cerealbar('eval', '--agent', 'llm', '--logs', ...evaluated, '--out', out, ...llm(stub.url), '--llm-few-shot-logs', logs, '--llm-few-shot-k', '5', '--llm-few-shot-seed', '3');
    expect({ status: run.status, stderr: run.stderr.replace(/^\[=*\s*\].*\n/gm, '') }).toEqual({ status: 0, stderr: '' });
    const headers = [`${TWO}#0`, `${TWO}#1`, `${ONE}#0`].map((episode) => readRecords(join(dir, 'eval', `${episode}.follower.llm.ndjson`))[0] as RecordHeader);
    // Fixed for the run: one draw, five examples, none from the games evaluated.
    expect(new Set(headers.map((header) => JSON.stringify(header.fewShotExamples))).size).toBe(1);
    expect(headers[0].fewShotExamples).toHaveLength(5);
    expect(headers[0].fewShotExamples!.filter((example) => example.gameId === TWO || example.gameId === ONE)).toEqual([]);
    const report = JSON.parse(readFileSync(out, 'utf8'));
    expect(report.llm.settings.settings).toMatchObject({ fewShotK: 5, fewShotSeed: 3 });

    // Examples only from a renamed copy of the game evaluated: none left, refused before any call.
    stub.requests.splice(0);
    const refused = await cerealbar('eval', '--agent', 'llm', '--logs', evaluated[0], '--out', join(dir, 'eval-2', 'report.json'), ...llm(stub.url), '--llm-few-shot-logs', folderOf('only-evaluated', [TWO], true), '--llm-few-shot-k', '1');
    expect(refused.status).toBe(2);
    expect(refused.stderr.replace(/^\[=*\s*\].*\n/gm, '')).toMatch(/^cerealbar: .*few-shot-logs \(.*only-evaluated\): no instruction a follower marked DONE outside the games evaluated, so no example to draw\n$/);
    expect(stub.chatRequests()).toEqual([]);
  });

  test.each([
    ['K below 0', ['--llm-few-shot-k', '-1'], /^cerealbar: --llm-few-shot-k must be between 0 and 1000, got -1\n$/],
    ['logs that do not exist', ['--llm-few-shot-k', '2', '--llm-few-shot-logs', '/no/such/logs'], /^cerealbar: cannot start the follower "llm": few-shot-logs: \/no\/such\/logs: no such file or folder\n$/],
    ['logs with no instruction done', ['--llm-few-shot-k', '2', '--llm-few-shot-logs', 'NONE'], /^cerealbar: cannot start the follower "llm": few-shot-logs \(.*none\): no instruction a follower marked DONE, so no example to draw\n$/],
    ['K without logs', ['--llm-few-shot-k', '2'], /^cerealbar: cannot start the follower "llm": few-shot-k 2 needs few-shot-logs: the logged games the examples are drawn from\n$/],
    ['K below 0 in the config file', ['--llm-config', 'CONFIG'], /^cerealbar: .*llm\.yaml: few-shot-k: Too small: expected number to be >=0\n$/],
  ])('%s: one line, exit 2, before any game', async (_, args, message) => {
    stub = await startStubLlm({});
    const config = join(dir, 'llm.yaml');
    writeFileSync(config, 'few-shot-k: -1\n');
    const given = args.map((arg) => (arg === 'NONE' ? folderOf('none', [NONE]) : arg === 'CONFIG' ? config : arg));
    const out = join(dir, 'selfplay-refused');
    const run = await cerealbar('selfplay', '--leader', 'scripted', '--follower', 'llm', '--games', '1', '--out', out, ...llm(stub.url), ...given);
    expect(run.status).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(stub.chatRequests()).toEqual([]);
    expect(existsSync(out) ? readdirSync(out).filter((name) => name.endsWith('.jsonl')) : []).toEqual([]);
  });
});

test('the call lines of a run with examples carry them in every request', async () => {
  const records = join(dir, 'lines');
  const { header } = await firstAsk({ fewShotLogs: [logs], fewShotK: 2, fewShotSeed: 5 }, records);
  const calls = readRecords(join(records, `${ONE}#0.follower.llm.ndjson`)).slice(1) as CallRecord[];
  expect(calls.length).toBeGreaterThan(0);
  for (const call of calls) expect(call.request!.messages[0].content).toMatch(/Example 2 of 2: /);
  expect(header.fewShotExamples).toHaveLength(2);
});

test("a study arm's llm block takes the keys through the config's table; its few-shot-logs are the study file's, and its follower carries the examples", async () => {
  stub = await startStubLlm({});
  const studyDir = dirname(logs);
  const arm = withStudyPaths({ id: 'llm-a', agent: 'llm', weight: 1, llm: { model: STUB_MODEL, 'base-url': stub.url, 'few-shot-logs': basename(logs), 'few-shot-k': 2, 'few-shot-seed': 4, 'keep-history': true } }, studyDir);
  expect(armChecker(studyDir)(arm, 'follower')).toEqual([]);
  expect(armLlmConfig(arm)).toMatchObject({ fewShotLogs: [logs], fewShotK: 2, fewShotSeed: 4, keepHistory: true });
  const seated = await startArmAgent(arm, 'follower', join(dir, 'arm-records'));
  await seated.agent.reset({ episodeId: 'arm-game' });
  await seated.agent.close?.();
  const [header] = readRecords(join(dir, 'arm-records', 'arm-game.follower.llm.ndjson'));
  expect((header as { fewShotExamples?: unknown[] }).fewShotExamples).toHaveLength(2);
});
