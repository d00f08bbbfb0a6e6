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
