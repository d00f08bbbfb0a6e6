/**
 * The marks on the timeline: where the leader gave live feedback (a thumb up or down) and where it
 * cancelled the follower's instructions (a cross), each with the event's words from describeEvent.
 */
import { describeEvent } from '../../../shared/log/describe';
import type { ReplayedGame } from './recording';

export type MarkKind = 'positive' | 'negative' | 'cancel';

export interface TimelineMark {
  /** The cursor just after the event (the slider's value that shows it). */
  readonly at: number;
  readonly kind: MarkKind;
  /** "Event 12: The leader gave negative feedback on instruction 2" (and what followed). */
  readonly label: string;
}

export function timelineMarks(recording: Pick<ReplayedGame, 'events' | 'states'>): TimelineMark[] {
  const marks: TimelineMark[] = [];
  recording.events.forEach((event, i) => {
    const kind = event.type === 'feedback' ? event.payload.signal : event.type === 'cancel' ? 'cancel' : null;
    if (kind === null) return;
    const words = describeEvent(event, recording.states[i].cards).join('. ');
    marks.push({ at: i + 1, kind, label: `Event ${i + 1}: ${words}` });
  });
  return marks;
}
