import type { ConvertedHtml } from './convert-html';
import { RAW_TEXT } from './measure-html';

/** Elements whose end (or start) is a line break in the text. */
const BLOCK = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'br',
  'dd',
  'div',
  'dl',
  'dt',
  'figcaption',
  'figure',
  'footer',
  'form',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hr',
  'li',
  'main',
  'nav',
  'ol',
  'p',
  'pre',
  'section',
  'table',
  'td',
  'th',
  'tr',
  'ul',
]);

const NAMED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** Character references decoded: the numeric ones and the few names pages use most. */
function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z]{2,6});/gi, (whole, body: string) => {
    if (body[0] !== '#') return NAMED[body.toLowerCase()] ?? whole;
    const code = body[1] === 'x' || body[1] === 'X' ? Number.parseInt(body.slice(2), 16) : Number(body.slice(1));
    return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : whole;
  });
}

/**
 * The words of an HTML page, in one pass and in time linear in its length: tags dropped (block
 * elements as line breaks), script, style and the like dropped with their content, character
 * references decoded, blank runs collapsed; the title from the first `<title>`. For pages too
 * large or too deeply nested for the DOM and turndown ({@link measureHtml}), and for a conversion
 * that failed: the page is still read, as text.
 *
 * @example
 * htmlToPlainText('<title>T</title><p>a &amp; b</p><script>x()</script>'); // { title: 'T', content: 'a & b' }
 */
export function htmlToPlainText(html: string): ConvertedHtml {
  const lower = html.toLowerCase();
  const parts: string[] = [];
  let title: string | null = null;
  let from = 0;
  let at = lower.indexOf('<');
  while (at >= 0) {
    parts.push(html.slice(from, at));
    const end = lower.indexOf('>', at + 1);
    if (end < 0) {
      from = lower.length;
      break;
    }
    const name = /^\/?([a-z][a-z0-9-]*)/.exec(lower.slice(at + 1, at + 34))?.[1];
    from = end + 1;
    if (name !== undefined && lower[at + 1] !== '/' && RAW_TEXT.has(name)) {
      const close = lower.indexOf(`</${name}`, end + 1);
      const text = close < 0 ? '' : html.slice(end + 1, close);
      if (name === 'title' && title === null) title = decodeEntities(text).replace(/\s+/g, ' ').trim() || null;
      const closeEnd = close < 0 ? -1 : lower.indexOf('>', close);
      from = closeEnd < 0 ? lower.length : closeEnd + 1;
    } else if (name !== undefined && BLOCK.has(name)) {
      parts.push('\n');
    } else {
      parts.push(' ');
    }
    at = lower.indexOf('<', from);
  }
  parts.push(html.slice(from));
  const content = decodeEntities(parts.join(''))
    .split('\n')
    .map((line) => line.replace(/\s+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return { title, content };
}
