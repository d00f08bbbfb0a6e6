/** The tutorial's steps: each is done only by what the player did, in the views it saw. */
import type { GameView } from '../../client/src/game/session';
import { currentStep, NO_PROGRESS, progressAfter, TUTORIAL_STEPS } from '../../client/src/tutorial/steps';

const base = {
  phase: 'playing', turn: { role: 'leader', stepsLeft: 5 }, score: 0, instructions: [], cards: [],
  leader: { x: 1, y: 1, heading: 'NE' }, follower: { x: 2, y: 2, heading: 'NE' },
} as unknown as GameView;
const view = (changes: Partial<Record<keyof GameView, unknown>>) => ({ ...base, ...changes }) as GameView;

test("the leader's steps are done in order by moving, writing, ending the turn, an instruction done and a set", () => {
  let progress = progressAfter(NO_PROGRESS, null, base, 'leader');
  expect(currentStep('leader', progress)).toBe(0);
  progress = progressAfter(progress, base, view({ leader: { x: 1, y: 1, heading: 'E' } }), 'leader');
  expect(currentStep('leader', progress)).toBe(1);
  const sent = view({ instructions: [{ id: 0, text: 'Turn left', status: 'current', shown: false }] });
  progress = progressAfter(progress, base, sent, 'leader');
  expect(currentStep('leader', progress)).toBe(2);
  const followerTurn = { ...sent, turn: { role: 'follower', stepsLeft: 10 } } as GameView;
  progress = progressAfter(progress, sent, followerTurn, 'leader');
  expect(currentStep('leader', progress)).toBe(3);
  progress = progressAfter(progress, followerTurn, view({ instructions: [{ id: 0, text: 'Turn left', status: 'done', shown: true }] }), 'leader');
  expect(currentStep('leader', progress)).toBe(4);
  progress = progressAfter(progress, base, view({ score: 1 }), 'leader');
  expect(currentStep('leader', progress)).toBe(TUTORIAL_STEPS.leader.length);
});

test('a step done out of order waits for the earlier ones, and nothing is undone', () => {
  // A set made before the leader moved: the current step is still to move.
  let progress = progressAfter(NO_PROGRESS, base, view({ score: 1 }), 'leader');
  expect(progress.setMade).toBe(true);
  expect(currentStep('leader', progress)).toBe(0);
  progress = progressAfter(progress, view({ score: 1 }), view({ score: 1 }), 'leader');
  expect(progress.setMade).toBe(true);
  // The partner's moves are not the player's.
  progress = progressAfter(NO_PROGRESS, base, view({ follower: { x: 3, y: 2, heading: 'NE' } }), 'leader');
  expect(progress.moved).toBe(false);
});

test("the follower's card step needs a card it selected, not one selected before", () => {
  const card = { id: 4, x: 3, y: 3, color: 'red', shape: 'star', count: 1, selected: true };
  const already = view({ cards: [card] });
  expect(progressAfter(NO_PROGRESS, already, already, 'follower').cardSelected).toBe(false);
  expect(progressAfter(NO_PROGRESS, view({ cards: [{ ...card, selected: false }] }), already, 'follower').cardSelected).toBe(true);
});
