/** Messages over the page: what happened (banners that fade) and what needs attention (sticky). */
import { h } from './dom';

export type BannerTone = 'info' | 'warning' | 'error' | 'success';

export class Banners {
  readonly element = h('div', { class: 'banners', role: 'status', 'aria-live': 'polite' });
  private readonly sticky = new Map<string, HTMLElement>();

  /** A banner that goes away by itself after `seconds`. */
  show(text: string, tone: BannerTone = 'info', seconds = 5): void {
    const banner = h('div', { class: `banner ${tone}`, 'data-tone': tone }, h('span', { class: 'text' }, text));
    this.element.append(banner);
    setTimeout(() => banner.remove(), seconds * 1000);
  }

  /** A banner that stays until `clear(key)`, replacing any earlier one with the same key. */
  hold(key: string, text: string, tone: BannerTone = 'warning', action?: { label: string; run: () => void }): void {
    this.clear(key);
    const banner = h(
      'div',
      { class: `banner ${tone}`, 'data-tone': tone, 'data-key': key },
      h('span', { class: 'text' }, text),
      action ? h('button', { type: 'button', onclick: action.run }, action.label) : null,
    );
    this.sticky.set(key, banner);
    this.element.append(banner);
  }

  clear(key: string): void {
    this.sticky.get(key)?.remove();
    this.sticky.delete(key);
  }
}
