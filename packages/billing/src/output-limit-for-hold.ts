import { mulDivCeil, type ChatPrice } from '@tollgate/core';

/**
 * The largest output limit L in [1, wanted] whose hold, `chatHoldMicros(price, promptTokens, L)`,
 * fits in `heldMicros`; 0 when none does. Exact: ceil(L x c / 1e6) <= r  <=>  L x c <= r x 1e6.
 *
 * @example
 * const limit = outputLimitForHold(price, promptTokens, hold.micros, wanted); // < wanted: X-Output-Limited
 */
export function outputLimitForHold(price: ChatPrice, promptTokens: number, heldMicros: number, wanted: number): number {
  if (wanted < 1 || heldMicros < price.min_hold_micros) return 0;
  const remaining = heldMicros - mulDivCeil(promptTokens, price.prompt_micros_per_mtok, 1_000_000);
  if (remaining < 0) return 0;
  const completion = price.completion_micros_per_mtok;
  if (completion === 0) return wanted;
  // BigInt: remaining x 1e6 passes 2^53 for holds above ~9,000 dollars.
  const largest = (BigInt(remaining) * 1_000_000n) / BigInt(completion);
  if (largest < 1n) return 0;
  return largest >= BigInt(wanted) ? wanted : Number(largest);
}
