/**
 * Small icons drawn as SVG, so that they look the same whatever fonts the machine has (an emoji
 * may be missing). Each is decorative (`aria-hidden`): the words beside it carry the meaning.
 */
const SVG = 'http://www.w3.org/2000/svg';

function icon(className: string, ...shapes: [tag: string, attributes: Record<string, string>][]): SVGSVGElement {
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('class', `icon ${className}`);
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  for (const [tag, attributes] of shapes) {
    const shape = document.createElementNS(SVG, tag);
    for (const [name, value] of Object.entries(attributes)) shape.setAttribute(name, value);
    svg.append(shape);
  }
  return svg;
}

/** A thumb up (positive) or down (negative): the same hand, turned over. */
export function thumbIcon(signal: 'positive' | 'negative'): SVGSVGElement {
  const hand = 'M8 10 L11.6 3.2 C12.3 1.9 14.7 2.4 14.5 4.4 L14 9 H19.6 C21.1 9 22.2 10.4 21.8 11.8 L19.8 19.4 C19.5 20.4 18.6 21 17.6 21 H8 Z';
  const turn: Record<string, string> = signal === 'negative' ? { transform: 'rotate(180 12 12)' } : {};
  return icon(`thumb ${signal}`, ['rect', { x: '2', y: '10', width: '4.5', height: '11', rx: '1', ...turn }], ['path', { d: hand, ...turn }]);
}

/** A cross: cancelled. */
export function crossIcon(): SVGSVGElement {
  return icon('cross', ['path', { d: 'M5 5 L19 19 M19 5 L5 19' }]);
}
