import { step, type Action, type GameState, type Move, type Outcome, type Role } from '../../shared/engine';

export const mv = (actor: Role, move: Move): Action => ({ type: 'move', actor, move });
export const say = (text: string): Action => ({ type: 'instruction', actor: 'leader', text });
export const endTurn: Action = { type: 'endTurn', actor: 'leader' };
export const done: Action = { type: 'done', actor: 'follower' };
export const timeout = (role: Role): Action => ({ type: 'timeout', actor: 'server', role });

/** Applies actions in order; fails the test on the first refusal. */
export function play(state: GameState, ...actions: Action[]): { state: GameState; outcomes: Outcome[] } {
  const outcomes: Outcome[] = [];
  for (const action of actions) {
    const result = step(state, action);
    if (!result.ok) throw new Error(`refused ${JSON.stringify(action)}: ${result.error.code} ${result.error.message}`);
    state = result.state;
    outcomes.push(result.outcome);
  }
  return { state, outcomes };
}

/** Asserts the action is refused with `code`; a refusal returns no state, so nothing can change. */
export function expectRefused(state: GameState, action: Action, code: string): void {
  const before = JSON.stringify({ ...state, world: undefined });
  const result = step(state, action);
  expect(result.ok).toBe(false);
  if (!result.ok) {
    expect(result.error.code).toBe(code);
    expect(result.error.message.length).toBeGreaterThan(10);
  }
  expect(JSON.stringify({ ...state, world: undefined })).toBe(before);
}
