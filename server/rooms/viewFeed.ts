/**
 * What one seat is sent: the player's memory, and the last view it was sent, so that each message
 * carries only what changed. Every byte a player receives about the game comes from its
 * `playerView` and the session facts here, and from nothing else.
 */
import { emptyMemory, playerView, remember, type Memory, type PlayerView } from '../../shared/engine/playerView';
import type { GameState, Role } from '../../shared/engine/state';
import { viewChanges, type ClientView, type ViewMessage } from '../../shared/protocol/messages';

/** The room's facts about the session that a player's screen shows besides the game. */
export type SessionFacts = Pick<ClientView, 'phase' | 'turnDeadline' | 'partnerConnected' | 'endReason'>;

export class ViewFeed {
  private memory: Memory;
  private sent: ClientView | null = null;

  constructor(readonly role: Role) {
    this.memory = emptyMemory(role);
  }

  /** The player witnesses `state` (after every accepted action, whether or not it is sent). */
  witness(state: GameState): void {
    this.memory = remember(this.memory, state);
  }

  /** The player's view of `state`: what its messages carry (an agent's seat reads it directly). */
  view(state: GameState): PlayerView {
    return playerView(state, this.role, this.memory);
  }

  /** The next message for this player, or null when nothing it may know changed. */
  message(state: GameState, facts: SessionFacts, serverNow: number): ViewMessage | null {
    const view: ClientView = { ...this.view(state), ...facts };
    const previous = this.sent;
    this.sent = view;
    if (previous === null) return { full: true, changes: view, serverNow };
    const changes = viewChanges(previous, view);
    return Object.keys(changes).length === 0 ? null : { full: false, changes, serverNow };
  }

  /** The next message will be the whole view (a reconnected client starts afresh). */
  resend(): void {
    this.sent = null;
  }
}
