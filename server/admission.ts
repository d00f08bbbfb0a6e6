/**
 * Whether this process has room for a new game. A process that takes every game offered slows
 * all of them; one that says "busy" at matchmaking keeps the games it has fast, and its players'
 * pages try again (or, with several processes, matchmaking places the game on one with room).
 * Two limits: the games it holds (`serve --max-games`), and how late its event loop runs (the
 * p99 of its delay in each of the last BUSY_WINDOWS windows, `--max-event-loop-delay-ms`). Only a
 * sustained delay counts: a saturated process's loop is late window after window, while a
 * moment's pause (a GC, another program on the machine) passes. So the delay is seen a couple of
 * seconds late, and a burst of new games can outrun it: `--max-games` is the guard to size, the
 * delay a safety net for what it does not foresee (docs/deploy.md, "When a process is full").
 * Only new games are refused: a join into a game already made (a partner, a code, a reconnection)
 * is never, since that game was admitted when it was made.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { ServerError } from '@colyseus/core';
import { BUSY_STATUS } from '../shared/protocol/messages';

export interface AdmissionLimits {
  /** Games (waiting or in play) this process holds at most; none when left out. */
  readonly maxGames?: number;
  /** The p99 of the event loop's delay in a window above which the process is busy, ms; not watched when left out or 0. */
  readonly maxEventLoopDelayMs?: number;
}

/** `serve`'s delay limit: an action's answer waits at most this for the loop, at the p99, before new games go elsewhere. */
export const DEFAULT_MAX_EVENT_LOOP_DELAY_MS = 100;

/** How long a window of the event loop's delay is. */
export const DELAY_WINDOW_MS = 1000;

/** The windows in a row whose p99 must be over the limit for the process to be busy. */
export const BUSY_WINDOWS = 2;

export type BusyReason = 'games' | 'event-loop';

/** The words of a new game refused because no process has room. */
export const BUSY_MESSAGE = 'the server is busy and takes no new games for a moment; your page will try again by itself';

export function busyError(): ServerError {
  return new ServerError(BUSY_STATUS, BUSY_MESSAGE);
}

/** The event loop's delay, as the p99 of each window: sampled every 10 ms by Node itself (no timer of ours runs on the loop measured). */
class EventLoopDelay {
  private readonly histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });
  private readonly timer: NodeJS.Timeout;
  /** The p99 of the last BUSY_WINDOWS full windows, the latest last, ms. */
  private readonly windows: number[] = [];

  constructor() {
    this.histogram.enable();
    this.timer = setInterval(() => {
      this.windows.push(this.histogram.count > 0 ? this.histogram.percentile(99) / 1e6 : 0);
      if (this.windows.length > BUSY_WINDOWS) this.windows.shift();
      this.histogram.reset();
    }, DELAY_WINDOW_MS);
    this.timer.unref();
  }

  /** The p99 of the last full window, ms. */
  lastP99Ms(): number {
    return this.windows[this.windows.length - 1] ?? 0;
  }

  /** Whether each of the last BUSY_WINDOWS windows had its p99 over `limitMs`. */
  lateFor(limitMs: number): boolean {
    return this.windows.length === BUSY_WINDOWS && this.windows.every((p99) => p99 > limitMs);
  }

  stop(): void {
    clearInterval(this.timer);
    this.histogram.disable();
  }
}

export class Admission {
  private readonly delay: EventLoopDelay | null;
  private readonly refusedListeners: ((reason: BusyReason) => void)[] = [];

  constructor(
    readonly limits: AdmissionLimits,
    /** The games this process holds now (waiting or in play). */
    private readonly games: () => number,
  ) {
    this.delay = (limits.maxEventLoopDelayMs ?? 0) > 0 ? new EventLoopDelay() : null;
  }

  /** Why this process takes no new game now, or null when it has room. */
  busy(): BusyReason | null {
    const { maxGames } = this.limits;
    if (maxGames !== undefined && this.games() >= maxGames) return 'games';
    if (this.delay?.lateFor(this.limits.maxEventLoopDelayMs!)) return 'event-loop';
    return null;
  }

  /** The p99 of the event loop's delay over the last window, ms (0 when not measured). */
  eventLoopDelayP99Ms(): number {
    return this.delay?.lastP99Ms() ?? 0;
  }

  /** A new game was refused for `reason`: the listeners (the metrics) are told. */
  count(reason: BusyReason): void {
    for (const listener of this.refusedListeners) listener(reason);
  }

  onRefused(listener: (reason: BusyReason) => void): void {
    this.refusedListeners.push(listener);
  }

  stop(): void {
    this.delay?.stop();
  }
}
