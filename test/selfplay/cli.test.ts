/** `cerealbar selfplay --leader A --follower B`: any pair of agents, built in or programs, one log per game that replays. */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LogHeader, LogLine } from '../../shared/log/format';
import { serializeLine } from '../../shared/log/recorder';
import { replay } from '../../shared/log/replay';
import { generateMap } from '../../shared/maps/generate';
import { playSelfPlayGame } from '../../shared/selfplay/game';
import { cerealbar } from '../cli/run';

jest.setTimeout(60_000);

const EXAMPLES = join(__dirname, '..', '..', 'examples', 'agents');
const PYTHON_LEADER = `python3 ${join(EXAMPLES, 'leader_agent.py')}`;
const PYTHON_FOLLOWER = `python3 ${join(EXAMPLES, 'random_agent.py')}`;

let out: string;
beforeEach(() => (out = mkdtempSync(join(tmpdir(), 'selfplay-cli-'))));
afterEach(() => rmSync(out, { recursive: true, force: true }));

/** Every log written, by file name, after checking that each replays. */
function logs(): Map<string, { text: string; header: LogHeader; score: number }> {
  const files = readdirSync(out).filter((name) => name.endsWith('.jsonl')).sort();
  return new Map(
    files.map((file) => {
      const text = readFileSync(join(out, file), 'utf8');
      const replayed = replay(text);
      return [file, { text, header: replayed.header, score: replayed.final.score }];
    }),
  );
}

test('by default the scripted pair, its logs byte for byte those of playSelfPlayGame', async () => {
  const run = await cerealbar('selfplay', '--games', '2', '--seed', '11', '--out', out);
  expect(run.status).toBe(0);
  expect(run.stdout).toMatch(/^2 games written to .* mean score \d+\.\d\d\ncheck them with/);
  for (const seed of [11, 12]) {
    const lines: LogLine[] = [];
    playSelfPlayGame({ seed, map: generateMap(seed), gameId: `selfplay-${seed}` }, (line) => lines.push(line));
    expect(readFileSync(join(out, `selfplay-${seed}.jsonl`), 'utf8')).toBe(lines.map((line) => `${serializeLine(line)}\n`).join(''));
  }
  const explicit = mkdtempSync(join(tmpdir(), 'selfplay-cli-'));
  await cerealbar('selfplay', '--games', '2', '--seed', '11', '--out', explicit, '--leader', 'scripted', '--follower', 'scripted');
  for (const file of readdirSync(out).filter((name) => name.endsWith('.jsonl'))) expect(readFileSync(join(explicit, file), 'utf8')).toBe(readFileSync(join(out, file), 'utf8'));
  rmSync(explicit, { recursive: true, force: true });
});

test.each(['heuristic', 'random'])('the scripted leader with the built-in %s follower: logs that replay, naming both agents', async (follower) => {
  const run = await cerealbar('selfplay', '--games', '3', '--seed', '5', '--out', out, '--follower', follower);
  expect(run.status).toBe(0);
  expect(run.stdout).toContain(`leader scripted, follower ${follower}; actions refused: leader 0, follower `);
  const written = logs();
  expect([...written.keys()]).toEqual(['selfplay-5.jsonl', 'selfplay-6.jsonl', 'selfplay-7.jsonl']);
  for (const { header } of written.values()) {
    expect(header.meta).toEqual({ source: 'selfplay', agents: { leader: { name: 'scripted', spec: 'scripted' }, follower: { name: follower, spec: follower } } });
  }
});

test('a pair of program agents: the Python leader example and the Python follower example', async () => {
  const run = await cerealbar('selfplay', '--games', '2', '--seed', '3', '--out', out, '--leader', PYTHON_LEADER, '--follower', PYTHON_FOLLOWER);
  expect(run.status).toBe(0);
  expect(run.stdout).toContain('leader python-leader, follower python-random');
  const written = logs();
  expect(written.size).toBe(2);
  for (const { header, text } of written.values()) {
    expect(header.meta.agents).toEqual({
      leader: { name: 'python-leader', version: '1', spec: PYTHON_LEADER },
      follower: { name: 'python-random', spec: PYTHON_FOLLOWER },
    });
    expect(text).toContain('"type":"instruction"');
  }
});

test('the Python leader example plays the heuristic follower, and they score', async () => {
  const run = await cerealbar('selfplay', '--games', '6', '--seed', '1', '--out', out, '--leader', PYTHON_LEADER, '--follower', 'heuristic');
  expect(run.status).toBe(0);
  const written = logs();
  expect(written.size).toBe(6);
  // The leader's plans: instructions, then End Turn.
  const first = written.get('selfplay-1.jsonl')!.text.split('\n').slice(1, 3).map((line) => JSON.parse(line));
  expect(first.map((event) => [event.actor, event.type])).toEqual([
    ['leader', 'instruction'],
    ['leader', first[1].type],
  ]);
  expect([...written.values()].reduce((sum, { score }) => sum + score, 0)).toBeGreaterThan(0);
});

test.each([
  [['--follower', 'scripted', '--leader', PYTHON_LEADER], /--follower scripted plays only with --leader scripted/],
  [['--leader', 'heuristic', '--follower', 'random'], /cannot start the leader "heuristic": "heuristic" is a built-in follower, not a leader; the built-in leaders are scripted, llm/],
  [['--follower', 'no-such-agent-program'], /cannot start the follower "no-such-agent-program"/],
  [['--follower', 'oracle'], /the oracle agent needs a recorded game; it can only be evaluated over logs \(cerealbar eval --agent oracle --logs PATH\)/],
  [['--leader', `python3 ${join(EXAMPLES, 'random_agent.py')}`, '--follower', 'heuristic'], /cannot start the leader .*speaks "cerealbar-agent" version 2; the host speaks "cerealbar-agent" version 3 in the leader's seat/],
])('%j stops before any game with a one-line reason (exit 2)', async (args, reason) => {
  const run = await cerealbar('selfplay', '--games', '2', '--out', join(out, 'logs'), ...args);
  expect(run.status).toBe(2);
  expect(run.stderr).toMatch(reason);
  expect(existsSync(join(out, 'logs')) ? readdirSync(join(out, 'logs')) : []).toEqual([]);
});

test('an agent that fails during a game stops the command with exit 1, naming the game', async () => {
  const dies = `python3 -c 'import json, sys
m = json.loads(sys.stdin.readline()); print(json.dumps({"type": "hello", "protocol": "cerealbar-agent", "version": 3, "name": "dies"}), flush=True)
sys.stdin.readline(); print(json.dumps({"type": "ready"}), flush=True); sys.exit(4)'`;
  const run = await cerealbar('selfplay', '--out', out, '--seed', '9', '--leader', 'scripted', '--follower', dies);
  expect(run.status).toBe(1);
  expect(run.stderr).toMatch(/game 9: agent "dies" exited with code 4 before sending its answer to observe/);
});
