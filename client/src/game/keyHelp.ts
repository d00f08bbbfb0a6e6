/** The keys a player can press, under the side panel: the moves, then the role's own keys. */
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
