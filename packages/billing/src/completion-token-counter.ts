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
  return new TokenCounter();
}

/**
 * A class, not an object literal with a `get tokens()`: V8 gives each such literal an accessor of
 * its own, kept in the old generation, which keeps the closure's scope past young-generation GCs.
 */
class TokenCounter implements CompletionTokenCounter {
  #counted = 0;
  #ascii = 0;
  #other = 0;
  /** A high surrogate at the end of what was counted: its low half may come with the next text. */
  #pendingHigh = false;

  update(text: string): void {
    for (let i = this.#counted; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (this.#pendingHigh) {
        this.#pendingHigh = false;
        // The pair's high half was already counted as one code point.
        if (code >= 0xdc00 && code <= 0xdfff) continue;
      }
      if (code < 0x80) this.#ascii++;
      else {
        this.#other++;
        if (code >= 0xd800 && code <= 0xdbff) this.#pendingHigh = true;
      }
    }
    this.#counted = Math.max(this.#counted, text.length);
  }

  get tokens(): number {
    return Math.ceil(this.#ascii / 4) + this.#other;
  }
}
