/**
 * Engine benchmarks, on one core: transitions per second, full self-play games per second, log size
 * per game and replay speed. Run with `npm run bench` (optionally `-- --games N`).
 */
import { replay } from '../shared/log/replay';
import { fmt, measure, selfPlayGames, selfPlayRate, transitionRate } from './figures';

const gamesArg = process.argv.indexOf('--games');
const GAMES = gamesArg > 0 ? Number(process.argv[gamesArg + 1]) : 500;
// Maps are generated once: the figure for self-play is the games themselves.
const games = selfPlayGames(GAMES);

// 1. Transitions: the self-play games' actions applied with step(), nothing else.
const transitions = transitionRate(games, 3000);

// 2. Whole self-play games, scripted leader and follower, logs built in memory and dropped.
const gamesPerSecond = selfPlayRate(games, 3000).wall;
const withMapsPerSecond = selfPlayRate(games, 2000, true).wall;

// 3. Log sizes.
const bytes = games.map((g) => Buffer.byteLength(g.text));
const events = games.map((g) => g.actions.length);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

// 4. Replay: parse, validate, re-simulate and check every outcome.
const replayEventsPerSecond = measure(3000, () => {
  let n = 0;
  for (const { text } of games.slice(0, 100)) n += replay(text).events;
  return n;
}).wall;

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
