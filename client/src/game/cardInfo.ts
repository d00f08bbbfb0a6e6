/**
 * Cards in words and in large print, for players who cannot make out a small card or tell its
 * colours apart: a close-up of the card under the pointer (shape, count, and its colour named),
 * and the selected cards listed in words, with why a selection cannot make a set.
 */
import { describeCard, type Card, type CardFace, type Shape } from '../../../shared/engine/cards';
import { h, setChildren } from '../ui/dom';
import { CARD_COLOURS } from '../world/cards';
import type { WorldRenderer } from '../world/WorldRenderer';
import { selectionText } from './selection';
import type { GameView } from './session';

/**
 * The close-up that follows the pointer over a card, over the world, and the line that lists the
 * selected cards, in `notes` (the bar over the top of the world, off the board).
 */
export class CardInfo {
  private readonly closeUp = h('div', { class: 'card-pointer', role: 'tooltip', hidden: true });
  private readonly selection = h('p', { class: 'selection', 'aria-live': 'polite', hidden: true });
  private cards: readonly Card[] = [];

  constructor(
    private readonly box: HTMLElement,
    private readonly renderer: WorldRenderer,
    notes: HTMLElement,
  ) {
    box.append(this.closeUp);
    notes.append(this.selection);
    renderer.canvas.addEventListener('pointermove', (event) => this.pointAt(event.clientX, event.clientY));
    renderer.canvas.addEventListener('pointerleave', () => (this.closeUp.hidden = true));
  }

  update(view: GameView): void {
    this.cards = [...view.cards, ...view.rememberedCards];
    const text = selectionText(view.cards, view.invalidCards);
    this.selection.textContent = text ?? '';
    this.selection.hidden = text === null;
    this.selection.classList.toggle('invalid', view.invalidCards.length > 0);
  }

  private pointAt(clientX: number, clientY: number): void {
    const id = this.renderer.cardAt(clientX, clientY);
    const card = id === null ? undefined : this.cards.find((candidate) => candidate.id === id);
    this.closeUp.hidden = card === undefined;
    if (!card) return;
    setChildren(this.closeUp, cardCloseUp(card));
    const box = this.box.getBoundingClientRect();
    // Beside the pointer, kept inside the world.
    this.closeUp.style.left = `${Math.min(clientX - box.left + 16, box.width - 150)}px`;
    this.closeUp.style.top = `${Math.min(clientY - box.top + 16, box.height - 110)}px`;
  }
}

/**
 * A text glyph for each shape, drawn in the card's colour, as the board draws it from above (the
 * cube stands on a corner: a hexagon), so that the glyph and its name (SHAPE_NAMES) agree.
 */
const GLYPHS: Readonly<Record<Shape, string>> = {
  torus: '◯', plus: '✚', star: '★', cube: '⬢', heart: '♥', diamond: '◆', triangle: '▲',
};

/** A card face drawn large, with its description underneath. */
export function cardCloseUp(face: CardFace): HTMLElement {
  const glyphs = h('div', { class: 'face', 'aria-hidden': 'true' }, GLYPHS[face.shape].repeat(face.count));
  // Through the CSSOM: the Content-Security-Policy forbids style attributes.
  glyphs.style.color = CARD_COLOURS[face.color];
  return h('div', { class: 'card-close-up', 'data-card': describeCard(face) }, glyphs, h('div', { class: 'caption' }, describeCard(face)));
}
