/** Elements with no end tag: never open. */
const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'keygen', 'link', 'meta', 'param', 'source', 'track', 'wbr']);

/** Elements whose content is text up to their own end tag (no tags inside). */
export const RAW_TEXT = new Set(['script', 'style', 'textarea', 'title', 'xmp', 'iframe', 'noembed', 'noframes', 'noscript', 'plaintext']);

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
  const lower = html.toLowerCase();
  const open: string[] = [];
  let elements = 0;
  let depth = 0;
  let at = lower.indexOf('<');
  while (at >= 0 && at < lower.length - 1) {
    const next = lower.charCodeAt(at + 1);
    if (next === 0x21 /* ! */ || next === 0x3f /* ? */) {
      const end = lower.startsWith('<!--', at) ? lower.indexOf('-->', at + 4) : lower.indexOf('>', at + 2);
      if (end < 0) break;
      at = lower.indexOf('<', end + 1);
      continue;
    }
    const closing = next === 0x2f; /* / */
    const nameStart = closing ? at + 2 : at + 1;
    const name = /^[a-z][a-z0-9-]*/.exec(lower.slice(nameStart, nameStart + 32))?.[0];
    if (name === undefined) {
      at = lower.indexOf('<', at + 1);
      continue;
    }
    const end = lower.indexOf('>', nameStart + name.length);
    if (end < 0) break;
    if (closing) {
      for (let index = open.length - 1; index >= 0 && index >= open.length - END_TAG_REACH; index--) {
        if (open[index] !== name) continue;
        open.length = index;
        break;
      }
    } else {
      elements++;
      const siblings = SIBLINGS[name];
      if (siblings !== undefined) while (open.length > 0 && siblings.includes(open[open.length - 1] as string)) open.pop();
      if (!VOID.has(name) && lower.charCodeAt(end - 1) !== 0x2f) {
        open.push(name);
        if (open.length > depth) depth = open.length;
      }
      if (elements > limits.elements || depth > limits.depth) break;
      if (RAW_TEXT.has(name)) {
        const close = lower.indexOf(`</${name}`, end + 1);
        const closeEnd = close < 0 ? -1 : lower.indexOf('>', close);
        if (closeEnd < 0) break;
        open.pop();
        at = lower.indexOf('<', closeEnd + 1);
        continue;
      }
    }
    at = lower.indexOf('<', end + 1);
  }
  return { elements, depth };
}
