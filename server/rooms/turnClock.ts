/**
 * The turn clock: each turn has the seconds the game's config gives its role; when they run out,
 * the clock hands the room a timeout for that role. The deadline is published so that clients
 * count down locally. A turn whose time ran out while the process was stalled (processStalls.ts)
 * is not the player's doing: it gets back the time it had left when the stall began.
 */
import type { Clock, Delayed } from '@colyseus/core';
import type { Role } from '../../shared/engine/state';
import { processStalls } from '../processStalls';

export class TurnClock {
  private timer: Delayed | null = null;
  /** When the running turn times out (epoch ms of `now`), 0 when none runs. */
  deadline = 0;

  constructor(
    private readonly clock: Clock,
    private readonly now: () => number,
    private readonly expire: (role: Role) => void,
    /** The running turn was given back the time a stall of the process took (its deadline moved). */
    private readonly extended: () => void = () => undefined,
  ) {}

  /** Starts `role`'s turn of `seconds`, replacing any running one. */
  start(role: Role, seconds: number): void {
    this.run(role, seconds * 1000);
  }

  private run(role: Role, ms: number): void {
    this.timer?.clear();
    this.deadline = this.now() + ms;
    // By the machine's clock, as the stalls are (`now` may be a test's fixed clock).
    const dueAt = Date.now() + ms;
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      const stall = processStalls.covering(dueAt);
      if (stall) {
        this.run(role, dueAt - stall.from);
        return this.extended();
      }
      this.deadline = 0;
      this.expire(role);
    }, ms);
  }

  stop(): void {
    this.timer?.clear();
    this.timer = null;
    this.deadline = 0;
  }
}
