/**
 * The scripted follower's seat: a built-in agent that acts from the server on the follower's
 * turns, one action every `stepMs`, seeing exactly what a human follower would (its observations
 * come from the follower's playerView).
 */
import type { Clock, Delayed } from '@colyseus/core';
import { HeuristicAgent } from '../../shared/agents/builtin';
import { ObservationTracker } from '../../shared/agents/observation';
import type { FollowerAgent } from '../../shared/agents/types';
import { actionOfCode, type PlayerAction } from '../../shared/engine/actions';
import type { GameState } from '../../shared/engine/state';

export class BotSeat {
  private readonly agent: FollowerAgent = new HeuristicAgent();
  private readonly tracker = new ObservationTracker();
  private timer: Delayed | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly stepMs: number,
    /** Plays the bot's action; false when the follower's turn is over (nothing more to schedule). */
    private readonly play: (action: PlayerAction) => boolean,
  ) {}

  /** A new game: the agent learns the world from its observations, as a human follower does. */
  async start(episodeId: string): Promise<void> {
    await this.agent.reset({ episodeId });
  }

  /** Acts every stepMs on the current state until `play` says the turn is over. */
  takeTurn(current: () => GameState | null): void {
    this.timer?.clear();
    this.timer = this.clock.setTimeout(async () => {
      const state = current();
      if (!state || state.turn.role !== 'follower') return;
      const choice = await this.agent.act(this.tracker.observe(state));
      if (this.play(actionOfCode(choice))) this.takeTurn(current);
    }, this.stepMs);
  }

  stop(): void {
    this.timer?.clear();
    this.timer = null;
  }
}
