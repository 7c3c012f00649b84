/** A running count of `estimateCompletionTokens` over text that only grows. */
export interface CompletionTokenCounter {
  /** Counts the part of `text` not counted yet (`text` must extend what was counted before). */
  update(text: string): void;
  /** `estimateCompletionTokens` of all the text counted so far. */
  readonly tokens: number;
}

/**
 * The early-stop estimate (ceil(ASCII characters / 4) + 1 per other code point) kept up to date
 * as a stream's delivered text grows, reading each character once: the crash checkpoint asks for
 * it every second of a long stream, so rescanning the whole text each time would be quadratic.
 *
 * @example
 * const counter = createCompletionTokenCounter();
 * counter.update(format.delivered); // once a tick
 * chatCostMicros(price, { prompt_tokens: prompt, completion_tokens: counter.tokens });
 */
export function createCompletionTokenCounter(): CompletionTokenCounter {
  let counted = 0;
  let ascii = 0;
  let other = 0;
  // A high surrogate at the end of what was counted: its low half may come with the next text.
  let pendingHigh = false;
  return {
    update(text) {
      for (let i = counted; i < text.length; i++) {
        const code = text.charCodeAt(i);
        if (pendingHigh) {
          pendingHigh = false;
          // The pair's high half was already counted as one code point.
          if (code >= 0xdc00 && code <= 0xdfff) continue;
        }
        if (code < 0x80) ascii++;
        else {
          other++;
          if (code >= 0xd800 && code <= 0xdbff) pendingHigh = true;
        }
      }
      counted = Math.max(counted, text.length);
    },
    get tokens() {
      return Math.ceil(ascii / 4) + other;
    },
  };
}
