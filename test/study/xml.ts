/** A small XML reader for the tests, strict enough to show that an ExternalQuestion is well-formed. */

export interface XmlElement {
  readonly name: string;
  readonly attributes: Readonly<Record<string, string>>;
  readonly text: string;
  readonly children: XmlElement[];
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decode(text: string): string {
  if (/&(?!(amp|lt|gt|quot|apos|#\d+|#x[0-9a-f]+);)/i.test(text)) throw new Error(`a bare & in ${JSON.stringify(text)}`);
  if (/[<>]/.test(text)) throw new Error(`a bare < or > in ${JSON.stringify(text)}`);
  return text.replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (_, entity: string) =>
    entity.startsWith('#x') ? String.fromCodePoint(parseInt(entity.slice(2), 16)) : entity.startsWith('#') ? String.fromCodePoint(Number(entity.slice(1))) : ENTITIES[entity],
  );
}

/**
 * A small XML reader for the tests: one root, balanced tags, quoted attributes, and only the five
 * predefined entities and character references. Throws on anything else, so what it reads is
 * well-formed (for the subset ExternalQuestion uses: no comments, CDATA or doctype).
 */
export function readXml(xml: string): XmlElement {
  const body = xml.replace(/^<\?xml version="1\.0" encoding="UTF-8"\?>\n/, '');
  const token = /<(\/?)([A-Za-z_][\w.-]*)((?:\s+[A-Za-z_][\w.:-]*="[^"<]*")*)\s*(\/?)>|([^<]+)/gy;
  const stack: { name: string; attributes: Record<string, string>; text: string; children: XmlElement[] }[] = [];
  let root: XmlElement | null = null;
  let match: RegExpExecArray | null;
  let at = 0;
  while (at < body.length) {
    token.lastIndex = at;
    match = token.exec(body);
    if (!match) throw new Error(`not XML at ${JSON.stringify(body.slice(at, at + 20))}`);
    at = token.lastIndex;
    const [, closing, name, attributeText, selfClosing, text] = match;
    if (text !== undefined) {
      if (stack.length === 0) {
        if (text.trim() !== '') throw new Error('text outside the root element');
      } else stack[stack.length - 1].text += decode(text);
      continue;
    }
    if (closing) {
      const open = stack.pop();
      if (!open || open.name !== name) throw new Error(`</${name}> closes ${open ? `<${open.name}>` : 'nothing'}`);
      if (stack.length === 0) {
        if (root) throw new Error('two root elements');
        root = open;
      } else stack[stack.length - 1].children.push(open);
      continue;
    }
    const attributes: Record<string, string> = {};
    for (const [, key, value] of attributeText.matchAll(/([A-Za-z_][\w.:-]*)="([^"]*)"/g)) attributes[key] = decode(value);
    const element = { name, attributes, text: '', children: [] };
    if (selfClosing) {
      if (stack.length === 0) throw new Error('a self-closing root');
      stack[stack.length - 1].children.push(element);
    } else stack.push(element);
  }
  if (stack.length > 0 || !root) throw new Error(`<${stack[stack.length - 1]?.name}> is never closed`);
  return root;
}
