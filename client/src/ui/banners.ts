/** Messages over the page: what happened (banners that fade) and what needs attention (sticky). */
import { h } from './dom';

export type BannerTone = 'info' | 'warning' | 'error' | 'success';

/** A banner's words: a sentence, or a sentence with small print under it (the server's codes, for support). */
export type BannerText = string | { readonly text: string; readonly detail: string };

function content(text: BannerText): HTMLElement {
  if (typeof text === 'string' || !text.detail) return h('span', { class: 'text' }, typeof text === 'string' ? text : text.text);
  return h('span', { class: 'text' }, text.text, h('br'), h('small', { class: 'detail' }, text.detail));
}

const detailOf = (text: BannerText): string | undefined => (typeof text === 'string' || !text.detail ? undefined : text.detail);

export class Banners {
  readonly element = h('div', { class: 'banners', role: 'status', 'aria-live': 'polite' });
  private readonly sticky = new Map<string, HTMLElement>();
  /** Fading banners of a kind (a cue's), so that a newer one replaces the one it makes stale. */
  private readonly fadingOfKind = new Map<string, HTMLElement>();

  /** A banner that goes away by itself after `seconds`; one of the same `kind` still showing goes at once. */
  show(text: BannerText, tone: BannerTone = 'info', seconds = 5, kind?: string): void {
    const banner = h('div', { class: `banner ${tone}`, 'data-tone': tone, 'data-detail': detailOf(text) }, content(text));
    if (kind !== undefined) {
      this.fadingOfKind.get(kind)?.remove();
      this.fadingOfKind.set(kind, banner);
    }
    this.element.append(banner);
    setTimeout(() => banner.remove(), seconds * 1000);
  }

  /** Removes the fading banners shown with a kind (the turn's cues): what they said is over. */
  clearKinds(): void {
    for (const banner of this.fadingOfKind.values()) banner.remove();
    this.fadingOfKind.clear();
  }

  /** A banner that stays until `clear(key)`, replacing any earlier one with the same key. */
  hold(key: string, text: BannerText, tone: BannerTone = 'warning', action?: { label: string; run: () => void }): void {
    this.clear(key);
    const banner = h(
      'div',
      { class: `banner ${tone}`, 'data-tone': tone, 'data-key': key, 'data-detail': detailOf(text) },
      content(text),
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
