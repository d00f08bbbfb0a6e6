/**
 * Shared by the server load benchmark's three kinds of process (bench/server.bench.ts drives,
 * bench/server-process.ts serves, bench/server-clients.ts plays): the scripted games, the IPC
 * messages and a few small helpers.
 */
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { byActor, withoutActor, type PlayerAction } from '../shared/engine/actions';
import { makeConfig } from '../shared/engine/config';
import { ROLES, type GameState, type Role } from '../shared/engine/state';
import { step } from '../shared/engine/transition';
import { eventAction, type LogEvent, type LogHeader, type LogLine } from '../shared/log/format';
import { stateFromHeader } from '../shared/log/recorder';
import { generateMap } from '../shared/maps/generate';
import { playSelfPlayGame } from '../shared/selfplay/game';
import { ViewFeed, type SessionFacts } from '../server/rooms/viewFeed';

// ---------------------------------------------------------------------------------------------
// The scripted game

/** One client message of the script: who sends it, what, and the seq the room gives it. */
export interface ScriptStep {
  readonly seq: number;
  readonly actor: Role;
  readonly action: PlayerAction;
}

export interface Script {
  readonly seed: number;
  readonly steps: readonly ScriptStep[];
  /**
   * views[role][seq]: how many `view` messages the role has received once the room applied the
   * action `seq` (views[role][0] = 1, the full view at the start). A client knows it has seen an
   * action when it holds that many: the views carry no sequence number (it would tell the
   * follower of the leader's hidden actions).
   */
  readonly views: Readonly<Record<Role, readonly number[]>>;
  /**
   * feedback[role][seq]: how many `feedback` notices the role has received once the room applied
   * the action `seq` (all 0 without live feedback): feedback changes no view, so its notice is how
   * a client knows the room applied it.
   */
  readonly feedback: Readonly<Record<Role, readonly number[]>>;
  /** True when the self-play game had a server timeout: the script stops before it. */
  readonly truncated: boolean;
  /** Events in the whole self-play game, timeouts included. */
  readonly events: number;
}

/**
 * The client messages that replay the self-play game of `seed` on a room seeded with `seed`.
 * The benchmark never waits for a turn timer: a script stops before the first timeout event.
 */
export function buildScript(seed: number, liveFeedback = false): Script {
  const lines: LogLine[] = [];
  const config = makeConfig({ liveFeedback });
  playSelfPlayGame({ seed, map: generateMap(seed), config }, (line) => lines.push(line));
  const events = lines.filter((line): line is LogEvent => line.kind === 'event');
  const header = lines[0] as LogHeader;
  const steps: ScriptStep[] = [];
  let truncated = false;
  for (const event of events) {
    const action = eventAction(event);
    if (action.type === 'timeout') {
      truncated = true;
      break;
    }
    steps.push({ seq: steps.length + 1, actor: action.actor, action: withoutActor(action) });
    // With live feedback the leader signals once a turn, after the follower's first move.
    if (liveFeedback && action.type === 'move' && event.outcome.turn.role === 'follower' && event.outcome.turn.stepsLeft === config.followerSteps - 1) {
      steps.push({ seq: steps.length + 1, actor: 'leader', action: { type: 'feedback', signal: steps.length % 2 === 0 ? 'positive' : 'negative' } });
    }
  }
  return { seed, steps, views: viewCounts(stateFromHeader(header), steps), feedback: feedbackCounts(steps), truncated, events: events.length };
}

/** feedback[role][seq]: the feedback notices each role holds once the room applied action `seq` (both get each one). */
function feedbackCounts(steps: readonly ScriptStep[]): Record<Role, number[]> {
  const counts = [0];
  for (const { action } of steps) counts.push(counts[counts.length - 1] + (action.type === 'feedback' ? 1 : 0));
  return { leader: counts, follower: counts };
}

/**
 * The `view` messages each role receives as the room plays `steps`: the room's own ViewFeed, with
 * the session facts changing as the room changes them (the deadline at each new turn, the phase at
 * the end).
 */
function viewCounts(start: GameState, steps: readonly ScriptStep[]): Record<Role, number[]> {
  const feeds = { leader: new ViewFeed('leader'), follower: new ViewFeed('follower') };
  const counts: Record<Role, number[]> = { leader: [0], follower: [0] };
  let state = start;
  let turn = 1;
  const send = (facts: SessionFacts) => {
    for (const role of ROLES) {
      const sent = counts[role][counts[role].length - 1] + (feeds[role].message(state, facts, 0) ? 1 : 0);
      counts[role][counts[role].length - 1] = sent;
    }
  };
  const playing = (): SessionFacts => ({ phase: 'playing', turnDeadline: turn, partnerConnected: true, endReason: '' });
  for (const role of ROLES) feeds[role].witness(state);
  send(playing());
  for (const { actor, action } of steps) {
    const result = step(state, byActor(actor, action));
    if (!result.ok) throw new Error(`the script's action ${JSON.stringify(action)} was refused: ${result.error.code}`);
    state = result.state;
    for (const role of ROLES) {
      feeds[role].witness(state);
      counts[role].push(counts[role][counts[role].length - 1]);
    }
    if (result.outcome.turnEnded) turn++;
    send(state.gameOver ? { phase: 'ended', turnDeadline: 0, partnerConnected: true, endReason: 'turns-exhausted' } : playing());
  }
  return counts;
}

/** The first seed from `from` whose self-play game has no timeout, so it can be played to its end (scripts stop before one). */
export function firstTimeoutFreeSeed(from: number, liveFeedback = false, tries = 1000): Script {
  for (let seed = from; seed < from + tries; seed++) {
    const script = buildScript(seed, liveFeedback);
    if (!script.truncated) return script;
  }
  throw new Error(`no self-play game without a timeout among seeds ${from}-${from + tries - 1}`);
}

// ---------------------------------------------------------------------------------------------
// IPC

/** A snapshot of a process's resource use. */
export interface Usage {
  /** process.cpuUsage(): microseconds. */
  readonly userUs: number;
  readonly systemUs: number;
  readonly rssBytes: number;
  readonly heapUsedBytes: number;
  /** Peak RSS so far (process.resourceUsage().maxRSS). */
  readonly maxRssBytes: number;
  /** Event-loop delay since the previous snapshot, ms beyond the sampling interval. */
  readonly loopDelay: { readonly p50: number; readonly p99: number; readonly max: number };
  /** Garbage collections since the previous snapshot: how many, their total and longest duration (ms). */
  readonly gc: { readonly count: number; readonly ms: number; readonly maxMs: number };
}

/** Calls to the game store since the last report, by kind (startGame, append, end): count, total and longest ms. */
export type StoreTimings = Record<string, { count: number; ms: number; maxMs: number }>;

/** Marks the server process's stdout lines that are messages to the benchmark. */
export const BENCH_PREFIX = '@bench ';

/** Server process to benchmark. */
export type ServerToBench =
  | { type: 'ready'; port: number; dataDir: string }
  | { type: 'usage'; id: number; usage: Usage; store: StoreTimings }
  /** Sent while stopping, after every game was ended: the logs the store wrote. */
  | { type: 'stopped'; logFiles: number; logBytes: number };
export type BenchToServer = { type: 'usage'; id: number } | { type: 'stop' };

export interface WorkerConfig {
  readonly worker: number;
  /** The server processes: a game's leader joins through one, its follower through the next. */
  readonly urls: readonly string[];
  readonly seed: number;
  /** The rooms' rules have live feedback, and the script's leader sends it (`--live-feedback`). */
  readonly liveFeedback: boolean;
  /** Game slots this worker plays (indices out of `totalGames`). */
  readonly slots: readonly number[];
  readonly totalGames: number;
  readonly thinkMs: number;
  /** Think times are uniform in thinkMs * [1 - jitter, 1 + jitter]. */
  readonly jitter: number;
  /** Epoch ms at which slot 0 starts; slot i starts i * rampMs / totalGames later. */
  readonly startAt: number;
  readonly rampMs: number;
  /** Each slot's first game stops after a random number of actions (see server-clients.ts). */
  readonly stagger: boolean;
  /** An action whose effect is not seen within this time counts as an error and ends the game. */
  readonly stuckMs: number;
}

/** What a client worker did since its previous report. */
export interface WorkerReport {
  readonly type: 'report';
  readonly id: number;
  readonly worker: number;
  readonly usage: Usage;
  /** Games with both players in and playing, now. */
  readonly activeGames: number;
  readonly gamesStarted: number;
  /** Played to the script's end. */
  readonly gamesFinished: number;
  /** First games of a slot, stopped early on purpose and left (--stagger). */
  readonly gamesCutShort: number;
  readonly actionsSent: number;
  /** View messages received over all clients. */
  readonly views: number;
  /** Other messages received (seat, notice, error). */
  readonly messages: number;
  /** Send to the view message in which the acting client sees the action's result, ms. */
  readonly selfLatency: number[];
  /** Send to the view message in which the partner sees it (when it may), ms. */
  readonly partnerLatency: number[];
  /** Both players of a game joined: from the leader's join request to the follower's room, ms. */
  readonly joinLatency: number[];
  /** New games asked for: both players seated, refused as busy (503, P-153), or failed otherwise. */
  readonly joins: JoinCounts;
  readonly errors: Record<string, number>;
  /** A few error messages, for the reader. */
  readonly errorSamples: string[];
}

export interface JoinCounts {
  readonly accepted: number;
  readonly refusedBusy: number;
  readonly failed: number;
}

export type WorkerToBench = { type: 'ready'; worker: number } | WorkerReport | { type: 'stopped'; worker: number };
export type BenchToWorker = { type: 'start'; config: WorkerConfig } | { type: 'report'; id: number } | { type: 'stop' };

// ---------------------------------------------------------------------------------------------
// Helpers

/** `--name value` flags into a map; a flag without a value is 'true'. */
export function parseFlags(argv: readonly string[]): Map<string, string> {
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) throw new Error(`unexpected argument ${JSON.stringify(arg)}`);
    const eq = arg.indexOf('=');
    if (eq > 0) flags.set(arg.slice(2, eq), arg.slice(eq + 1));
    else if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) flags.set(arg.slice(2), argv[++i]);
    else flags.set(arg.slice(2), 'true');
  }
  return flags;
}

export function numberFlag(flags: Map<string, string>, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const text = flags.get(name);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value < min || value > max) throw new Error(`--${name} must be a number from ${min} to ${max}, got ${JSON.stringify(text)}`);
  return value;
}

/** Nearest-rank percentile of ascending `sorted` (NaN when empty). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** An ascending copy (numeric order, unlike Array.prototype.sort's default). */
export function sortedCopy(values: readonly number[]): number[] {
  return Array.from(Float64Array.from(values).sort());
}

/** The sampling interval of the event-loop delay monitor, ms. */
export const LOOP_DELAY_RESOLUTION_MS = 10;

/** Resource use of this process: CPU and memory now, event-loop delay and GC since the last snapshot. */
export class UsageMonitor {
  private readonly delay = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
  private gc = { count: 0, ms: 0, maxMs: 0 };

  constructor() {
    this.delay.enable();
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        this.gc.count += 1;
        this.gc.ms += entry.duration;
        this.gc.maxMs = Math.max(this.gc.maxMs, entry.duration);
      }
    }).observe({ entryTypes: ['gc'] });
  }

  snapshot(): Usage {
    const cpu = process.cpuUsage();
    const memory = process.memoryUsage();
    // The histogram's values include the sampling interval.
    const ms = (ns: number) => (Number.isFinite(ns) ? Math.max(0, ns / 1e6 - LOOP_DELAY_RESOLUTION_MS) : 0);
    const usage: Usage = {
      userUs: cpu.user,
      systemUs: cpu.system,
      rssBytes: memory.rss,
      heapUsedBytes: memory.heapUsed,
      maxRssBytes: process.resourceUsage().maxRSS * 1024,
      loopDelay: { p50: ms(this.delay.percentile(50)), p99: ms(this.delay.percentile(99)), max: ms(this.delay.max) },
      gc: this.gc,
    };
    this.delay.reset();
    this.gc = { count: 0, ms: 0, maxMs: 0 };
    return usage;
  }
}
