/**
 * The researcher's Markdown (the consent form, the extra rules), shown safely: a small subset is
 * parsed into blocks (paragraphs, headings, bullet and numbered lists, rules, block quotes) and inlines
 * (**bold**, *italic*, [links](https://...)), and built as DOM nodes with text nodes only. Nothing
 * is ever parsed as HTML, so `<script>` in the text is shown as typed; a link whose address is not
 * https is shown as its text alone.
 *
 * No Markdown library is among the dependencies; one (with its HTML output switched off) would
 * cover more of the syntax. This subset is what a consent form needs.
 */
import { h } from '../ui/dom';

export type Inline =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'strong' | 'em'; readonly children: readonly Inline[] }
  | { readonly kind: 'link'; readonly href: string; readonly children: readonly Inline[] };

export type Block =
  /** `#` is level 1; levels stop at 3 (`###` and deeper). */
  | { readonly kind: 'heading'; readonly level: 1 | 2 | 3; readonly children: readonly Inline[] }
  | { readonly kind: 'paragraph'; readonly children: readonly Inline[] }
  | { readonly kind: 'list'; readonly ordered: boolean; readonly items: readonly (readonly Inline[])[] }
  | { readonly kind: 'rule' }
  /** Lines starting with `>`, without it: their own blocks (a note set apart, such as "replace the parts in brackets"). */
  | { readonly kind: 'quote'; readonly blocks: readonly Block[] };

const HEADING = /^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$/;
const LIST_ITEM = /^ {0,3}([-*+]|\d{1,9}[.)])\s+(.*)$/;
const RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;

export function parseMarkdown(source: string): Block[] {
  const blocks: Block[] = [];
  let paragraph: string[] = [];
  let list: { ordered: boolean; items: string[] } | null = null;
  let quote: string[] | null = null;
  const close = () => {
    if (paragraph.length > 0) blocks.push({ kind: 'paragraph', children: parseInline(paragraph.join(' ')) });
    if (list) blocks.push({ kind: 'list', ordered: list.ordered, items: list.items.map(parseInline) });
    if (quote) blocks.push({ kind: 'quote', blocks: parseMarkdown(quote.join('\n')) });
    paragraph = [];
    list = null;
    quote = null;
  };
  for (const line of source.replace(/\r\n?/g, '\n').split('\n')) {
    const heading = HEADING.exec(line);
    const item = LIST_ITEM.exec(line);
    const quoted = QUOTE.exec(line);
    // A quote is its lines that start with ">"; the first line without one ends it.
    if (quote && !quoted) close();
    if (line.trim() === '') {
      close();
    } else if (quoted) {
      if (!quote) close();
      (quote ??= []).push(quoted[1]);
    } else if (RULE.test(line)) {
      close();
      blocks.push({ kind: 'rule' });
    } else if (heading) {
      close();
      blocks.push({ kind: 'heading', level: Math.min(heading[1].length, 3) as 1 | 2 | 3, children: parseInline(heading[2]) });
    } else if (item) {
      const ordered = /\d/.test(item[1]);
      if (paragraph.length > 0 || (list && list.ordered !== ordered)) close();
      list ??= { ordered, items: [] };
      list.items.push(item[2].trim());
    } else if (list) {
      // A line under an item (indented or not) goes on with it.
      list.items[list.items.length - 1] += ` ${line.trim()}`;
    } else {
      paragraph.push(line.trim());
    }
  }
  close();
  return blocks;
}

/** Bold before italic; a marker without its closing one is plain text, as is a backslash-escaped one. */
const STRONG = /^\*\*(?=\S)([\s\S]*?\S)\*\*/;
const EM = /^\*(?=[^\s*])([^*]*?[^\s*])?\*/;
const LINK = /^\[([^\]]+)\]\(\s*([^\s)]+)\s*\)/;
const ESCAPABLE = /[\\`*_{}[\]()#+\-.!<>]/;

export function parseInline(text: string): Inline[] {
  const out: Inline[] = [];
  let plain = '';
  const flush = () => {
    if (plain !== '') out.push({ kind: 'text', text: plain });
    plain = '';
  };
  let at = 0;
  while (at < text.length) {
    const rest = text.slice(at);
    const char = text[at];
    if (char === '\\' && ESCAPABLE.test(text[at + 1] ?? '')) {
      plain += text[at + 1];
      at += 2;
      continue;
    }
    const strong = char === '*' ? STRONG.exec(rest) : null;
    const em = char === '*' && !strong ? EM.exec(rest) : null;
    const link = char === '[' ? LINK.exec(rest) : null;
    const match = strong ?? em ?? link;
    if (!match) {
      plain += char;
      at++;
      continue;
    }
    flush();
    at += match[0].length;
    if (strong) out.push({ kind: 'strong', children: parseInline(strong[1]) });
    else if (em) out.push({ kind: 'em', children: parseInline(em[0].slice(1, -1)) });
    else {
      const href = httpsAddress(link![2]);
      const children = parseInline(link![1]);
      if (href) out.push({ kind: 'link', href, children });
      else out.push(...children);
    }
  }
  flush();
  return out;
}

/** The address when it is an absolute https URL (normalised), else null: no javascript:, data:, http: or relative links. */
export function httpsAddress(address: string): string | null {
  try {
    const url = new URL(address);
    return url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}

/**
 * The Markdown as elements, in a `div.markdown`. `headingLevel` is the HTML level of a `#`
 * heading: the page's own title is the h1, so the text's headings start below it.
 */
export function markdownElement(source: string, headingLevel: 2 | 3 | 4 = 2): HTMLElement {
  return h('div', { class: 'markdown' }, ...parseMarkdown(source).map((block) => blockElement(block, headingLevel)));
}

function blockElement(block: Block, headingLevel: number): HTMLElement {
  switch (block.kind) {
    case 'heading':
      return h(`h${Math.min(block.level + headingLevel - 1, 6)}` as 'h2', {}, ...block.children.map(inlineNode));
    case 'paragraph':
      return h('p', {}, ...block.children.map(inlineNode));
    case 'list':
      return h(block.ordered ? 'ol' : 'ul', {}, ...block.items.map((item) => h('li', {}, ...item.map(inlineNode))));
    case 'rule':
      return h('hr');
    case 'quote':
      return h('blockquote', {}, ...block.blocks.map((inner) => blockElement(inner, headingLevel)));
  }
}

function inlineNode(inline: Inline): Node | string {
  switch (inline.kind) {
    case 'text':
      return inline.text;
    case 'strong':
      return h('strong', {}, ...inline.children.map(inlineNode));
    case 'em':
      return h('em', {}, ...inline.children.map(inlineNode));
    case 'link':
      // A new tab: the study's page (in MTurk's frame too) stays where it is.
      return h('a', { href: inline.href, rel: 'noopener noreferrer', target: '_blank' }, ...inline.children.map(inlineNode));
  }
}
