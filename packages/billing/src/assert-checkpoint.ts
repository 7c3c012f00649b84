import { assertMicros } from './decide-hold';
import type { HoldCheckpoint } from './store';

/**
 * The meta of the charge entry `releaseExpired` writes for a hold it charges its checkpointed
 * amount, so the usage history tells a crash-cut stream from a settled one.
 */
export const CHECKPOINT_CHARGE_META: { readonly outcome: 'checkpoint' } = Object.freeze({ outcome: 'checkpoint' });

/**
 * Throws unless every checkpoint is well formed (a hold id, non-negative safe-integer micros, a
 * positive ttl), before a store writes any of them: a batch is written whole or not at all.
 */
export function assertCheckpoints(checkpoints: readonly HoldCheckpoint[]): void {
  for (const checkpoint of checkpoints) {
    if (typeof checkpoint.holdId !== 'string' || checkpoint.holdId === '') throw new TypeError('checkpoint holdId must be a hold id');
    assertMicros('checkpoint micros', checkpoint.micros);
    if (!(Number.isFinite(checkpoint.ttlMs) && checkpoint.ttlMs > 0)) throw new RangeError('checkpoint ttlMs must be a positive number');
  }
}
