/** A short recorded game on the rules fixture: instructions, a set, every kind of turn end. */
import type { Action } from '../../shared/engine';
import { GameRecorder, makeHeader, serializeLine } from '../../shared/log/recorder';
import type { EndReason, LogLine } from '../../shared/log/format';
import { makeState } from '../fixtures';

export const SAMPLE_ACTIONS: Action[] = [
  { type: 'instruction', actor: 'leader', text: 'pick up the three cards ahead of you' },
  { type: 'move', actor: 'leader', move: 'MF' },
  { type: 'instruction', actor: 'leader', text: 'then turn around' },
  { type: 'endTurn', actor: 'leader' },
  { type: 'move', actor: 'follower', move: 'MF' },
  { type: 'move', actor: 'follower', move: 'MF' },
  { type: 'move', actor: 'follower', move: 'MF' },
  { type: 'done', actor: 'follower' },
  { type: 'move', actor: 'follower', move: 'RR' },
  { type: 'move', actor: 'follower', move: 'RR' },
  { type: 'timeout', actor: 'server', role: 'follower' },
  { type: 'move', actor: 'leader', move: 'RL' },
  { type: 'move', actor: 'leader', move: 'MF' },
  { type: 'endTurn', actor: 'leader' },
  { type: 'done', actor: 'follower' },
  { type: 'timeout', actor: 'server', role: 'leader' },
];

/** The sample game's log lines (ended as `reason`), and its text. */
export function sampleLog(reason: EndReason = 'abandoned', more: readonly Action[] = []): { lines: LogLine[]; text: string } {
  const start = makeState();
  const header = makeHeader({
    gameId: 'sample',
    startedAt: new Date(Date.UTC(2026, 0, 1)),
    seed: 42,
    config: start.config,
    map: start.world.map,
    setup: { leader: start.leader, follower: start.follower, cards: start.cards, rng: start.rng },
    meta: { source: 'test' },
  });
  const lines: LogLine[] = [];
  const recorder = new GameRecorder(header, (line) => lines.push(line));
  [...SAMPLE_ACTIONS, ...more].forEach((action, i) => {
    const result = recorder.apply(action, 1000 * (i + 1));
    if (!result.ok) throw new Error(`sample action ${i} refused: ${result.error.code}`);
  });
  recorder.end(100_000, reason);
  return { lines, text: toText(lines) };
}

export function toText(lines: unknown[]): string {
  return lines.map((line) => `${typeof line === 'string' ? line : serializeLine(line as LogLine)}\n`).join('');
}
