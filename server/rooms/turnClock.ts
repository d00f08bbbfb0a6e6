/**
 * The turn clock: each turn has the seconds the game's config gives its role; when they run out,
 * the clock hands the room a timeout for that role. The deadline is published so that clients
 * count down locally.
 */
import type { Clock, Delayed } from '@colyseus/core';
import type { Role } from '../../shared/engine/state';

export class TurnClock {
  private timer: Delayed | null = null;
  /** When the running turn times out (epoch ms of `now`), 0 when none runs. */
  deadline = 0;

  constructor(
    private readonly clock: Clock,
    private readonly now: () => number,
    private readonly expire: (role: Role) => void,
  ) {}

  /** Starts `role`'s turn of `seconds`, replacing any running one. */
  start(role: Role, seconds: number): void {
    this.timer?.clear();
    this.deadline = this.now() + seconds * 1000;
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      this.deadline = 0;
      this.expire(role);
    }, seconds * 1000);
  }

  stop(): void {
    this.timer?.clear();
    this.timer = null;
    this.deadline = 0;
  }
}
