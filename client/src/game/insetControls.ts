/**
 * The leader's controls for the inset of the follower's view: show or hide it, move it to another
 * corner, make it bigger or smaller. It starts hidden, as it would cover part of the board; the
 * choice is remembered in this browser.
 */
import { h } from '../ui/dom';
import { DEFAULT_INSET_LAYOUT, INSET_CORNERS, type InsetLayout, type WorldRenderer } from '../world/WorldRenderer';

const STORAGE_KEY = 'cerealbar.inset';
const SHARES = [0.2, 0.3, 0.45] as const;

interface InsetChoice extends InsetLayout {
  readonly shown: boolean;
}

const DEFAULT_CHOICE: InsetChoice = { ...DEFAULT_INSET_LAYOUT, shown: false };

/** The remembered choice, or the default when there is none (or it is not one we know). */
function load(): InsetChoice {
  try {
    const saved = JSON.parse(localStorage.getItem(STORAGE_KEY) ?? 'null') as Partial<InsetChoice> | null;
    if (saved && typeof saved.shown === 'boolean' && INSET_CORNERS.includes(saved.corner!) && SHARES.includes(saved.share as never)) {
      return { shown: saved.shown, corner: saved.corner!, share: saved.share! };
    }
  } catch {
    // Storage refused or unreadable: the default it is.
  }
  return DEFAULT_CHOICE;
}

function save(choice: InsetChoice): void {
  try {
    localStorage.setItem(STORAGE_KEY, JSON.stringify(choice));
  } catch {
    // Storage refused (private browsing): the choice lasts this page only.
  }
}

const next = <T>(items: readonly T[], item: T): T => items[(items.indexOf(item) + 1) % items.length];

export function insetControls(renderer: WorldRenderer): HTMLElement {
  let choice = load();
  const hide = h('button', { type: 'button', class: 'inset-hide' });
  const move = h('button', { type: 'button', class: 'inset-move', title: 'Move it to the next corner' }, 'Move');
  const size = h('button', { type: 'button', class: 'inset-size', title: 'Make it bigger, then smaller' }, 'Size');
  const apply = (changed: Partial<InsetChoice>) => {
    choice = { ...choice, ...changed };
    renderer.setInset(choice.shown);
    renderer.setInsetLayout(choice);
    hide.textContent = choice.shown ? 'Hide' : 'Show';
    // Hidden, only Show is offered: the bar over the world stays narrow.
    move.hidden = size.hidden = !choice.shown;
    save(choice);
  };
  hide.addEventListener('click', () => apply({ shown: !choice.shown }));
  move.addEventListener('click', () => apply({ corner: next(INSET_CORNERS, choice.corner) }));
  size.addEventListener('click', () => apply({ share: next(SHARES, choice.share as (typeof SHARES)[number]) }));
  apply({});
  return h('div', { class: 'inset-controls', role: 'group', 'aria-label': "The follower's view" }, h('span', { class: 'label' }, "Follower's view"), hide, move, size);
}
