/**
 * Stalls of this process: a stop (SIGSTOP, a paused virtual machine), swap, a very long pause. A
 * beat every BEAT_MS; a gap of more than STALL_MS between two beats is a stall. Nothing runs
 * during one, so what a stall did is seen after it: the turn clock gives back the turn's time it
 * took (turnClock.ts), and the rooms tell their players how long the game was paused.
 */

/** A gap between beats longer than this is a stall, ms. */
export const STALL_MS = 5000;
const BEAT_MS = 250;
/** The stalls remembered, the latest last. */
const REMEMBERED = 8;

export interface Stall {
  /** Epoch ms (Date.now) of the last beat before it, and of the first after. */
  readonly from: number;
  readonly to: number;
}

class ProcessStalls {
  private lastBeat = Date.now();
  private readonly seen: Stall[] = [];
  private readonly listeners = new Set<(stall: Stall) => void>();
  private timer: NodeJS.Timeout | null = null;

  /** Tells `listener` of each stall, as the process runs again; the function returned stops it. */
  onStall(listener: (stall: Stall) => void): () => void {
    this.watch();
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * The stall in which the process was at `at` (epoch ms): one seen, or one that has just ended
   * and that no beat has seen yet (a timer of another module may run before the beat's).
   */
  covering(at: number): Stall | null {
    this.watch();
    const now = Date.now();
    if (now - this.lastBeat > STALL_MS && at >= this.lastBeat) return { from: this.lastBeat, to: now };
    return this.seen.find((stall) => stall.from <= at && at <= stall.to) ?? null;
  }

  private watch(): void {
    if (this.timer) return;
    this.lastBeat = Date.now();
    this.timer = setInterval(() => this.beat(), BEAT_MS);
    this.timer.unref();
  }

  private beat(): void {
    const now = Date.now();
    if (now - this.lastBeat > STALL_MS) {
      const stall = { from: this.lastBeat, to: now };
      this.seen.push(stall);
      if (this.seen.length > REMEMBERED) this.seen.shift();
      for (const listener of this.listeners) listener(stall);
    }
    this.lastBeat = now;
  }
}

/** The process's own: one per process. */
export const processStalls = new ProcessStalls();
