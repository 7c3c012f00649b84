/** Elements whose content is text up to their own end tag (no tags inside). */
export const RAW_TEXT = new Set(['script', 'style', 'textarea', 'title', 'xmp', 'iframe', 'noembed', 'noframes', 'noscript', 'plaintext']);

/** A tag name, lower case, as the scan reads it. */
const NAME = /^[a-z][a-z0-9-]*/;

/** One piece of markup of an HTML text, as {@link scanHtmlTags} finds it. */
export interface HtmlTag {
  /** The tag's name, lower case; `''` for a comment, a doctype or a processing instruction. */
  name: string;
  /** An end tag (`</p>`). */
  closing: boolean;
  /** A start tag written `<br/>`. */
  selfClosing: boolean;
  /** Where the markup starts (its `<`) and where the text after it starts. */
  start: number;
  end: number;
  /**
   * A raw-text element's content (script, style, title…), `[start, end)`: it is text, not scanned,
   * and `end` is past its end tag. Undefined for any other tag, and for a raw-text element whose end
   * tag never comes (the scan stops there).
   */
  text?: [number, number];
}

/**
 * Walks the markup of an HTML text in order, in one pass and in time linear in its length: start
 * and end tags by their lower-case names, comments, doctypes and processing instructions as
 * nameless markup, a raw-text element's content handed over whole; a `<` that starts none of these
 * is text. `visit` returns false to stop. Returns where the text after the last markup visited
 * ends: the text's length; where a piece of markup that never ends starts; past a raw-text element's
 * start tag whose end tag never comes (the rest is its content); or past the piece `visit` stopped
 * at. What {@link measureHtml} and {@link htmlToPlainText} both read.
 *
 * @example
 * scanHtmlTags('<p>a</p> b', (tag) => void names.push(tag.name)); // names: ['p', 'p'], returns 10
 */
export function scanHtmlTags(html: string, visit: (tag: HtmlTag) => boolean | undefined): number {
  const lower = html.toLowerCase();
  let at = lower.indexOf('<');
  while (at >= 0 && at < lower.length - 1) {
    const next = lower.charCodeAt(at + 1);
    if (next === 0x21 /* ! */ || next === 0x3f /* ? */) {
      const comment = lower.startsWith('<!--', at);
      const close = comment ? lower.indexOf('-->', at + 4) : lower.indexOf('>', at + 2);
      if (close < 0) return at;
      const after = close + (comment ? 3 : 1);
      if (visit({ name: '', closing: false, selfClosing: false, start: at, end: after }) === false) return after;
      at = lower.indexOf('<', after);
      continue;
    }
    const closing = next === 0x2f; /* / */
    const nameStart = closing ? at + 2 : at + 1;
    const name = NAME.exec(lower.slice(nameStart, nameStart + 32))?.[0];
    if (name === undefined) {
      at = lower.indexOf('<', at + 1);
      continue;
    }
    const close = lower.indexOf('>', nameStart + name.length);
    if (close < 0) return at;
    const tag: HtmlTag = { name, closing, selfClosing: lower.charCodeAt(close - 1) === 0x2f, start: at, end: close + 1 };
    if (!closing && RAW_TEXT.has(name)) {
      const endTag = lower.indexOf(`</${name}`, close + 1);
      const endTagClose = endTag < 0 ? -1 : lower.indexOf('>', endTag);
      if (endTagClose < 0) {
        visit(tag);
        return tag.end;
      }
      tag.text = [close + 1, endTag];
      tag.end = endTagClose + 1;
    }
    if (visit(tag) === false) return tag.end;
    at = lower.indexOf('<', tag.end);
  }
  return html.length;
}
