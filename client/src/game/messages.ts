/**
 * What the game screen says about what the player did not do itself. Plain words for people who
 * have not read the rules. Pure functions of what the server sent, so that they can be tested
 * without a page.
 */
import type { GameView } from './session';

/**
 * The current instruction in the leader's turn, once the follower has seen it: the follower's
 * turn ended (out of steps or time) before it pressed Done, so it stays current (rule R-7; only
 * Done finishes an instruction, a set made does not). Null when there is nothing to explain.
 */
export function unfinishedInstructionNote(view: GameView): string | null {
  if (view.phase !== 'playing' || view.turn.role !== 'leader') return null;
  const current = view.instructions.find((instruction) => instruction.status === 'current');
  if (!current?.shown) return null;
  return view.role === 'follower'
    ? 'Your turn ended before you pressed Done, so this instruction is still yours. In your next turn, carry on with it, or press Done at once if it is finished.'
    : "The follower's turn ended before it pressed Done, so this instruction is still current: the follower carries on with it next turn. Only Done finishes an instruction, not a set.";
}

/** The tag of the current instruction in the player's list: "not done yet" when the note above explains it. */
export function currentTag(view: GameView): string {
  const unfinished = unfinishedInstructionNote(view) !== null;
  if (view.role === 'follower') return unfinished ? 'Not done yet' : 'Now';
  return unfinished ? 'Current · not done yet' : 'Current';
}
