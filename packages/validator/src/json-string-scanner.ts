/**
 * Reads JSON strings out of one decoded document. It keeps the position of the next backslash and
 * of the next control character it has seen, so each part of the document is searched at most once
 * for each: a long base64 string costs one `indexOf` for its closing quote and nothing else.
 */
export class JsonStringScanner {
  /** End of the last string read: the index after its closing quote. */
  end = 0;
  /** Why the last read failed, when it returned `undefined`. */
  error = '';
  private nextBackslash = -1;
  private nextControl = -1;
  private readonly length: number;

  constructor(private readonly text: string) {
    this.length = text.length;
  }

  /** Reads the string whose opening quote is at `quote`; `undefined` when it is not valid JSON. */
  read(quote: number): string | undefined {
    const text = this.text;
    const start = quote + 1;
    const close = text.indexOf('"', start);
    if (close === -1) return this.refuse('a string is not closed', quote);
    if (this.backslashFrom(start) > close) {
      if (this.controlFrom(start) < close) return this.refuse('a string holds a raw control character', this.nextControl);
      this.end = close + 1;
      return text.slice(start, close);
    }
    return this.readEscaped(start);
  }

  /** The slow path, only for strings that hold a backslash: segments between escapes. */
  private readEscaped(start: number): string | undefined {
    const text = this.text;
    const parts: string[] = [];
    let at = start;
    let quote = -1;
    for (;;) {
      if (quote < at) quote = text.indexOf('"', at);
      if (quote === -1) return this.refuse('a string is not closed', start - 1);
      const backslash = this.backslashFrom(at);
      const stop = Math.min(backslash, quote);
      if (this.controlFrom(at) < stop) return this.refuse('a string holds a raw control character', this.nextControl);
      if (stop > at) parts.push(text.slice(at, stop));
      if (stop === quote) {
        this.end = quote + 1;
        return parts.length === 1 ? parts[0] : parts.join('');
      }
      const escaped = this.escape(backslash);
      if (escaped === undefined) return undefined;
      parts.push(escaped);
      at = this.end;
    }
  }

  /** Decodes the escape at `backslash`; sets `end` after it. */
  private escape(backslash: number): string | undefined {
    const code = this.text.charCodeAt(backslash + 1);
    this.end = backslash + 2;
    switch (code) {
      case 0x22:
        return '"';
      case 0x5c:
        return '\\';
      case 0x2f:
        return '/';
      case 0x62:
        return '\b';
      case 0x66:
        return '\f';
      case 0x6e:
        return '\n';
      case 0x72:
        return '\r';
      case 0x74:
        return '\t';
      case 0x75: {
        let unit = 0;
        for (let i = backslash + 2; i < backslash + 6; i++) {
          const digit = hexValue(this.text.charCodeAt(i));
          if (digit < 0) return this.refuse('a \\u escape needs four hex digits', backslash);
          unit = unit * 16 + digit;
        }
        this.end = backslash + 6;
        return String.fromCharCode(unit);
      }
      default:
        return this.refuse('a string holds an invalid escape', backslash);
    }
  }

  /** Index of the first backslash at or after `from`, or `length` when there is none. */
  private backslashFrom(from: number): number {
    if (this.nextBackslash < from) {
      const found = this.text.indexOf('\\', from);
      this.nextBackslash = found === -1 ? this.length : found;
    }
    return this.nextBackslash;
  }

  /** Index of the first character below U+0020 at or after `from`, or `length` when there is none. */
  private controlFrom(from: number): number {
    if (this.nextControl < from) {
      CONTROL.lastIndex = from;
      this.nextControl = CONTROL.test(this.text) ? CONTROL.lastIndex - 1 : this.length;
    }
    return this.nextControl;
  }

  private refuse(reason: string, at: number): undefined {
    this.error = `${reason} (at character ${at})`;
    return undefined;
  }
}

// Same set as [\x00-\x1f]; irregexp scans this spelling about twice as fast as a charCodeAt loop.
const CONTROL = /[^\x20-\uffff]/g;

function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  if (code >= 0x61 && code <= 0x66) return code - 0x57;
  if (code >= 0x41 && code <= 0x46) return code - 0x37;
  return -1;
}
