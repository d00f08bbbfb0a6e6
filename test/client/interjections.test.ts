/**
 * The client's side of the leader's live feedback and cancelling, without a page: the leader's
 * chords (never a key that types text), the words both players read, what Cancel would take, and
 * the replay's marks on the timeline.
 */
import { pendingInstructions } from '../../client/src/game/interjections';
import { interjectionKey, type KeyChord } from '../../client/src/game/keyHelp';
import { cancelConfirmText, cancelledText, FEEDBACK_WORDS, feedbackSentText } from '../../client/src/game/messages';
import { timelineMarks } from '../../client/src/replay/marks';
import { loadRecording } from '../../client/src/replay/recording';
import type { Action } from '../../shared/engine';
import type { InstructionView } from '../../shared/engine/playerView';
import type { LogLine } from '../../shared/log/format';
import { GameRecorder, makeHeader, serializeLine } from '../../shared/log/recorder';
import { makeState } from '../fixtures';
import { done, endTurn, mv, say } from '../engine/helpers';

const press = (key: string, modifiers: Partial<KeyChord> = {}, code = ''): KeyChord => ({ key, code, ctrlKey: false, metaKey: false, altKey: false, shiftKey: false, ...modifiers });

describe("the leader's chords", () => {
  test('Ctrl or ⌘ with ↑ is good, with ↓ not that, with Shift+X cancel', () => {
    for (const modifier of [{ ctrlKey: true }, { metaKey: true }]) {
      expect(interjectionKey(press('ArrowUp', modifier))).toBe('positive');
      expect(interjectionKey(press('ArrowDown', modifier))).toBe('negative');
      expect(interjectionKey(press('X', { ...modifier, shiftKey: true }, 'KeyX'))).toBe('cancel');
      expect(interjectionKey(press('x', { ...modifier, shiftKey: true }, 'KeyX'))).toBe('cancel');
    }
  });

  test('no key that types text is a chord: plain keys, Shift, and Ctrl+Alt (AltGr) are left to the box', () => {
    for (const key of ['ArrowUp', 'ArrowDown', 'x', 'X', 'g', 'b', '9', '0', 'Tab', 'q', 'Enter']) {
      expect(interjectionKey(press(key))).toBeNull();
      expect(interjectionKey(press(key, { shiftKey: true }))).toBeNull();
    }
    expect(interjectionKey(press('ArrowUp', { ctrlKey: true, altKey: true }))).toBeNull();
    expect(interjectionKey(press('X', { ctrlKey: true, altKey: true, shiftKey: true }, 'KeyX'))).toBeNull();
    // Ctrl+X (cut) and Ctrl+Shift with another letter are not Cancel; Ctrl+Shift+↑ is not feedback.
    expect(interjectionKey(press('x', { ctrlKey: true }, 'KeyX'))).toBeNull();
    expect(interjectionKey(press('C', { ctrlKey: true, shiftKey: true }, 'KeyC'))).toBeNull();
    expect(interjectionKey(press('ArrowUp', { ctrlKey: true, shiftKey: true }))).toBeNull();
  });

  test("X is read from the character on a Latin keyboard and from the key's place on another", () => {
    // Dvorak: the key in QWERTY's X place types Q; the X is elsewhere.
    expect(interjectionKey(press('Q', { ctrlKey: true, shiftKey: true }, 'KeyX'))).toBeNull();
    expect(interjectionKey(press('X', { ctrlKey: true, shiftKey: true }, 'KeyB'))).toBe('cancel');
    // Russian: the key in X's place types Ч.
    expect(interjectionKey(press('Ч', { ctrlKey: true, shiftKey: true }, 'KeyX'))).toBe('cancel');
  });
});

describe('the words', () => {
  test('each signal has its words, and the leader is told when in the turn its feedback came', () => {
    expect(FEEDBACK_WORDS).toEqual({ positive: 'Good', negative: 'Not that' });
    expect(feedbackSentText('negative', 3)).toBe('Sent “Not that” to the follower, after its step 3.');
    expect(feedbackSentText('positive', 0)).toBe('Sent “Good” to the follower, before its first step.');
  });

  test('a cancel, in plain words for each player', () => {
    expect(cancelledText('follower', 0)).toBe("The leader cancelled its instructions, so your turn is over: the leader's turn begins.");
    expect(cancelledText('leader', 1)).toBe("You cancelled the follower's instruction: its turn is over, and yours begins.");
    expect(cancelledText('leader', 3)).toBe("You cancelled the follower's 3 instructions: its turn is over, and yours begins.");
  });

  test('Cancel says what a second press would take', () => {
    expect(cancelConfirmText(1, 'Ctrl+Shift+X', 3)).toBe("Press Cancel or Ctrl+Shift+X again within 3 s to cancel the current instruction and end the follower's turn.");
    expect(cancelConfirmText(2, 'Ctrl+Shift+X', 3)).toBe("Press Cancel or Ctrl+Shift+X again within 3 s to cancel both instructions and end the follower's turn.");
    expect(cancelConfirmText(4, '⌘+Shift+X', 3)).toBe("Press Cancel or ⌘+Shift+X again within 3 s to cancel all 4 instructions and end the follower's turn.");
  });

  test('a cancel takes the current and the queued instructions, not those done or cancelled before', () => {
    const row = (id: number, status: InstructionView['status']): InstructionView => ({ id, text: `i${id}`, status, shown: true });
    const view = { instructions: [row(0, 'done'), row(1, 'cancelled'), row(2, 'current'), row(3, 'queued'), row(4, 'queued')] };
    expect(pendingInstructions(view)).toBe(3);
    expect(pendingInstructions({ instructions: [row(0, 'done')] })).toBe(0);
  });
});

describe("the replay's timeline", () => {
  test('marks each feedback and cancel at the cursor after its event, with describeEvent\'s words', () => {
    const start = makeState({ config: { liveFeedback: true, cancelInstructions: true } });
    const lines: LogLine[] = [];
    const recorder = new GameRecorder(
      makeHeader({ gameId: 'marks', startedAt: new Date(0), seed: 1, config: start.config, map: start.world.map, setup: { leader: start.leader, follower: start.follower, cards: start.cards, rng: start.rng } }),
      (line) => lines.push(line),
    );
    const actions: Action[] = [
      say('go to the red star'),
      say('then the blue heart'),
      say('then stop'),
      endTurn,
      mv('follower', 'RL'),
      { type: 'feedback', actor: 'leader', signal: 'negative' },
      done,
      { type: 'feedback', actor: 'leader', signal: 'positive' },
      { type: 'cancel', actor: 'leader' },
    ];
    actions.forEach((action, i) => {
      const result = recorder.apply(action, i * 100);
      if (!result.ok) throw new Error(result.error.message);
    });
    const recording = loadRecording(lines.map((line) => `${serializeLine(line)}\n`).join(''));
    expect(timelineMarks(recording)).toEqual([
      { at: 6, kind: 'negative', label: 'Event 6: The leader gave negative feedback on instruction 1' },
      { at: 8, kind: 'positive', label: 'Event 8: The leader gave positive feedback on instruction 2' },
      { at: 9, kind: 'cancel', label: "Event 9: The leader cancelled instructions 2 and 3. The follower's turn ends: the leader's turn begins (5 turns left)" },
    ]);
  });

  test('a game without feedback or cancels has no marks', () => {
    const start = makeState();
    const lines: LogLine[] = [];
    const recorder = new GameRecorder(
      makeHeader({ gameId: 'plain', startedAt: new Date(0), seed: 1, config: start.config, map: start.world.map, setup: { leader: start.leader, follower: start.follower, cards: start.cards, rng: start.rng } }),
      (line) => lines.push(line),
    );
    for (const action of [say('go'), endTurn, mv('follower', 'RL'), done]) recorder.apply(action, 0);
    expect(timelineMarks(loadRecording(lines.map((line) => `${serializeLine(line)}\n`).join('')))).toEqual([]);
  });
});
