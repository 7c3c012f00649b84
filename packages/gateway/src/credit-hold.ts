import type { Store } from '@tollgate/billing';
import type { Principal } from './gateway-options';

/** A hold for one request; `included` funding holds nothing on the ledger. */
export interface CreditHold {
  /** What was held (for `included` funding: what was asked). */
  micros: number;
  /** Charges the hold once; later calls do nothing. */
  settle(micros: number, meta: Record<string, unknown>): Promise<void>;
  /** Closes the hold without a charge (if it was not settled). */
  release(): Promise<void>;
}

/** Options of {@link holdCredits}. */
export interface HoldCreditsInput {
  micros: number;
  minimum: number;
  ttlMs: number;
  requestId: string;
  /** Receives settle failures that outlived the retries (the hold then expires uncharged). */
  onSettleError?: (details: { requestId: string; accountId: string; micros: number; error: unknown }) => void;
}

const SETTLE_ATTEMPTS = 4;

/**
 * Holds credit for a request per DESIGN.md §3, or says how much was available. Keys always pay
 * credits; an app principal funded `included` is paid by its plan and holds nothing.
 */
export async function holdCredits(store: Store, principal: Principal, input: HoldCreditsInput): Promise<CreditHold | undefined> {
  if (principal.funding === 'included') {
    return { micros: input.micros, settle: async () => {}, release: async () => {} };
  }
  const result = await store.hold(principal.account.id, {
    micros: input.micros,
    minimum: input.minimum,
    ttlMs: input.ttlMs,
    requestId: input.requestId,
  });
  if (!result.ok) return undefined;
  const holdId = result.holdId;
  let closed = false;
  return {
    micros: result.micros,
    async settle(micros, meta) {
      if (closed) return;
      closed = true;
      // Settle is idempotent in every store, so retrying a failed call never charges twice.
      for (let attempt = 1; ; attempt++) {
        try {
          await store.settle(holdId, { micros, requestId: input.requestId, meta });
          return;
        } catch (error) {
          if (attempt >= SETTLE_ATTEMPTS) {
            input.onSettleError?.({ requestId: input.requestId, accountId: principal.account.id, micros, error });
            return;
          }
          await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
        }
      }
    },
    async release() {
      if (closed) return;
      closed = true;
      await store.release(holdId).catch(() => {});
    },
  };
}
