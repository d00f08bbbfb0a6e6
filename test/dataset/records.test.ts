/** Dataset records from logged games: what each instruction and game record holds. */
import { loadRecording } from '../../shared/eval/recording';
import { recordsOf } from '../../shared/dataset/records';
import { importCb2Game } from '../../shared/cb2/import';
import { feedbackAndCancelGame } from '../cb2/cb2Script';
import { cutLog, logText, selfPlayLines } from './corpus';

describe('recordsOf', () => {
  const lines = selfPlayLines(5);
  const recording = loadRecording(logText(lines));
  const { game, instructions } = recordsOf(recording);

  test('one record per instruction written, in order, with what the follower did for it', () => {
    const written = recording.events.filter((event) => event.type === 'instruction');
    expect(instructions.map((record) => record.text)).toEqual(written.map((event) => event.payload.text));
    expect(instructions.map((record) => record.id)).toEqual(instructions.map((_, i) => `selfplay-5#${i}`));
    const done = new Map(recording.instructions.map((instruction) => [instruction.id, instruction]));
    for (const record of instructions) {
      const recorded = done.get(record.instruction_id);
      expect(record.completed).toBe(recorded !== undefined);
      if (!recorded) continue;
      expect(record.actions).toEqual(recorded.actions);
      expect(record.actions[record.actions.length - 1]).toBe('DONE');
      expect(record.num_actions).toBe(recorded.actions.length - 1);
      expect(record.path).toHaveLength(record.num_actions + 1);
      expect(record.path[0]).toEqual(recording.states[recorded.start].follower);
      expect(record.path[record.path.length - 1]).toEqual(recorded.endPose);
      expect(record.state_before).toMatchObject({ cards: recording.states[recorded.start].cards, score: recording.states[recorded.start].score });
      expect(record.state_before!.queue[0]).toBe(record.text);
      expect(record.changed_cards).toEqual(recorded.changedCards);
    }
  });

  test("the game record: its score, its counts and the sets the follower's instructions made", () => {
    const end = lines[lines.length - 1];
    expect(end.kind).toBe('end');
    expect(game).toMatchObject({ game_id: 'selfplay-5', source: 'selfplay', profile: 'cerealbar', end_reason: 'turns-exhausted', seed: 5 });
    expect(game.score).toBe(end.kind === 'end' ? end.score : -1);
    expect(game.num_instructions).toBe(instructions.length);
    expect(game.num_completed).toBe(recording.instructions.length);
    expect(game.num_follower_actions).toBe(instructions.reduce((sum, record) => sum + record.num_actions, 0));
    const followerSets = recording.events.filter((event) => event.actor === 'follower' && event.outcome.set).length;
    expect(instructions.reduce((sum, record) => sum + record.points, 0)).toBe(followerSets);
    expect(followerSets).toBeGreaterThan(0);
  });

  test('a game without live feedback or cancels: none in its records', () => {
    expect(game.num_cancelled).toBe(0);
    for (const record of instructions) expect(record).toMatchObject({ cancelled: false, feedback_positive: 0, feedback_negative: 0, feedback: [] });
  });

  test('an open log: instructions not yet reached have no actions and no state before', () => {
    const open = recordsOf(loadRecording(cutLog(5, 12)));
    expect(open.game.end_reason).toBe('open');
    const untouched = open.instructions.filter((record) => record.actions.length === 0);
    expect(untouched.length).toBeGreaterThan(0);
    for (const record of untouched) expect(record).toMatchObject({ completed: false, state_before: null, path: [], points: 0 });
  });
});

describe('recordsOf a game with live feedback and a cancel (an imported CB2 game)', () => {
  const { game, instructions } = recordsOf(loadRecording(logText(importCb2Game(feedbackAndCancelGame()).lines)));

  test("each instruction's feedback: its counts, and its signals in order with the follower's steps in its turn before each", () => {
    expect(instructions.map(({ instruction_id, feedback_positive, feedback_negative, feedback }) => ({ instruction_id, feedback_positive, feedback_negative, feedback }))).toEqual([
      { instruction_id: 0, feedback_positive: 0, feedback_negative: 0, feedback: [] },
      {
        instruction_id: 1,
        feedback_positive: 1,
        feedback_negative: 1,
        feedback: [
          { signal: 'positive', after_step: 1 },
          { signal: 'negative', after_step: 2 },
        ],
      },
      { instruction_id: 2, feedback_positive: 0, feedback_negative: 0, feedback: [] },
      // Before the follower's first step of its turn: 0 steps.
      { instruction_id: 3, feedback_positive: 1, feedback_negative: 0, feedback: [{ signal: 'positive', after_step: 0 }] },
    ]);
  });

  test('cancelled instructions: marked, not completed; what the follower did before the cancel is kept', () => {
    expect(instructions.map((record) => [record.instruction_id, record.completed, record.cancelled])).toEqual([
      [0, true, false],
      [1, false, true],
      [2, false, true],
      [3, true, false],
    ]);
    // The follower turned twice for the first cancelled one; the second it never saw.
    expect(instructions[1]).toMatchObject({ actions: ['RR', 'RR'], num_actions: 2, state_before: { queue: ['turn right twice', 'then wait'] } });
    expect(instructions[1].path).toHaveLength(3);
    expect(instructions[2]).toMatchObject({ actions: [], path: [], state_before: null });
    expect(game).toMatchObject({ num_instructions: 4, num_completed: 2, num_cancelled: 2 });
  });
});
