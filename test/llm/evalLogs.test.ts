/**
 * An LLM follower scored instruction by instruction on people's games: `cerealbar eval --agent llm
 * --logs DIR --mode cascaded` over the CB2 games of the fixtures (after `import cb2`), against a
 * stub endpoint. The report's figures are recomputed from the call records and the logs: the
 * actions the records say the model chose, played again through the evaluation by an agent that
 * only repeats them, give every episode's figures; the counts are the records'.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findRecordFile, readRecords, type CallRecord } from '../../shared/agents/node/llm/records';
import type { AgentAction, EpisodeStart, FollowerAgent } from '../../shared/agents/types';
import { loadRecording } from '../../shared/eval/recording';
import { aggregate } from '../../shared/eval/report';
import { runEpisode, type EpisodeResult, type EvalOptions } from '../../shared/eval/runner';
import type { EvalReport } from '../../shared/eval/report';
import { cerealbar } from '../cli/run';
import { startStubLlm, STUB_MODEL, type ChatBody, type StubLlm, type StubReply } from '../helpers/stubLlm';

jest.setTimeout(300_000);

const FIXTURES = join(__dirname, '..', 'fixtures', 'cb2-logs');

let dir: string;
let logs: string;
let stub: StubLlm | null = null;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'llm-eval-logs-'));
  logs = join(dir, 'logs');
  const imported = await cerealbar('import', 'cb2', FIXTURES, '--out', logs);
  expect(imported.status).toBe(0);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(async () => {
  await stub?.close();
  stub = null;
});

/** One legal action a call, chosen by the call's number: DONE every third call when it is allowed. */
function oneAction(body: ChatBody, n: number): StubReply {
  const legal = /Actions allowed now: (.*)\.$/m.exec(body.messages.find((m) => m.role === 'user')!.content)![1].split(', ');
  const action = n % 3 === 2 && legal.includes('DONE') ? 'DONE' : legal[n % legal.length];
  return { content: JSON.stringify({ actions: [action] }), promptTokens: 100 + (n % 7), completionTokens: 5 + (n % 3) };
}

/** Plays back one episode's actions as the records give them. */
class Replayer implements FollowerAgent {
  readonly name = 'replayer';
  private queue: AgentAction[] = [];
  constructor(private readonly byEpisode: ReadonlyMap<string, readonly AgentAction[]>) {}
  reset(start: EpisodeStart): void {
    this.queue = [...(this.byEpisode.get(start.episodeId) ?? [])];
  }
  act(): AgentAction {
    return this.queue.shift() ?? 'DONE';
  }
}

test('E-42: eval --agent llm --logs, cascaded, over the imported CB2 games: per-instruction figures and counts equal a recomputation from the records and the logs', async () => {
  stub = await startStubLlm({ respond: oneAction });
  const out = join(dir, 'run', 'report.json');
  const run = await cerealbar('eval', '--agent', 'llm', '--logs', logs, '--mode', 'cascaded', '--max-actions', '6', '--out', out, '--llm-base-url', stub.url, '--llm-model', STUB_MODEL);
  expect({ status: run.status, stderr: run.stderr.replace(/^\[=*\s*\].*\n/gm, '') }).toEqual({ status: 0, stderr: '' });
  const report = JSON.parse(readFileSync(out, 'utf8')) as EvalReport;
  const games = readdirSync(logs).filter((name) => name.endsWith('.jsonl'));
  expect(games.length).toBe(20);
  expect(report.logs.length).toBe(20);
  expect(report.skippedLogs).toEqual([]);
  expect(report.episodes.length).toBeGreaterThan(100);
  expect(new Set(report.episodes.map((episode) => episode.profile))).toEqual(new Set(['cb2']));

  // One record file per episode, beside the report; every chat request the stub got is a call on record.
  const recordDir = join(dir, 'run');
  const calls = new Map<string, CallRecord[]>();
  for (const episode of report.episodes) {
    const [header, ...lines] = readRecords(findRecordFile(recordDir, episode.episodeId, 'follower'));
    expect(header).toMatchObject({ kind: 'llm-header', episode: episode.episodeId, model: STUB_MODEL });
    calls.set(episode.episodeId, lines as CallRecord[]);
  }
  const all = [...calls.values()].flat();
  expect(all.length).toBe(stub.chatRequests().length);
  expect(all.every((call) => call.status === 'ok')).toBe(true);
  expect(report.llm).toMatchObject({
    calls: all.length,
    byStatus: { ok: all.length },
    fallbacks: 0,
    tokens: { prompt: all.reduce((sum, call) => sum + call.tokens!.prompt, 0), completion: all.reduce((sum, call) => sum + call.tokens!.completion, 0) },
    records: '.',
  });
  expect(report.llm!.tokensPerEpisode).toBeCloseTo(report.llm!.tokens.total / report.episodes.length, 9);
  expect(run.stdout).toContain(`llm follower: ${all.length} calls (${all.length} ok), 0 fallbacks`);

  // The actions each episode played are the records' plans, in order; played again, they give every figure.
  const byEpisode = new Map([...calls].map(([episode, lines]) => [episode, lines.flatMap((call) => call.actions as AgentAction[])]));
  for (const episode of report.episodes) expect(episode.actions).toEqual(byEpisode.get(episode.episodeId));
  const options: EvalOptions = report.options;
  const again: EpisodeResult[] = [];
  for (const name of games.sort()) {
    const recording = loadRecording(readFileSync(join(logs, name), 'utf8'));
    for (let index = 0; index < recording.instructions.length; index++) again.push(await runEpisode(new Replayer(byEpisode), recording, index, options));
  }
  const figures = (episode: EpisodeResult) => ({ id: episode.episodeId, actions: episode.actions, cascaded: episode.cascaded, error: episode.error });
  expect(report.episodes.map(figures)).toEqual(again.map(figures));
  expect(report.aggregates).toEqual(aggregate(again));
});

test('E-42: eval --agent llm over logs: the llm options go with --agent llm, and a stopped endpoint stops the run (exit 1, why)', async () => {
  const logFile = join(logs, readdirSync(logs).find((name) => name.endsWith('.jsonl'))!);
  const without = await cerealbar('eval', '--agent', 'heuristic', '--logs', logFile, '--llm-model', STUB_MODEL);
  expect({ status: without.status, stderr: without.stderr }).toEqual({ status: 2, stderr: 'cerealbar: the --llm-* options are for the llm agent: give --agent llm\n' });
  const threads = await cerealbar('eval', '--agent', 'llm', '--logs', logFile, '--workers', '4', '--llm-model', STUB_MODEL);
  expect({ status: threads.status, stderr: threads.stderr }).toEqual({ status: 2, stderr: 'cerealbar: --workers: the llm agent is evaluated in one thread; leave --workers out\n' });

  stub = await startStubLlm({ replies: [{ status: 500 }] });
  const out = join(dir, 'stopped', 'report.json');
  const run = await cerealbar('eval', '--agent', 'llm', '--logs', logFile, '--out', out, '--llm-base-url', stub.url, '--llm-model', STUB_MODEL, '--llm-max-retries', '0', '--llm-max-consecutive-failures', '3');
  expect(run.status).toBe(1);
  expect(run.stderr).toMatch(/cerealbar: the llm follower stopped: 3 chat calls in a row got no reply \(max-consecutive-failures 3\)/);
  expect(stub.chatRequests().length).toBe(3);
});
