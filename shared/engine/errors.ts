/** Why the engine refuses an action. A refused action never changes the state. */

export const ACTION_ERROR_CODES = [
  'MALFORMED_ACTION',
  'GAME_OVER',
  'NOT_YOUR_TURN',
  'FOLLOWER_CANNOT_INSTRUCT',
  'FOLLOWER_CANNOT_END_TURN',
  'LEADER_CANNOT_MARK_DONE',
  'FEEDBACK_OFF',
  'CANCEL_OFF',
  'FOLLOWER_CANNOT_GIVE_FEEDBACK',
  'FOLLOWER_CANNOT_CANCEL',
  'NOT_FOLLOWER_TURN',
  'NO_STEPS_LEFT',
  'MOVE_BLOCKED',
  'EMPTY_QUEUE',
  'QUEUE_FULL',
  'EMPTY_INSTRUCTION',
  'INSTRUCTION_TOO_LONG',
  'STALE_TIMEOUT',
  'BAD_REPLACEMENT_CARDS',
] as const;
export type ActionErrorCode = (typeof ACTION_ERROR_CODES)[number];

export interface ActionError {
  readonly code: ActionErrorCode;
  readonly message: string;
}

export function actionError(code: ActionErrorCode, message: string): ActionError {
  return { code, message };
}

/** A map or configuration that cannot start a game. */
export class GameSetupError extends Error {
  override name = 'GameSetupError';
}
