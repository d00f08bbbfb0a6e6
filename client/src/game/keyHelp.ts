/** The keys a player can press, under the side panel: the moves, then the role's own keys. */
import type { FeedbackSignal } from '../../../shared/engine/actions';
import { h } from '../ui/dom';

export function keyHelp(...roleKeys: (Node | string)[]): HTMLElement {
  return h(
    'div',
    { class: 'keys' },
    h('kbd', {}, '↑'), ' forward ', h('kbd', {}, '↓'), ' back ', h('kbd', {}, '←'), h('kbd', {}, '→'), ' turn', h('br'),
    ...roleKeys,
  );
}

/** The key held with Enter to end the turn, as the keyboard names it: ⌘ on Apple's, Ctrl elsewhere (either works everywhere). */
export function commandKey(): string {
  return /Mac|iPhone|iPad/.test(navigator.platform) ? '⌘' : 'Ctrl';
}

/** What the leader may do in the follower's turn besides watching (when the game's rules allow it). */
export type Interjection = FeedbackSignal | 'cancel';

/** The parts of a key press that name a chord. */
export type KeyChord = Pick<KeyboardEvent, 'key' | 'code' | 'ctrlKey' | 'metaKey' | 'altKey' | 'shiftKey'>;

/**
 * The leader's chords for feedback and cancelling: Ctrl (or ⌘) with ↑ (good), ↓ (not that), or
 * Shift+X (cancel). None types text (Ctrl+Alt, which is AltGr on some keyboards, is left alone),
 * so a chord never takes a key meant for the instruction box. X is read from the character, or
 * from the key's place on a keyboard whose letters are not Latin.
 */
export function interjectionKey(chord: KeyChord): Interjection | null {
  if (!(chord.ctrlKey || chord.metaKey) || chord.altKey) return null;
  if (chord.shiftKey) {
    const latin = /^[a-z]$/i.test(chord.key);
    return (latin ? chord.key.toLowerCase() === 'x' : chord.code === 'KeyX') ? 'cancel' : null;
  }
  if (chord.key === 'ArrowUp') return 'positive';
  if (chord.key === 'ArrowDown') return 'negative';
  return null;
}

/** A chord as the key help and the banners write it. */
export function chordName(interjection: Interjection): string {
  const key = interjection === 'cancel' ? 'Shift+X' : interjection === 'positive' ? '↑' : '↓';
  return `${commandKey()}+${key}`;
}

/** The chords as `aria-keyshortcuts` names them (both modifiers, as both work). */
export const INTERJECTION_SHORTCUTS: Readonly<Record<Interjection, string>> = {
  positive: 'Control+ArrowUp Meta+ArrowUp',
  negative: 'Control+ArrowDown Meta+ArrowDown',
  cancel: 'Control+Shift+X Meta+Shift+X',
};
