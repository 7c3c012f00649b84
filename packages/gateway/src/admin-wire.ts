import { type Account, hasControlCharacter } from '@tollgate/core';
import type { Balance, KeyBudgetStatus, KeyInfo, LedgerEntry, UsageRow } from '@tollgate/billing';
import type { AdminRefusal, AdminUsageQuery } from './admin-actions';

/**
 * The JSON the admin API (`admin-api.ts`) and the keyed reads (`handle-account-reads.ts`) answer:
 * snake_case fields, money in integer micro-dollars (`*_micros`), times as ISO 8601 UTC strings
 * with milliseconds, absent values as `null`. A key's hash never appears; its secret only in the
 * reply that created it.
 */

const iso = (ms: number) => new Date(ms).toISOString();

export function accountJson(account: Account) {
  return { object: 'account', id: account.id, plan: account.plan, state: account.state };
}

export function keyJson(key: KeyInfo) {
  return {
    object: 'key',
    id: key.id,
    name: key.name,
    account_id: key.accountId,
    prefix: key.prefix,
    created_at: iso(key.createdAt),
    revoked_at: key.revokedAt === undefined ? null : iso(key.revokedAt),
    budget: key.budget === undefined ? null : keyBudgetJson(key.budget),
  };
}

/** A key's spend limit: `period_start` is null for a `total` budget (it never starts again). */
export function keyBudgetJson(budget: KeyBudgetStatus) {
  return {
    micros: budget.micros,
    period: budget.period,
    spent_micros: budget.spent,
    period_start: budget.period === 'total' ? null : iso(budget.periodStart),
  };
}

export function balanceJson(balance: Balance) {
  return { object: 'balance', balance_micros: balance.balance, held_micros: balance.held, available_micros: balance.available };
}

export function entryJson(entry: LedgerEntry) {
  return {
    object: 'ledger_entry',
    id: entry.id,
    account_id: entry.accountId,
    kind: entry.kind,
    micros: entry.micros,
    created_at: iso(entry.createdAt),
    hold_id: entry.holdId ?? null,
    request_id: entry.requestId ?? null,
    key_id: entry.keyId ?? null,
    model: entry.model ?? null,
    prompt_tokens: entry.promptTokens ?? null,
    completion_tokens: entry.completionTokens ?? null,
    idempotency_key: entry.idempotencyKey ?? null,
    meta: entry.meta ?? null,
  };
}

export function usageJson(query: AdminUsageQuery, rows: UsageRow[]) {
  return {
    object: 'list',
    group_by: query.groupBy,
    from: iso(query.from),
    to: iso(query.to),
    data: rows.map((row) => ({
      object: 'usage',
      period_start: iso(row.period),
      key_id: row.keyId ?? null,
      model: row.model ?? null,
      requests: row.requests,
      prompt_tokens: row.promptTokens,
      completion_tokens: row.completionTokens,
      cost_micros: row.micros,
    })),
  };
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** The widest usage query: 31 days by the hour, 366 days by the day. */
export const MAX_USAGE_RANGE_MS = { hour: 31 * DAY_MS, day: 366 * DAY_MS } as const;

/**
 * A time of a query string: unix seconds (`1764115200`) or ISO 8601 UTC, a date (`2026-11-26`) or
 * a date and time ending in `Z` (`2026-11-26T13:00:00Z`, seconds and milliseconds optional).
 * Undefined when it is neither, names a day that does not exist, or falls before 1970.
 */
export function parseTime(text: string): number | undefined {
  if (/^\d{1,11}$/.test(text)) return Number(text) * 1000;
  const match = /^(\d{4}-\d{2}-\d{2})(?:T(\d{2}:\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?Z)?$/.exec(text);
  if (!match) return undefined;
  const ms = Date.parse(match[2] === undefined ? `${match[1]}T00:00:00.000Z` : text);
  // Date.parse takes 2026-02-30 as 2 March: only a date that prints back as written is one. Nothing
  // was charged before 1970 (a store refuses negative times as a programming error, not a 400).
  if (!Number.isFinite(ms) || ms < 0 || new Date(ms).toISOString().slice(0, 10) !== match[1]) return undefined;
  return ms;
}

/**
 * The usage query of a query string: `from` and `to` (required, see {@link parseTime}; `to` after
 * `from`, at most {@link MAX_USAGE_RANGE_MS} apart), `group_by` (`hour` or `day`, default `day`),
 * optional `key_id` and `model`; any other parameter is refused.
 */
export function parseUsageQuery(params: URLSearchParams): { ok: true; value: AdminUsageQuery } | { ok: false; error: AdminRefusal } {
  const bad = (param: string, message: string) => ({ ok: false as const, error: { code: 'invalid_parameter' as const, param, message } });
  const allowed = new Set(['from', 'to', 'group_by', 'key_id', 'model']);
  const seen = new Set<string>();
  for (const name of params.keys()) {
    if (!allowed.has(name)) return bad(name, `${name} is not a parameter of usage (from, to, group_by, key_id, model).`);
    if (seen.has(name)) return bad(name, `${name} is given more than once.`);
    seen.add(name);
  }
  const time = (name: 'from' | 'to') => {
    const text = params.get(name);
    return text === null ? undefined : parseTime(text);
  };
  const from = time('from');
  if (from === undefined) return bad('from', 'from is required: unix seconds or an ISO 8601 UTC date or time (2026-11-26, 2026-11-26T13:00:00Z).');
  const to = time('to');
  if (to === undefined) return bad('to', 'to is required: unix seconds or an ISO 8601 UTC date or time (2026-11-26, 2026-11-26T13:00:00Z).');
  const groupBy = params.get('group_by') ?? 'day';
  if (groupBy !== 'hour' && groupBy !== 'day') return bad('group_by', 'group_by must be hour or day.');
  if (to <= from) return bad('to', 'to must be after from.');
  if (to - from > MAX_USAGE_RANGE_MS[groupBy])
    return bad('to', `to may be at most ${groupBy === 'hour' ? 31 : 366} days after from when grouping by ${groupBy}.`);
  const query: AdminUsageQuery = { from, to, groupBy };
  for (const [name, field] of [
    ['key_id', 'keyId'],
    ['model', 'model'],
  ] as const) {
    const value = params.get(name);
    if (value === null) continue;
    if (value.length === 0 || value.length > 200 || hasControlCharacter(value))
      return bad(name, `${name} must be 1 to 200 characters, none a control character.`);
    query[field] = value;
  }
  return { ok: true, value: query };
}
