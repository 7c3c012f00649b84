import { MICROS_PER_CREDIT, type ImagePrice } from '@tollgate/core';

/**
 * What one image costs: max(10,000, micros_per_image + references x micros_per_reference), since
 * each image costs at least one credit. Multiply by the images delivered (or, for the hold, by `n`).
 *
 * @example
 * const hold = imageCostMicros(model.price, references.length) * n;
 */
export function imageCostMicros(price: ImagePrice, references: number): number {
  const micros = price.micros_per_image + references * price.micros_per_reference;
  if (!Number.isSafeInteger(micros)) throw new RangeError('image cost exceeds the safe integer range');
  return Math.max(MICROS_PER_CREDIT, micros);
}
