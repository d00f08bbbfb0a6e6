/**
 * A logged game made ready for viewing: the shared engine replays the log (so a log that does not
 * replay is refused with its line, as `LogError`) and every state is kept, from the start (cursor 0)
 * to after the last event (cursor N), with what the follower could see at each of them.
 */
import { ObservationTracker } from '../../../shared/agents/observation';
import type { Card } from '../../../shared/engine/cards';
import type { Pose } from '../../../shared/engine/hex';
import type { GameState } from '../../../shared/engine/state';
import type { LogEnd, LogEvent, LogHeader } from '../../../shared/log/format';
import { replay } from '../../../shared/log/replay';

/** What the follower knew at one point: the cards in view and those remembered, and the leader if in view. */
export interface FollowerSight {
  readonly cards: readonly Card[];
  readonly leader: Pose | null;
}

export interface Recording {
  readonly header: LogHeader;
  /** Null for a game still being played (a log without an end line). */
  readonly end: LogEnd | null;
  /** events[k - 1] led from states[k - 1] to states[k]. */
  readonly events: readonly LogEvent[];
  readonly states: readonly GameState[];
  readonly followerSights: readonly FollowerSight[];
}

export function loadRecording(text: string): Recording {
  const events: LogEvent[] = [];
  const states: GameState[] = [];
  const followerSights: FollowerSight[] = [];
  // Fed every state in order, the tracker remembers exactly what the follower had seen by then.
  const tracker = new ObservationTracker();
  const result = replay(text, {
    allowOpen: true,
    onState: (state, event) => {
      if (event) events.push(event);
      states.push(state);
      const observation = tracker.observe(state);
      followerSights.push({ cards: [...observation.visibleCards, ...observation.rememberedCards], leader: observation.leader });
    },
  });
  return { header: result.header, end: result.end, events, states, followerSights };
}

/** Milliseconds since the game started at a cursor: the time of the event that led there. */
export function timeAt(recording: Recording, cursor: number): number {
  return cursor === 0 ? 0 : recording.events[cursor - 1].t;
}

/** The game's length: its end line's time, or its last event's while it is still being played. */
export function duration(recording: Recording): number {
  return recording.end?.t ?? timeAt(recording, recording.events.length);
}
