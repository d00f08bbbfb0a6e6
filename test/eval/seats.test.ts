/**
 * Each LLM seat with its own settings (E-50): the --llm-config file's `leader:` and `follower:`
 * sections, and `llm@FILE` in a seat's spec; a seed played several times (`--repeat`, E-51); and
 * `--resume` refusing a run whose seats' settings or repeats differ (E-52). Bad seat specs stop the
 * command before any game.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readRecords, type RecordHeader } from '../../shared/agents/node/llm/records';
import type { PairsReport } from '../../shared/eval/pairs';
import { loadRecording } from '../../shared/eval/recording';
import type { RunManifest } from '../../cli/runManifest';
import { cerealbar } from '../cli/run';
import { startStubLlm, STUB_MODEL, type ChatBody, type StubLlm, type StubReply } from '../helpers/stubLlm';

jest.setTimeout(120_000);

let dir: string;
let stub: StubLlm | null = null;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'eval-seats-'))));
afterEach(async () => {
  await stub?.close();
  stub = null;
  rmSync(dir, { recursive: true, force: true });
});

/** Replies that depend on the request alone: the leader asks for the first card it lists and ends its turn; the follower takes one step and marks DONE. */
function bothSeats(body: ChatBody): StubReply {
  const text = body.messages.find((m) => m.role === 'user')!.content;
  if (body.messages[0].content.startsWith('You are the leader')) {
    const card = /^- [^:]+: a card with ([^;,]+)/m.exec(text)?.[1];
    return JSON.stringify({ actions: [...(text.includes('an instruction to the follower') && card ? [{ instruction: `pick up the ${card}` }] : []), 'END'] });
  }
  const legal = /Actions allowed now: (.*)\.$/m.exec(text)![1].split(', ');
  return JSON.stringify({ actions: [['MF', 'RL', 'RR'].find((code) => legal.includes(code)), 'DONE'] });
}

const stubArgs = () => ['--llm-base-url', stub!.url, '--llm-max-retries', '0', '--llm-api-key-env', 'CEREALBAR_TEST_NO_KEY'];
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const header = (path: string) => readRecords(path)[0] as RecordHeader;
const readReport = (out: string): PairsReport => JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
const readRun = (out: string): RunManifest => JSON.parse(readFileSync(join(out, 'run.json'), 'utf8'));
const isLeader = (body: unknown) => (body as ChatBody).messages[0].content.startsWith('You are the leader');

describe('E-50: each llm seat may have its own settings', () => {
  test("selfplay --leader llm --follower llm with the --llm-config file's leader: section: two models in one game", async () => {
    stub = await startStubLlm({ respond: bothSeats, models: ['model-a', 'model-b'] });
    const config = file('two.yaml', 'model: model-a\ntemperature: 0\nleader:\n  model: model-b\n  temperature: 0.5\n');
    const out = join(dir, 'runs');
    const run = await cerealbar('selfplay', '--leader', 'llm', '--follower', 'llm', '--out', out, '--llm-config', config, ...stubArgs());
    expect(run.status).toBe(0);
    expect(header(join(out, 'selfplay-1.leader.llm.ndjson'))).toMatchObject({ model: 'model-b', settings: { temperature: 0.5 } });
    expect(header(join(out, 'selfplay-1.follower.llm.ndjson'))).toMatchObject({ model: 'model-a', settings: { temperature: 0 } });
    const sent = stub.chatRequests().map((request) => request.body as ChatBody & { temperature: number });
    expect(new Set(sent.filter((body) => isLeader(body)).map((body) => `${body.model} ${body.temperature}`))).toEqual(new Set(['model-b 0.5']));
    expect(new Set(sent.filter((body) => !isLeader(body)).map((body) => `${body.model} ${body.temperature}`))).toEqual(new Set(['model-a 0']));
    expect(readRun(out).settings).toMatchObject({ leader: 'llm', follower: 'llm', llm: { leader: { model: 'model-b', temperature: 0.5 }, follower: { model: 'model-a', temperature: 0 } } });
  });

  test('llm@FILE: the seat\'s own file wins over the --llm-* options, which the other seat keeps', async () => {
    stub = await startStubLlm({ respond: bothSeats, models: ['model-a', 'model-b'] });
    const own = file('b.yaml', 'model: model-b\n');
    const out = join(dir, 'runs');
    const run = await cerealbar('selfplay', '--leader', `llm@${own}`, '--follower', 'llm', '--out', out, '--llm-model', 'model-a', ...stubArgs());
    expect(run.status).toBe(0);
    expect(header(join(out, 'selfplay-1.leader.llm.ndjson')).model).toBe('model-b');
    expect(header(join(out, 'selfplay-1.follower.llm.ndjson')).model).toBe('model-a');
  });

  test("eval --pair scripted:llm@FILE: a pair per configuration, its config file in the label, report.json, the table and the page; --resume refuses other seat settings (E-52)", async () => {
    stub = await startStubLlm({ respond: bothSeats });
    const warm = file('warm.yaml', 'temperature: 0.9\n');
    const cold = file('cold.yaml', 'temperature: 0\n');
    const out = join(dir, 'out');
    const args = ['eval', '--pair', `scripted:llm@${warm}`, '--pair', `scripted:llm@${cold}`, '--games', '1', '--seed', '4', '--out', out, '--llm-model', STUB_MODEL, ...stubArgs()];
    const run = await cerealbar(...args);
    expect(run.status).toBe(0);
    const report = readReport(out);
    expect(report.pairs.map((pair) => [pair.label, pair.configs])).toEqual([
      [`scripted:llm@${warm}`, { follower: warm }],
      [`scripted:llm@${cold}`, { follower: cold }],
    ]);
    expect(report.pairs.map((pair) => pair.llm.follower!.settings!.settings.temperature)).toEqual([0.9, 0]);
    expect(run.stdout).toMatch(new RegExp(`^  1 +scripted +llm@${warm.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} +1 `, 'm'));
    expect(run.stderr).toContain(`pair 2 (scripted:llm@${cold}): 1 games`);
    const page = readFileSync(join(out, 'report.html'), 'utf8');
    expect(page).toContain(`<td>llm@${warm}<br>`);
    expect(page).toContain(`<h3>Pair 2: scripted:llm@${cold}</h3>`);
    expect(readRun(out).settings).toMatchObject({ llm: { [`scripted:llm@${warm}`]: { follower: { temperature: 0.9 } }, [`scripted:llm@${cold}`]: { follower: { temperature: 0 } } } });

    // The seat's file changed: its settings are not the run's any more.
    writeFileSync(warm, 'temperature: 1\n');
    const resumed = await cerealbar(...args, '--resume');
    expect({ status: resumed.status, stderr: resumed.stderr }).toEqual({
      status: 2,
      stderr: `cerealbar: --resume: the run in ${out} had other settings (llm.scripted:llm@${warm}.follower.temperature differs); give the same options, or --overwrite\n`,
    });
  });

  test('bad seat settings stop the command with one line and exit 2, before any game', async () => {
    stub = await startStubLlm({ respond: bothSeats });
    const warm = file('warm.yaml', 'temperature: 0.9\n');
    const out = join(dir, 'out');
    const evalWith = (...more: string[]) => cerealbar('eval', '--games', '1', '--out', out, '--llm-model', STUB_MODEL, ...stubArgs(), ...more);
    const cases: [() => ReturnType<typeof cerealbar>, string][] = [
      [() => evalWith('--pair', `scripted:heuristic@${warm}`), `cerealbar: "heuristic@${warm}": a config file is for an llm seat only; heuristic has no settings (give llm@FILE, or heuristic alone)\n`],
      [() => evalWith('--leader', 'scripted', '--follower', 'llm@'), 'cerealbar: "llm@": give the llm seat\'s config file after the @, as in llm@configs/warm.yaml\n'],
      [() => evalWith('--pair', `scripted:llm@${join(dir, 'none.yaml')}`), `cerealbar: ${join(dir, 'none.yaml')}: cannot read: no such file\n`],
      [() => evalWith('--pair', 'scripted:llm', '--llm-config', file('bad.yaml', 'follower:\n  temperature: 9\n')), `cerealbar: ${join(dir, 'bad.yaml')}: follower.temperature: Too big: expected number to be <=2\n`],
      [() => evalWith('--pair', 'scripted:llm', '--llm-config', file('odd.yaml', 'follower:\n  modle: x\n')), `cerealbar: ${join(dir, 'odd.yaml')}: follower: unknown key "modle" (known: `],
      [() => cerealbar('selfplay', '--leader', `scripted@${warm}`, '--follower', 'heuristic', '--out', join(dir, 'runs')), `cerealbar: "scripted@${warm}": a config file is for an llm seat only; scripted has no settings (give llm@FILE, or scripted alone)\n`],
    ];
    for (const [running, stderr] of cases) {
      const run = await running();
      expect({ status: run.status, stdout: run.stdout, stderr: run.stderr.slice(0, stderr.length) }).toEqual({ status: 2, stdout: '', stderr });
    }
    expect(stub.chatRequests()).toEqual([]);
  });
});

describe('E-51: --repeat plays each seed several times, each game with its own id', () => {
  test('R games per seed with distinct ids; a deterministic pair plays them alike; the differences pair games by id', async () => {
    stub = await startStubLlm({ respond: bothSeats });
    const out = join(dir, 'out');
    const run = await cerealbar('eval', '--pair', 'llm:heuristic', '--pair', 'scripted:heuristic', '--games', '2', '--seed', '3', '--repeat', '3', '--bootstrap', '200', '--out', out, '--llm-model', STUB_MODEL, ...stubArgs());
    expect(run.status).toBe(0);
    const report = readReport(out);
    expect(report).toMatchObject({ games: 2, seed: 3, repeat: 3 });
    const ids = ['eval-3-r1', 'eval-3-r2', 'eval-3-r3', 'eval-4-r1', 'eval-4-r2', 'eval-4-r3'];
    for (const pair of report.pairs) {
      expect(pair.games.map((game) => [game.seed, game.gameId])).toEqual(ids.map((id) => [Number(id.slice(5, 6)), id]));
      expect(pair.summary.games).toBe(6);
      expect(readdirSync(join(out, pair.dir)).filter((name) => name.endsWith('.jsonl')).sort()).toEqual(ids.map((id) => `${id}.jsonl`));
    }
    // The LLM leader (replies from the request alone) and the heuristic follower draw nothing: the repeats of a seed are the same game.
    const events = (log: string) => JSON.stringify(loadRecording(readFileSync(join(out, log), 'utf8')).events);
    const [llmPair] = report.pairs;
    for (const seed of [0, 3]) for (const k of [1, 2]) expect(events(llmPair.games[seed + k].log)).toBe(events(llmPair.games[seed].log));
    expect(readdirSync(join(out, 'pair-1')).filter((name) => name.endsWith('.leader.llm.ndjson'))).toHaveLength(6);
    expect(report.differences[0].wins + report.differences[0].ties + report.differences[0].losses).toBe(6);
    expect(run.stdout).toContain('agent-vs-agent evaluation: 2 pairs, 6 games each: seeds 3 to 4, 3 times each;');
    expect(run.stdout).toMatch(/pair 2 - pair 1: .*; more on \d+ games, the same on \d+, less on \d+/);
    expect(readRun(out).settings).toMatchObject({ repeat: 3 });

    // Resumed, every repeat is a finished game of its own; another --repeat is another run (E-52).
    const again = await cerealbar('eval', '--pair', 'scripted:heuristic', '--games', '2', '--seed', '3', '--repeat', '3', '--bootstrap', '200', '--out', join(dir, 'plain'));
    expect(again.status).toBe(0);
    const resumed = await cerealbar('eval', '--pair', 'scripted:heuristic', '--games', '2', '--seed', '3', '--repeat', '3', '--bootstrap', '200', '--out', join(dir, 'plain'), '--resume');
    expect(resumed.stderr).toContain('pair 1 (scripted:heuristic): 6 games kept from the run before, 0 to play\n');
    const other = await cerealbar('eval', '--pair', 'scripted:heuristic', '--games', '2', '--seed', '3', '--repeat', '2', '--bootstrap', '200', '--out', join(dir, 'plain'), '--resume');
    expect(other.stderr).toBe(`cerealbar: --resume: the run in ${join(dir, 'plain')} had other settings (repeat differs); give the same options, or --overwrite\n`);
  });

  test('--repeat is for agent-vs-agent evaluation', async () => {
    const run = await cerealbar('eval', '--agent', 'heuristic', '--logs', dir, '--repeat', '2');
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 2, stderr: 'cerealbar: --repeat is for agent-vs-agent evaluation: give --leader and --follower, or --pair\n' });
  });
});
