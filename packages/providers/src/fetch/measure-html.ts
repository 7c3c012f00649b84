import { scanHtmlTags } from './scan-html-tags';

/** Elements with no end tag: never open. */
const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'keygen', 'link', 'meta', 'param', 'source', 'track', 'wbr']);

/** Elements a start tag of the same family closes (`<li>a<li>b` are siblings, not nested). */
const SIBLINGS: Record<string, readonly string[]> = {
  li: ['li'],
  dt: ['dt', 'dd'],
  dd: ['dt', 'dd'],
  option: ['option'],
  tr: ['tr', 'td', 'th'],
  td: ['td', 'th'],
  th: ['td', 'th'],
  p: ['p'],
};

/** How far up the open elements an end tag looks for its start: misnested tags further off are ignored. */
const END_TAG_REACH = 32;

/** What {@link measureHtml} counts. */
export interface HtmlMeasure {
  /** Start tags. */
  elements: number;
  /** The deepest nesting of open elements, as far as it was scanned. */
  depth: number;
}

/**
 * Counts an HTML text's start tags and how deeply its elements nest, in one pass and in time
 * linear in its length, approximately as a browser's parser would build the tree (void elements
 * never open; `<li>`, `<p>`, table cells and the like close their open sibling; script and style
 * content is skipped). Stops once `limits` is passed: the caller only asks whether the page is
 * small enough to convert (the DOM and turndown take time quadratic in the nesting, and recurse).
 *
 * @example
 * measureHtml('<ul><li>a<li>b</ul>'); // { elements: 3, depth: 2 }
 */
export function measureHtml(html: string, limits: HtmlMeasure = { elements: Number.POSITIVE_INFINITY, depth: Number.POSITIVE_INFINITY }): HtmlMeasure {
  const open: string[] = [];
  let elements = 0;
  let depth = 0;
  scanHtmlTags(html, ({ name, closing, selfClosing, text }) => {
    if (name === '') return undefined;
    if (closing) {
      for (let index = open.length - 1; index >= 0 && index >= open.length - END_TAG_REACH; index--) {
        if (open[index] !== name) continue;
        open.length = index;
        break;
      }
      return undefined;
    }
    elements++;
    const siblings = SIBLINGS[name];
    if (siblings !== undefined) while (open.length > 0 && siblings.includes(open[open.length - 1] as string)) open.pop();
    const opens = !VOID.has(name) && !selfClosing;
    if (opens) {
      open.push(name);
      if (open.length > depth) depth = open.length;
    }
    if (elements > limits.elements || depth > limits.depth) return false;
    // A raw-text element is closed by its own end tag, which the scan passed.
    if (opens && text !== undefined) open.pop();
    return undefined;
  });
  return { elements, depth };
}
