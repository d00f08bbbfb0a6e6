/**
 * A tiny DOM builder. Text is only ever set as text nodes, never parsed as HTML, so whatever a
 * player types is shown as typed.
 */
type Child = Node | string | number | null | undefined | false;
type Attributes = Record<string, string | number | boolean | undefined | ((event: Event) => void)>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Attributes = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, '').toLowerCase(), value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  setChildren(element, ...children);
  return element;
}

/** Replaces an element's children. */
export function setChildren(element: Element, ...children: Child[]): void {
  element.replaceChildren(...children.filter((child): child is Node | string | number => child !== null && child !== undefined && child !== false).map(toNode));
}

function toNode(child: Node | string | number): Node | string {
  return typeof child === 'number' ? String(child) : child;
}
