import type { ChatPrice } from '@tollgate/core';

/** The token counts a chat settles on. */
export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  /**
   * Of the prompt tokens, those the provider read from its cache (OpenAI's
   * `prompt_tokens_details.cached_tokens`): billed at `cached_prompt_micros_per_mtok` when the
   * model sets it. A count that is not a whole number within the prompt is ignored.
   */
  cached_tokens?: number;
}

/**
 * What a chat request costs from the tokens the provider reports:
 * ceil(((prompt - cached) x prompt price + cached x cached price + completion x completion price) / 1e6)
 * micros, in exact integers (BigInt when a product or the sum passes 2^53), one rounding at the
 * end. Without a cached price, cached tokens cost the prompt price.
 *
 * @example
 * await store.settle(hold.holdId, { micros: chatCostMicros(model.price, { prompt_tokens: 1_200, completion_tokens: 80, cached_tokens: 1_024 }) });
 */
export function chatCostMicros(price: ChatPrice, usage: ChatUsage): number {
  const cached = cachedWithin(usage.cached_tokens, usage.prompt_tokens);
  const terms: [number, number][] = [
    [usage.prompt_tokens - cached, price.prompt_micros_per_mtok],
    [cached, price.cached_prompt_micros_per_mtok ?? price.prompt_micros_per_mtok],
    [usage.completion_tokens, price.completion_micros_per_mtok],
  ];
  let total = 0;
  for (const [tokens, perMillion] of terms) {
    const part = tokens * perMillion;
    total += part;
    // A product or a sum past 2^53 is no longer exact as a double: redo it all in BigInt.
    if (!Number.isSafeInteger(part) || !Number.isSafeInteger(total)) return bigCost(terms);
  }
  const remainder = total % 1_000_000;
  return (total - remainder) / 1_000_000 + (remainder === 0 ? 0 : 1);
}

/** The cached tokens that are money: a whole, non-negative count no larger than the prompt, else none. */
function cachedWithin(cached: number | undefined, prompt: number): number {
  return cached !== undefined && Number.isSafeInteger(cached) && cached >= 0 && cached <= prompt ? cached : 0;
}

function bigCost(terms: [number, number][]): number {
  let big = 0n;
  for (const [tokens, perMillion] of terms) big += BigInt(tokens) * BigInt(perMillion);
  const micros = (big + 999_999n) / 1_000_000n;
  if (micros > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError('chat cost exceeds the safe integer range');
  return Number(micros);
}
