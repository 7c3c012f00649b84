import type { Result } from '@tollgate/core';
import type { HoldInput, InsufficientBalance } from './store';

/** What a store should do with a hold request, given the account's money at that instant: the micro-dollars to hold, or the refusal. */
export type HoldDecision = Result<number, InsufficientBalance>;

/**
 * The hold rule every store applies inside its atomic section, so all stores agree exactly:
 * refuse while the balance is negative (spec Billing 6) or when less than `minimum` (default
 * `micros`) is available; hold `micros` when it fits, else all of `available` (when > 0).
 *
 * `keyRemaining`, when the request's key has a budget, is what the budget leaves
 * (`keyBudgetRemaining`): the hold must fit it as it fits the balance (`reason:
 * 'key_budget'`), and a partial hold takes the smaller of the two. The balance is checked first.
 */
export function decideHold(balance: number, held: number, input: HoldInput, keyRemaining?: number): HoldDecision {
  const available = balance - held;
  const minimum = input.minimum ?? input.micros;
  if (balance < 0 || available < minimum) return refuse('balance', available);
  if (keyRemaining !== undefined && keyRemaining < minimum) return refuse('key_budget', keyRemaining);
  const room = keyRemaining === undefined ? available : Math.min(available, keyRemaining);
  if (room >= input.micros) return { ok: true, value: input.micros };
  // A positive request never holds nothing: the caller could not serve it.
  if (available <= 0) return refuse('balance', available);
  if (room <= 0) return refuse('key_budget', room);
  return { ok: true, value: room };
}

function refuse(reason: 'balance' | 'key_budget', available: number): HoldDecision {
  return { ok: false, error: { code: 'insufficient_balance', reason, available } };
}

/** Throws unless `input` is a well-formed hold (non-negative safe integers, minimum <= micros, ttl > 0). */
export function assertHoldInput(input: HoldInput): void {
  assertMicros('hold micros', input.micros);
  if (input.minimum !== undefined) {
    assertMicros('hold minimum', input.minimum);
    if (input.minimum > input.micros) throw new RangeError('hold minimum must not exceed micros');
  }
  if (!(Number.isFinite(input.ttlMs) && input.ttlMs > 0)) throw new RangeError('hold ttlMs must be a positive number');
}

/** Throws unless `value` is a non-negative safe integer of micro-dollars. */
export function assertMicros(what: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${what} must be a non-negative safe integer of micro-dollars`);
}
