/** The instruction list at a cursor: every instruction issued so far, with where it stands. */
import type { GameState } from '../../../shared/engine/state';
import type { LogEvent } from '../../../shared/log/format';

export type InstructionStatus = 'done' | 'current' | 'queued';

export interface InstructionRow {
  readonly id: number;
  readonly text: string;
  readonly status: InstructionStatus;
}

/** `events` are those up to the cursor and `state` the state after them. */
export function instructionRows(events: readonly LogEvent[], state: GameState): InstructionRow[] {
  const queued = new Set(state.queue.map((instruction) => instruction.id));
  const current = state.queue[0]?.id;
  const rows: InstructionRow[] = [];
  for (const event of events) {
    if (event.type !== 'instruction' || event.outcome.instruction === undefined) continue;
    const id = event.outcome.instruction;
    // The queue holds what is not yet marked DONE, the current instruction first.
    const status: InstructionStatus = id === current ? 'current' : queued.has(id) ? 'queued' : 'done';
    rows.push({ id, text: event.payload.text, status });
  }
  return rows;
}
