/**
 * The leader's live feedback and cancelling as a follower agent learns of them: in its observation
 * (each signal of its turn, with the steps before it; the previous instruction marked cancelled),
 * in its text, and from the server's notices.
 */
import { feedbackOfNotice } from '../../shared/agents/feedback';
import { describeObservation } from '../../shared/agents/language';
import { ObservationTracker } from '../../shared/agents/observation';
import { followerObservationSchema } from '../../shared/agents/protocol';
import type { FollowerObservation } from '../../shared/agents/types';
import { step, type Action, type GameState } from '../../shared/engine';
import { noticeSchema } from '../../shared/protocol/messages';
import { makeState } from '../fixtures';
import { done, endTurn, mv, say } from '../engine/helpers';

const ON = { liveFeedback: true, cancelInstructions: true } as const;
const feedback = (signal: 'positive' | 'negative'): Action => ({ type: 'feedback', actor: 'leader', signal });
const cancel: Action = { type: 'cancel', actor: 'leader' };

/** A follower's tracker that witnesses a game from `state` through `actions`, as a host replaying its log does. */
class Witness {
  readonly tracker = new ObservationTracker();
  constructor(public state: GameState) {
    this.tracker.witness(state);
  }

  play(...actions: Action[]): this {
    for (const action of actions) {
      const result = step(this.state, action);
      if (!result.ok) throw new Error(`${action.type}: ${result.error.message}`);
      this.state = result.state;
      this.tracker.witness(result.state, result.outcome);
    }
    return this;
  }

  observe(): FollowerObservation {
    return this.tracker.observe(this.state);
  }

  /** The text's lines about the leader's feedback and the previous instruction. */
  lines(): string[] {
    return describeObservation(this.observe())
      .split('\n')
      .filter((line) => /feedback|^Previous instruction/.test(line));
  }
}

describe("the leader's feedback in the follower's observation and its text", () => {
  test('a game without live feedback has neither the field nor the line', () => {
    const game = new Witness(makeState()).play(say('go to the red star'), endTurn, mv('follower', 'RL'));
    expect(game.observe().feedback).toBeUndefined();
    expect(game.lines()).toEqual(['Previous instruction: none']);
  });

  test('each signal of the turn in order, with the steps before it; the text names the last and counts them; forgotten when the turn ends', () => {
    const game = new Witness(makeState({ config: ON })).play(say('go to the red star'), say('then the blue heart'), endTurn);
    expect(game.observe().feedback).toEqual([]);
    expect(game.lines()).toEqual(['Previous instruction: none', "The leader's feedback this turn: none yet."]);

    game.play(feedback('positive'));
    expect(game.lines()[1]).toBe("The leader's last feedback: positive, before your first step this turn.");
    game.play(mv('follower', 'RL'), mv('follower', 'RL'), mv('follower', 'RL'), feedback('negative'));
    expect(game.observe().feedback).toEqual([
      { signal: 'positive', afterStep: 0 },
      { signal: 'negative', afterStep: 3 },
    ]);
    expect(game.lines()[1]).toBe("The leader's last feedback: negative, after your 3rd step this turn (2 signals this turn: 1 positive, 1 negative).");
    // DONE costs no step: a signal after it counts the same steps.
    game.play(done, feedback('negative'));
    expect(game.observe().feedback!.at(-1)).toEqual({ signal: 'negative', afterStep: 3 });
    expect(game.lines()).toEqual([
      'Previous instruction: go to the red star',
      "The leader's last feedback: negative, after your 3rd step this turn (3 signals this turn: 1 positive, 2 negative).",
    ]);

    // The follower's turn ends (its steps run out): the next turn starts with none.
    game.play(...Array.from({ length: 7 }, () => mv('follower', 'RL')), say('go back'), endTurn);
    expect(game.observe().feedback).toEqual([]);
    expect(game.lines()[1]).toBe("The leader's feedback this turn: none yet.");
  });

  test('an instruction the leader cancelled is the previous one, marked cancelled, in the observation and its text', () => {
    const game = new Witness(makeState({ config: ON })).play(say('go to the red star'), say('then the blue heart'), endTurn, mv('follower', 'RL'), cancel);
    game.play(say('go back'), endTurn);
    const observation = game.observe();
    expect(observation.instruction).toEqual({ id: 1, text: 'go back' });
    expect(observation.previousInstruction).toEqual({ id: 0, text: 'go to the red star', cancelled: true });
    expect(game.lines()[0]).toBe('Previous instruction: go to the red star (cancelled by the leader)');
    // Once the follower marks an instruction DONE, that one is the previous, unmarked.
    game.play(done, say('and again'));
    expect(game.observe().previousInstruction).toEqual({ id: 1, text: 'go back' });
  });

  test.each([
    [1, '1st'],
    [2, '2nd'],
    [3, '3rd'],
    [4, '4th'],
    [11, '11th'],
    [12, '12th'],
    [13, '13th'],
    [21, '21st'],
    [22, '22nd'],
  ])('after step %i the text says "after your %s step"', (afterStep, words) => {
    const base = new Witness(makeState({ config: ON })).play(say('go'), endTurn).observe();
    expect(describeObservation({ ...base, feedback: [{ signal: 'positive', afterStep }] })).toContain(`The leader's last feedback: positive, after your ${words} step this turn.`);
  });

  test("the protocol's observation schema keeps both fields, so that an observation handed back keeps them", () => {
    const game = new Witness(makeState({ config: ON })).play(say('a'), say('b'), endTurn, mv('follower', 'RL'), cancel, say('c'), endTurn, feedback('negative'));
    const observation = game.observe();
    const parsed = followerObservationSchema.parse(JSON.parse(JSON.stringify(observation)));
    expect(parsed.feedback).toEqual([{ signal: 'negative', afterStep: 0 }]);
    expect(parsed.previousInstruction).toEqual({ id: 0, text: 'a', cancelled: true });
    expect(followerObservationSchema.safeParse({ ...observation, feedback: [{ signal: 'meh', afterStep: 0 }] }).success).toBe(false);
  });
});

describe("the server's feedback notice as a follower hears it", () => {
  test('a feedback notice gives its signal and step; any other notice gives none', () => {
    expect(feedbackOfNotice({ kind: 'feedback', signal: 'negative', afterStep: 3 })).toEqual({ signal: 'negative', afterStep: 3 });
    expect(feedbackOfNotice({ kind: 'cancelled' })).toBeNull();
    expect(feedbackOfNotice({ kind: 'timeout', role: 'follower' })).toBeNull();
  });

  test("a malformed feedback notice is not a notice: the protocol's schema refuses it before anyone hears it", () => {
    for (const malformed of [
      { kind: 'feedback', signal: 'meh', afterStep: 3 },
      { kind: 'feedback', signal: 'positive', afterStep: -1 },
      { kind: 'feedback', signal: 'positive', afterStep: '2' },
      { kind: 'feedback', signal: 'positive', afterStep: 1.5 },
    ]) {
      expect(noticeSchema.safeParse(malformed).success).toBe(false);
    }
  });
});
