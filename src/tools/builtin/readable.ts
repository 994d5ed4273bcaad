/**
 * HTML → readable text: Mozilla Readability on a linkedom DOM, then a structure-keeping text rendering
 * (headings, paragraphs, list items, preformatted blocks, table rows).
 * @module
 */
import type { Readability } from '@mozilla/readability';
import type { parseHTML } from 'linkedom';

/** The HTML stack costs about 200 ms and 25 MB to load: it loads on the first page read, once per process. */
let htmlStack: Promise<{ Readability: typeof Readability; parseHTML: typeof parseHTML }> | undefined;

function loadHtmlStack(): Promise<{ Readability: typeof Readability; parseHTML: typeof parseHTML }> {
  htmlStack ??= Promise.all([import('@mozilla/readability'), import('linkedom')]).then(([readability, linkedom]) => ({
    Readability: readability.Readability,
    parseHTML: linkedom.parseHTML,
  }));
  return htmlStack;
}

/** The readable content of an HTML page. */
export interface ReadablePage {
  title: string;
  /** Plain text with paragraph breaks, `#` headings and `-` list items. */
  text: string;
  byline?: string;
  siteName?: string;
  lang?: string;
  /** True when Readability found an article; false when the whole body was rendered instead. */
  article: boolean;
}

const BLOCK = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'dd',
  'details',
  'dialog',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'header',
  'hgroup',
  'main',
  'nav',
  'ol',
  'p',
  'section',
  'summary',
  'table',
  'tbody',
  'thead',
  'tfoot',
  'ul',
  'caption',
]);
const SKIP = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'canvas',
  'iframe',
  'object',
  'head',
  'select',
  'button',
]);
/** Page chrome dropped when no article was found and the body is rendered as a whole. */
const CHROME = 'script, style, noscript, template, nav, header, footer, aside, form, iframe, svg';

/** Readability is typed against the DOM lib, which this package does not load; linkedom's document fits it at run time. */
type ReadabilityDocument = ConstructorParameters<typeof Readability>[0];

interface DomNode {
  nodeType: number;
  nodeName: string;
  textContent: string | null;
  childNodes: ArrayLike<DomNode>;
}

class TextWriter {
  private readonly out: string[] = [];
  private pendingBreak = 0;

  /** Requests at least `lines` line breaks before the next text. */
  brk(lines: number): void {
    this.pendingBreak = Math.max(this.pendingBreak, lines);
  }

  /** A space between inline runs; dropped at line starts. */
  space(): void {
    if (this.pendingBreak === 0 && this.out.length > 0) this.out.push(' ');
  }

  /** Appends text; `raw` keeps leading whitespace at a line start (preformatted blocks). */
  write(text: string, raw = false): void {
    const lineStart = this.pendingBreak > 0 || this.out.length === 0;
    const value = lineStart && !raw ? text.trimStart() : text;
    if (value === '') return;
    if (this.out.length > 0 && this.pendingBreak > 0) this.out.push('\n'.repeat(this.pendingBreak));
    this.pendingBreak = 0;
    this.out.push(value);
  }

  toString(): string {
    return this.out
      .join('')
      .split('\n')
      .map((line) => line.replace(/[ \t\u00a0]+$/g, ''))
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trim();
  }
}

function render(node: DomNode, w: TextWriter, inPre: boolean): void {
  if (node.nodeType === 3) {
    const raw = node.textContent ?? '';
    if (inPre) w.write(raw, true);
    else {
      const collapsed = raw.replace(/[\s\u00a0]+/g, ' ');
      if (collapsed.trim() !== '') w.write(collapsed);
      else if (collapsed === ' ') w.space();
    }
    return;
  }
  if (node.nodeType !== 1 && node.nodeType !== 9 && node.nodeType !== 11) return;
  const tag = node.nodeName.toLowerCase();
  if (SKIP.has(tag)) return;
  const children = Array.from(node.childNodes);
  if (/^h[1-6]$/.test(tag)) {
    w.brk(2);
    const title = (node.textContent ?? '').replace(/\s+/g, ' ').trim();
    if (title) w.write(`${'#'.repeat(Number(tag[1]))} ${title}`);
    w.brk(2);
    return;
  }
  if (tag === 'br') {
    if (inPre) w.write('\n', true);
    else w.brk(1);
    return;
  }
  if (tag === 'hr') {
    w.brk(2);
    return;
  }
  if (tag === 'pre') {
    w.brk(2);
    for (const child of children) render(child, w, true);
    w.brk(2);
    return;
  }
  if (tag === 'li') {
    w.brk(1);
    w.write('- ');
    for (const child of children) render(child, w, inPre);
    w.brk(1);
    return;
  }
  if (tag === 'tr') {
    w.brk(1);
    let first = true;
    for (const child of children) {
      if (child.nodeType !== 1) continue;
      if (!first) w.write(' | ');
      first = false;
      w.write((child.textContent ?? '').replace(/\s+/g, ' ').trim());
    }
    w.brk(1);
    return;
  }
  const block = BLOCK.has(tag);
  if (block) w.brk(tag === 'div' || tag === 'dt' || tag === 'dd' ? 1 : 2);
  for (const child of children) render(child, w, inPre);
  if (block) w.brk(tag === 'div' || tag === 'dt' || tag === 'dd' ? 1 : 2);
}

/** Renders a DOM subtree as readable plain text. */
function toText(node: DomNode): string {
  const writer = new TextWriter();
  render(node, writer, false);
  return writer.toString();
}

/**
 * Extracts the readable text of an HTML page: the main article when Readability finds one, otherwise the
 * body without scripts, navigation, headers and footers.
 */
export async function htmlToReadable(html: string, url?: string): Promise<ReadablePage> {
  const { Readability, parseHTML } = await loadHtmlStack();
  const { document } = parseHTML(html);
  const pageTitle = (document.querySelector('title')?.textContent ?? '').replace(/\s+/g, ' ').trim();
  const lang = document.documentElement?.getAttribute('lang') ?? undefined;
  // Readability mutates the document, so the fallback parses a fresh copy.
  const article = (() => {
    try {
      return new Readability(document as unknown as ReadabilityDocument, { keepClasses: false }).parse();
    } catch {
      return null;
    }
  })();
  if (article?.content) {
    const { document: articleDoc } = parseHTML(`<!DOCTYPE html><html><body>${article.content}</body></html>`);
    const page: ReadablePage = {
      title: (article.title ?? '').trim() || pageTitle || (url ?? ''),
      text: toText(articleDoc.body as unknown as DomNode),
      article: true,
    };
    if (article.byline) page.byline = article.byline.trim();
    if (article.siteName) page.siteName = article.siteName.trim();
    if (article.lang ?? lang) page.lang = (article.lang ?? lang) as string;
    return page;
  }
  const { document: fresh } = parseHTML(html);
  for (const element of Array.from(fresh.querySelectorAll(CHROME)) as { remove(): void }[]) element.remove();
  const page: ReadablePage = {
    title: pageTitle || (url ?? ''),
    text: fresh.body ? toText(fresh.body as unknown as DomNode) : '',
    article: false,
  };
  if (lang) page.lang = lang;
  return page;
}
