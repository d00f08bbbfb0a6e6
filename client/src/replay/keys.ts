/** Keyboard shortcuts: ← → step, Space plays and pauses, Home and End jump, 1 2 3 pick the view. */
import { VIEWS } from './views';
import type { ControlActions } from './controls';

/** `active` says whether the viewer has the keys (not while the game picker is open). */
export function bindKeys(actions: ControlActions, active: () => boolean): void {
  document.addEventListener('keydown', (event) => {
    if (!active() || event.ctrlKey || event.metaKey || event.altKey || event.defaultPrevented) return;
    const target = event.target as HTMLElement;
    // Keys typed into a field (the token) are text; on the focused slider the browser already
    // moves it with the arrows, Home and End.
    if (target.matches('input:not([type=range]), textarea, select')) return;
    const onSlider = target.matches('input[type=range]');
    const view = VIEWS.find((candidate) => candidate.key === event.key);
    if (event.key === ' ') actions.toggle();
    else if (view) actions.setView(view.name);
    else if (onSlider) return;
    else if (event.key === 'ArrowRight') actions.step(1);
    else if (event.key === 'ArrowLeft') actions.step(-1);
    else if (event.key === 'Home') actions.seek(0);
    else if (event.key === 'End') actions.seek(Number.POSITIVE_INFINITY);
    else return;
    event.preventDefault();
  });
}
