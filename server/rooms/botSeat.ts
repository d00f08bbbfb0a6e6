/**
 * The scripted follower's seat: a built-in agent that acts from the server on the follower's
 * turns, one action every `stepMs`, seeing exactly what a human follower would (its observations
 * come from the follower's playerView). When it marks an instruction done without doing it, it
 * tells the leader why.
 */
import type { Clock, Delayed } from '@colyseus/core';
import { HeuristicAgent } from '../../shared/agents/builtin';
import { ObservationTracker } from '../../shared/agents/observation';
import { actionOfCode, type PlayerAction } from '../../shared/engine/actions';
import type { GameState } from '../../shared/engine/state';

export class BotSeat {
  private readonly agent = new HeuristicAgent();
  private readonly tracker = new ObservationTracker();
  private timer: Delayed | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly stepMs: number,
    /** Plays the bot's action; false when the follower's turn is over (nothing more to schedule). */
    private readonly play: (action: PlayerAction) => boolean,
    /** Tells the leader why the bot marked an instruction done without doing it. */
    private readonly tellLeader: (message: string) => void,
  ) {}

  /** A new game: the agent learns the world from its observations, as a human follower does. */
  async start(episodeId: string): Promise<void> {
    await this.agent.reset({ episodeId });
  }

  /** Acts every stepMs on the current state until `play` says the turn is over. */
  takeTurn(current: () => GameState | null): void {
    this.timer?.clear();
    this.timer = this.clock.setTimeout(() => {
      const state = current();
      if (!state || state.turn.role !== 'follower') return;
      const choice = this.agent.act(this.tracker.observe(state));
      const gaveUp = this.agent.gaveUp;
      const goesOn = this.play(actionOfCode(choice));
      if (gaveUp !== null) this.tellLeader(gaveUp);
      if (goesOn) this.takeTurn(current);
    }, this.stepMs);
  }

  stop(): void {
    this.timer?.clear();
    this.timer = null;
  }
}
