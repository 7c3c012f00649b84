/**
 * `@tollgate/billing/store-kit`: what a Store implementation builds on, so every store (memory,
 * SQLite, PostgreSQL, yours) applies the same hold rule, checks and ids. Not for applications.
 *
 * @example
 * import { assertHoldInput, decideHold, newHoldId } from '@tollgate/billing/store-kit';
 * assertHoldInput(input);
 * const decision = decideHold(balance, held, input); // inside the store's transaction
 * if (!decision.ok) return decision;
 * return { ok: true, value: { holdId: newHoldId(), micros: decision.value } };
 */
export { assertCheckpoints, CHECKPOINT_CHARGE_META } from './assert-checkpoint';
export { assertHoldInput, assertMicros, decideHold } from './decide-hold';
export type { HoldDecision } from './decide-hold';
export { addKeySpend, assertKeyBudget, budgetPeriodStart, keyBudgetRemaining, keyBudgetStatus, spentInPeriod } from './key-budget';
export type { KeySpend } from './key-budget';
export { keyPrefix, newAccountId, newEntryId, newHoldId, newKeyId } from './store-ids';
export {
  DEFAULT_PAGE_LIMIT,
  decodeAccountsCursor,
  decodeEntriesCursor,
  encodeAccountsCursor,
  encodeEntriesCursor,
  InvalidCursorError,
  MAX_PAGE_LIMIT,
  pageLimit,
} from './page-cursor';
export type { AccountsCursor } from './page-cursor';
export {
  assertCreditInput,
  assertSettleTokens,
  assertUsageQuery,
  compareUsageRows,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  sumUsage,
  USAGE_PERIOD_MS,
} from './usage-rules';
