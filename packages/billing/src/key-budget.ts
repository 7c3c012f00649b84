import { assertMicros } from './decide-hold';
import type { KeyBudget, KeyBudgetPeriod, KeyBudgetStatus } from './store';

/** The periods a key budget counts over. */
export const KEY_BUDGET_PERIODS: readonly KeyBudgetPeriod[] = Object.freeze(['total', 'day', 'month']);

const DAY_MS = 86_400_000;

/** Whether a value is a key budget period. */
export function isKeyBudgetPeriod(value: unknown): value is KeyBudgetPeriod {
  return value === 'total' || value === 'day' || value === 'month';
}

/** Throws unless `budget` is `null` or a well-formed budget (non-negative safe-integer micros, a known period). */
export function assertKeyBudget(budget: KeyBudget | null): void {
  if (budget === null) return;
  if (typeof budget !== 'object') throw new TypeError('key budget must be an object or null');
  assertMicros('key budget micros', budget.micros);
  if (!isKeyBudgetPeriod(budget.period)) throw new RangeError(`key budget period must be one of ${KEY_BUDGET_PERIODS.join(', ')}`);
}

/**
 * Start of the budget period that contains `at` (unix ms): 0 for `total`, UTC midnight for `day`,
 * midnight UTC of the 1st for `month`. Every store computes the boundary here, so all agree.
 */
export function budgetPeriodStart(period: KeyBudgetPeriod, at: number): number {
  if (period === 'total') return 0;
  if (period === 'day') return Math.floor(at / DAY_MS) * DAY_MS;
  const date = new Date(at);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

/** A key's spend counter: micro-dollars charged since `since`, the start of the period it counts. */
export interface KeySpend {
  spent: number;
  since: number;
}

/**
 * The counter after a charge of `micros` written at `at` (the entry's `createdAt`): added within the
 * counter's period; a charge of a later period starts the counter again (the lazy reset on the UTC
 * boundary); a charge dated before the counter's period (an instance whose clock is behind) is not
 * this period's, and leaves it as it is.
 */
export function addKeySpend(period: KeyBudgetPeriod, counter: KeySpend, micros: number, at: number): KeySpend {
  const start = budgetPeriodStart(period, at);
  if (start > counter.since) return { spent: micros, since: start };
  if (start === counter.since) return { spent: counter.spent + micros, since: start };
  return counter;
}

/**
 * What the key spent in the period that contains `at`: the counter, or 0 when it counts an earlier
 * period (nothing was charged since the boundary). A counter ahead of `at` (a clock behind) counts.
 */
export function spentInPeriod(period: KeyBudgetPeriod, counter: KeySpend, at: number): number {
  return counter.since >= budgetPeriodStart(period, at) ? counter.spent : 0;
}

/** A key's budget as `KeyInfo` shows it at `at`: the current period's start and spend. */
export function keyBudgetStatus(budget: KeyBudget, counter: KeySpend, at: number): KeyBudgetStatus {
  return { micros: budget.micros, period: budget.period, spent: spentInPeriod(budget.period, counter, at), periodStart: budgetPeriodStart(budget.period, at) };
}

/**
 * What a key's budget leaves for a new hold at `at`: budget − spent in the period − the key's open
 * holds (negative when past it). The store reads `counter` and `keyHeld` under the hold's lock.
 */
export function keyBudgetRemaining(budget: KeyBudget, counter: KeySpend, keyHeld: number, at: number): number {
  return budget.micros - spentInPeriod(budget.period, counter, at) - keyHeld;
}
