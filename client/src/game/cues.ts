/**
 * What a player should notice at once when a view arrives: a set made, its turn come, the last
 * round begun, each with its sound. A pure function of the last two views, so that it can be tested without a page.
 */
import type { Role } from '../../../shared/engine/state';
import type { BannerTone } from '../ui/banners';
import type { SoundKind } from '../ui/sound';
import type { GameView } from './session';

export interface Cue {
  readonly kind: SoundKind;
  readonly text: string;
  readonly tone: BannerTone;
}

export function cuesBetween(previous: GameView | null, next: GameView, role: Role): Cue[] {
  if (!previous || next.phase !== 'playing') return [];
  const cues: Cue[] = [];
  const points = next.score - previous.score;
  if (points > 0) cues.push({ kind: 'set', text: `Set made: +${points} point${points === 1 ? '' : 's'}, ${next.turnsLeft} turns left.`, tone: 'success' });
  if (next.turnsLeft === 1 && previous.turnsLeft > 1) cues.push({ kind: 'lastRound', text: 'Last round: this is the final turn for each of you.', tone: 'warning' });
  if (next.turn.role === role && previous.turn.role !== role) {
    cues.push({ kind: 'yourTurn', text: role === 'leader' ? 'Your turn: write instructions, move, then End Turn.' : 'Your turn: follow the current instruction.', tone: 'info' });
  }
  return cues;
}
