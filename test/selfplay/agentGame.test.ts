/** Whole games between any leader agent and any follower agent (playAgentGame), and the scripted leader agent. */
import { HeuristicAgent, RandomAgent } from '../../shared/agents/builtin';
import { ScriptedLeaderAgent } from '../../shared/agents/scriptedLeader';
import type { AgentAction, Answer, FollowerAgent, LeaderAgent, LeaderAgentAction, LeaderObservation } from '../../shared/agents/types';
import type { LogEvent, LogHeader, LogLine } from '../../shared/log/format';
import { serializeLine } from '../../shared/log/recorder';
import { replay } from '../../shared/log/replay';
import { generateMap } from '../../shared/maps/generate';
import { DEFAULT_MAX_REFUSALS_PER_TURN, playAgentGame, type AgentGameOptions, type AgentGameResult } from '../../shared/agents/agentGame';
import { TURN_TIME_LIMIT_MS } from '../../shared/selfplay/game';

const IDENTITIES = { leader: { name: 'l', spec: 'l' }, follower: { name: 'f', spec: 'f' } };

async function game(
  seed: number,
  leader: LeaderAgent,
  follower: FollowerAgent,
  options: Partial<AgentGameOptions> = {},
): Promise<{ lines: LogLine[]; text: string; result: AgentGameResult }> {
  const lines: LogLine[] = [];
  const result = await playAgentGame({ seed, map: generateMap(seed), leader, follower, agents: IDENTITIES, ...options }, (line) => lines.push(line));
  return { lines, text: lines.map((line) => `${serializeLine(line)}\n`).join(''), result };
}

const events = (lines: readonly LogLine[]): LogEvent[] => lines.filter((line): line is LogEvent => line.kind === 'event');

/** A leader that answers the same answer at every call. */
function answering(answer: (observation: LeaderObservation) => Answer<LeaderAgentAction>): LeaderAgent & { calls: LeaderObservation[] } {
  const calls: LeaderObservation[] = [];
  return {
    name: 'stub-leader',
    role: 'leader',
    calls,
    reset: () => {},
    act: (observation) => {
      calls.push(observation);
      return answer(observation);
    },
  };
}

describe('the scripted leader agent with built-in followers', () => {
  test.each([
    ['heuristic', () => new HeuristicAgent()],
    ['random', () => new RandomAgent()],
  ])('with the %s follower: whole games that replay, the header naming both agents', async (_, follower) => {
    for (const seed of [1, 2, 3]) {
      const agents = { leader: { name: 'scripted', spec: 'scripted' }, follower: { name: 'x', version: '1', spec: 'x --fast' } };
      const { lines, text, result } = await game(seed, new ScriptedLeaderAgent(), follower(), { agents });
      const header = lines[0] as LogHeader;
      expect(header.meta).toEqual({ source: 'selfplay', agents });
      expect(header.gameId).toBe(`selfplay-${seed}`);
      expect(result.state.gameOver).toBe(true);
      const replayed = replay(text);
      expect(replayed.final.score).toBe(result.state.score);
      expect(replayed.events).toBe(result.actions);
      // The scripted leader writes instructions and ends its turns; the host never has to pass for it.
      const leaderEvents = events(lines).filter((event) => event.actor === 'leader');
      expect(leaderEvents.some((event) => event.type === 'instruction')).toBe(true);
      expect(leaderEvents.some((event) => event.type === 'endTurn')).toBe(true);
      expect(result.refused.leader).toBe(0);
      expect(result.refusalPasses).toEqual({ leader: 0, follower: 0 });
    }
  });

  test('a seed always gives the same log', async () => {
    const a = await game(7, new ScriptedLeaderAgent(), new HeuristicAgent());
    const b = await game(7, new ScriptedLeaderAgent(), new HeuristicAgent());
    expect(b.text).toBe(a.text);
    const other = await game(8, new ScriptedLeaderAgent(), new HeuristicAgent());
    expect(other.text).not.toBe(a.text);
  });

  test('the heuristic follower scores with it: its templated instructions name one card each', async () => {
    let score = 0;
    for (const seed of [1, 2, 3, 4, 5, 6]) score += (await game(seed, new ScriptedLeaderAgent(), new HeuristicAgent())).result.state.score;
    expect(score).toBeGreaterThan(0);
  });
});

describe('the host plays the game as the server would', () => {
  test('ActContext.event is the index the answer\'s first action gets in the log', async () => {
    const contexts: (number | undefined)[] = [];
    const heuristic = new HeuristicAgent();
    const follower: FollowerAgent = {
      name: 'heuristic',
      reset: (start) => heuristic.reset(start),
      act: (observation, context) => {
        contexts.push(context?.event);
        return heuristic.act(observation);
      },
    };
    const { lines } = await game(2, new ScriptedLeaderAgent(), follower);
    const followerEvents = events(lines).filter((event) => event.actor === 'follower');
    // The heuristic answers one action a call: each call's event is one of its own events, in order.
    expect(contexts.length).toBeGreaterThan(0);
    expect(contexts.map((event) => events(lines)[event!]?.actor)).toEqual(contexts.map(() => 'follower'));
    expect(new Set(contexts.map((event) => event! + 1))).toEqual(new Set(followerEvents.map((event) => event.seq)));
  });

  test('a plan is played in order: an instruction then END, asked once a turn', async () => {
    const leader = answering((observation) => [{ instruction: `instruction ${observation.instructions.length}` }, 'END']);
    const { lines, result } = await game(3, leader, new RandomAgent());
    const leaderEvents = events(lines).filter((event) => event.actor === 'leader');
    expect(leaderEvents.slice(0, 2).map((event) => event.type)).toEqual(['instruction', 'endTurn']);
    const leaderTurns = leaderEvents.filter((event) => event.type === 'endTurn').length;
    expect(leader.calls.length).toBe(leaderTurns);
    expect(result.refused.leader).toBe(0);
  });

  test('a pass (an empty plan) lets the turn run out: the server\'s timeout, at the time limit', async () => {
    const leader = answering(() => []);
    const { lines } = await game(4, leader, new HeuristicAgent());
    const all = events(lines);
    // Nothing is queued, so every leader turn times out and the follower's is skipped (rule 3).
    expect(all.every((event) => event.type === 'timeout' && event.actor === 'server')).toBe(true);
    all.forEach((event, i) => expect(event.t).toBe((i + 1) * TURN_TIME_LIMIT_MS.leader));
    expect(leader.calls.length).toBe(all.length);
  });

  test('refused actions are counted and asked again; an agent that keeps being refused gets its turn passed', async () => {
    // End Turn with an empty queue is refused, every time.
    const leader = answering(() => 'END');
    const { lines, result } = await game(5, leader, new HeuristicAgent(), { maxRefusalsPerTurn: 3 });
    const turns = events(lines).length;
    expect(events(lines).every((event) => event.type === 'timeout')).toBe(true);
    expect(result.refusalPasses.leader).toBe(turns);
    expect(result.refused.leader).toBe(3 * turns);
    expect(leader.calls.length).toBe(3 * turns);
    expect(DEFAULT_MAX_REFUSALS_PER_TURN).toBe(10);
  });

  test('a move into an obstacle is refused, as the server refuses it, and never logged', async () => {
    const blocked: LeaderObservation[] = [];
    const leader = answering((observation) => {
      const ahead = observation.legal.includes('MF') ? null : 'MF';
      if (ahead) blocked.push(observation);
      return ahead ?? 'RL';
    });
    const { lines, result } = await game(6, leader, new HeuristicAgent(), { maxRefusalsPerTurn: 1 });
    expect(blocked.length).toBeGreaterThan(0);
    expect(result.refused.leader).toBe(blocked.length);
    for (const event of events(lines)) expect(event.type === 'move' ? event.payload : {}).not.toEqual({ move: 'MF' });
  });

  test('an answer that is not an action of the seat stops the game with a clear error', async () => {
    await expect(game(1, answering(() => 'DONE' as LeaderAgentAction), new HeuristicAgent())).rejects.toThrow(
      'the leader agent "stub-leader" answered the action "DONE"; legal actions are MF, MB, RL, RR, END and {"instruction": "..."}',
    );
    await expect(game(1, answering(() => ({ instruction: 'x'.repeat(301) })), new HeuristicAgent())).rejects.toThrow(
      'answered an instruction of 301 characters; at most 300',
    );
    const jumper: FollowerAgent = { name: 'jumper', reset: () => {}, act: () => ['MF', 'JUMP' as AgentAction] };
    await expect(game(1, new ScriptedLeaderAgent(), jumper)).rejects.toThrow('the follower agent "jumper" answered the action "JUMP"; legal actions are MF, MB, RL, RR, DONE');
  });

  test('agents that need a recorded game cannot play a new one', async () => {
    const oracle: FollowerAgent = { name: 'oracle', needsRecording: true, reset: () => {}, act: () => 'DONE' };
    await expect(game(1, new ScriptedLeaderAgent(), oracle)).rejects.toThrow('the oracle agent needs a recorded game');
  });
});
