/**
 * The replay's cursor over events (0 = the start, N = after the last event) and the clock that
 * moves it while playing. Every change is reported with the cursor it came from, so the caller
 * can tell a single step forward (animated) from a jump (shown at once).
 */

/** Events per second at 1x. */
export const BASE_RATE = 4;
export const SPEEDS = [0.5, 1, 2, 4, 8] as const;

export type PlaybackListener = (cursor: number, previous: number) => void;

export class Playback {
  private position = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private rate = 1;

  constructor(
    /** Number of events: the cursor runs from 0 to this. */
    readonly length: number,
    private readonly onChange: PlaybackListener,
  ) {}

  get cursor(): number {
    return this.position;
  }

  get playing(): boolean {
    return this.timer !== null;
  }

  get speed(): number {
    return this.rate;
  }

  seek(cursor: number): void {
    const next = Math.min(this.length, Math.max(0, Math.round(cursor)));
    if (next === this.position) return;
    const previous = this.position;
    this.position = next;
    this.onChange(next, previous);
  }

  /** One event forward or back; stepping stops playback. */
  step(delta: 1 | -1): void {
    this.pause();
    this.seek(this.position + delta);
  }

  play(): void {
    if (this.playing) return;
    // Playing from the end starts over.
    if (this.position === this.length) this.seek(0);
    this.schedule();
    this.onChange(this.position, this.position);
  }

  pause(): void {
    if (!this.stopTimer()) return;
    this.onChange(this.position, this.position);
  }

  toggle(): void {
    if (this.playing) this.pause();
    else this.play();
  }

  setSpeed(speed: number): void {
    this.rate = speed;
    if (this.stopTimer()) this.schedule();
  }

  dispose(): void {
    this.stopTimer();
  }

  private schedule(): void {
    this.timer = setTimeout(() => this.tick(), 1000 / (BASE_RATE * this.rate));
  }

  /** One event forward; playback stops after the last, and says so. */
  private tick(): void {
    if (this.position + 1 >= this.length) {
      this.timer = null;
      const previous = this.position;
      this.position = this.length;
      this.onChange(this.position, previous);
      return;
    }
    this.schedule();
    this.seek(this.position + 1);
  }

  /** True when it was running. */
  private stopTimer(): boolean {
    if (!this.timer) return false;
    clearTimeout(this.timer);
    this.timer = null;
    return true;
  }
}
