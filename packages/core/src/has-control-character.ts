/**
 * Whether `text` holds a C0 control character or DEL (U+0000–U+001F, U+007F): none is in an id, a
 * key id or a model name a store made, and PostgreSQL refuses a NUL in text outright, so a value
 * from a client that holds one is refused as a bad parameter before any store sees it.
 *
 * @example
 * hasControlCharacter('acc_1'); // false
 * hasControlCharacter('acc\u0000'); // true
 */
export function hasControlCharacter(text: string): boolean {
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}
