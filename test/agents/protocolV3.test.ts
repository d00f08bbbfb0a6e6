/** Agent protocol version 3: the leader's seat, plans, and every bad answer a clear AgentError. */
import path from 'node:path';
import { leaderObservationFromView, ObservationTracker } from '../../shared/agents/observation';
import { ProcessAgent, ProcessLeaderAgent, type AgentErrorKind, type ProcessAgentOptions } from '../../shared/agents/node/processAgent';
import { agentError } from './agentError';
import { startLeader } from '../../shared/agents/node/registry';
import { hostHello, leaderActionReader, MAX_PLAN_ACTIONS, readAnswer, readFollowerAction, SEAT_VERSIONS } from '../../shared/agents/protocol';
import { emptyMemory, playerView, remember } from '../../shared/engine/playerView';
import type { GameState } from '../../shared/engine/state';
import { endTurn, play, say } from '../engine/helpers';
import { makeState } from '../fixtures';

const RANDOM_AGENT = path.join(__dirname, '../../examples/agents/random_agent.py');

function leaderObservation(state: GameState = makeState()) {
  return leaderObservationFromView(playerView(state, 'leader', remember(emptyMemory('leader'), state)));
}

function followerObservation() {
  const state = play(makeState({ config: { followerSteps: 30 } }), say('pick up the 1 red star'), endTurn).state;
  return new ObservationTracker().observe(state);
}

describe('reading answers', () => {
  const readLeader = leaderActionReader(20);
  test.each([
    [{ type: 'act', action: 'MF' }, ['MF']],
    [{ type: 'act', actions: ['MF', 'RL', 'DONE'] }, ['MF', 'RL', 'DONE']],
    [{ type: 'act', actions: [] }, []],
  ])('follower %j: the plan %j', (act, plan) => {
    expect(readAnswer(act as never, readFollowerAction)).toEqual(plan);
  });

  test('leader: codes and instructions, one or a plan', () => {
    expect(readAnswer({ type: 'act', action: { instruction: 'get the red star' } }, readLeader)).toEqual([{ instruction: 'get the red star' }]);
    expect(readAnswer({ type: 'act', actions: [{ instruction: 'go' }, 'END'] }, readLeader)).toEqual([{ instruction: 'go' }, 'END']);
  });

  test.each([
    ['neither action nor actions', { type: 'act' }, 'protocol', 'holds either "action"'],
    ['both', { type: 'act', action: 'MF', actions: ['MF'] }, 'protocol', 'holds either "action"'],
    ['actions not a list', { type: 'act', actions: 'MF' }, 'protocol', '"actions" must be a list'],
    ['a number', { type: 'act', action: 3 }, 'protocol', 'action must be a string, one of MF, MB, RL, RR, DONE'],
    ['an unknown code', { type: 'act', action: 'JUMP' }, 'illegal-action', 'answered the action "JUMP"; legal actions are MF, MB, RL, RR, DONE'],
    ['a bad element of a plan', { type: 'act', actions: ['MF', 'END'] }, 'illegal-action', 'answered the action "END" (actions[1]); legal actions are'],
    ['a plan too long', { type: 'act', actions: Array(MAX_PLAN_ACTIONS + 1).fill('RL') }, 'illegal-action', `a plan of ${MAX_PLAN_ACTIONS + 1} actions; at most ${MAX_PLAN_ACTIONS}`],
  ])('follower, %s: %s', (_, act, kind, words) => {
    expect(readAnswer(act as never, readFollowerAction)).toEqual({ kind, message: expect.stringContaining(words) });
  });

  test.each([
    ['DONE', { type: 'act', action: 'DONE' }, 'illegal-action', 'answered the action "DONE"; legal actions are MF, MB, RL, RR, END and {"instruction": "..."}'],
    ['an instruction too long', { type: 'act', action: { instruction: 'x'.repeat(21) } }, 'illegal-action', 'an instruction of 21 characters; at most 20'],
    ['an empty instruction', { type: 'act', actions: ['RL', { instruction: ' \n ' }] }, 'illegal-action', 'an empty instruction (actions[1])'],
    ['an instruction that is not text', { type: 'act', action: { instruction: 5 } }, 'protocol', 'action must be one of MF, MB, RL, RR, END or {"instruction": "<text>"}'],
    ['an object with more keys', { type: 'act', action: { instruction: 'go', feedback: 'positive' } }, 'protocol', 'must be one of'],
    ['a list as one action', { type: 'act', action: ['MF'] }, 'protocol', 'must be one of'],
    ['null', { type: 'act', action: null }, 'protocol', 'must be one of'],
  ])('leader, %s', (_, act, kind, words) => {
    expect(readAnswer(act as never, readLeader)).toEqual({ kind, message: expect.stringContaining(words) });
  });

  test("an instruction's length is counted as the game stores it: white space collapsed, in characters", () => {
    expect(readAnswer({ type: 'act', action: { instruction: `  ${'é'.repeat(10)}   ${'🍒'.repeat(9)}  ` } }, readLeader)).toEqual([
      { instruction: `  ${'é'.repeat(10)}   ${'🍒'.repeat(9)}  ` },
    ]);
  });

  test('the hello says the role, and in the follower seat the version agents written for version 2 check', () => {
    expect(hostHello('follower')).toEqual({ type: 'hello', protocol: 'cerealbar-agent', version: 2, versions: [2, 3], role: 'follower' });
    expect(hostHello('leader')).toEqual({ type: 'hello', protocol: 'cerealbar-agent', version: 3, versions: [3], role: 'leader' });
    expect(SEAT_VERSIONS.leader).toEqual([3]);
  });
});

describe('program agents over version 3', () => {
  const started: (ProcessAgent | ProcessLeaderAgent)[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((agent) => agent.close()));
  });

  /** An inline Python agent: `body` sets `a`, the answer to the message `m`, which is then printed. */
  function inline<T extends ProcessAgent | ProcessLeaderAgent>(make: (command: string, options: ProcessAgentOptions) => T, body: string[], env: Record<string, string> = {}): T {
    const program = ['import json, os, sys', 'for line in sys.stdin:', '    m = json.loads(line)', '    if m["type"] == "close": break', ...body.map((l) => `    ${l}`)].join('\n');
    const agent = make(`python3 -c '${program}'`, { handshakeTimeoutMs: 5_000, stepTimeoutMs: 5_000, env: { ...process.env, ...env } });
    started.push(agent);
    return agent;
  }
  const leader = (command: string, options: ProcessAgentOptions) => new ProcessLeaderAgent(command, options);
  const follower = (command: string, options: ProcessAgentOptions) => new ProcessAgent(command, options);
  const say = 'print(json.dumps(a), flush=True)';


  test("a leader agent: the hello and reset name the role; observe carries the leader's observation (its map only the first time) and its text", async () => {
    const agent = inline(leader, [
      'if m["type"] == "hello": a = {"type": "hello", "protocol": "cerealbar-agent", "version": 3, "name": "probe-" + m["role"], "agentVersion": "0.3"}',
      'if m["type"] == "reset": a = {"type": "ready", "role": m["role"]}',
      'if m["type"] == "observe": o = m["observation"]; a = {"type": "act", "action": {"instruction": "|".join([o["role"], "map" if "map" in o else "none", m["text"].split(".")[0]])}}',
      say,
    ]);
    await agent.handshake();
    expect(agent.name).toBe('probe-leader');
    expect(agent.version).toBe('0.3');
    expect(agent.role).toBe('leader');
    await agent.reset({ episodeId: 'g#0' });
    const observation = leaderObservation();
    expect(await agent.act(observation)).toEqual({ instruction: 'leader|map|You are the leader' });
    expect(await agent.act(observation)).toEqual({ instruction: 'leader|none|You are the leader' });
  });

  test('a leader agent answers a plan and one action; the map goes only with the first observation', async () => {
    const agent = inline(leader, [
      'if m["type"] == "hello": a = {"type": "hello", "protocol": "cerealbar-agent", "version": 3, "name": "plans"}',
      'if m["type"] == "reset": a = {"type": "ready"}',
      'if m["type"] == "observe": a = {"type": "act", "actions": [{"instruction": "get the 1 red star"}, "END"]} if "map" in m["observation"] else {"type": "act", "action": "RL"}',
      say,
    ]);
    await agent.reset({ episodeId: 'g#0' });
    const observation = leaderObservation();
    expect(await agent.act(observation)).toEqual([{ instruction: 'get the 1 red star' }, 'END']);
    expect(await agent.act(observation)).toBe('RL');
    await agent.reset({ episodeId: 'g#1' });
    expect(await agent.act(observation)).toEqual([{ instruction: 'get the 1 red star' }, 'END']);
  });

  test.each([
    ['an instruction too long', '{"type": "act", "action": {"instruction": "x" * 301}}', 'illegal-action', 'an instruction of 301 characters; at most 300'],
    ['a follower action', '{"type": "act", "action": "DONE"}', 'illegal-action', 'answered the action "DONE"'],
    ['a bad element of a plan', '{"type": "act", "actions": ["MF", "FLY"]}', 'illegal-action', '"FLY" (actions[1])'],
    ['a wrong type', '{"type": "act", "action": {"text": "go"}}', 'protocol', 'must be one of MF, MB, RL, RR, END or {"instruction": "<text>"}'],
    ['neither action nor actions', '{"type": "act"}', 'protocol', 'holds either "action"'],
  ])('a leader agent that answers %s: an AgentError, and it is stopped', async (_, answer, kind, words) => {
    const agent = inline(leader, [
      'if m["type"] == "hello": a = {"type": "hello", "protocol": "cerealbar-agent", "version": 3, "name": "bad"}',
      'if m["type"] == "reset": a = {"type": "ready"}',
      `if m["type"] == "observe": a = ${answer}`,
      say,
    ]);
    await agent.reset({ episodeId: 'g#0' });
    const error = await agentError(agent.act(leaderObservation()), kind as AgentErrorKind);
    expect(error.message).toContain(words);
    expect(error.message).toContain('agent "bad"');
    // It is out of step: every later call says the same.
    expect(await agentError(agent.act(leaderObservation()), kind as AgentErrorKind)).toBe(error);
  });

  test('a version-2 agent cannot take the leader seat; a version-3 agent may take the follower seat and answer plans', async () => {
    const old = inline(leader, ['if m["type"] == "hello": a = {"type": "hello", "protocol": "cerealbar-agent", "version": 2, "name": "old"}', say]);
    const error = await agentError(old.handshake(), 'protocol');
    expect(error.message).toContain("speaks \"cerealbar-agent\" version 2; the host speaks \"cerealbar-agent\" version 3 in the leader's seat");
    const planner = inline(follower, [
      'if m["type"] == "hello": a = {"type": "hello", "protocol": "cerealbar-agent", "version": 3, "name": m["role"]}',
      'if m["type"] == "reset": a = {"type": "ready"}',
      'if m["type"] == "observe": a = {"type": "act", "actions": ["MF", "MF", "DONE"]}',
      say,
    ]);
    await planner.handshake();
    expect(planner.name).toBe('follower');
    await planner.reset({ episodeId: 'g#0' });
    expect(await planner.act(followerObservation())).toEqual(['MF', 'MF', 'DONE']);
  });

  test('the Python example written for version 2 still plays the follower, unchanged', async () => {
    const agent = new ProcessAgent(`python3 ${RANDOM_AGENT} --steps 3`, { stepTimeoutMs: 5_000 });
    started.push(agent);
    await agent.handshake();
    expect(agent.protocolVersion).toBe(2);
    await agent.reset({ episodeId: 'fixture#0' });
    const observation = followerObservation();
    const actions = [];
    for (let i = 0; i < 4; i++) actions.push(await agent.act(observation));
    expect(actions).toEqual(['MF', 'MF', 'MF', 'DONE']);
  });

  test('startLeader starts a program in the leader seat, its handshake done; a failing one is stopped', async () => {
    const program = `python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello": print(json.dumps({"type": "hello", "protocol": "cerealbar-agent", "version": 3, "name": "py-" + m["role"]}), flush=True)
    if m["type"] == "close": break'`;
    const agent = await startLeader(program, { setting: 'game' });
    started.push(agent as ProcessLeaderAgent);
    expect(agent).toBeInstanceOf(ProcessLeaderAgent);
    expect(agent.name).toBe('py-leader');
    await expect(startLeader('node -e "process.exit(3)"', { setting: 'game' })).rejects.toThrow(/exited with code 3/);
  });
});
