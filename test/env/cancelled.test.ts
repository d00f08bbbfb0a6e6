/**
 * The follower environment in log mode on a game whose leader cancelled instructions (an imported
 * CB2 game, synthetic: test/cb2/cb2Script.ts): the recorded cancel comes where it came, and the
 * instruction ids the environment reports are the follower's, as its observation gives them.
 */
import { importCb2Game } from '../../shared/cb2/import';
import { FollowerEnv } from '../../shared/env/env';
import { loadRecording } from '../../shared/eval/recording';
import type { LogLine } from '../../shared/log/format';
import { serializeLine } from '../../shared/log/recorder';
import { feedbackAndCancelGame } from '../cb2/cb2Script';

const logText = (lines: readonly LogLine[]) => lines.map((line) => `${serializeLine(line)}\n`).join('');
const recording = loadRecording(logText(importCb2Game(feedbackAndCancelGame()).lines));

describe('log mode over a cancel', () => {
  test("E-39, E-40: the human's actions replay the recorded game: the cancel ends the turn where it did, and info's instruction ids are the observation's", () => {
    const env = new FollowerEnv({ reward: 'ndtw' });
    const reset = env.reset({ log: recording, instruction: 0 });
    expect(reset.info.instructionId).toBe(reset.observation.instruction!.id);
    // The human's actions: the first instruction's, the two turns before the cancel, then the last instruction's.
    const actions = [...recording.instructions[0].actions, ...recording.cancelled[0].actions, ...recording.instructions[1].actions];
    const seen: { text: string | undefined; observed: number | undefined; info: number | null }[] = [];
    let last = null;
    for (const action of actions) {
      last = env.step(action);
      seen.push({ text: last.observation.instruction?.text, observed: last.observation.instruction?.id, info: last.info.instructionId });
    }
    // After the second turn for the cancelled instruction, the recorded leader cancels it (and the
    // queued one the follower never saw) and writes the next, which the follower knows as 2 (the engine's 3).
    const afterCancel = recording.instructions[0].actions.length + 1;
    expect(seen[afterCancel]).toEqual({ text: 'turn left twice', observed: 2, info: 2 });
    expect(seen.every(({ observed, info }) => (observed ?? null) === info)).toBe(true);
    // The replayed game ends as the recording does: the recorded leader has no turn left.
    expect(last).toMatchObject({ terminated: false, truncated: true });
  });
});
