/**
 * keep-history: the LLM follower's earlier calls for its current instruction, with the model's
 * replies, are sent again before the current observation; a new instruction (and a new episode)
 * starts a fresh conversation; at most HISTORY_MAX_MESSAGES earlier messages go, the oldest calls
 * dropped whole; each call line says how many it carried. Off, every call is its own conversation.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ObservationTracker } from '../../shared/agents/observation';
import type { FollowerObservation } from '../../shared/agents/types';
import { resolveLlmConfig } from '../../shared/agents/node/llm/config';
import { HISTORY_MAX_MESSAGES } from '../../shared/agents/node/llm/history';
import { readRecords, type CallRecord, type RecordHeader } from '../../shared/agents/node/llm/records';
import { startLlmFollower, startLlmLeader, type LlmFollower } from '../../shared/agents/node/llm/seats';
import type { GameState } from '../../shared/engine/state';
import { makeState } from '../fixtures';
import { done, endTurn, mv, play, say } from '../engine/helpers';
import { startStubLlm, STUB_MODEL, type ChatBody, type StubLlm, type StubReply } from '../helpers/stubLlm';

let stub: StubLlm;
let dir: string;
let agent: LlmFollower | null = null;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'llm-history-'));
});
afterEach(async () => {
  agent?.close();
  agent = null;
  await stub?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A reply naming the call, so that each kept reply can be told apart. */
const numbered = (_body: ChatBody, n: number): StubReply => JSON.stringify({ thought: `call ${n + 1}`, actions: ['RR'] });

async function follower(keepHistory: boolean, respond: (body: ChatBody, n: number) => StubReply = numbered): Promise<LlmFollower> {
  stub = await startStubLlm({ respond });
  agent = await startLlmFollower({ config: resolveLlmConfig({ baseUrl: stub.url, model: STUB_MODEL, keepHistory }), recordDir: dir, env: {}, retryBaseMs: 1 });
  agent.reset({ episodeId: 'game-1' });
  return agent;
}

/** The follower's moments: on "go right" after each of `turns` turns right, then on "go left" after its DONE. */
function moments(turns: number): FollowerObservation[] {
  const tracker = new ObservationTracker();
  let state: GameState = play(makeState({ config: { followerSteps: 30 } }), say('go right'), say('go left'), endTurn).state;
  const observations = [tracker.observe(state)];
  for (let i = 0; i < turns; i++) {
    state = play(state, mv('follower', 'RR')).state;
    observations.push(tracker.observe(state));
  }
  return [...observations, tracker.observe(play(state, done).state)];
}

const bodies = () => stub.chatRequests().map((request) => request.body as ChatBody);
const lines = () => readRecords(join(dir, 'game-1.follower.llm.ndjson'));

test('earlier calls of one instruction are sent again with their replies; a new instruction starts afresh; the lines say how many', async () => {
  const llm = await follower(true);
  const [first, second, third, nextInstruction] = moments(2);
  for (const observation of [first, second, third, nextInstruction]) await llm.act(observation);
  const [one, two, three, four] = bodies();
  const system = one.messages[0];
  expect(one.messages.map((m) => m.role)).toEqual(['system', 'user']);
  // The second call: the first call's observation and reply, then its own observation.
  expect(two.messages).toEqual([system, one.messages[1], { role: 'assistant', content: '{"thought":"call 1","actions":["RR"]}' }, two.messages[3]]);
  expect(three.messages.slice(0, 5)).toEqual([...two.messages.slice(0, 3), two.messages[3], { role: 'assistant', content: '{"thought":"call 2","actions":["RR"]}' }]);
  expect(three.messages).toHaveLength(6);
  expect(three.messages[5].content).toContain('Instruction: go right');
  // "go left" is a new instruction: its call is one conversation again.
  expect(four.messages.map((m) => m.role)).toEqual(['system', 'user']);
  expect(four.messages[1].content).toContain('Instruction: go left');
  const [header, ...calls] = lines();
  expect((header as RecordHeader).settings).toMatchObject({ keepHistory: true, historyMaxMessages: HISTORY_MAX_MESSAGES });
  expect((calls as CallRecord[]).map((call) => call.history)).toEqual([0, 2, 4, 0]);
  // What is on record is what was sent.
  expect((calls as CallRecord[]).map((call) => call.request)).toEqual(bodies());
});

test('a re-ask is kept as it went (the unusable reply and the correction); a call without a reply is not kept', async () => {
  const replies: StubReply[] = ['not json', '{"actions": ["RR"]}', { status: 400 }, '{"actions": ["RR"]}'];
  const llm = await follower(true, (_body, n) => replies[n]);
  const [first, second, third] = moments(2);
  for (const observation of [first, second, third]) await llm.act(observation);
  const [, reasked, failed, last] = bodies();
  // The first observation's exchange: its message, the reply that did not parse, the correction, the reply.
  const kept = [...reasked.messages.slice(1), { role: 'assistant', content: '{"actions": ["RR"]}' }];
  expect(kept.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
  expect(failed.messages).toEqual([reasked.messages[0], ...kept, failed.messages[5]]);
  // The call that got an HTTP 400 left nothing to keep.
  expect(last.messages).toEqual([reasked.messages[0], ...kept, last.messages[5]]);
  expect(last.messages[5]).not.toEqual(failed.messages[5]);
  expect((lines().slice(1) as CallRecord[]).map((call) => [call.ask, call.history])).toEqual([[1, 0], [2, 0], [1, 4], [1, 4]]);
});

test(`at most ${HISTORY_MAX_MESSAGES} earlier messages go, the oldest calls dropped whole; a new episode starts afresh`, async () => {
  const llm = await follower(true);
  const observations = moments(HISTORY_MAX_MESSAGES);
  for (const observation of observations.slice(0, -1)) await llm.act(observation);
  const sent = bodies();
  const last = sent.at(-1)!;
  expect(last.messages).toHaveLength(1 + HISTORY_MAX_MESSAGES + 1);
  // The oldest calls kept are the latest ones: the last request's history is the one before's, less its oldest call, plus that call.
  const before = sent.at(-2)!;
  expect(last.messages.slice(1, -3)).toEqual(before.messages.slice(3, -1));
  expect((lines().slice(1) as CallRecord[]).map((call) => call.history).slice(-3)).toEqual([HISTORY_MAX_MESSAGES, HISTORY_MAX_MESSAGES, HISTORY_MAX_MESSAGES]);
  llm.reset({ episodeId: 'game-2' });
  await llm.act(observations[1]);
  expect(bodies().at(-1)!.messages.map((m) => m.role)).toEqual(['system', 'user']);
});

test('off (the default): every call is its own conversation and its line has no history', async () => {
  const llm = await follower(false);
  const [first, second] = moments(1);
  await llm.act(first);
  await llm.act(second);
  expect(bodies().map((body) => body.messages.map((m) => m.role))).toEqual([
    ['system', 'user'],
    ['system', 'user'],
  ]);
  const [header, ...calls] = lines();
  expect((header as RecordHeader).settings).not.toHaveProperty('keepHistory');
  expect((calls as CallRecord[]).every((call) => !('history' in call))).toBe(true);
});

test('the leader keeps no conversation: it says so when keep-history is on', async () => {
  stub = await startStubLlm({});
  const notices: string[] = [];
  const leader = await startLlmLeader({ config: resolveLlmConfig({ baseUrl: stub.url, model: STUB_MODEL, keepHistory: true }), recordDir: dir, env: {}, notice: (line) => notices.push(line) });
  leader.reset({ episodeId: 'game-1' });
  leader.close();
  expect(notices).toEqual(["keep-history: the llm leader keeps no conversation (it is a follower's, by instruction)"]);
  expect((readRecords(join(dir, 'game-1.leader.llm.ndjson'))[0] as RecordHeader).settings).not.toHaveProperty('keepHistory');
});
