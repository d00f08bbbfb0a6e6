/**
 * Which points of a recorded game to draw, and each player's view at them: the view a player had
 * at a state is its playerView with the memory of every state before, so views are taken along
 * the whole game in order.
 */
import { emptyMemory, playerView, remember, type PlayerView } from '../engine/playerView';
import type { GameState, Role } from '../engine/state';

/** `states[i]` is the state after the event of seq i (states[0] is the start). */
export type FramePoints = 'start' | 'instructions' | 'steps' | readonly number[];

/**
 * A role's view at each state for which `wanted(i)` holds (undefined at the others), remembering
 * every state before it as the player did.
 */
export function playerViews(states: readonly GameState[], role: Role, wanted: (index: number) => boolean = () => true): (PlayerView | undefined)[] {
  let memory = emptyMemory(role);
  return states.map((state, i) => {
    memory = remember(memory, state);
    return wanted(i) ? playerView(state, role, memory) : undefined;
  });
}

/**
 * The states in which the follower is first shown each instruction (it becomes the current one
 * and the follower may see it), in order: where a model following it starts.
 */
export function instructionStarts(states: readonly GameState[]): number[] {
  const shown = new Set<number>();
  const starts: number[] = [];
  states.forEach((state, i) => {
    const current = state.queue[0];
    if (!current || current.id >= state.instructionsShown || shown.has(current.id)) return;
    shown.add(current.id);
    starts.push(i);
  });
  return starts;
}

/**
 * The states to draw: the start, each instruction's start, every state (the start and after each
 * event), or the states after the events with these seqs (0 is the start). A seq past the game's
 * last event is refused with a message.
 */
export function framePoints(states: readonly GameState[], at: FramePoints): number[] | { readonly problem: string } {
  if (at === 'start') return [0];
  if (at === 'instructions') return instructionStarts(states);
  if (at === 'steps') return states.map((_, i) => i);
  const beyond = at.find((seq) => !Number.isInteger(seq) || seq < 0 || seq >= states.length);
  if (beyond !== undefined) return { problem: `seq ${beyond} is not an event of this game (its events are 1 to ${states.length - 1}; 0 is the start)` };
  return [...new Set(at)].sort((a, b) => a - b);
}
