/**
 * Engine benchmarks, on one core: transitions per second, full self-play games per second, log size
 * per game and replay speed. Run with `npm run bench` (optionally `-- --games N`).
 */
import { generateMap } from '../shared/maps/generate';
import { makeConfig, step } from '../shared/engine';
import { eventAction, type LogLine } from '../shared/log/format';
import { serializeLine, stateFromHeader } from '../shared/log/recorder';
import { replay } from '../shared/log/replay';
import { playSelfPlayGame } from '../shared/selfplay/game';

const gamesArg = process.argv.indexOf('--games');
const GAMES = gamesArg > 0 ? Number(process.argv[gamesArg + 1]) : 500;
const config = makeConfig();

/** Work units per second of wall time, and per second of this process's CPU time. */
interface Rate {
  readonly wall: number;
  readonly cpu: number;
}

/**
 * Runs `body` repeatedly for at least `minMs`; returns the work units per second. The CPU-time
 * figure is the one to compare on a shared machine: others' load lengthens the wall time only.
 */
function measure(minMs: number, body: () => number): Rate {
  let units = 0;
  const start = performance.now();
  const cpuStart = process.cpuUsage();
  let elapsed = 0;
  while (elapsed < minMs) {
    units += body();
    elapsed = performance.now() - start;
  }
  const cpu = process.cpuUsage(cpuStart);
  return { wall: (units * 1000) / elapsed, cpu: (units * 1e6) / (cpu.user + cpu.system) };
}

function rate(minMs: number, body: () => number): number {
  return measure(minMs, body).wall;
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

// Maps are generated once: the figure for self-play is the games themselves.
const maps = Array.from({ length: GAMES }, (_, seed) => generateMap(seed));
// Each game is kept as its start state and actions (for step) and its log text (for replay).
const games = maps.map((map, seed) => {
  const lines: LogLine[] = [];
  playSelfPlayGame({ seed, map, config, startedAt: new Date(0) }, (line) => lines.push(line));
  const header = lines[0] as Extract<LogLine, { kind: 'header' }>;
  const events = lines.filter((l): l is Extract<LogLine, { kind: 'event' }> => l.kind === 'event');
  return {
    start: stateFromHeader(header),
    actions: events.map(eventAction),
    text: lines.map((l) => `${serializeLine(l)}\n`).join(''),
    headerBytes: Buffer.byteLength(serializeLine(header)) + 1,
    score: (lines[lines.length - 1] as Extract<LogLine, { kind: 'end' }>).score,
  };
});

// 1. Transitions: the self-play games' actions applied with step(), nothing else.
const transitions = measure(3000, () => {
  let n = 0;
  for (const { start, actions } of games) {
    let state = start;
    for (const action of actions) {
      const result = step(state, action);
      if (!result.ok) throw new Error(`refused: ${result.error.code}`);
      state = result.state;
    }
    n += actions.length;
  }
  return n;
});

// 2. Whole self-play games, scripted leader and follower, logs built in memory and dropped.
let next = 0;
const gamesPerSecond = rate(3000, () => {
  const seed = next++ % GAMES;
  playSelfPlayGame({ seed, map: maps[seed], config }, () => {});
  return 1;
});
const withMapsPerSecond = rate(2000, () => {
  const seed = next++ % GAMES;
  playSelfPlayGame({ seed, map: generateMap(seed), config }, () => {});
  return 1;
});

// 3. Log sizes.
const bytes = games.map((g) => Buffer.byteLength(g.text));
const events = games.map((g) => g.actions.length);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

// 4. Replay: parse, validate, re-simulate and check every outcome.
const replayEventsPerSecond = rate(3000, () => {
  let n = 0;
  for (const { text } of games.slice(0, 100)) n += replay(text).events;
  return n;
});

console.log(`cerealbar engine benchmark: ${GAMES} self-play games (seeds 0-${GAMES - 1}), Node ${process.version}, one core`);
console.table({
  'engine transitions / s': fmt(transitions.wall),
  'engine transitions / CPU s': fmt(transitions.cpu),
  'self-play games / s (maps pre-generated)': fmt(gamesPerSecond),
  'self-play games / s (with map generation)': fmt(withMapsPerSecond),
  'mean score per game': mean(games.map((g) => g.score)).toFixed(2),
  'mean events per game': fmt(mean(events)),
  'mean log size per game (bytes)': fmt(mean(bytes)),
  '  of which the header (bytes)': fmt(mean(games.map((g) => g.headerBytes))),
  'replay events / s (checked)': fmt(replayEventsPerSecond),
  'replay games / s (checked)': fmt(replayEventsPerSecond / mean(events)),
});
