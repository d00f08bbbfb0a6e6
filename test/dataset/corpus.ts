/** Self-play logs for the dataset tests: whole games, and games cut short at a chosen event. */
import { serializeLine } from '../../shared/log/recorder';
import type { LogLine } from '../../shared/log/format';
import { generateMap } from '../../shared/maps/generate';
import { playSelfPlayGame } from '../../shared/selfplay/game';

export function selfPlayLines(seed: number): LogLine[] {
  const lines: LogLine[] = [];
  playSelfPlayGame({ seed, map: generateMap(seed) }, (line) => lines.push(line));
  return lines;
}

export const logText = (lines: readonly LogLine[]) => lines.map((line) => `${serializeLine(line)}\n`).join('');

/** The game's header and its first `events` events: an open log, as a process that died leaves it. */
export function cutLog(seed: number, events: number): string {
  return logText(selfPlayLines(seed).slice(0, 1 + events));
}
