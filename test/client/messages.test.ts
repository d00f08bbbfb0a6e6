/** What the game screen says about what a player did not do itself: plain sentences, with the server's codes in small print. */
import { CLOSE_BAD_FRAME, CLOSE_FRAME_TOO_LARGE, CLOSE_RATE_LIMITED } from '../../shared/protocol/messages';
import {
  connectionClosed,
  currentTag,
  endReasonText,
  partnerDisconnectedText,
  partnerLeftBanner,
  partnerLeftReason,
  timeoutText,
  TURN_SKIPPED_TEXT,
  unfinishedInstructionNote,
} from '../../client/src/game/messages';
import type { GameView } from '../../client/src/game/session';
import type { InstructionView } from '../../shared/engine/playerView';

const RATE = 'more than 100 messages in a second';

describe("P-29, P-78: why the partner left, in the partner's page", () => {
  test('the server closed its connection: what it did, in plain words, and the code in small print', () => {
    expect(partnerLeftBanner('follower', { reason: 'RATE_LIMITED', message: RATE }, false)).toEqual({
      text: "The server closed the follower's connection because it sent more than 100 messages in a second. The game has ended.",
      detail: `RATE_LIMITED: ${RATE}`,
    });
    expect(partnerLeftBanner('leader', { reason: 'FRAME_TOO_LARGE', message: 'a frame over 65536 bytes' }, false).text).toBe(
      "The server closed the leader's connection because it sent a message larger than the server accepts. The game has ended.",
    );
    expect(partnerLeftBanner('leader', { reason: 'BAD_FRAME', message: 'a frame that is not a well-formed message' }, false).text).toBe(
      "The server closed the leader's connection because it sent data the server could not read. The game has ended.",
    );
    // A message that is not the server's usual sentence is kept to the small print.
    expect(partnerLeftBanner('leader', { reason: 'RATE_LIMITED', message: '<b>odd</b>' }, false)).toEqual({
      text: "The server closed the leader's connection because it sent too many messages too quickly. The game has ended.",
      detail: 'RATE_LIMITED: <b>odd</b>',
    });
  });

  test('without a reason: it left, or it lost the connection and did not come back in time', () => {
    expect(partnerLeftBanner('follower', {}, false)).toEqual({ text: 'The follower left the game. The game has ended.', detail: '' });
    expect(partnerLeftBanner('leader', {}, true).text).toBe('The leader lost the connection and did not come back in time. The game has ended.');
  });

  test("the game-over dialog repeats why the partner left; other end reasons say what the server did", () => {
    const why = partnerLeftReason('follower', { reason: 'RATE_LIMITED', message: RATE }, false);
    expect(endReasonText('abandoned', 'follower', why)).toBe("The server closed the follower's connection because it sent more than 100 messages in a second.");
    expect(endReasonText('abandoned', 'leader', null)).toBe('The leader left the game.');
    expect(endReasonText('turns-exhausted', 'leader', null)).toBe('No turns are left.');
    expect(endReasonText('interrupted', 'leader', null)).toBe('An error on the server interrupted the game.');
    expect(endReasonText('server-shutdown', 'leader', null)).toBe('The server was stopped.');
    expect(endReasonText('storage-failed', 'leader', null)).toBe('The server could not save this game, so it has ended.');
  });
});

describe("P-75, P-76, P-77: why the server closed this player's own connection", () => {
  test('the limits: a sentence, with the close code and reason in small print', () => {
    expect(connectionClosed(CLOSE_RATE_LIMITED, `RATE_LIMITED: ${RATE}`)).toEqual({
      text: 'The server closed your connection because your browser sent more than 100 messages in a second. The game has ended.',
      detail: `code 1008: RATE_LIMITED: ${RATE}`,
    });
    // ws closes an over-long frame with 1009 and no reason.
    expect(connectionClosed(CLOSE_FRAME_TOO_LARGE, '')).toEqual({
      text: 'The server closed your connection because your browser sent a message larger than the server accepts. The game has ended.',
      detail: 'code 1009',
    });
    expect(connectionClosed(CLOSE_BAD_FRAME, 'BAD_FRAME: a frame that is not a well-formed message').text).toBe(
      'The server closed your connection because your browser sent data the server could not read. The game has ended.',
    );
  });

  test('P-82: the server\'s own sentence for a game that could not start; a stopped server; reconnection that failed', () => {
    expect(connectionClosed(4002, 'the server cannot save games right now, so this game did not start; please try again later').text).toBe(
      'The server closed your connection: the server cannot save games right now, so this game did not start; please try again later.',
    );
    expect(connectionClosed(4002, '').text).toBe('The server closed your connection after an error.');
    expect(connectionClosed(4001, '').text).toBe('The server was stopped. The game has ended.');
    expect(connectionClosed(4003, 'No more retries. Reconnection failed.')).toEqual({
      text: 'The connection was lost and could not be restored, so you are no longer in the game.',
      detail: 'code 4003: No more retries. Reconnection failed.',
    });
    expect(connectionClosed(1006, '').text).toBe('The connection to the game was lost.');
  });
});

describe('turns that end without the player', () => {
  test('P-26, R-29: a timeout says whose turn ended and what comes next, and a leader without instructions hears its follower was skipped', () => {
    expect(timeoutText('leader', 'leader', true)).toBe("Your time ran out: the follower's turn begins.");
    expect(timeoutText('leader', 'leader', false)).toBe("Your time ran out with no instruction for the follower, so its turn was skipped: your next turn begins.");
    expect(timeoutText('follower', 'follower', true)).toBe("Your time ran out: your turn is over, and the leader's begins.");
    expect(timeoutText('follower', 'leader', true)).toBe("The follower ran out of time: its turn is over, and the leader's begins.");
    expect(timeoutText('leader', 'follower', false)).toBe('The leader ran out of time: its turn is over.');
  });

  test('P-25: a skipped turn does not say the leader chose to end it (by default only its timeout can skip)', () => {
    expect(TURN_SKIPPED_TEXT).toBe("The leader's turn ended with no instruction for you, so your turn was skipped.");
  });

  test("P-27, P-90: a partner's lost connection says how long its seat is kept and what happens after", () => {
    expect(partnerDisconnectedText('follower', 30)).toBe(
      "The follower lost the connection: waiting up to 30 s for them to come back. The turn's clock keeps running. If they do not come back in time, the game ends.",
    );
  });
});

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
