/**
 * The bar over the world: your role, whose turn it is, steps, turns, a live countdown (red in the
 * last seconds) and the score. The page's colour (body[data-turn]) says at a glance whose turn it is.
 */
import type { Role } from '../../../shared/engine/state';
import { h } from '../ui/dom';
import type { GameView } from './session';

const ROLE_NAMES: Readonly<Record<Role, string>> = { leader: 'Leader', follower: 'Follower' };

function stat(text: string, name: string): { element: HTMLElement; label: HTMLElement; value: HTMLElement } {
  const label = h('span', { class: 'label' }, text);
  const value = h('span', { class: 'value', 'data-stat': name }, '–');
  return { element: h('div', { class: 'stat' }, label, value), label, value };
}

export class StatusBar {
  readonly element: HTMLElement;
  private readonly turn = h('span', { class: 'turn', 'data-stat': 'turn' });
  private readonly steps = stat('Steps left', 'steps');
  private readonly turns = stat('Turns left', 'turns');
  private readonly time = stat('Time', 'time');
  private readonly score = stat('Score', 'score');
  private view: GameView | null = null;
  private readonly timer: number;

  constructor(private readonly role: Role) {
    this.element = h(
      'header',
      { class: 'status-bar' },
      h('h1', { class: `role ${role}` }, `You are the ${ROLE_NAMES[role]}`),
      this.turn,
      this.steps.element,
      this.turns.element,
      this.time.element,
      this.score.element,
    );
    this.timer = window.setInterval(() => this.tick(), 250);
  }

  update(view: GameView): void {
    this.view = view;
    const mine = view.turn.role === this.role;
    document.body.dataset.turn = view.phase === 'playing' && mine ? 'mine' : 'theirs';
    document.body.dataset.phase = view.phase;
    if (view.phase === 'ended') this.turn.textContent = `Game over: ${view.score} point${view.score === 1 ? '' : 's'}`;
    else this.turn.textContent = mine ? 'Your turn' : `${ROLE_NAMES[view.turn.role]}'s turn: please wait`;
    // Whose steps they are: the player in control's (the follower is not told the leader's).
    this.steps.label.textContent = mine ? 'Your steps' : `${ROLE_NAMES[view.turn.role]}'s steps`;
    this.steps.value.textContent = view.turn.stepsLeft === null ? '–' : String(view.turn.stepsLeft);
    this.turns.value.textContent = String(view.turnsLeft);
    this.score.value.textContent = String(view.score);
    this.tick();
  }

  dispose(): void {
    clearInterval(this.timer);
  }

  private tick(): void {
    const view = this.view;
    if (!view || view.phase !== 'playing' || view.turnDeadline === 0) {
      this.time.value.textContent = '–';
      this.time.element.classList.remove('urgent');
      return;
    }
    const seconds = Math.max(0, Math.ceil((view.turnDeadline - Date.now()) / 1000));
    this.time.value.textContent = `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
    // The last third of a short turn, the last ten seconds of a long one.
    const warnAt = Math.min(10, view.config.turnSeconds[view.turn.role] / 3);
    this.time.element.classList.toggle('urgent', seconds <= warnAt);
  }
}
