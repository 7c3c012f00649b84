/** Micro-dollars in a credit: one credit is 0.01 US dollar. */
export const MICROS_PER_CREDIT = 10_000;

/** Micro-dollars in a dollar. */
export const MICROS_PER_DOLLAR = 1_000_000;

/** Whether a value is a safe integer amount of micro-dollars (negative allowed). */
export function isMicros(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value);
}

/**
 * ceil(a * b / divisor) in exact integer arithmetic. Token counts times per-million prices can
 * pass 2^53, so the product is taken in BigInt; the result must fit a safe integer.
 */
export function mulDivCeil(a: number, b: number, divisor: number): number {
  if (a < 0 || b < 0 || divisor <= 0) throw new RangeError('mulDivCeil takes non-negative integers and a positive divisor');
  const product = a * b;
  if (Number.isSafeInteger(product)) {
    const remainder = product % divisor;
    return (product - remainder) / divisor + (remainder === 0 ? 0 : 1);
  }
  const big = BigInt(a) * BigInt(b);
  const d = BigInt(divisor);
  return toSafe((big + d - 1n) / d);
}

/** floor(a * b / divisor) in exact integer arithmetic. */
export function mulDivFloor(a: number, b: number, divisor: number): number {
  if (a < 0 || b < 0 || divisor <= 0) throw new RangeError('mulDivFloor takes non-negative integers and a positive divisor');
  const product = a * b;
  if (Number.isSafeInteger(product)) return (product - (product % divisor)) / divisor;
  return toSafe((BigInt(a) * BigInt(b)) / BigInt(divisor));
}

function toSafe(value: bigint): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError('amount exceeds the safe integer range');
  return Number(value);
}
