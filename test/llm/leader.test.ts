/** The LLM agent in the leader's seat: its golden prompt, instructions in plans, and its fallback (END when it may, else pass). */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { leaderObservationFromView } from '../../shared/agents/observation';
import type { LeaderObservation } from '../../shared/agents/types';
import { resolveLlmConfig } from '../../shared/agents/node/llm/config';
import { readRecords, type CallRecord } from '../../shared/agents/node/llm/records';
import { startLlmLeader, type LlmLeader } from '../../shared/agents/node/llm/seats';
import { emptyMemory, playerView, remember } from '../../shared/engine/playerView';
import type { GameState } from '../../shared/engine/state';
import { play, say } from '../engine/helpers';
import { makeState } from '../fixtures';
import { startStubLlm, STUB_MODEL, type StubLlm, type StubReply } from '../helpers/stubLlm';
import { expectGolden } from './golden';

export function leaderObservation(state: GameState = makeState()): LeaderObservation {
  return leaderObservationFromView(playerView(state, 'leader', remember(emptyMemory('leader'), state)));
}

let stub: StubLlm;
let dir: string;
let agent: LlmLeader | null = null;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'llm-leader-'))));
afterEach(async () => {
  agent?.close();
  agent = null;
  await stub?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function leader(replies: readonly StubReply[]): Promise<LlmLeader> {
  stub = await startStubLlm({ replies });
  agent = await startLlmLeader({ config: resolveLlmConfig({ baseUrl: stub.url, model: STUB_MODEL, seed: 7 }), recordDir: dir, env: {}, retryBaseMs: 1 });
  agent.reset({ episodeId: 'game-1' });
  return agent;
}

const calls = () => readRecords(join(dir, 'game-1.leader.llm.ndjson')).slice(1) as CallRecord[];

describe('the LLM leader', () => {
  test('sends the golden prompt for a fixed observation and answers an instruction then END', async () => {
    const agent = await leader(['```json\n{"thought": "the set is ahead of the follower", "actions": [{"instruction": "pick up the 3 cards straight ahead"}, "END"]}\n```']);
    expect(agent.role).toBe('leader');
    const plan = await agent.act(leaderObservation(), { event: 0 });
    expect(plan).toEqual([{ instruction: 'pick up the 3 cards straight ahead' }, 'END']);
    expectGolden('leader.json', stub.chatRequests()[0].body);
    expect(calls()[0]).toMatchObject({
      role: 'leader', event: 0, status: 'ok', actions: plan,
      check: { role: 'leader', legal: ['MF', 'MB', 'RL', 'RR'], canInstruct: true, maxInstructionLength: 300 },
    });
    expect(readFileSync(join(dir, 'game-1.leader.llm.ndjson'), 'utf8').split('\n')[0]).toContain('"role":"leader"');
  });

  test('END before any instruction is illegal (the queue is empty): asked again, then it passes, as END is not allowed', async () => {
    const agent = await leader(['{"actions": ["END"]}']);
    expect(await agent.act(leaderObservation())).toEqual([]);
    expect(calls().map((c) => [c.status, c.error, c.fallback])).toEqual([
      ['illegal', 'END is not allowed now; allowed now: MF, MB, RL, RR, {"instruction": "..."}', null],
      ['illegal', 'END is not allowed now; allowed now: MF, MB, RL, RR, {"instruction": "..."}', { actions: [] }],
    ]);
  });

  test('an empty plan twice, with an instruction written, ends its turn as any reply it cannot play does', async () => {
    const agent = await leader(['{"actions": []}']);
    expect(await agent.act(leaderObservation(play(makeState(), say('pick up the red star')).state))).toEqual(['END']);
    expect(calls().map((c) => [c.status, c.fallback])).toEqual([['empty_plan', null], ['empty_plan', { actions: ['END'] }]]);
    expect(agent.stats()).toMatchObject({ byStatus: { empty_plan: 2 }, fallbacks: 1, fallbacksBy: { empty_plan: 1 } });
  });

  test('with an instruction written, a failing backend makes it end its turn', async () => {
    const agent = await leader([{ status: 500 }]);
    const written = leaderObservation(play(makeState(), say('pick up the red star')).state);
    expect(written.legal).toContain('END');
    expect(await agent.act(written)).toEqual(['END']);
    expect(calls()[0]).toMatchObject({ status: 'backend_error', fallback: { actions: ['END'] } });
    expect(agent.stats()).toMatchObject({ fallbacks: 1, fallbacksBy: { backend_error: 1 } });
  });
});
