/**
 * Completion tokens counted on the text a stream delivered before it stopped early (the provider
 * never reported usage). Rule: ceil(ASCII characters / 4) + 1 per non-ASCII code point; 0 for
 * empty text, else at least 1. Four ASCII characters a token is the usual English average; a
 * code point a token keeps CJK and other scripts (often a token per character) from being
 * undercounted the way a plain bytes / 4 rule would.
 *
 * @example
 * const usage = { prompt_tokens: promptTokens, completion_tokens: estimateCompletionTokens(delivered) };
 */
export function estimateCompletionTokens(text: string): number {
  let ascii = 0;
  let other = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) ascii++;
    else {
      other++;
      // A surrogate pair is one code point.
      if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
        const next = text.charCodeAt(i + 1);
        if (next >= 0xdc00 && next <= 0xdfff) i++;
      }
    }
  }
  return Math.ceil(ascii / 4) + other;
}
