import TurndownService from 'turndown';
import { htmlToPlainText } from './html-to-plain-text';
import { measureHtml } from './measure-html';

/** An HTML page turned into readable content. */
export interface ConvertedHtml {
  /** The text of the first `<title>`, whitespace collapsed; null when absent or empty. */
  title: string | null;
  /** Markdown, or plain text for format `text`. */
  content: string;
}

type Element = HTMLElement;

/** Page chrome and non-content elements, dropped with everything inside them. */
const DROPPED = new Set([
  'SCRIPT',
  'STYLE',
  'NOSCRIPT',
  'NAV',
  'FOOTER',
  'ASIDE',
  'IFRAME',
  'SVG',
  'TEMPLATE',
  'OBJECT',
  'EMBED',
  'CANVAS',
  'BUTTON',
  'SELECT',
  'INPUT',
  'TEXTAREA',
  'DIALOG',
  'LINK',
  'META',
]);

function hasAncestor(node: Element, names: string[]): boolean {
  for (let parent = node.parentNode as Element | null; parent; parent = parent.parentNode as Element | null) {
    if (names.includes(parent.nodeName)) return true;
  }
  return false;
}

function isDropped(node: Element): boolean {
  // Foreign elements (svg) keep their lower-case name.
  if (DROPPED.has(node.nodeName.toUpperCase())) return true;
  // Some frameworks (ASP.NET WebForms) wrap the whole page in one <form>: keep a form that holds content.
  if (node.nodeName === 'FORM') return node.querySelector?.('main, article, h1, h2') == null;
  // A page-wide <header> is chrome; an article's own header holds its heading.
  if (node.nodeName === 'HEADER') return !hasAncestor(node, ['ARTICLE', 'MAIN']);
  return node.hasAttribute?.('hidden') === true || node.getAttribute?.('aria-hidden') === 'true';
}

function insideDropped(node: Element): boolean {
  for (let parent = node.parentNode as Element | null; parent; parent = parent.parentNode as Element | null) {
    if (parent.nodeType === 1 && isDropped(parent)) return true;
  }
  return false;
}

function isMain(node: Element): boolean {
  return node.nodeName === 'MAIN' || node.getAttribute?.('role') === 'main';
}

/** Absolute http(s) address of a link, or undefined for javascript:, data: and broken links. */
function absolute(href: string | null, base: string): string | undefined {
  if (href === null || href.trim() === '') return undefined;
  try {
    const url = new URL(href.trim(), base);
    return url.protocol === 'http:' || url.protocol === 'https:' || url.protocol === 'mailto:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Past these a page is not given to the DOM and turndown but read as text
 * ({@link htmlToPlainText}): their time grows with the square of the nesting (and of an ordered
 * list's length in turndown's own rule, replaced here), they recurse per level (a few thousand
 * overflow the stack), and the conversion runs on the event loop, where no deadline can stop it.
 * Real pages stay far below: a long encyclopaedia article has some 30,000 elements, nested 30 deep.
 */
export const HTML_CONVERSION_LIMITS = { elements: 100_000, depth: 128 } as const;

/**
 * Turns an HTML page into clean markdown (or plain text) with turndown: the title from `<title>`;
 * scripts, styles, navigation, forms and other chrome removed; the `<main>` (else top-level
 * `<article>`s) content preferred when present; links made absolute against `baseUrl`. A page past
 * {@link HTML_CONVERSION_LIMITS}, or one the conversion fails on, is given as its text.
 *
 * @example
 * convertHtml('<title>T</title><main><h1>Hi</h1></main>', 'markdown', 'https://example.com/');
 * // { title: 'T', content: '# Hi' }
 */
export function convertHtml(html: string, format: 'markdown' | 'text', baseUrl: string): ConvertedHtml {
  const measured = measureHtml(html, HTML_CONVERSION_LIMITS);
  if (measured.elements > HTML_CONVERSION_LIMITS.elements || measured.depth > HTML_CONVERSION_LIMITS.depth) return htmlToPlainText(html);
  const service = new TurndownService({
    headingStyle: 'atx',
    codeBlockStyle: 'fenced',
    bulletListMarker: '-',
    emDelimiter: '_',
  });
  let title: string | null = null;
  const mains: string[] = [];
  const articles: string[] = [];
  // First: the rules added after it (a dropped or hidden item) come before it.
  useLinearListItems(service);

  service.addRule('title', {
    filter: 'title',
    replacement: (_content, node) => {
      const text = (node.textContent ?? '').replace(/\s+/g, ' ').trim();
      if (title === null && text !== '') title = text;
      return '';
    },
  });
  service.addRule('dropped', { filter: isDropped, replacement: () => '' });
  service.addRule('main', {
    filter: (node) => (isMain(node) || (node.nodeName === 'ARTICLE' && !hasAncestor(node, ['ARTICLE', 'MAIN']))) && !insideDropped(node),
    replacement: (content, node) => {
      (isMain(node) ? mains : articles).push(content);
      return `\n\n${content}\n\n`;
    },
  });
  if (format === 'text') useTextRules(service);
  else useMarkdownLinkRules(service, baseUrl);

  let whole: string;
  try {
    whole = service.turndown(html);
  } catch {
    // What the limits did not foresee (a stack overflow in the DOM): the page is still read.
    return htmlToPlainText(html);
  }
  const chosen = mains.length > 0 ? mains.join('\n\n') : articles.length > 0 ? articles.join('\n\n') : whole;
  return { title, content: tidy(chosen) };
}

/**
 * turndown's own list item rule, but numbering an ordered list's items as they come (turndown
 * visits siblings in order) instead of `indexOf` over the list's children: linear in a list's length.
 */
function useLinearListItems(service: TurndownService): void {
  const numbered = new Map<Node, number>();
  service.addRule('listItem', {
    filter: 'li',
    replacement: (content, node, options) => {
      let prefix = `${options.bulletListMarker}   `;
      const parent = node.parentNode as Element | null;
      if (parent?.nodeName === 'OL') {
        const index = numbered.get(parent) ?? 0;
        numbered.set(parent, index + 1);
        const start = parent.getAttribute('start');
        prefix = `${start ? Number(start) + index : index + 1}.  `;
      }
      const body = trimNewlines(content) + (content.endsWith('\n') ? '\n' : '');
      return prefix + body.replace(/\n/g, `\n${' '.repeat(prefix.length)}`) + (node.nextSibling ? '\n' : '');
    },
  });
}

/** `text` without its leading and trailing line breaks, in linear time (a regular expression for the trailing ones is not). */
function trimNewlines(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && text.charCodeAt(start) === 10) start++;
  while (end > start && text.charCodeAt(end - 1) === 10) end--;
  return text.slice(start, end);
}

function useMarkdownLinkRules(service: TurndownService, baseUrl: string): void {
  service.addRule('link', {
    filter: (node) => node.nodeName === 'A',
    replacement: (content, node) => {
      const href = absolute(node.getAttribute('href'), baseUrl);
      if (href === undefined || content.trim() === '') return content;
      return `[${content}](${href.replace(/[()]/g, (c) => encodeURIComponent(c))})`;
    },
  });
  service.addRule('image', {
    filter: 'img',
    replacement: (_content, node) => {
      const src = absolute(node.getAttribute('src'), baseUrl);
      const alt = (node.getAttribute('alt') ?? '').replace(/[[\]\n]/g, ' ').trim();
      return src === undefined ? alt : `![${alt}](${src.replace(/[()]/g, (c) => encodeURIComponent(c))})`;
    },
  });
}

/** Rules that keep the words and the block structure but no markdown syntax. */
function useTextRules(service: TurndownService): void {
  service.escape = (text: string) => text;
  service.addRule('text-inline', {
    filter: ['a', 'strong', 'b', 'em', 'i', 'code', 'del', 's', 'mark', 'u', 'sub', 'sup', 'small', 'abbr'],
    replacement: (content) => content,
  });
  service.addRule('text-image', { filter: 'img', replacement: (_content, node) => node.getAttribute('alt') ?? '' });
  service.addRule('text-block', {
    filter: ['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'hr'],
    replacement: (content) => `\n\n${content.trim()}\n\n`,
  });
  service.addRule('text-pre', { filter: 'pre', replacement: (_content, node) => `\n\n${node.textContent ?? ''}\n\n` });
}

function tidy(text: string): string {
  return text
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
