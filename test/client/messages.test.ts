/** What the game screen says about what a player did not do itself. */
import { currentTag, unfinishedInstructionNote } from '../../client/src/game/messages';
import type { GameView } from '../../client/src/game/session';
import type { InstructionView } from '../../shared/engine/playerView';

describe('R-7: an instruction the follower has not marked done stays current after its turn, and both panels say so', () => {
  const instruction = (status: InstructionView['status'], shown = true): InstructionView => ({ id: 0, text: 'Pick up the three cards', status, shown });
  const view = (role: 'leader' | 'follower', turn: 'leader' | 'follower', instructions: InstructionView[], phase: 'playing' | 'ended' = 'playing'): GameView =>
    ({ role, phase, turn: { role: turn, stepsLeft: 5 }, instructions }) as unknown as GameView;

  test("in the leader's turn, after the follower's turn ended without Done", () => {
    const follower = view('follower', 'leader', [instruction('current')]);
    expect(unfinishedInstructionNote(follower)).toMatch(/^Your turn ended before you pressed Done, so this instruction is still yours\./);
    expect(currentTag(follower)).toBe('Not done yet');
    const leader = view('leader', 'leader', [instruction('current')]);
    expect(unfinishedInstructionNote(leader)).toMatch(/^The follower's turn ended before it pressed Done, so this instruction is still current.*Only Done finishes an instruction, not a set\.$/);
    expect(currentTag(leader)).toBe('Current · not done yet');
  });

  test("nothing to explain in the follower's turn, before the follower has seen the instruction, with none current, or after the game", () => {
    expect(currentTag(view('follower', 'follower', [instruction('current')]))).toBe('Now');
    expect(currentTag(view('leader', 'follower', [instruction('current')]))).toBe('Current');
    for (const shown of [
      view('leader', 'follower', [instruction('current')]),
      view('leader', 'leader', [instruction('current', false)]),
      view('leader', 'leader', [instruction('done')]),
      view('follower', 'leader', []),
      view('follower', 'leader', [instruction('current')], 'ended'),
    ]) {
      expect(unfinishedInstructionNote(shown)).toBeNull();
    }
  });
});
