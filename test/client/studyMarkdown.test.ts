/**
 * The researcher's Markdown on a study's pages: the subset that is parsed, and hostile input, which
 * stays text (the page builds elements from these blocks with text nodes only; the browser test of
 * the study pages shows a hostile consent form on a real page).
 */
import { httpsAddress, parseInline, parseMarkdown, type Block, type Inline } from '../../client/src/study/markdown';
import { EXAMPLE_CONSENT } from '../../cli/study/example';

const text = (value: string) => ({ kind: 'text', text: value });
const inlineText = (inline: Inline): string => (inline.kind === 'text' ? inline.text : inline.children.map(inlineText).join(''));

describe('blocks', () => {
  test('paragraphs are lines joined, split by blank lines; headings # to ### (deeper ones are ###)', () => {
    expect(parseMarkdown('# Consent\n\nYou agree\nto play.\n\n## Data\n#### Small\nLast.')).toEqual([
      { kind: 'heading', level: 1, children: [text('Consent')] },
      { kind: 'paragraph', children: [text('You agree to play.')] },
      { kind: 'heading', level: 2, children: [text('Data')] },
      { kind: 'heading', level: 3, children: [text('Small')] },
      { kind: 'paragraph', children: [text('Last.')] },
    ]);
  });

  test('bullet and numbered lists, with lines that go on under an item', () => {
    expect(parseMarkdown('Before:\n- one\n* two\n  more\n+ three\n\n1. first\n2) second')).toEqual([
      { kind: 'paragraph', children: [text('Before:')] },
      { kind: 'list', ordered: false, items: [[text('one')], [text('two more')], [text('three')]] },
      { kind: 'list', ordered: true, items: [[text('first')], [text('second')]] },
    ]);
  });

  test('a horizontal rule, Windows line ends, and a # without a space is text', () => {
    expect(parseMarkdown('a\r\n\r\n---\r\n#hashtag')).toEqual([
      { kind: 'paragraph', children: [text('a')] },
      { kind: 'rule' },
      { kind: 'paragraph', children: [text('#hashtag')] },
    ]);
  });

  test('a block quote is its lines starting with ">", without it, as blocks of their own', () => {
    expect(parseMarkdown('> This is an example. Replace\n> the parts.\n>\n> - one\nAfter.')).toEqual([
      {
        kind: 'quote',
        blocks: [
          { kind: 'paragraph', children: [text('This is an example. Replace the parts.')] },
          { kind: 'list', ordered: false, items: [[text('one')]] },
        ],
      },
      { kind: 'paragraph', children: [text('After.')] },
    ]);
  });

  test("the example study's consent form: its note is a quote, with no \">\" left in its text, and the study's facts a list", () => {
    const texts = (blocks: readonly Block[]): string[] =>
      blocks.flatMap((block) => {
        if (block.kind === 'quote') return texts(block.blocks);
        if (block.kind === 'rule') return [];
        const inlines = block.kind === 'list' ? block.items.flat() : block.children;
        return inlines.map(inlineText);
      });
    const blocks = parseMarkdown(EXAMPLE_CONSENT);
    expect(blocks.some((block) => block.kind === 'quote')).toBe(true);
    for (const line of texts(blocks)) expect(line).not.toMatch(/^\s*>/);
    // The study's facts are lines of their own, not one run-on paragraph.
    expect(blocks).toContainEqual({ kind: 'list', ordered: false, items: expect.arrayContaining([expect.arrayContaining([{ kind: 'strong', children: [text('Study:')] }])]) });
  });

  test('nothing, or blank lines only, is no block', () => {
    expect(parseMarkdown('')).toEqual([]);
    expect(parseMarkdown('\n  \n')).toEqual([]);
  });
});

describe('inlines', () => {
  test('**bold**, *italic*, nested, and links with https addresses', () => {
    expect(parseInline('a **b *c* d** and [the form](https://example.org/form?x=1)')).toEqual([
      text('a '),
      { kind: 'strong', children: [text('b '), { kind: 'em', children: [text('c')] }, text(' d')] },
      text(' and '),
      { kind: 'link', href: 'https://example.org/form?x=1', children: [text('the form')] },
    ]);
  });

  test('markers without their pair, around spaces, or escaped are text', () => {
    expect(parseInline('5 * 3 * 2')).toEqual([text('5 * 3 * 2')]);
    expect(parseInline('**open')).toEqual([text('**open')]);
    expect(parseInline('\\*not italic\\*')).toEqual([text('*not italic*')]);
    expect(parseInline('PROLIFIC_PID and snake_case')).toEqual([text('PROLIFIC_PID and snake_case')]);
  });

  test('HTML is text, never markup', () => {
    expect(parseMarkdown('<script>alert(1)</script>\n\n<img src=x onerror=alert(1)>')).toEqual([
      { kind: 'paragraph', children: [text('<script>alert(1)</script>')] },
      { kind: 'paragraph', children: [text('<img src=x onerror=alert(1)>')] },
    ]);
  });

  test.each([
    ['javascript:alert(1)'],
    ['JavaScript:alert(1)'],
    ['data:text/html,<script>alert(1)</script>'],
    ['http://example.org'],
    ['/relative/path'],
    ['//example.org'],
    ['vbscript:msgbox'],
  ])('a link to %s keeps its text and loses its address', (address) => {
    const inlines = parseInline(`see [this](${address}) now`);
    expect(inlines.some((inline) => inline.kind === 'link')).toBe(false);
    expect(inlines.map((inline) => (inline.kind === 'text' ? inline.text : '')).join('')).toMatch(/^see this/);
  });

  test('https addresses are normalised; others are null', () => {
    expect(httpsAddress('https://EXAMPLE.org/a b')).toBe('https://example.org/a%20b');
    expect(httpsAddress(' javascript:alert(1)')).toBeNull();
    expect(httpsAddress('not a url')).toBeNull();
  });
});
