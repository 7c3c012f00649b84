import type { InsufficientBalance, KeyBudget, KeyBudgetPeriod, Store } from '@tollgate/billing';
import type { Timers } from '@tollgate/core';
import type { Principal, RequestLog } from './gateway-options';

/**
 * What every event carries. `id` is the same for the same occurrence wherever that can be known
 * (derived from the request or key that caused it), so a receiver that sees an id twice (a
 * webhook retried, two admin calls revoking one key at once) can drop the second.
 */
interface EventBase {
  /** `evt_` + the type + the id of what caused it, e.g. `evt_balance_low_req_…`, `evt_key_revoked_key_…`. */
  id: string;
  /** When it happened (for `key.revoked`: the key's revocation time), ISO 8601 UTC with milliseconds. */
  created_at: string;
}

/** A charge took the account's balance below `lowBalanceMicros` (it was at or above it before). */
export interface BalanceLowEvent extends EventBase {
  type: 'balance.low';
  account_id: string;
  /** The balance (ledger sum, holds not subtracted) read just after the charge, micro-dollars. */
  balance_micros: number;
  threshold_micros: number;
  /** The request whose charge crossed the threshold, and what it charged. */
  request_id: string;
  charged_micros: number;
}

/** A charge took the account's balance below zero (it was zero or more before). */
export interface BalanceNegativeEvent extends EventBase {
  type: 'balance.negative';
  account_id: string;
  balance_micros: number;
  request_id: string;
  charged_micros: number;
}

/** A request was refused (402) because its key reached its spending budget. */
export interface KeyBudgetReachedEvent extends EventBase {
  type: 'key.budget_reached';
  key_id: string;
  account_id: string;
  /** The key's budget, micro-dollars, and its period (`total`, `day`, `month`), as read just after; null if that read failed. */
  budget_micros: number | null;
  budget_period: KeyBudgetPeriod | null;
  /** The first request refused. */
  request_id: string;
}

/** A live key was revoked through the admin actions (the admin API or the CLI). */
export interface KeyRevokedEvent extends EventBase {
  type: 'key.revoked';
  key_id: string;
  account_id: string;
}

/** An event for the operator's own systems (docs/events.md): plain JSON, snake_case, ready to send. */
export type GatewayEvent = BalanceLowEvent | BalanceNegativeEvent | KeyBudgetReachedEvent | KeyRevokedEvent;

/** The event types: `balance.low`, `balance.negative`, `key.budget_reached`, `key.revoked`. */
export type GatewayEventType = GatewayEvent['type'];

/**
 * Receives events. Called synchronously and never awaited; it must not block (queue the event and
 * return). A hook that throws, or returns a promise that rejects, is ignored: the request or admin
 * action goes on as if there were no hook.
 */
export type EventHook = (event: GatewayEvent) => void;

/** The id of an event of `type` caused by `source` (a request id, a key id). */
export function eventId(type: GatewayEventType, source: string): string {
  return `evt_${type.replace('.', '_')}_${source}`;
}

/** Hands `event` to `hook`; never throws, never waits. */
export function emitEvent(hook: EventHook, event: GatewayEvent): void {
  try {
    const result: unknown = hook(event);
    // An async hook: its rejection is the embedder's, not an unhandled one of the gateway's.
    if (result instanceof Promise) result.catch(() => {});
  } catch {
    // Ignored: an event hook never affects a request.
  }
}

/** Checks `lowBalanceMicros` at createGateway: a positive whole number of micro-dollars, or unset. */
export function checkLowBalance(value: number | undefined): void {
  if (value === undefined) return;
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new Error(`lowBalanceMicros must be a positive whole number of micro-dollars, not ${String(value)}`);
  }
}

/** What {@link watchBalances} needs from createGateway. */
export interface BalanceWatch {
  store: Store;
  onEvent: EventHook;
  lowBalanceMicros: number | undefined;
  now: () => number;
  timers: Timers;
}

/**
 * The check after a finished request: when it charged credits, reads the balance in a later task
 * (after the reply or stream ended, so a request never waits for it) and emits `balance.low` when
 * this charge crossed the threshold (`balance < threshold <= balance + charged`), `balance.negative`
 * when it crossed zero. Best effort: a failed read emits nothing, and two charges settled at once
 * may both see one crossing, or neither (docs/events.md).
 */
export function watchBalances(watch: BalanceWatch): (log: Partial<RequestLog>) => void {
  const { store, onEvent, lowBalanceMicros: threshold, now, timers } = watch;
  const check = async (accountId: string, requestId: string, charged: number) => {
    let balance: number;
    try {
      balance = (await store.getBalance(accountId)).balance;
    } catch {
      return; // the store is down: this crossing is not reported
    }
    const created_at = new Date(now()).toISOString();
    const before = balance + charged;
    if (threshold !== undefined && balance < threshold && threshold <= before) {
      emitEvent(onEvent, {
        id: eventId('balance.low', requestId),
        type: 'balance.low',
        created_at,
        account_id: accountId,
        balance_micros: balance,
        threshold_micros: threshold,
        request_id: requestId,
        charged_micros: charged,
      });
    }
    if (balance < 0 && 0 <= before) {
      emitEvent(onEvent, {
        id: eventId('balance.negative', requestId),
        type: 'balance.negative',
        created_at,
        account_id: accountId,
        balance_micros: balance,
        request_id: requestId,
        charged_micros: charged,
      });
    }
  };
  return (log) => {
    const { accountId, requestId, costMicros: charged } = log;
    // `included` funding writes no charge (its costMicros is the price the plan covered).
    if (log.funding !== 'credits' || accountId === undefined || requestId === undefined || charged === undefined || charged <= 0) return;
    timers.setTimeout(() => void check(accountId, requestId, charged), 0);
  };
}

/** Keys reported at their budget, per gateway (its runtime), until one of their holds passes again. */
const atBudget = new WeakMap<object, Map<string, true>>();
/** Keys remembered per gateway; past it the oldest is forgotten (it may then be reported again). */
const MAX_KEYS_AT_BUDGET = 10_000;

/**
 * After a hold: a refusal for the key's budget (`reason: 'key_budget'` on the store's
 * `InsufficientBalance`) emits `key.budget_reached`, once per key until a hold of that key passes
 * again (per gateway instance: each instance, and each restart, may report it once more). A hold
 * that passed forgets the key (its caller leaves out holds of nothing: a free call says nothing of
 * the budget's room). The budget is read with `store.getKey` in the background (the 402
 * does not wait for it). Nothing at all without a hook.
 */
export function noteHold(
  gateway: { options: { onEvent?: EventHook | undefined }; store: Store; now: () => number },
  principal: Principal,
  requestId: string,
  refusal: InsufficientBalance | undefined,
): void {
  const { onEvent } = gateway.options;
  const keyId = principal.keyId;
  if (onEvent === undefined || keyId === undefined) return;
  let keys = atBudget.get(gateway);
  if (refusal === undefined) {
    keys?.delete(keyId);
    return;
  }
  if (refusal.reason !== 'key_budget') return;
  if (keys === undefined) {
    keys = new Map();
    atBudget.set(gateway, keys);
  }
  if (keys.has(keyId)) return;
  if (keys.size >= MAX_KEYS_AT_BUDGET) keys.delete(keys.keys().next().value as string);
  keys.set(keyId, true);
  const created_at = new Date(gateway.now()).toISOString();
  void (async () => {
    let budget: KeyBudget | undefined;
    try {
      budget = (await gateway.store.getKey(keyId))?.budget;
    } catch {
      // Reported without the budget.
    }
    emitEvent(onEvent, {
      id: eventId('key.budget_reached', requestId),
      type: 'key.budget_reached',
      created_at,
      key_id: keyId,
      account_id: principal.account.id,
      budget_micros: budget?.micros ?? null,
      budget_period: budget?.period ?? null,
      request_id: requestId,
    });
  })();
}

/** The event of a key revoked at `revokedAt` (unix ms): the same id and time for every report of it. */
export function keyRevokedEvent(key: { id: string; accountId: string; revokedAt: number }): KeyRevokedEvent {
  return {
    id: eventId('key.revoked', key.id),
    type: 'key.revoked',
    created_at: new Date(key.revokedAt).toISOString(),
    key_id: key.id,
    account_id: key.accountId,
  };
}
