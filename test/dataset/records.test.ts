/** Dataset records from logged games: what each instruction and game record holds. */
import { loadRecording } from '../../shared/eval/recording';
import { recordsOf } from '../../shared/dataset/records';
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

  test('an open log: instructions not yet reached have no actions and no state before', () => {
    const open = recordsOf(loadRecording(cutLog(5, 12)));
    expect(open.game.end_reason).toBe('open');
    const untouched = open.instructions.filter((record) => record.actions.length === 0);
    expect(untouched.length).toBeGreaterThan(0);
    for (const record of untouched) expect(record).toMatchObject({ completed: false, state_before: null, path: [], points: 0 });
  });
});
