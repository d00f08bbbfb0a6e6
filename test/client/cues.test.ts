/** The cues a player gets when a view arrives: a set made, its turn come, the last round begun. */
import { cuesBetween } from '../../client/src/game/cues';
import type { GameView } from '../../client/src/game/session';

const view = (changes: Partial<GameView> = {}): GameView =>
  ({ phase: 'playing', score: 0, turnsLeft: 6, turn: { role: 'leader', stepsLeft: 5 }, ...changes }) as GameView;

describe('cues between two views', () => {
  test('a set made is cued to both players, with the points and the turns left', () => {
    for (const role of ['leader', 'follower'] as const) {
      expect(cuesBetween(view({ score: 2 }), view({ score: 3, turnsLeft: 10 }), role)).toEqual([{ kind: 'set', text: 'Set made: +1 point, 10 turns left.', tone: 'success' }]);
    }
  });

  test('the turn coming to a player is cued to that player only', () => {
    const leaderPlays = view();
    const followerPlays = view({ turn: { role: 'follower', stepsLeft: 10 } });
    expect(cuesBetween(leaderPlays, followerPlays, 'follower')).toEqual([{ kind: 'yourTurn', text: 'Your turn: follow the current instruction.', tone: 'info' }]);
    expect(cuesBetween(leaderPlays, followerPlays, 'leader')).toEqual([]);
    expect(cuesBetween(followerPlays, leaderPlays, 'leader')).toEqual([{ kind: 'yourTurn', text: 'Your turn: write instructions, move, then End Turn.', tone: 'info' }]);
  });

  test('the last round is cued once, when it begins', () => {
    expect(cuesBetween(view({ turnsLeft: 2 }), view({ turnsLeft: 1 }), 'leader')).toEqual([{ kind: 'lastRound', text: 'Last round: this is the final turn for each of you.', tone: 'warning' }]);
    expect(cuesBetween(view({ turnsLeft: 1 }), view({ turnsLeft: 1, turn: { role: 'leader', stepsLeft: 4 } }), 'leader')).toEqual([]);
  });

  test('nothing on the first view, nothing after the end, nothing when nothing changed', () => {
    expect(cuesBetween(null, view({ score: 3 }), 'leader')).toEqual([]);
    expect(cuesBetween(view(), view({ phase: 'ended', score: 1 }), 'leader')).toEqual([]);
    expect(cuesBetween(view(), view(), 'follower')).toEqual([]);
  });
});
