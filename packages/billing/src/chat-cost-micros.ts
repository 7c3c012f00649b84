import type { ChatPrice } from '@tollgate/core';

/** The token counts a chat settles on. */
export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/**
 * What a chat request costs from the tokens the provider reports:
 * ceil((prompt x prompt price + completion x completion price) / 1e6) micros, in exact integers
 * (BigInt when a product passes 2^53).
 *
 * @example
 * await store.settle(hold.holdId, { micros: chatCostMicros(model.price, usage) });
 */
export function chatCostMicros(price: ChatPrice, usage: ChatUsage): number {
  const prompt = usage.prompt_tokens * price.prompt_micros_per_mtok;
  const completion = usage.completion_tokens * price.completion_micros_per_mtok;
  const total = prompt + completion;
  if (Number.isSafeInteger(prompt) && Number.isSafeInteger(completion) && Number.isSafeInteger(total)) {
    const remainder = total % 1_000_000;
    return (total - remainder) / 1_000_000 + (remainder === 0 ? 0 : 1);
  }
  const big = BigInt(usage.prompt_tokens) * BigInt(price.prompt_micros_per_mtok) + BigInt(usage.completion_tokens) * BigInt(price.completion_micros_per_mtok);
  const micros = (big + 999_999n) / 1_000_000n;
  if (micros > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError('chat cost exceeds the safe integer range');
  return Number(micros);
}
