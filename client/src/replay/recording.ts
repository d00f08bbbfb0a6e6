/**
 * A logged game made ready for viewing: the shared engine replays the log (so a log that does not
 * replay is refused with its line, as `LogError`) and every state is kept, from the start (cursor 0)
 * to after the last event (cursor N), with each player's view at each of them.
 */
import type { PlayerView } from '../../../shared/engine/playerView';
import type { GameState, Role } from '../../../shared/engine/state';
import { playerViews } from '../../../shared/frames/views';
import type { LogEnd, LogEvent, LogHeader } from '../../../shared/log/format';
import { replay } from '../../../shared/log/replay';

export interface ReplayedGame {
  readonly header: LogHeader;
  /** Null for a game still being played (a log without an end line). */
  readonly end: LogEnd | null;
  /** events[k - 1] led from states[k - 1] to states[k]. */
  readonly events: readonly LogEvent[];
  readonly states: readonly GameState[];
  /** What each player knew at each cursor: its playerView, with its memory of the game so far. */
  readonly views: Readonly<Record<Role, readonly PlayerView[]>>;
}

export function loadRecording(text: string): ReplayedGame {
  const events: LogEvent[] = [];
  const states: GameState[] = [];
  const result = replay(text, {
    allowOpen: true,
    onState: (state, event) => {
      if (event) events.push(event);
      states.push(state);
    },
  });
  // Every state is wanted: each view is defined.
  const views = { leader: playerViews(states, 'leader') as PlayerView[], follower: playerViews(states, 'follower') as PlayerView[] };
  return { header: result.header, end: result.end, events, states, views };
}

/** Milliseconds since the game started at a cursor: the time of the event that led there. */
export function timeAt(recording: ReplayedGame, cursor: number): number {
  return cursor === 0 ? 0 : recording.events[cursor - 1].t;
}

/** The game's length: its end line's time, or its last event's while it is still being played. */
export function duration(recording: ReplayedGame): number {
  return recording.end?.t ?? timeAt(recording, recording.events.length);
}
