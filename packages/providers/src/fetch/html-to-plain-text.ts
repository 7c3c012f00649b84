import type { ConvertedHtml } from './convert-html';
import { RAW_TEXT, scanHtmlTags } from './scan-html-tags';

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
  const parts: string[] = [];
  let title: string | null = null;
  let from = 0;
  const textEnd = scanHtmlTags(html, ({ name, closing, start, end, text }) => {
    parts.push(html.slice(from, start));
    from = end;
    if (text !== undefined) {
      if (name === 'title' && title === null) title = decodeEntities(html.slice(text[0], text[1])).replace(/\s+/g, ' ').trim() || null;
    } else if (closing || !RAW_TEXT.has(name)) {
      parts.push(BLOCK.has(name) ? '\n' : ' ');
    }
    return undefined;
  });
  parts.push(html.slice(from, textEnd));
  const content = decodeEntities(parts.join(''))
    .split('\n')
    .map((line) => line.replace(/\s+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return { title, content };
}
