/**
 * Closing a game's log that its process never ended (every store's recovery): replayed for the
 * score, it gets the end line its process would have written.
 */
import type { EndReason, LogEnd } from '../../shared/log/format';
import { replay } from '../../shared/log/replay';
import { isoTime } from './checks';

/** How a game ended, as an index records it. */
export interface GameClosing {
  readonly score: number;
  readonly endedAt: string;
  readonly endReason: LogEnd['reason'];
  readonly note: string | null;
  /** The log still lacks its end line. */
  readonly logUnclosed?: boolean;
}

/** The note of a game whose end line recovery added: every game that did not end by itself says why. */
export const RECOVERY_NOTE = 'recovery added the end line after the last saved event';

export function joinNotes(...notes: (string | null)[]): string | null {
  const present = notes.filter((note): note is string => note !== null);
  return present.length > 0 ? present.join('; ') : null;
}

/**
 * The closing of the unfinished log `text` (whole lines) of a game started at `startedAtMs`, and
 * the end line to append to it (null when it has one, or cannot be replayed: a log is the record,
 * left as it is for whoever investigates, with the reason in the note). Its end time is the last
 * event's; an unreplayable log keeps the index's last score and ends at `unreplayableEndedAt`.
 */
export function closingOf(text: string, startedAtMs: number, lastIndexedScore: number, reason: EndReason, unreplayableEndedAt: string): { closing: GameClosing; end: LogEnd | null } {
  let lastT = 0;
  let result;
  try {
    result = replay(text, {
      allowOpen: true,
      onState: (_, event) => {
        if (event) lastT = event.t;
      },
    });
  } catch (error) {
    const note = `the log cannot be replayed: ${(error as Error).message}`;
    return { closing: { score: lastIndexedScore, endedAt: unreplayableEndedAt, endReason: reason, note }, end: null };
  }
  if (result.end) {
    // The process stopped between writing the end line and updating the index.
    return { closing: { score: result.end.score, endedAt: isoTime(startedAtMs + result.end.t), endReason: result.end.reason, note: 'the log already had its end line' }, end: null };
  }
  // Replay insists that a game whose turns ran out ends with 'turns-exhausted', whatever stopped it.
  const end: LogEnd = { kind: 'end', t: lastT, reason: result.final.gameOver ? 'turns-exhausted' : reason, score: result.final.score };
  return { closing: { score: end.score, endedAt: isoTime(startedAtMs + end.t), endReason: end.reason, note: RECOVERY_NOTE }, end };
}
