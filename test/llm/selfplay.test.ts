/**
 * Whole self-play games with the LLM agent in either seat, through the stub server: the logs
 * replay, and the call records match the stub's request log one to one (same bodies, same order,
 * same request ids), each call pointing at the log event its plan began.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HeuristicAgent } from '../../shared/agents/builtin';
import { ScriptedLeaderAgent } from '../../shared/agents/scriptedLeader';
import { resolveLlmConfig } from '../../shared/agents/node/llm/config';
import { readRecords, type CallRecord } from '../../shared/agents/node/llm/records';
import { startLlmFollower, startLlmLeader } from '../../shared/agents/node/llm/seats';
import type { LogLine } from '../../shared/log/format';
import { serializeLine } from '../../shared/log/recorder';
import { replay } from '../../shared/log/replay';
import { generateMap } from '../../shared/maps/generate';
import { playAgentGame } from '../../shared/agents/agentGame';
import { startStubLlm, STUB_MODEL, type ChatBody, type StubLlm, type StubReply } from '../helpers/stubLlm';

jest.setTimeout(60_000);

let stub: StubLlm;
let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'llm-selfplay-'))));
afterEach(async () => {
  await stub?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The template's user message for this observation (a re-ask adds messages after it). */
const observationText = (body: ChatBody) => body.messages.find((m) => m.role === 'user')!.content;

/** A follower that takes one step (forward if it can, else a turn) and marks the instruction done; its second reply is not JSON. */
function followerModel(body: ChatBody, n: number): StubReply {
  if (n === 1) return 'Let me think about that.';
  const legal = /Actions allowed now: (.*)\.$/m.exec(observationText(body))![1].split(', ');
  const step = ['MF', 'RL', 'RR'].find((code) => legal.includes(code))!;
  return `\`\`\`json\n{"thought": "one step", "actions": ["${step}", "DONE"]}\n\`\`\``;
}

/**
 * A leader that asks for the card nearest to it and ends its turn. Its first call of a game, with
 * nothing queued, fails with a 500 (the leader may not end its turn: it passes); its fourth writes
 * no END, and the fifth, asked with an instruction queued, fails too (it ends its turn).
 */
function leaderModel(body: ChatBody, n: number): StubReply {
  if (n === 0 || n === 4) return { status: 500 };
  const text = observationText(body);
  const card = /^- [^:]+: a card with ([^;,]+)/m.exec(text)?.[1];
  const canInstruct = text.includes('an instruction to the follower');
  const instruction = canInstruct && card ? [{ instruction: `pick up the ${card}` }] : [];
  return JSON.stringify({ actions: n === 3 ? instruction : [...instruction, 'END'] });
}

/** The call lines that were sent, against the stub's chat requests: the same bodies in the same order. */
function expectRecordsMatchStub(calls: readonly CallRecord[]): void {
  const sent = calls.filter((call) => call.request !== null);
  const received = stub.chatRequests();
  expect(sent.length).toBe(received.length);
  expect(sent.map((call) => call.request)).toEqual(received.map((request) => request.body));
  expect(sent.map((call) => call.requestId)).toEqual(received.map((request) => request.requestId));
}

/** Each call that gave a plan names the event its first action became (played in order, nothing refused in these games). */
function expectEventsLinked(calls: readonly CallRecord[], lines: readonly LogLine[], role: 'leader' | 'follower'): void {
  const events = lines.filter((line) => line.kind === 'event');
  for (const call of calls.filter((c) => c.status === 'ok' && c.actions!.length > 0)) {
    const event = events[call.event!];
    expect(event).toMatchObject({ seq: call.event! + 1, actor: role });
  }
}

/** A follower that walks three steps ahead (turning first when it cannot), says DONE and turns: the game refuses some of those steps, and drops the turn after DONE. */
function walkerModel(body: ChatBody): StubReply {
  const legal = /Actions allowed now: (.*)\.$/m.exec(observationText(body))![1].split(', ');
  return JSON.stringify({ actions: [legal.includes('MF') ? 'MF' : 'RL', 'MF', 'MF', 'DONE', 'RL'] });
}

/** An event's follower code. */
const codeOf = (line: LogLine) => (line.kind === 'event' && line.type === 'move' ? (line.payload as { move: string }).move : line.kind === 'event' && line.type === 'done' ? 'DONE' : null);

async function game(seed: number, seats: 'llm-follower' | 'llm-leader') {
  const config = resolveLlmConfig({ baseUrl: stub.url, model: STUB_MODEL, maxRetries: 0 });
  const lines: LogLine[] = [];
  if (seats === 'llm-follower') {
    const follower = await startLlmFollower({ config, recordDir: dir, env: {} });
    const leader = new ScriptedLeaderAgent();
    const result = await playAgentGame(
      { seed, map: generateMap(seed), gameId: `selfplay-${seed}`, leader, follower, agents: { leader: { name: 'scripted', spec: 'scripted' }, follower: follower.identity } },
      (line) => lines.push(line),
    );
    follower.close();
    return { result, lines, stats: follower.stats(), records: join(dir, `selfplay-${seed}.follower.llm.ndjson`) };
  }
  const leader = await startLlmLeader({ config, recordDir: dir, env: {} });
  const result = await playAgentGame(
    { seed, map: generateMap(seed), gameId: `selfplay-${seed}`, leader, follower: new HeuristicAgent(), agents: { leader: leader.identity, follower: { name: 'heuristic', spec: 'heuristic' } } },
    (line) => lines.push(line),
  );
  leader.close();
  return { result, lines, stats: leader.stats(), records: join(dir, `selfplay-${seed}.leader.llm.ndjson`) };
}

test('the LLM follower plays a whole game with the scripted leader: the log replays, every call is on record', async () => {
  stub = await startStubLlm({ respond: followerModel });
  const { result, lines, stats, records } = await game(3, 'llm-follower');
  const log = lines.map((line) => serializeLine(line)).join('\n');
  expect(replay(log).final).toEqual(result.state);
  const [header, ...calls] = readRecords(records) as [unknown, ...CallRecord[]];
  expect(header).toMatchObject({ kind: 'llm-header', episode: 'selfplay-3', role: 'follower' });
  expectRecordsMatchStub(calls);
  expectEventsLinked(calls, lines, 'follower');
  expect(calls[0].status).toBe('ok');
  expect(calls.slice(1, 3).map((c) => [c.observation, c.ask, c.status])).toEqual([[1, 1, 'format_error'], [1, 2, 'ok']]);
  expect(stats).toMatchObject({ calls: calls.length, fallbacks: 0, byStatus: { format_error: 1, ok: calls.length - 1 } });
  expect(lines[0]).toMatchObject({ meta: { agents: { follower: { name: 'llm', spec: `llm ${STUB_MODEL} at ${stub.url}` } } } });
  expect(readFileSync(records, 'utf8')).not.toMatch(/sk-/);
});

test('the LLM leader plays a whole game with the heuristic follower: instructions from its plans, a failed call ends its turn', async () => {
  stub = await startStubLlm({ respond: leaderModel });
  const { result, lines, stats, records } = await game(5, 'llm-leader');
  expect(replay(lines.map((line) => serializeLine(line)).join('\n')).final).toEqual(result.state);
  const calls = readRecords(records).slice(1) as CallRecord[];
  expectRecordsMatchStub(calls);
  expectEventsLinked(calls, lines, 'leader');
  expect(calls[0]).toMatchObject({ status: 'backend_error', check: { legal: ['MF', 'MB', 'RL', 'RR'] }, fallback: { actions: [] } });
  expect(calls[4]).toMatchObject({ status: 'backend_error', check: { legal: ['MF', 'MB', 'RL', 'RR', 'END'] }, fallback: { actions: ['END'] } });
  expect(stats).toMatchObject({ fallbacks: 2, fallbacksBy: { backend_error: 2 } });
  // The pass let the first turn run out: the server's timeout is the game's first event.
  expect(lines[1]).toMatchObject({ kind: 'event', seq: 1, actor: 'server', type: 'timeout' });
  const instructions = lines.filter((line) => line.kind === 'event' && line.type === 'instruction');
  expect(instructions.length).toBeGreaterThan(2);
  expect(result.state.score).toBeGreaterThanOrEqual(0);
});

test('every action of a plan the game refused is on the next call line, as many as the game counted; so is the rest of a plan dropped for a new instruction', async () => {
  stub = await startStubLlm({ respond: walkerModel });
  const { result, lines, records } = await game(3, 'llm-follower');
  const calls = readRecords(records).slice(1) as CallRecord[];
  const cuts = calls.filter((call) => call.planCut);
  expect(cuts.filter((call) => call.planCut!.refused)).toHaveLength(result.refused.follower);
  expect(result.refused.follower).toBeGreaterThan(0);
  expect(cuts.some((call) => !call.planCut!.refused)).toBe(true);
  const events = lines.filter((line) => line.kind === 'event');
  for (const call of cuts) {
    const { call: made, at, action, refused, reason } = call.planCut!;
    const plan = calls[made - 1];
    expect(plan.actions![at]).toEqual(action);
    // What was played of the plan is the log's events between the two calls.
    expect(events.slice(plan.event!, call.event!).map(codeOf)).toEqual(plan.actions!.slice(0, at));
    if (refused) expect(reason).toBe(`${action} is not allowed now; allowed now: ${call.check.legal.join(', ')}`);
    else expect(reason).toMatch(/^instruction \d+ -> instruction \d+$/);
  }
});
