/**
 * Live games: a scripted websocket leader and an agent through `cerealbar agent` (the heuristic
 * agent; a Python FollowerAgent), and leader agents through `cerealbar agent --role leader`
 * against the server's agent follower (`serve --bot-follower`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { createGame, describeCard, hexDistance, isValidSet, makeConfig, type Card, type GameState } from '../../shared/engine';
import { generateMap } from '../../shared/maps/generate';
import { replay } from '../../shared/log/replay';
import { createPrivate, startServeProcess, startTestServer, waitFor, type ServeProcess, type TestServer } from '../server/harness';

jest.setTimeout(90_000);

const BIN = joinPath(__dirname, '..', '..', 'bin', 'cerealbar.cjs');

/** A seed whose follower starts within sight (4 hexes) of a valid set of cards with unique faces. */
function pickGame(): { seed: number; set: Card[]; state: GameState } {
  for (let seed = 1; ; seed++) {
    const state = createGame(makeConfig(), generateMap(seed), seed);
    const unique = state.cards.filter(
      (c) => hexDistance(c, state.follower) <= 4 && state.cards.filter((o) => o.color === c.color && o.shape === c.shape && o.count === c.count).length === 1,
    );
    for (const a of unique) for (const b of unique) for (const c of unique) {
      if (a.id < b.id && b.id < c.id && isValidSet([a, b, c])) return { seed, set: [a, b, c], state };
    }
  }
}

/** `cerealbar agent` joining the private game `code` with `agentCommand`, once it said it joined; `output()` is all it printed. */
async function joinWithAgent(code: string, agentCommand: string, env: NodeJS.ProcessEnv = process.env): Promise<{ agent: ChildProcess; output: () => string }> {
  const agent = spawn(process.execPath, [BIN, 'agent', '--server', ts!.url, '--agent', agentCommand, '--code', code], { env });
  let output = '';
  agent.stdout!.on('data', (chunk) => (output += chunk));
  agent.stderr!.on('data', (chunk) => (output += chunk));
  try {
    await waitFor(() => output.includes('joined'), 'the agent to join', 30_000);
  } catch (error) {
    agent.kill('SIGKILL');
    throw new Error(`${(error as Error).message}; it printed:\n${output}`);
  }
  return { agent, output: () => output };
}

let ts: TestServer | null = null;
afterEach(async () => {
  await ts?.server.close();
});

test('the heuristic agent, joined with `cerealbar agent`, completes a set with a scripted leader', async () => {
  const { seed, set, state } = pickGame();
  ts = await startTestServer({ seed, leaderTurnSeconds: 60, followerTurnSeconds: 60 });
  const { creator: leader, code } = await createPrivate(ts.url, { role: 'leader' });
  const { agent, output } = await joinWithAgent(code, 'heuristic');
  try {
    await waitFor(() => leader.phase === 'playing', 'the game to start');
    const nearestFirst = [...set].sort((a, b) => hexDistance(a, state.follower) - hexDistance(b, state.follower));
    for (const card of nearestFirst) leader.act({ type: 'instruction', text: `pick up the ${describeCard(card)}` });
    leader.act({ type: 'endTurn' });
    // Each time control comes back with instructions left, the leader just ends its turn again.
    for (;;) {
      await waitFor(() => leader.view!.turn.role === 'follower' || leader.view!.score > 0, 'the turn to pass');
      await waitFor(() => leader.view!.turn.role === 'leader' || leader.view!.score > 0, 'the follower to play', 30_000);
      if (leader.view!.score > 0) break;
      const queued = leader.view!.instructions.filter((i) => i.status !== 'done');
      if (queued.length === 0) throw new Error(`the follower finished without a set; agent output:\n${output()}`);
      leader.act({ type: 'endTurn' });
    }
    expect(leader.view!.score).toBe(1);
    const toggledByFollower = ts.logs[0].flatMap((l: any) => (l.kind === 'event' && l.actor === 'follower' ? (l.outcome.toggled ?? []) : []));
    expect(toggledByFollower.sort()).toEqual(set.map((c) => c.id).sort());
    await leader.room.leave(true);
    const code = await new Promise((resolve) => agent.once('exit', resolve));
    expect(output()).toMatch(/game over \(abandoned\), score 1/);
    expect(code).toBe(0);
  } finally {
    agent.kill('SIGKILL');
  }
});

test("a Python FollowerAgent, joined with `cerealbar agent`, plays live with FollowerEnv's observation", async () => {
  const { seed } = pickGame();
  ts = await startTestServer({ seed, leaderTurnSeconds: 60, followerTurnSeconds: 60 });
  const dir = mkdtempSync(joinPath(tmpdir(), 'python-agent-'));
  const seen = joinPath(dir, 'seen.jsonl');
  // Turns right twice, then says DONE; it writes down what it was given. Its reset is slow, so the
  // follower's turn comes before it is ready: it must still be reset before it is asked to act.
  const program = joinPath(dir, 'agent.py');
  writeFileSync(
    program,
    [
      'import json, sys, time, cerealbar',
      'class Turner(cerealbar.FollowerAgent):',
      '    name = "turner"',
      '    def reset(self, episode_id):',
      '        time.sleep(1)',
      '    def act(self, observation, info):',
      '        with open(sys.argv[1], "a") as out:',
      '            out.write(json.dumps({"instruction": observation["instruction"], "pose": observation["pose"].tolist(), "mask": info["action_mask"].tolist(), "steps": info["steps"], "described": "You face" in observation["description"]}) + "\\n")',
      '        return 3 if info["steps"] < 2 else "DONE"',
      'Turner().run()',
    ].join('\n'),
  );
  const { creator: leader, code } = await createPrivate(ts.url, { role: 'leader' });
  const { agent, output } = await joinWithAgent(code, `python3 ${program} ${seen}`, { ...process.env, PYTHONPATH: joinPath(__dirname, '..', '..', 'python', 'src') });
  try {
    await waitFor(() => leader.phase === 'playing', 'the game to start');
    const start = leader.view!.follower;
    leader.act({ type: 'instruction', text: 'turn around twice and stop' });
    leader.act({ type: 'endTurn' });
    await waitFor(() => leader.view!.instructions.some((i) => i.status === 'done'), 'the agent to finish', 30_000).catch((error) => {
      throw new Error(`${error.message}; its output:\n${output()}\nturn: ${JSON.stringify(leader.view!.turn)} instructions: ${JSON.stringify(leader.view!.instructions)} follower: ${JSON.stringify(leader.view!.follower)}`);
    });
    const lines = readFileSync(seen, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    const headings = ['NE', 'E', 'SE', 'SW', 'W', 'NW'];
    expect(lines.map((line) => line.steps)).toEqual([0, 1, 2]);
    expect(lines.every((line) => line.instruction === 'turn around twice and stop' && line.described)).toBe(true);
    // Its pose as the leader saw it, turning right (RR) each step; every move is open to it but a blocked one.
    lines.forEach((line, i) => expect(line.pose).toEqual([start.x, start.y, (headings.indexOf(start.heading) + i) % 6]));
    expect(lines.every((line) => line.mask[2] === 1 && line.mask[3] === 1 && line.mask[4] === 1)).toBe(true);
    const follower = ts.logs[0].filter((l: any) => l.kind === 'event' && l.actor === 'follower').map((l: any) => (l.type === 'move' ? l.payload.move : l.type));
    expect(follower).toEqual(['RR', 'RR', 'done']);
    await leader.room.leave(true);
    expect(await new Promise((resolve) => agent.once('exit', resolve))).toBe(0);
  } finally {
    agent.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a follower joined with `cerealbar agent` hears the leader's live feedback from the server's notices, in its next observation", async () => {
  ts = await startTestServer({ seed: pickGame().seed, config: makeConfig({ liveFeedback: true }), leaderTurnSeconds: 60, followerTurnSeconds: 60 });
  const dir = mkdtempSync(joinPath(tmpdir(), 'feedback-agent-'));
  const seen = joinPath(dir, 'seen.jsonl');
  // Turns right, slowly, until an observation has the leader's feedback, then says DONE; it writes down what it was sent.
  const program = joinPath(dir, 'agent.js');
  writeFileSync(
    program,
    [
      "const fs = require('fs'); const lines = require('readline').createInterface({ input: process.stdin });",
      'const say = (answer) => process.stdout.write(JSON.stringify(answer) + "\\n");',
      'lines.on("line", (line) => {',
      '  const message = JSON.parse(line);',
      '  if (message.type === "hello") say({ type: "hello", protocol: message.protocol, version: message.version, name: "listener" });',
      '  else if (message.type === "reset") say({ type: "ready" });',
      '  else if (message.type === "close") process.exit(0);',
      '  if (message.type !== "observe") return;',
      `  fs.appendFileSync(${JSON.stringify(seen)}, line + "\\n");`,
      '  const heard = message.observation.feedback.length > 0;',
      '  setTimeout(() => say({ type: "act", action: heard ? "DONE" : "RR" }), heard ? 0 : 150);',
      '});',
    ].join('\n'),
  );
  const { creator: leader, code } = await createPrivate(ts.url, { role: 'leader' });
  const { agent, output } = await joinWithAgent(code, `node ${program}`);
  try {
    await waitFor(() => leader.phase === 'playing', 'the game to start');
    const start = leader.view!.follower;
    leader.act({ type: 'instruction', text: 'turn until I say so' });
    leader.act({ type: 'endTurn' });
    await waitFor(() => leader.view!.follower.heading !== start.heading, "the follower's first turn", 10_000);
    leader.act({ type: 'feedback', signal: 'positive' });
    await waitFor(() => leader.view!.instructions.some((i) => i.status === 'done'), 'the agent to hear it and say DONE', 10_000).catch((error) => {
      throw new Error(`${error.message}; its output:\n${output()}`);
    });
    const observes = readFileSync(seen, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    const notice = leader.messages.find((m) => m.type === 'notice' && m.payload.kind === 'feedback')!.payload;
    expect(observes[0].observation.feedback).toEqual([]);
    expect(observes.at(-1).observation.feedback).toEqual([{ signal: 'positive', afterStep: notice.afterStep }]);
    expect(observes.at(-1).text).toMatch(/^The leader's last feedback: positive, after your \d+(st|nd|rd|th) step this turn\.$/m);
    await leader.room.leave(true);
    expect(await new Promise((resolve) => agent.once('exit', resolve))).toBe(0);
  } finally {
    agent.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Runs `cerealbar agent ARGS` to its end: its exit code and all it printed. */
function runAgent(args: readonly string[], timeoutMs = 90_000): Promise<{ code: number | null; output: string }> {
  const agent = spawn(process.execPath, [BIN, 'agent', ...args]);
  let output = '';
  agent.stdout!.on('data', (chunk) => (output += chunk));
  agent.stderr!.on('data', (chunk) => (output += chunk));
  const timer = setTimeout(() => agent.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve) =>
    agent.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    }),
  );
}

/** The one game log a data directory holds, replayed (it must have ended). */
function onlyGame(dataDir: string): ReturnType<typeof replay> {
  const logs = readdirSync(joinPath(dataDir, 'logs')).filter((name) => name.endsWith('.jsonl'));
  expect(logs).toHaveLength(1);
  return replay(readFileSync(joinPath(dataDir, 'logs', logs[0]), 'utf8'));
}

describe('a leader agent in a live game, against `serve --bot-follower heuristic`', () => {
  let dataDir = '';
  let serve: ServeProcess | null = null;
  beforeEach(async () => {
    dataDir = mkdtempSync(joinPath(tmpdir(), 'cerealbar-live-leader-'));
    serve = await startServeProcess(dataDir, ['--bot-follower', 'heuristic', '--leader-seconds', '2', '--follower-seconds', '2']);
  });
  afterEach(async () => {
    if (serve && serve.child.exitCode === null) {
      const exited = new Promise((resolve) => serve!.child.once('exit', resolve));
      serve.child.kill('SIGINT');
      await exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  test('`cerealbar agent --role leader --agent scripted --bot-partner` plays a whole game; the log replays and names both agents', async () => {
    const { code, output } = await runAgent(['--role', 'leader', '--agent', 'scripted', '--server', serve!.url, '--bot-partner']);
    expect(output).toMatch(/^joined \S+ as the leader, played by scripted; waiting for the follower$/m);
    expect(output).toMatch(/game over \(turns-exhausted\), score \d+/);
    expect(code).toBe(0);
    expect(serve!.output()).toContain('Agent partners, for players who ask for one: leader "scripted", follower "heuristic"');
    const game = onlyGame(dataDir);
    expect(game.end).toMatchObject({ reason: 'turns-exhausted' });
    expect((game.header.meta as any).players).toEqual([
      { role: 'leader', playerId: expect.any(String), kind: 'human' },
      { role: 'follower', playerId: expect.any(String), kind: 'bot' },
    ]);
    expect((game.header.meta as any).agents).toEqual({ follower: { name: 'heuristic', spec: 'heuristic' } });
    expect(game.final.score).toBe(Number(/score (\d+)/.exec(output)![1]));
  });

  test('the Python leader example (a program speaking protocol version 3) plays a whole game with plans; the log replays', async () => {
    const example = joinPath(__dirname, '..', '..', 'examples', 'agents', 'leader_agent.py');
    const { code, output } = await runAgent(['--role', 'leader', '--agent', `python3 ${example}`, '--server', serve!.url, '--bot-partner']);
    expect(output).toMatch(/^joined \S+ as the leader, played by python-leader; waiting for the follower$/m);
    expect(output).toMatch(/game over \(turns-exhausted\), score \d+/);
    expect(code).toBe(0);
    const game = onlyGame(dataDir);
    expect(game.end).toMatchObject({ reason: 'turns-exhausted' });
    expect(game.final.score).toBe(Number(/score (\d+)/.exec(output)![1]));
    const text = readFileSync(joinPath(dataDir, 'logs', readdirSync(joinPath(dataDir, 'logs'))[0]), 'utf8');
    const events = text.trim().split('\n').map((line) => JSON.parse(line)).filter((line) => line.kind === 'event');
    // Its plans: instructions, then END, in one answer a turn; the heuristic follower acts on them.
    const leader = events.filter((e) => e.actor === 'leader').map((e) => e.type);
    expect(leader[0]).toBe('instruction');
    expect(leader).toContain('endTurn');
    expect(events.some((e) => e.actor === 'follower')).toBe(true);
  });
});

describe('`cerealbar agent`: bad input stops it with one line (exit 2) before it joins', () => {
  let ts2: TestServer;
  beforeAll(async () => {
    ts2 = await startTestServer();
  });
  afterAll(async () => {
    await ts2.server.close();
  });

  test.each([
    [['--role', 'leader', '--agent', 'heuristic'], /^cerealbar: cannot start the leader agent "heuristic": "heuristic" is a built-in follower, not a leader; the built-in leaders are scripted, llm\n$/],
    [['--role', 'follower', '--agent', 'scripted'], /^cerealbar: cannot start the follower agent "scripted": "scripted" is a built-in leader, not a follower; the built-in followers are random, heuristic, llm\n$/],
    [['--role', 'leader', '--agent', 'no-such-program-xyz'], /^cerealbar: cannot start the leader agent "no-such-program-xyz": .*not found\n$/],
    [['--role', 'boss', '--agent', 'scripted'], /^cerealbar: --role: "boss" is not a seat; use leader or follower\n$/],
  ])('%j', async (args, message) => {
    const { code, output } = await runAgent([...args, '--server', ts2.url]);
    expect(output).toMatch(message);
    expect(code).toBe(2);
    expect(ts2.logs).toEqual([]);
  });
});
