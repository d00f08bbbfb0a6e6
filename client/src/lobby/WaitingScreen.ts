/**
 * Waiting for a partner: the queue position, the private game's code to share, and Cancel (none on
 * a study's page, where the wait ends by itself). `notes` go under the queue position.
 */
import type { Role } from '../../../shared/engine/state';
import { h, setChildren } from '../ui/dom';

export class WaitingScreen {
  readonly element: HTMLElement;
  private readonly title = h('h1', {}, 'Joining…');
  private readonly position = h('p', { class: 'queue-position' }, '');
  private readonly share = h('p', { class: 'share' });

  constructor(cancel: (() => void) | null, ...notes: HTMLElement[]) {
    const cancelButton = cancel && h('button', { type: 'button', class: 'secondary cancel', onclick: cancel }, 'Cancel');
    this.element = h('main', { class: 'lobby waiting' }, this.title, h('div', { class: 'spinner', 'aria-hidden': 'true' }), this.position, this.share, ...notes, cancelButton);
  }

  /** The seat, and for a private game the code the server drew for it. */
  seated(role: Role, code: string | undefined): void {
    this.title.textContent = `You are the ${role}. Waiting for a ${role === 'leader' ? 'follower' : 'leader'} to join…`;
    if (!code) return;
    setChildren(
      this.share,
      'Share this code with your partner: ',
      h('span', { class: 'code' }, code),
      h('br'),
      'or this link: ',
      h('span', { class: 'share-link' }, `${location.origin}${location.pathname}?${withCode(code)}`),
    );
  }

  /** The server has no room for a new game now: says so, counting down the `seconds` until the page asks again. */
  async busy(seconds: number): Promise<void> {
    this.title.textContent = 'Many people are playing right now';
    for (let left = seconds; left > 0; left--) {
      this.position.textContent = `The server is busy. This page will look for a game again in ${left}\u00a0s.`;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    this.title.textContent = 'Joining…';
    this.position.textContent = '';
  }

  queue(position: number, waiting: number): void {
    this.position.textContent =
      position <= 1 ? `You are next in line${waiting > 1 ? ` (${waiting} players waiting)` : ''}.` : `You are number ${position} in line (${waiting} players waiting).`;
  }
}

function withCode(code: string): string {
  const query = new URLSearchParams(location.search);
  query.set('code', code);
  return query.toString();
}
