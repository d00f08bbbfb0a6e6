/**
 * Agents benchmark (`npm run bench:agents`): what the LLM harness itself costs per call, against
 * a stub OpenAI-compatible server on loopback that answers at once (the bare HTTP round trip, the
 * `openai` client's call, and the harness's whole act: template, call, parse, call record), and
 * self-play games per second between agents: the scripted leader and the heuristic follower in
 * process, the same two as programs speaking the agent protocol, and the Python examples.
 * It prints its figures beside the ones last recorded in docs/benchmarks.md ("Agents").
 * `-- --calls N --games N --program-games N` change the run's size.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HeuristicAgent, RandomAgent } from '../shared/agents/builtin';
import { chat, chatClient, type ChatRequest } from '../shared/agents/node/llm/chat';
import { resolveLlmConfig } from '../shared/agents/node/llm/config';
import { FOLLOWER_SEAT, startLlmFollower } from '../shared/agents/node/llm/seats';
import { loadTemplate, render } from '../shared/agents/node/llm/templates';
import { agentIdentity, startFollower, startLeader } from '../shared/agents/node/registry';
import { ScriptedLeaderAgent } from '../shared/agents/scriptedLeader';
import type { FollowerAgent, FollowerObservation, LeaderAgent } from '../shared/agents/types';
import { DEFAULT_CONFIG } from '../shared/engine/config';
import type { GameMap } from '../shared/engine/map';
import type { LogLine } from '../shared/log/format';
import { serializeLine } from '../shared/log/recorder';
import { generateMap } from '../shared/maps/generate';
import { playAgentGame } from '../shared/agents/agentGame';
import { startStubLlm, STUB_MODEL } from '../test/helpers/stubLlm';

/** The figures last recorded in docs/benchmarks.md ("Agents": the median of six runs), which a run is compared with. */
const RECORDED: { readonly date: string; readonly figures: Readonly<Record<string, number>> } | null = {
  date: '2026-11-25',
  figures: {
    'LLM harness: ms per call (act: template, call, parse, record)': 1.235,
    'LLM harness: ms per call of the openai client alone': 0.946,
    'LLM harness: ms per bare HTTP round trip (fetch)': 0.616,
    'LLM harness: overhead per call beyond the round trip (ms)': 0.568,
    'LLM harness: of which the harness itself (ms)': 0.205,
    // Re-measured after the scripted leader agent said where cards are (longer games: 398 asks, not 164).
    'self-play games/s, scripted + heuristic in process': 49.8,
    'self-play games/s, scripted + heuristic as programs': 7.6,
    'protocol cost per ask, programs (ms)': 0.286,
    'self-play games/s, Python leader_agent.py + random_agent.py': 47.85,
    'self-play games/s, scripted + random in process (for scale)': 319,
  },
};

function argument(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
}

const CALLS = argument('calls', 2000);
const GAMES = argument('games', 100);
const PROGRAM_GAMES = argument('program-games', 30);
const WARM_UP_CALLS = 200;
const ROUND = 100;

const ROOT = join(__dirname, '..', ...(__dirname.includes(`${join('dist', 'bench')}`) ? ['..'] : []));
const compiled = __filename.endsWith('.js');

/** A follower that hands its observations to `seen` (real prompts for the harness to render). */
function recordingFollower(inner: FollowerAgent, seen: FollowerObservation[]): FollowerAgent {
  return { name: inner.name, reset: (start) => inner.reset(start), act: (observation, context) => (seen.push(observation), inner.act(observation, context)) };
}

/** Counts how often an agent is asked (each ask of a program is one protocol round trip). */
function counted<A extends FollowerAgent | LeaderAgent>(agent: A, asks: { n: number }): A {
  const act = agent.act.bind(agent) as (...args: unknown[]) => unknown;
  (agent as { act: unknown }).act = (...args: unknown[]) => (asks.n++, act(...args));
  return agent;
}

interface GamesResult {
  readonly games: number;
  readonly ms: number;
  readonly actions: number;
  readonly asks: number;
  readonly meanScore: number;
  readonly logs: string[];
}

/** `games` games on seeds 0, 1, ... (maps generated beforehand), logs built in memory. */
async function playGames(leader: LeaderAgent, follower: FollowerAgent, games: number, maps: readonly GameMap[]): Promise<GamesResult> {
  const asks = { n: 0 };
  counted(leader, asks);
  counted(follower, asks);
  const agents = { leader: agentIdentity(leader, leader.name), follower: agentIdentity(follower, follower.name) };
  const logs: string[] = [];
  let actions = 0;
  let score = 0;
  const started = performance.now();
  for (let seed = 0; seed < games; seed++) {
    const lines: LogLine[] = [];
    const result = await playAgentGame({ seed, map: maps[seed], config: DEFAULT_CONFIG, gameId: `bench-${seed}`, leader, follower, agents }, (line) => lines.push(line));
    logs.push(lines.map((line) => `${serializeLine(line)}\n`).join(''));
    actions += result.actions;
    score += result.state.score;
  }
  return { games, ms: performance.now() - started, actions, asks: asks.n, meanScore: score / games, logs };
}

/** The command that runs a TypeScript program of bench/ (compiled or through tsx). */
function program(path: string, args: string): string {
  return compiled ? `node ${join(__dirname, `${path}.js`)} ${args}` : `node --require ${require.resolve('tsx/cjs')} ${join(__dirname, `${path}.ts`)} ${args}`;
}

async function harnessCost(observations: readonly FollowerObservation[]) {
  const stub = await startStubLlm({ replies: ['{"actions": ["DONE"]}'] });
  const recordDir = mkdtempSync(join(tmpdir(), 'cerealbar-agents-bench-'));
  try {
    // A budget for every call of the run: a spent one would answer without calling.
    const config = resolveLlmConfig({ baseUrl: stub.url, model: STUB_MODEL, maxRetries: 0, maxCalls: WARM_UP_CALLS + CALLS });
    const template = loadTemplate('follower');
    const bodies: ChatRequest[] = observations.map((o) => ({ model: STUB_MODEL, messages: render(template, FOLLOWER_SEAT.variables(o)), temperature: config.temperature }));
    // The bare round trip: the same body over fetch (keep-alive, as the client's), the reply parsed as JSON.
    const fetchCall = async (i: number) => {
      const response = await fetch(`${stub.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(bodies[i % bodies.length]) });
      return response.json();
    };
    const client = chatClient(stub.url, null);
    const clientCall = (i: number) => chat(client, bodies[i % bodies.length], { timeoutMs: 10_000, maxRetries: 0, redact: (text: string) => text });
    const agent = await startLlmFollower({ config, recordDir, env: {} });
    await agent.reset({ episodeId: 'bench' });
    const actCall = (i: number) => agent.act(observations[i % observations.length], { event: i });
    // The three take turns in rounds of 100 calls, so that a drift of the machine touches all alike.
    const ways = [fetchCall, clientCall, actCall];
    const ms = [0, 0, 0];
    for (let i = 0; i < WARM_UP_CALLS; i++) for (const way of ways) await way(i);
    for (let round = 0; round < CALLS; round += ROUND) {
      for (const [w, way] of ways.entries()) {
        const started = performance.now();
        for (let i = round; i < Math.min(CALLS, round + ROUND); i++) await way(i);
        ms[w] += performance.now() - started;
      }
    }
    const [roundTrip, clientMs, act] = ms.map((total) => total / CALLS);
    const stats = agent.stats();
    agent.close();
    // One call per act, each answered with a plan: no re-ask, no fallback in the figure.
    if (stats.calls !== WARM_UP_CALLS + CALLS || stats.byStatus.ok !== stats.calls) throw new Error(`the harness made ${stats.calls} calls (${JSON.stringify(stats.byStatus)})`);
    const promptChars = bodies.reduce((sum, body) => sum + body.messages.reduce((n, m) => n + m.content.length, 0), 0) / bodies.length;
    return { roundTrip, clientCall: clientMs, act, promptChars, calls: CALLS };
  } finally {
    await stub.close();
    rmSync(recordDir, { recursive: true, force: true });
  }
}

const hasPython = () => spawnSync('python3', ['--version']).status === 0;

async function main() {
  const maps = Array.from({ length: Math.max(GAMES, PROGRAM_GAMES) }, (_, seed) => generateMap(seed));

  // Observations of a real game for the harness's prompts.
  const observations: FollowerObservation[] = [];
  await playAgentGame(
    { seed: 0, map: maps[0], leader: new ScriptedLeaderAgent(), follower: recordingFollower(new HeuristicAgent(), observations), agents: { leader: { name: 'scripted', spec: 'scripted' }, follower: { name: 'heuristic', spec: 'heuristic' } } },
    () => {},
  );
  // The stub always answers DONE: only observations where it is legal, so that every reply is played.
  const harness = await harnessCost(observations.filter((o) => o.legal.includes('DONE')));

  const inProcess = await playGames(new ScriptedLeaderAgent(), new HeuristicAgent(), GAMES, maps);
  const programLeader = await startLeader(program('agents/builtin-agent', 'scripted'), { setting: 'game' });
  const programFollower = await startFollower(program('agents/builtin-agent', 'heuristic'), { setting: 'game' });
  const programs = await playGames(programLeader, programFollower, PROGRAM_GAMES, maps);
  await Promise.all([programLeader.close?.(), programFollower.close?.()]);
  // The same agents, the same games: the logs must not differ.
  const same = programs.logs.every((log, i) => log === inProcess.logs[i]);
  if (!same) throw new Error('the program agents played other games than the same agents in process');

  let python: GamesResult | null = null;
  let pythonInProcess: GamesResult | null = null;
  if (hasPython()) {
    const leader = await startLeader(`python3 ${join(ROOT, 'examples', 'agents', 'leader_agent.py')}`, { setting: 'game' });
    const follower = await startFollower(`python3 ${join(ROOT, 'examples', 'agents', 'random_agent.py')}`, { setting: 'game' });
    python = await playGames(leader, follower, PROGRAM_GAMES, maps);
    await Promise.all([leader.close?.(), follower.close?.()]);
    pythonInProcess = await playGames(new ScriptedLeaderAgent(), new RandomAgent(), PROGRAM_GAMES, maps);
  }

  const perGame = (r: GamesResult) => r.ms / r.games;
  const figures: Record<string, number> = {
    'LLM harness: ms per call (act: template, call, parse, record)': harness.act,
    'LLM harness: ms per call of the openai client alone': harness.clientCall,
    'LLM harness: ms per bare HTTP round trip (fetch)': harness.roundTrip,
    'LLM harness: overhead per call beyond the round trip (ms)': harness.act - harness.roundTrip,
    'LLM harness: of which the harness itself (ms)': harness.act - harness.clientCall,
    'self-play games/s, scripted + heuristic in process': inProcess.games / (inProcess.ms / 1000),
    'self-play games/s, scripted + heuristic as programs': programs.games / (programs.ms / 1000),
    'protocol cost per ask, programs (ms)': (perGame(programs) - perGame(inProcess)) / (programs.asks / programs.games),
    ...(python && pythonInProcess
      ? {
          'self-play games/s, Python leader_agent.py + random_agent.py': python.games / (python.ms / 1000),
          'self-play games/s, scripted + random in process (for scale)': pythonInProcess.games / (pythonInProcess.ms / 1000),
        }
      : {}),
  };
  console.log(`cerealbar agents benchmark, Node ${process.version}${compiled ? '' : ' (through tsx)'}`);
  console.log(
    `LLM harness: ${harness.calls} calls each way after ${WARM_UP_CALLS} to warm up, prompts of ${Math.round(harness.promptChars)} characters on average (a real game's observations), the stub answering at once on loopback`,
  );
  console.log(
    `games: ${inProcess.games} in process, ${programs.games} with programs (the same logs as in process, byte for byte); ` +
      `${(inProcess.actions / inProcess.games).toFixed(0)} actions and ${(programs.asks / programs.games).toFixed(0)} asks a game, mean score ${inProcess.meanScore.toFixed(2)}` +
      (python ? `; Python pair: ${(python.asks / python.games).toFixed(0)} asks a game, mean score ${python.meanScore.toFixed(2)}` : '; no python3: the Python pair is left out'),
  );
  const round = (value: number) => (value >= 100 ? Math.round(value) : Number(value.toFixed(3)));
  console.table(
    Object.fromEntries(
      Object.entries(figures).map(([name, value]) => {
        const before = RECORDED?.figures[name];
        return [name, { measured: round(value), [`recorded ${RECORDED?.date ?? '(none yet)'}`]: before === undefined ? '' : round(before), ratio: before === undefined ? '' : `${(value / before).toFixed(2)}x` }];
      }),
    ),
  );
  console.log(JSON.stringify(Object.fromEntries(Object.entries(figures).map(([name, value]) => [name, round(value)]))));
}

void main().catch((error) => {
  console.error(error);
  process.exit(1);
});
