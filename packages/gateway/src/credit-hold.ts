import type { InsufficientBalance, Store } from '@tollgate/billing';
import type { Result, Timers } from '@tollgate/core';
import type { Checkpoints, TrackedHold } from './checkpoints';
import type { Principal } from './gateway-options';

/** A hold for one request; `included` funding holds nothing on the ledger. */
export interface CreditHold {
  /** What was held (for `included` funding: what was asked). */
  micros: number;
  /**
   * Charges the hold once; later calls do nothing. `tokens`: the prompt and completion tokens
   * billed, recorded on the charge entry for usage (chat and Responses; images, search and fetch
   * have none and pass none).
   */
  settle(micros: number, meta: Record<string, unknown>, tokens?: BilledTokens): Promise<void>;
  /** Closes the hold without a charge (if it was not settled). */
  release(): Promise<void>;
  /**
   * Keeps the hold alive until it is settled or released: renewed every third of its TTL, so a
   * request of any length keeps it while only a dead instance's holds expire (docs/architecture.md,
   * Billing). Every metered request calls it once admitted, without `deliveredMicros`; a stream
   * calls it again with `deliveredMicros` to checkpoint what it delivered, so a crash still charges
   * it. Returns the `touch` to call when the stream sent more: `deliveredMicros()` is then read at
   * the next tick, capped at the hold.
   */
  track(checkpoints: Checkpoints, deliveredMicros?: () => number): () => void;
}

/** The tokens a charge billed, as the ledger records them. */
export interface BilledTokens {
  promptTokens: number;
  completionTokens: number;
}

/** Options of {@link holdCredits}. */
export interface HoldCreditsInput {
  micros: number;
  minimum: number;
  ttlMs: number;
  requestId: string;
  /** The public model id the request named, recorded on its charge (usage per model). */
  model?: string;
  /** Receives settle failures that outlived the retries, up to the hold's TTL (the hold then expires, charged only a stream's crash checkpoint). */
  onSettleError?: (details: { requestId: string; accountId: string; micros: number; error: unknown }) => void;
  /** The timers the settle retries wait on, so a test of a failing store runs on fake time. */
  timers: Timers;
}

/** Attempts of a settle or release the request waits for (100, 200, 400 ms apart) before its reply or log line goes on without them. */
const SETTLE_ATTEMPTS = 4;
/** The longest wait between two later attempts, made in the background. */
const SETTLE_RETRY_MAX_MS = 5_000;

/**
 * Writes a hold's settle or release, both idempotent in every store, so a retry never charges or
 * releases twice: `SETTLE_ATTEMPTS` attempts the caller waits for (100, 200, 400 ms apart), then, if
 * the store is still down (a database restart), in the background, backing off to one attempt every
 * few seconds, for as long as the hold lives (a settle also works after it expired), so an outage
 * of seconds or minutes loses no charge and leaves no money held; the reply does not wait for
 * those. Past the TTL, or if the process ends first, the hold expires: `giveUp` hears of it.
 */
async function writeWithRetries(write: () => Promise<unknown>, timers: Timers, ttlMs: number, giveUp: (error: unknown) => void): Promise<void> {
  const wait = (ms: number) => new Promise<void>((resolve) => timers.setTimeout(resolve, ms));
  for (let attempt = 1; attempt <= SETTLE_ATTEMPTS; attempt++) {
    try {
      await write();
      return;
    } catch {
      if (attempt < SETTLE_ATTEMPTS) await wait(50 * 2 ** attempt);
    }
  }
  void (async () => {
    let waited = 0;
    for (let delay = 800; ; delay = Math.min(delay * 2, SETTLE_RETRY_MAX_MS)) {
      await wait(delay);
      waited += delay;
      try {
        await write();
        return;
      } catch (error) {
        if (waited >= ttlMs) return giveUp(error);
      }
    }
  })();
}

/**
 * Holds credit for a request (docs/architecture.md), or says how much was available. Keys always
 * pay credits; an app principal funded `included` is paid by its plan and holds nothing.
 */
export async function holdCredits(store: Store, principal: Principal, input: HoldCreditsInput): Promise<Result<CreditHold, InsufficientBalance>> {
  if (principal.funding === 'included') {
    return { ok: true, value: { micros: input.micros, settle: async () => {}, release: async () => {}, track: () => () => {} } };
  }
  const result = await store.hold(principal.account.id, {
    micros: input.micros,
    minimum: input.minimum,
    ttlMs: input.ttlMs,
    requestId: input.requestId,
    // The charge records who and what (usage per key and model); an app user has no key.
    ...(principal.keyId === undefined ? {} : { keyId: principal.keyId }),
    ...(input.model === undefined ? {} : { model: input.model }),
  });
  if (!result.ok) return result;
  const holdId = result.value.holdId;
  const { timers } = input;
  let closed = false;
  let tracked: TrackedHold | undefined;
  const untrack = () => tracked?.stop();
  const held = result.value.micros;
  const hold: CreditHold = {
    micros: held,
    async settle(micros, meta, tokens) {
      untrack();
      if (closed) return;
      closed = true;
      await writeWithRetries(
        () => store.settle(holdId, { micros, requestId: input.requestId, meta, ...tokens }),
        timers,
        input.ttlMs,
        (error) => input.onSettleError?.({ requestId: input.requestId, accountId: principal.account.id, micros, error }),
      );
    },
    async release() {
      untrack();
      if (closed) return;
      closed = true;
      // A release that cannot be written would leave the account's money held until the hold
      // expires: retried as a settle is. Past the TTL the hold expired and holds nothing: nothing to report.
      await writeWithRetries(
        () => store.release(holdId),
        timers,
        input.ttlMs,
        () => {},
      );
    },
    track(checkpoints, deliveredMicros) {
      if (closed) return () => {};
      const current = checkpoints.track(holdId, deliveredMicros === undefined ? undefined : () => Math.min(held, deliveredMicros()));
      // The same checkpoints hand back the same handle (the hold stays tracked, its cost replaced).
      if (tracked !== current) untrack();
      tracked = current;
      return () => current.touch();
    },
  };
  return { ok: true, value: hold };
}
