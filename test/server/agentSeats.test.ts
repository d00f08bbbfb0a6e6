/**
 * Agents in the seats the server fills (botFollower, botLeader), over real WebSockets: they see
 * only their seat's view, play plans, never hold up the room, and an agent that throws, hangs or
 * answers what the game refuses fails, said in the server's log and recorded in the game's: a
 * leader agent loses its turn, a follower agent is asked again, and its instruction is marked done
 * after two failures in a row.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { matchMaker } from '@colyseus/core';
import type { ActContext, Answer, AgentAction, EpisodeStart, FollowerAgent, FollowerObservation } from '../../shared/agents/types';
import { viewFrom } from '../../shared/engine/view';
import type { LogLine } from '../../shared/log/format';
import { replay } from '../../shared/log/replay';
import { serializeLine } from '../../shared/log/recorder';
import { ROOM_NAME } from '../../shared/protocol/messages';
import { startGameServer, type RunningGameServer } from '../../server/index';
import { failedInstructionNote, MAX_FAILURES_ON_AN_INSTRUCTION, MAX_REFUSALS_IN_A_ROW, type SeatedAgent } from '../../server/rooms/botSeat';
import type { RoomSettings } from '../../server/rooms/GameRoom';
import { seatAgentsFrom, type SeatAgentStarter } from '../../server/rooms/seatAgents';
import { join, waitFor, type Player } from './harness';
import { makeConfig } from '../../shared/engine/config';
import { resolveLlmConfig } from '../../shared/agents/node/llm/config';
import { startLlmFollower } from '../../shared/agents/node/llm/seats';
import { startStubLlm, STUB_MODEL, type ChatBody } from '../helpers/stubLlm';

jest.setTimeout(60_000);

interface AgentServer {
  readonly server: RunningGameServer;
  readonly url: string;
  readonly logs: LogLine[][];
}

let running: AgentServer[] = [];
afterEach(async () => {
  await Promise.all(running.map((s) => s.server.close()));
  running = [];
  jest.restoreAllMocks();
});

/** A game server whose agent seats are filled by `seatAgents`, with logs kept in memory. */
async function agentServer(seatAgents: SeatAgentStarter, roomSettings: RoomSettings = {}): Promise<AgentServer> {
  const logs: LogLine[][] = [];
  const server = await startGameServer({
    port: 0,
    host: '127.0.0.1',
    roomSettings: { patchRateMs: 10, botStepMs: 5, seed: 2, leaderTurnSeconds: 60, followerTurnSeconds: 60, ...roomSettings },
    services: {
      seatAgents,
      startLog: (header) => {
        const lines: LogLine[] = [header];
        logs.push(lines);
        return { append: (line) => lines.push(line), end: (line) => lines.push(line) };
      },
    },
  });
  const started = { server, url: `http://127.0.0.1:${server.port}`, logs };
  running.push(started);
  return started;
}

/** An in-process follower agent answering with `act`; it counts its calls. */
function follower(act: (observation: FollowerObservation, context?: ActContext) => Answer<AgentAction> | Promise<Answer<AgentAction>>): FollowerAgent & { asked: FollowerObservation[]; contexts: (ActContext | undefined)[]; closed: boolean } {
  return {
    name: 'test-follower',
    asked: [],
    contexts: [],
    closed: false,
    reset(_start: EpisodeStart) {},
    act(observation, context) {
      this.asked.push(observation);
      this.contexts.push(context);
      return act(observation, context);
    },
    close() {
      this.closed = true;
    },
  };
}

const seatFollower = (agent: FollowerAgent): SeatAgentStarter => async (role) => {
  if (role !== 'follower') throw new Error('this server has no agent leader');
  return { role, agent, identity: { name: agent.name, spec: 'test' } } satisfies SeatedAgent;
};

/** Server log lines (console.warn, through Colyseus's logger) that name the agent. */
function serverLog(): () => string[] {
  const lines: string[] = [];
  jest.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' ')));
  return () => lines.filter((line) => line.includes('agent'));
}

const logText = (lines: readonly LogLine[]) => lines.map((line) => `${serializeLine(line)}\n`).join('');
const followerEvents = (lines: readonly LogLine[]) => lines.filter((l: any) => l.kind === 'event' && l.actor === 'follower') as any[];
const notices = (player: Player, kind: string) => player.messages.filter((m) => m.type === 'notice' && m.payload.kind === kind);
/** The game log's agent seat lines (P-147), without their times. */
const seatLines = (lines: readonly LogLine[]) => lines.filter((line) => line.kind === 'agentSeat').map(({ kind: _kind, t: _t, ...fact }) => fact);
const failed = (reason: string, role = 'follower') => ({ role, type: 'failed', reason });
const markedDone = (instruction: number) => ({ role: 'follower', type: 'markedDone', instruction });

/** A leader with the server's agent follower, once the game has started. */
async function leaderWithAgent(url: string): Promise<Player> {
  const leader = await join(url, { role: 'leader', botFollower: true });
  await waitFor(() => leader.phase === 'playing', 'the game to start');
  return leader;
}

/** The leader writes `texts` and ends its turn. */
function instruct(leader: Player, ...texts: string[]): void {
  for (const text of texts) leader.act({ type: 'instruction', text });
  leader.act({ type: 'endTurn' });
}

describe('P-119: an agent follower seated by the server', () => {
  test("P-118: plays a plan's actions in order, asked once for it, with the index of the event its first action will be; the log header names it", async () => {
    // An agent with latency: its plan comes 50 ms after it is asked.
    const agent = follower(() => new Promise((resolve) => setTimeout(() => resolve(['RR', 'RR', 'RL', 'DONE']), 50)));
    const { url, logs } = await agentServer(seatFollower(agent));
    const leader = await leaderWithAgent(url);
    instruct(leader, 'turn right twice, then left');
    await waitFor(() => leader.view!.turn.role === 'leader' && leader.view!.turnsLeft < 6, 'the follower to finish');
    expect(followerEvents(logs[0]).map((e) => e.payload?.move ?? e.type)).toEqual(['RR', 'RR', 'RL', 'done']);
    expect(agent.asked).toHaveLength(1);
    // Two leader events (the instruction, End Turn) came before: the follower's first is the third.
    expect(agent.contexts).toEqual([{ event: 2, frame: expect.any(Function) }]);
    expect((logs[0][0] as any).meta.players.find((p: any) => p.role === 'follower')).toEqual({ role: 'follower', playerId: expect.any(String), kind: 'bot' });
    expect((logs[0][0] as any).meta.agents).toEqual({ follower: { name: 'test-follower', spec: 'test' } });
    expect(replay(logText(logs[0]), { allowOpen: true }).final.turnsLeft).toBe(5);
  });

  test('is asked again when the instruction changes, and passes with an empty plan: its turn runs out', async () => {
    // A plan longer than the instruction needs: its rest is dropped when the instruction is done.
    const agent = follower((observation) => (observation.instruction?.text === 'first' ? ['DONE', 'RR', 'RR'] : []));
    const { url, logs } = await agentServer(seatFollower(agent), { followerTurnSeconds: 1 });
    const leader = await leaderWithAgent(url);
    instruct(leader, 'first', 'second');
    await waitFor(() => notices(leader, 'timeout').length === 1, "the follower's turn to time out", 5000);
    expect(followerEvents(logs[0]).map((e) => e.type)).toEqual(['done']);
    expect(agent.asked.map((o) => o.instruction?.text)).toEqual(['first', 'second']);
    expect(notices(leader, 'timeout')[0].payload).toEqual({ kind: 'timeout', role: 'follower' });
  });

  test('never holds up the room: while it thinks, the leader is answered at once', async () => {
    let release: (answer: AgentAction) => void = () => {};
    const agent = follower(() => new Promise<AgentAction>((resolve) => (release = resolve)));
    const { url, logs } = await agentServer(seatFollower(agent));
    const leader = await leaderWithAgent(url);
    instruct(leader, 'take your time');
    await waitFor(() => agent.asked.length === 1, 'the agent to be asked');
    leader.act({ type: 'move', move: 'MF' });
    await waitFor(() => leader.errors().length === 1, 'the refusal');
    expect(leader.errors()[0]).toMatchObject({ code: 'NOT_YOUR_TURN' });
    release('DONE');
    await waitFor(() => followerEvents(logs[0]).length === 1, 'its answer to be played');
  });

  test("P-140, P-147: that always throws is asked again; failing twice in a row on an instruction, its seat marks it done, says why in the server's log, records it in the game's and tells the leader; the game goes on", async () => {
    const log = serverLog();
    const agent = follower(() => {
      throw new Error('the model is down');
    });
    const { url, logs } = await agentServer(seatFollower(agent), { followerTurnSeconds: 30 });
    const leader = await leaderWithAgent(url);
    instruct(leader, 'first', 'second');
    // Both instructions done in the follower's first turn: the round ends without waiting for its clock.
    await waitFor(() => leader.view!.turn.role === 'leader' && leader.view!.turnsLeft === 5, 'the follower to mark both done', 5000);
    expect(notices(leader, 'timeout')).toEqual([]);
    expect(agent.asked.map((o) => o.instruction?.text)).toEqual(['first', 'first', 'second', 'second']);
    expect(MAX_FAILURES_ON_AN_INSTRUCTION).toBe(2);
    expect(followerEvents(logs[0]).map((e) => [e.type, e.outcome.instruction])).toEqual([
      ['done', 0],
      ['done', 1],
    ]);
    expect(log()).toEqual([
      expect.stringMatching(/the follower agent "test" failed: the model is down; it is asked again$/),
      expect.stringMatching(/the follower agent "test" failed: the model is down; after 2 failures in a row on the instruction "first" its seat marks it done$/),
      expect.stringMatching(/the follower agent "test" failed: the model is down; it is asked again$/),
      expect.stringMatching(/the follower agent "test" failed: the model is down; after 2 failures in a row on the instruction "second" its seat marks it done$/),
    ]);
    // The notice travels to the leader after the log line is written.
    await waitFor(() => notices(leader, 'followerGaveUp').length === 2, 'the leader to be told twice', 5000);
    expect(notices(leader, 'followerGaveUp').map((n) => n.payload.message)).toEqual([failedInstructionNote('first'), failedInstructionNote('second')]);
    expect(leader.phase).toBe('playing');
    // The game's log has each failure and each instruction marked done, among the events; replay passes over them.
    expect(seatLines(logs[0])).toEqual([failed('error'), failed('error'), markedDone(0), failed('error'), failed('error'), markedDone(1)]);
    const replayed = replay(logText(logs[0]), { allowOpen: true });
    expect(replayed.final.turnsLeft).toBe(5);
    expect(replayed.agentSeats.map(({ kind: _kind, t: _t, ...fact }) => fact)).toEqual(seatLines(logs[0]));
    // The seat's own lines go to the log alone: no player is sent them.
    expect(JSON.stringify(leader.messages)).not.toMatch(/agentSeat|markedDone/);
    // The next turn, it is asked again.
    instruct(leader, 'again');
    await waitFor(() => agent.asked.length === 6, 'the agent to be asked again', 5000);
  });

  test('P-140: failures are counted in a row: an accepted action between two throws starts the count again', async () => {
    const log = serverLog();
    // Throws, moves, throws, moves, ...: never two failures in a row.
    const agent = follower(() => {
      if (agent.asked.length % 2 === 1) throw new Error('now and then');
      return 'RR';
    });
    const { url, logs } = await agentServer(seatFollower(agent), { followerTurnSeconds: 30 });
    const leader = await leaderWithAgent(url);
    instruct(leader, 'turn');
    // Its 10 steps are spent turning: the turn ends by its steps, never by a DONE.
    await waitFor(() => leader.view!.turn.role === 'leader' && leader.view!.turnsLeft === 5, 'the follower to spend its steps', 5000);
    expect(followerEvents(logs[0]).map((e) => e.payload?.move ?? e.type)).toEqual(Array(10).fill('RR'));
    expect(log().length).toBeGreaterThan(0);
    expect(log().every((line) => line.endsWith('failed: now and then; it is asked again'))).toBe(true);
    expect(notices(leader, 'followerGaveUp')).toEqual([]);
    expect(seatLines(logs[0])).toEqual(log().map(() => failed('error')));
  });

  test('P-140, P-147: an agent that never answers: after two turns ended unanswered on one instruction, its seat marks it done; the game\'s log records each late answer', async () => {
    const log = serverLog();
    const agent = follower(() => new Promise<AgentAction>(() => {}));
    const { url, logs } = await agentServer(seatFollower(agent), { followerTurnSeconds: 1 });
    const leader = await leaderWithAgent(url);
    instruct(leader, 'one', 'two');
    await waitFor(() => notices(leader, 'timeout').length === 1, 'the first turn to time out', 5000);
    leader.act({ type: 'endTurn' });
    await waitFor(() => notices(leader, 'timeout').length === 2, 'the second turn to time out', 5000);
    expect(followerEvents(logs[0])).toEqual([]);
    leader.act({ type: 'endTurn' });
    await waitFor(() => followerEvents(logs[0]).length === 1, 'its seat to mark "one" done', 5000);
    expect(followerEvents(logs[0])[0]).toMatchObject({ type: 'done', outcome: { instruction: 0 } });
    expect(agent.asked).toHaveLength(1); // never asked twice at once
    expect(log()).toEqual([
      expect.stringMatching(/has not answered yet since its turn 1; its turn 2 waits for that answer$/),
      expect.stringMatching(/has not answered yet since its turn 1; after 2 failures in a row on the instruction "one" its seat marks it done$/),
    ]);
    await waitFor(() => notices(leader, 'followerGaveUp').length === 1, 'the leader to be told', 5000);
    expect(notices(leader, 'followerGaveUp').map((n) => n.payload.message)).toEqual([failedInstructionNote('one')]);
    expect(seatLines(logs[0])).toEqual([failed('late'), failed('late'), markedDone(0)]);
  });

  test('that hangs: its turn runs out; the next waits for its answer, then goes on from it', async () => {
    const log = serverLog();
    let release: (answer: AgentAction) => void = () => {};
    const agent = follower(() => (agent.asked.length === 1 ? new Promise<AgentAction>((resolve) => (release = resolve)) : 'DONE'));
    const { url, logs } = await agentServer(seatFollower(agent), { followerTurnSeconds: 1 });
    const leader = await leaderWithAgent(url);
    instruct(leader, 'one');
    await waitFor(() => notices(leader, 'timeout').length === 1, 'the first turn to time out', 5000);
    instruct(leader, 'two');
    await waitFor(() => log().some((line) => line.includes('has not answered yet since its turn 1; its turn 2 waits for that answer')), 'the log to say it waits');
    expect(agent.asked).toHaveLength(1); // never asked twice at once
    release('MF');
    await waitFor(() => followerEvents(logs[0]).some((e) => e.type === 'done'), 'the second turn to go on', 5000);
    expect(log()).toContainEqual(expect.stringMatching(/the follower agent "test" answered after its turn 1 had ended; the answer is dropped$/));
    // The late MF was not played: the second turn's answer (DONE, for "one") was.
    expect(followerEvents(logs[0]).map((e) => e.type)).toEqual(['done']);
    // Late once: the answer that came after its turn is not counted again.
    expect(seatLines(logs[0])).toEqual([failed('late')]);
  });

  test(`P-140: that keeps answering what is not a follower's action fails after ${MAX_REFUSALS_IN_A_ROW} refusals in a row; failing twice, its seat marks the instruction done`, async () => {
    const log = serverLog();
    const agent = follower(() => 'FLY' as AgentAction);
    const { url, logs } = await agentServer(seatFollower(agent), { followerTurnSeconds: 30 });
    const leader = await leaderWithAgent(url);
    instruct(leader, 'fly');
    await waitFor(() => followerEvents(logs[0]).length === 1, 'its seat to mark the instruction done', 5000);
    expect(agent.asked).toHaveLength(2 * MAX_REFUSALS_IN_A_ROW);
    expect(log()).toHaveLength(2 * MAX_REFUSALS_IN_A_ROW);
    expect(log()[0]).toMatch(/the follower agent "test" answered the action "FLY"; legal actions are MF, MB, RL, RR, DONE$/);
    expect(log()[MAX_REFUSALS_IN_A_ROW - 1]).toMatch(new RegExp(`after ${MAX_REFUSALS_IN_A_ROW} refusals in a row; it is asked again$`));
    expect(log()[2 * MAX_REFUSALS_IN_A_ROW - 1]).toMatch(new RegExp(`after ${MAX_REFUSALS_IN_A_ROW} refusals in a row; after 2 failures in a row on the instruction "fly" its seat marks it done$`));
    expect(followerEvents(logs[0]).map((e) => e.type)).toEqual(['done']);
    expect(seatLines(logs[0])).toEqual([failed('refused'), failed('refused'), markedDone(0)]);
    expect(notices(leader, 'timeout')).toEqual([]);
    expect(leader.phase).toBe('playing');
  });

  test('is closed when the game ends', async () => {
    const agent = follower(() => 'DONE');
    const { url } = await agentServer(seatFollower(agent));
    const leader = await leaderWithAgent(url);
    await leader.room.leave(true);
    await waitFor(() => agent.closed, 'the agent to be closed');
  });
});

/** A human follower who, for each instruction it is shown, turns right and marks it done. */
function followEveryInstruction(follower: Player): void {
  const handled = new Set<number>();
  follower.onView((view) => {
    const current = view.instructions.find((instruction) => instruction.status === 'current');
    if (view.phase !== 'playing' || view.turn.role !== 'follower' || !current || handled.has(current.id)) return;
    handled.add(current.id);
    follower.act({ type: 'move', move: 'RR' });
    follower.act({ type: 'done' });
  });
}

describe("P-117: a follower with the server's agent leader", () => {
  test('a human follower plays a whole game against the scripted leader; the log replays', async () => {
    const { url, logs } = await agentServer(seatAgentsFrom(), { leaderTurnSeconds: 1, followerTurnSeconds: 1 });
    const human = await join(url, { role: 'follower', botLeader: true });
    followEveryInstruction(human);
    await waitFor(() => human.phase === 'playing', 'the game to start');
    expect(human.view!.role).toBe('follower');
    await waitFor(() => human.phase === 'ended', 'the game to end', 45_000);
    const log = logs[0];
    const header = log[0] as any;
    expect(header.meta.players).toEqual([
      { role: 'follower', playerId: expect.any(String), kind: 'human' },
      { role: 'leader', playerId: expect.any(String), kind: 'bot' },
    ]);
    expect(header.meta.agents).toEqual({ leader: { name: 'scripted', spec: 'scripted' } });
    const written = log.filter((l: any) => l.kind === 'event' && l.type === 'instruction') as any[];
    expect(written.length).toBeGreaterThan(0);
    expect(human.errors()).toEqual([]);
    const replayed = replay(logText(log));
    expect(replayed.end).toMatchObject({ reason: 'turns-exhausted' });
    expect(replayed.final.gameOver).toBe(true);
    expect(human.view!.endReason).toBe('turns-exhausted');
  });

  test('P-119: a leader agent whose instructions are refused passes its turn after as many refusals, said in the log', async () => {
    const log = serverLog();
    const agent = { name: 'verbose', role: 'leader' as const, asked: 0, reset() {}, act() {
      agent.asked += 1;
      return { instruction: 'x'.repeat(1000) };
    } };
    const { url, logs } = await agentServer(async () => ({ role: 'leader', agent, identity: { name: 'verbose', spec: 'test' } }) as SeatedAgent, { leaderTurnSeconds: 2 });
    const human = await join(url, { role: 'follower', botLeader: true });
    await waitFor(() => notices(human, 'timeout').length === 1, "the leader's turn to time out", 5000);
    expect(agent.asked).toBe(MAX_REFUSALS_IN_A_ROW);
    expect(log()[0]).toMatch(/the leader agent "test" answered an instruction of 1000 characters; at most 300$/);
    expect(log()).toHaveLength(MAX_REFUSALS_IN_A_ROW);
    expect(logs[0].filter((l: any) => l.kind === 'event' && l.actor === 'leader')).toEqual([]);
    expect(seatLines(logs[0])).toEqual([failed('refused', 'leader')]);
    expect(human.phase).toBe('playing');
  });
});

describe('hidden information', () => {
  test("P-7, P-118: a program follower started by the server for the game is sent only the follower's view", async () => {
    const dir = mkdtempSync(joinPath(tmpdir(), 'seat-agent-'));
    const seen = joinPath(dir, 'seen.jsonl');
    const program = joinPath(dir, 'agent.js');
    // Speaks the agent protocol (whatever version the host says), writes down every message, turns right then says DONE.
    writeFileSync(
      program,
      [
        "const fs = require('fs'); const lines = require('readline').createInterface({ input: process.stdin });",
        'let steps = 0;',
        'lines.on("line", (line) => {',
        '  const message = JSON.parse(line);',
        `  fs.appendFileSync(${JSON.stringify(seen)}, line + "\\n");`,
        '  const say = (answer) => process.stdout.write(JSON.stringify(answer) + "\\n");',
        '  if (message.type === "hello") say({ type: "hello", protocol: message.protocol, version: message.version, name: "recorder", ...(message.role && { role: message.role }) });',
        '  else if (message.type === "reset") say({ type: "ready" });',
        '  else if (message.type === "observe") say({ type: "act", action: steps++ < 2 ? "RR" : "DONE" });',
        '  else if (message.type === "close") process.exit(0);',
        '});',
      ].join('\n'),
    );
    chmodSync(program, 0o755);
    try {
      const { url, logs } = await agentServer(seatAgentsFrom({ follower: `node ${program}` }));
      const leader = await leaderWithAgent(url);
      const all = leader.view!;
      instruct(leader, 'turn right twice');
      await waitFor(() => followerEvents(logs[0]).some((e) => e.type === 'done'), 'the program to finish', 10_000);
      const messages = readFileSync(seen, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
      expect(messages.find((m) => m.type === 'reset').episode).toEqual({ episodeId: (logs[0][0] as any).gameId });
      const observations = messages.filter((m) => m.type === 'observe').map((m) => m.observation);
      expect(observations).toHaveLength(3);
      const map = observations[0].map;
      for (const observation of observations) {
        expect(observation.oracle).toBeUndefined();
        const inView = new Set(viewFrom({ width: 25, height: 25 } as never, observation.pose, leader.view!.config.view).cells.map((c: any) => `${c.x},${c.y}`));
        // Only cards in its view, and the leader only when in view.
        for (const card of observation.visibleCards) expect(inView.has(`${card.x},${card.y}`)).toBe(true);
        if (observation.leader) expect(inView.has(`${observation.leader.x},${observation.leader.y}`)).toBe(true);
      }
      // Its map has the cells it has not seen hidden, and fewer cards than the board has.
      expect(map.terrain.join('')).toContain('?');
      expect(observations[0].visibleCards.length).toBeLessThan(all.cards.length);
      expect((logs[0][0] as any).meta.agents).toEqual({ follower: { name: 'recorder', spec: `node ${program}` } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the leader's live feedback and cancelling reach an agent follower", () => {
  const CB2_OPTIONS = { config: makeConfig({ liveFeedback: true, cancelInstructions: true }), botStepMs: 150 };
  const leaderNotice = (leader: Player, kind: string) => notices(leader, kind)[0]?.payload;

  test('a program over the agent protocol: each signal in its next observation and its text, and its cancelled instruction marked', async () => {
    const dir = mkdtempSync(joinPath(tmpdir(), 'seat-agent-feedback-'));
    const seen = joinPath(dir, 'seen.jsonl');
    const program = joinPath(dir, 'agent.js');
    // Turns right until the leader's feedback on "first" comes, then says DONE; says DONE at once after a cancelled instruction.
    writeFileSync(
      program,
      [
        "const fs = require('fs'); const lines = require('readline').createInterface({ input: process.stdin });",
        'lines.on("line", (line) => {',
        '  const message = JSON.parse(line);',
        `  fs.appendFileSync(${JSON.stringify(seen)}, line + "\\n");`,
        '  const say = (answer) => process.stdout.write(JSON.stringify(answer) + "\\n");',
        '  const o = message.observation;',
        '  if (message.type === "hello") say({ type: "hello", protocol: message.protocol, version: message.version, name: "listener" });',
        '  else if (message.type === "reset") say({ type: "ready" });',
        '  else if (message.type === "observe") say({ type: "act", action: (o.instruction.text === "first" && o.feedback.length > 0) || (o.previousInstruction && o.previousInstruction.cancelled) ? "DONE" : "RR" });',
        '  else if (message.type === "close") process.exit(0);',
        '});',
      ].join('\n'),
    );
    try {
      const { url, logs } = await agentServer(seatAgentsFrom({ follower: `node ${program}` }), CB2_OPTIONS);
      const leader = await leaderWithAgent(url);
      instruct(leader, 'first', 'second');
      await waitFor(() => followerEvents(logs[0]).length > 0, "the follower's first move", 10_000);
      leader.act({ type: 'feedback', signal: 'negative' });
      await waitFor(() => followerEvents(logs[0]).some((e) => e.type === 'done'), 'the program to hear the feedback and say DONE', 10_000);
      leader.act({ type: 'cancel' });
      await waitFor(() => leader.view!.turn.role === 'leader', "the cancel to end the follower's turn");
      instruct(leader, 'third');
      await waitFor(() => followerEvents(logs[0]).filter((e) => e.type === 'done').length === 2, 'the program to say DONE after the cancel', 10_000);

      const observes = readFileSync(seen, 'utf8').trim().split('\n').map((line) => JSON.parse(line)).filter((m) => m.type === 'observe');
      const heard = observes.filter((m) => m.observation.feedback.length > 0);
      const { signal, afterStep } = leaderNotice(leader, 'feedback');
      expect(signal).toBe('negative');
      // The first observation after the signal has it, with the steps the follower had taken when it came.
      expect(heard[0].observation.feedback).toEqual([{ signal: 'negative', afterStep }]);
      expect(heard[0].observation.instruction.text).toBe('first');
      expect(heard[0].text).toMatch(new RegExp(`^The leader's last feedback: negative, after your ${afterStep}(st|nd|rd|th) step this turn\\.$`, 'm'));
      expect(observes[0].observation.feedback).toEqual([]);
      expect(observes[0].text).toContain("The leader's feedback this turn: none yet.");
      // The next turn: the signal is forgotten, and the cancelled instruction is the previous one, marked.
      const third = observes.find((m) => m.observation.instruction.text === 'third');
      expect(third.observation.feedback).toEqual([]);
      expect(third.observation.previousInstruction).toEqual({ id: 1, text: 'second', cancelled: true });
      expect(third.text).toContain('Previous instruction: second (cancelled by the leader)');
      expect(replay(logText(logs[0]), { allowOpen: true }).final.turnsLeft).toBe(4);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a signal drops the rest of the agent's plan: it is asked again at once, with the signal", async () => {
    const agent = follower((observation) => (observation.feedback!.length > 0 ? ['DONE'] : Array<AgentAction>(8).fill('RR')));
    const { url, logs } = await agentServer(seatFollower(agent), CB2_OPTIONS);
    const leader = await leaderWithAgent(url);
    instruct(leader, 'turn around');
    await waitFor(() => followerEvents(logs[0]).length > 0, "the follower's first move");
    leader.act({ type: 'feedback', signal: 'positive' });
    await waitFor(() => followerEvents(logs[0]).some((e) => e.type === 'done'), 'the agent to say DONE');
    const moves = followerEvents(logs[0]).filter((e) => e.type === 'move').length;
    expect(moves).toBeLessThan(8);
    expect(agent.asked).toHaveLength(2);
    expect(agent.asked[1].feedback).toEqual([{ signal: 'positive', afterStep: leaderNotice(leader, 'feedback').afterStep }]);
  });

  test("the LLM follower's prompt has the leader's last signal", async () => {
    const dir = mkdtempSync(joinPath(tmpdir(), 'seat-llm-feedback-'));
    const stub = await startStubLlm({
      respond: (body) => (body.messages.some((m) => m.role === 'user' && m.content.includes("The leader's last feedback")) ? '{"actions": ["DONE"]}' : JSON.stringify({ actions: Array(8).fill('RR') })),
    });
    const agent = await startLlmFollower({ config: resolveLlmConfig({ baseUrl: stub.url, model: STUB_MODEL }), recordDir: dir, env: {} });
    try {
      const { url, logs } = await agentServer(seatFollower(agent), CB2_OPTIONS);
      const leader = await leaderWithAgent(url);
      instruct(leader, 'turn around');
      await waitFor(() => followerEvents(logs[0]).length > 0, "the follower's first move");
      leader.act({ type: 'feedback', signal: 'negative' });
      await waitFor(() => followerEvents(logs[0]).some((e) => e.type === 'done'), 'the LLM follower to say DONE');
      const prompts = stub.chatRequests().map((request) => (request.body as ChatBody).messages.find((m) => m.role === 'user')!.content);
      expect(prompts).toHaveLength(2);
      expect(prompts[0]).toContain("The leader's feedback this turn: none yet.");
      const { afterStep } = leaderNotice(leader, 'feedback');
      expect(prompts[1]).toMatch(new RegExp(`^The leader's last feedback: negative, after your ${afterStep}(st|nd|rd|th) step this turn\\.$`, 'm'));
    } finally {
      // The game's end closes the agent, whose call records are in `dir`.
      await Promise.all(running.splice(0).map((s) => s.server.close()));
      await stub.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('bad requests for an agent partner: a clear error, and nothing made', () => {
  const games = async () => (await matchMaker.query({ name: ROOM_NAME })).length;

  test('P-117: an agent leader is only for a follower, and a game has one agent', async () => {
    const { url, logs } = await agentServer(seatFollower(follower(() => 'DONE')));
    await expect(join(url, { role: 'leader', botLeader: true })).rejects.toMatchObject({ code: 400, message: 'bad join option botLeader: only a follower can ask for an agent leader' });
    await expect(join(url, { role: 'follower', botLeader: true, botFollower: true })).rejects.toMatchObject({ code: 400, message: expect.stringMatching(/^bad join option botFollower: only a leader|^bad join option botLeader: a game has one agent/) });
    await expect(join(url, { botLeader: 'yes' })).rejects.toMatchObject({ code: 400, message: expect.stringMatching(/^bad join option botLeader: /) });
    expect(await games()).toBe(0);
    expect(logs).toEqual([]);
  });

  test('P-118: a program that does not start: the join is refused (503) with a reason, the cause is in the server\'s log, and no game is left', async () => {
    const errors: string[] = [];
    jest.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void errors.push(args.map(String).join(' ')));
    const { url, logs } = await agentServer(seatAgentsFrom({ follower: 'no-such-agent-program --flag' }));
    await expect(join(url, { role: 'leader', botFollower: true })).rejects.toMatchObject({
      code: 503,
      message: "the server's agent follower could not start; try again later, or play with a person",
    });
    expect(errors.join('\n')).toMatch(/the follower agent could not start:[\s\S]*no-such-agent-program/);
    await waitFor(() => true, '');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await games()).toBe(0);
    expect(logs).toEqual([]);
  });
});
