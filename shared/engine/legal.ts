/**
 * What a player may do now: the one list of legal actions. The server validates every action with
 * `checkPlayerAction`, the client enables its keys and buttons from `legalActions`, and agents get
 * it as a mask. It agrees with `step`, except that a move into an obstacle, which the transition
 * function accepts as a no-op (old logs hold such events), is never offered to a player.
 */
import { byActor, type ActionCode, type Move, type PlayerAction } from './actions';
import { actionError, type ActionError } from './errors';
import { opposite } from './hex';
import { stepTarget } from './map';
import type { GameState, Role } from './state';
import { queueIsFull, refusal } from './transition';

export interface LegalActions {
  /** Moves that are allowed now and change the player's pose. */
  readonly moves: readonly Move[];
  /** The player may write an instruction now (of 1 to `maxInstructionLength` characters; not while the queue is full). */
  readonly instruction: boolean;
  readonly maxInstructionLength: number;
  readonly endTurn: boolean;
  readonly done: boolean;
  /** The leader may send live feedback now (`config.liveFeedback`, in the follower's turn). */
  readonly feedback: boolean;
  /** The leader may cancel the follower's instructions now (`config.cancelInstructions`, in the follower's turn). */
  readonly cancel: boolean;
}

const NOTHING: readonly Move[] = [];

export function legalActions(state: GameState, role: Role): LegalActions {
  const mine = !state.gameOver && state.turn.role === role;
  const moves = mine && state.turn.stepsLeft > 0 ? openMoves(state, role) : NOTHING;
  const interjects = !state.gameOver && role === 'leader' && state.turn.role === 'follower';
  return {
    moves,
    instruction: mine && role === 'leader' && !queueIsFull(state),
    maxInstructionLength: state.config.maxInstructionLength,
    endTurn: mine && role === 'leader' && (state.queue.length > 0 || state.config.endTurnWithEmptyQueue),
    done: mine && role === 'follower' && state.queue.length > 0,
    feedback: interjects && state.config.liveFeedback,
    cancel: interjects && state.config.cancelInstructions,
  };
}

function openMoves(state: GameState, role: Role): Move[] {
  const pose = state[role];
  const moves: Move[] = [];
  if (stepTarget(state.world, pose, pose.heading)) moves.push('MF');
  if (stepTarget(state.world, pose, opposite(pose.heading))) moves.push('MB');
  moves.push('RL', 'RR');
  return moves;
}

/** Whether the legal actions include the action a short code stands for. */
export function allowsCode(legal: LegalActions, code: ActionCode): boolean {
  if (code === 'DONE') return legal.done;
  if (code === 'END') return legal.endTurn;
  return legal.moves.includes(code);
}

/** `codes` each marked allowed or not: an action mask in the order given. */
export function actionMask(legal: LegalActions, codes: readonly ActionCode[]): boolean[] {
  return codes.map((code) => allowsCode(legal, code));
}

/**
 * Why `role` may not take `action` now, or null: the engine's refusal, or MOVE_BLOCKED for a move
 * into an obstacle or off the map. The server checks every player's action with it.
 */
export function checkPlayerAction(state: GameState, role: Role, action: PlayerAction): ActionError | null {
  const refused = refusal(state, byActor(role, action));
  if (refused) return refused;
  if (action.type === 'move' && !legalActions(state, role).moves.includes(action.move)) {
    return actionError('MOVE_BLOCKED', 'something is in the way');
  }
  return null;
}
