import { AGENT_CATALOGUE, agentNames, createPureFollower, LLM_AGENT, pureFollowerNames, seatProblem, unknownNameProblem } from '../../shared/agents/catalogue';
import { HeuristicAgent, RandomAgent } from '../../shared/agents/builtin';
import { agentIdentity, AgentSpecError, SeatStartError, startAgent, startPair } from '../../shared/agents/node/registry';
import { ScriptedLeaderAgent } from '../../shared/agents/scriptedLeader';
import type { FollowerAgent, LeaderAgent } from '../../shared/agents/types';

/** A program that says hello in either seat, asking for what `hello` adds (needsRecording, oracle observations). */
const program = (hello: Record<string, unknown> = {}) => `python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello": print(json.dumps({"type": "hello", "protocol": "cerealbar-agent", "version": 3, "name": "py", **${JSON.stringify(hello).replace(/true/g, 'True')}}), flush=True)
    if m["type"] == "close": break'`;

describe('the agent catalogue', () => {
  test('names each seat\'s built-ins, without the oracles where nothing is recorded', () => {
    expect(agentNames('follower')).toEqual(['random', 'heuristic', 'static-oracle', 'oracle', 'llm']);
    expect(agentNames('follower', 'game')).toEqual(['random', 'heuristic', 'llm']);
    expect(agentNames('follower', 'live')).toEqual(['random', 'heuristic', 'llm']);
    expect(agentNames('leader', 'live')).toEqual(['scripted', 'llm']);
    expect(new Set(AGENT_CATALOGUE.map((entry) => entry.name)).size).toBe(AGENT_CATALOGUE.length);
  });

  test('one check of a spec for a seat', () => {
    expect(seatProblem('heuristic', 'leader', 'game')).toBe('"heuristic" is a built-in follower, not a leader; the built-in leaders are scripted, llm');
    expect(seatProblem('scripted', 'follower', 'live')).toBe('"scripted" is a built-in leader, not a follower; the built-in followers are random, heuristic, llm');
    expect(seatProblem('oracle', 'follower', 'live')).toBe('the oracle agent needs a recorded game; it can only be evaluated over logs (cerealbar eval --agent oracle --logs PATH)');
    expect(seatProblem('static-oracle', 'follower', 'game')).toMatch(/^the static-oracle agent needs a recorded game/);
    expect(seatProblem('oracle', 'follower', 'logs')).toBeNull();
    expect(seatProblem(LLM_AGENT, 'leader', 'live')).toBeNull();
    expect(seatProblem('python3 agent.py', 'leader', 'live')).toBeNull();
    expect(seatProblem('  ', 'follower', 'logs')).toBe('an empty follower agent');
  });

  test('a bare word that names no agent is a misspelling, a command line is a program', () => {
    expect(unknownNameProblem('heuristc', 'follower', 'live')).toMatch(/^"heuristc" is not an agent: the built-in followers are random, heuristic, llm; a program is its command line/);
    expect(unknownNameProblem('./agent', 'follower', 'live')).toBeNull();
    expect(unknownNameProblem('python3 agent.py', 'follower', 'live')).toBeNull();
    expect(unknownNameProblem('heuristic', 'follower', 'live')).toBeNull();
  });

  test('the environments\' followers: pure, and able to play a new game', () => {
    expect(pureFollowerNames('game')).toEqual(['random', 'heuristic']);
    expect(createPureFollower('random', 'game')).toBeInstanceOf(RandomAgent);
    expect(createPureFollower('heuristic', 'game')).toBeInstanceOf(HeuristicAgent);
    expect(createPureFollower('oracle', 'game')).toBeNull();
    expect(createPureFollower('llm', 'game')).toBeNull();
    expect(createPureFollower('scripted', 'game')).toBeNull();
  });
});

describe('the registry', () => {
  test('starts built-ins by seat, with who played', async () => {
    const leader = await startAgent('scripted', 'leader', { setting: 'live' });
    expect(leader.role).toBe('leader');
    expect(leader.agent).toBeInstanceOf(ScriptedLeaderAgent);
    expect(leader.identity).toEqual({ name: 'scripted', spec: 'scripted' });
    expect((await startAgent('heuristic', 'follower', { setting: 'game' })).agent).toBeInstanceOf(HeuristicAgent);
    expect(agentIdentity({ name: 'h', version: '2.1', reset: () => {}, act: () => 'DONE' as const }, 'heuristic')).toEqual({ name: 'h', version: '2.1', spec: 'heuristic' });
  });

  test('refuses what cannot play the seat, before starting anything', async () => {
    await expect(startAgent('heuristic', 'leader', { setting: 'game' })).rejects.toThrow(new AgentSpecError('"heuristic" is a built-in follower, not a leader; the built-in leaders are scripted, llm'));
    await expect(startAgent('oracle', 'follower', { setting: 'live' })).rejects.toBeInstanceOf(AgentSpecError);
    await expect(startAgent(LLM_AGENT, 'follower', { setting: 'logs' })).rejects.toThrow('the llm agent cannot play here');
  });

  test('the LLM agent is started as its caller configures it', async () => {
    const made: string[] = [];
    const fake: FollowerAgent = { name: 'fake-llm', reset: () => {}, act: () => 'DONE' };
    const started = await startAgent(LLM_AGENT, 'follower', { setting: 'live', startLlm: async (role) => (made.push(role), fake) });
    expect(started.agent).toBe(fake);
    expect(made).toEqual(['follower']);
  });

  test('a program that says it needs a recording is stopped where nothing is recorded, and plays over logs', async () => {
    await expect(startAgent(program({ needsRecording: true }), 'follower', { setting: 'game' })).rejects.toThrow('the py agent needs a recorded game');
    const overLogs = await startAgent(program({ needsRecording: true }), 'follower', { setting: 'logs' });
    expect((overLogs.agent as FollowerAgent).needsRecording).toBe(true);
    await overLogs.agent.close?.();
    await expect(startAgent(program({ oracle: true }), 'follower', { setting: 'live' })).rejects.toThrow('the py agent asks for the whole state');
  });

  test('a pair whose follower cannot start closes its leader and names the seat', async () => {
    let closed = 0;
    const leader = { name: 'l', role: 'leader', reset: () => {}, act: () => 'END_TURN' as never, close: () => void closed++ } as LeaderAgent;
    const error = await startPair({ leader: LLM_AGENT, follower: 'scripted' }, { setting: 'game', startLlm: async () => leader }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SeatStartError);
    expect(error).toMatchObject({ role: 'follower', spec: 'scripted' });
    expect(closed).toBe(1);
  });
});
