/** Live games: a scripted websocket leader and an agent through `cerealbar agent` (the heuristic agent; a Python FollowerAgent). */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { createGame, describeCard, hexDistance, isValidSet, makeConfig, type Card, type GameState } from '../../shared/engine';
import { generateMap } from '../../shared/maps/generate';
import { createPrivate, startTestServer, waitFor, type TestServer } from '../server/harness';

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
