/** The recorder: an action whose line cannot be written never happened. */
import type { LogLine } from '../../shared/log/format';
import { GameRecorder } from '../../shared/log/recorder';
import { replay } from '../../shared/log/replay';
import { SAMPLE_ACTIONS, sampleLog, toText } from './sample';

test('a line that cannot be written leaves the state as it was, and the log ends consistently as storage-failed', () => {
  const header = sampleLog().lines[0];
  if (header.kind !== 'header') throw new Error('the sample starts with its header');
  const lines: LogLine[] = [];
  let failing = false;
  const recorder = new GameRecorder(header, (line) => {
    if (failing) throw new Error('ENOSPC');
    lines.push(line);
  });
  // The seventh action makes a set: the score would become 1.
  SAMPLE_ACTIONS.slice(0, 6).forEach((action, i) => recorder.apply(action, 1000 * (i + 1)));
  const before = recorder.state;
  failing = true;
  expect(() => recorder.apply(SAMPLE_ACTIONS[6], 7000)).toThrow('ENOSPC');
  expect(recorder.state).toBe(before);
  failing = false;
  const end = recorder.end(8000, 'storage-failed');
  expect(end).toEqual({ kind: 'end', t: 8000, reason: 'storage-failed', score: 0 });
  const result = replay(toText(lines));
  expect(result.events).toBe(6);
  expect(result.end).toEqual(end);
});
