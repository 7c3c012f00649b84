import { assertMicros } from './decide-hold';
import type { CreditInput, LedgerEntry, SettleInput, UsageQuery, UsageRow } from './store';

/** Milliseconds in a usage period: periods start on multiples of it from the Unix epoch, so on UTC hour and day boundaries (Unix time has no leap seconds). */
export const USAGE_PERIOD_MS: Readonly<Record<UsageQuery['groupBy'], number>> = Object.freeze({ hour: 3_600_000, day: 86_400_000 });

/** The longest idempotency key a store accepts. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** Throws unless `query` is well formed: an account, whole-millisecond `from <= to`, `hour` or `day`, string filters. */
export function assertUsageQuery(query: UsageQuery): void {
  if (typeof query.accountId !== 'string' || query.accountId === '') throw new TypeError('usage accountId must be an account id');
  if (!Number.isSafeInteger(query.from) || !Number.isSafeInteger(query.to) || query.from < 0 || query.to < query.from) {
    throw new RangeError('usage from and to must be unix milliseconds with from <= to');
  }
  if (query.groupBy !== 'hour' && query.groupBy !== 'day') throw new RangeError("usage groupBy must be 'hour' or 'day'");
  if (query.keyId !== undefined && typeof query.keyId !== 'string') throw new TypeError('usage keyId must be a string');
  if (query.model !== undefined && typeof query.model !== 'string') throw new TypeError('usage model must be a string');
}

/** Throws unless `input` is a well-formed creditOnce: micros > 0, an idempotency key of 1..255 characters. */
export function assertCreditInput(input: CreditInput): void {
  assertMicros('credits', input.micros);
  if (input.micros === 0) throw new RangeError('credits must be positive');
  const key = input.idempotencyKey;
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new RangeError(`idempotencyKey must be a string of 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`);
  }
}

/** Throws unless the settle's token counts, when given, are non-negative safe integers. */
export function assertSettleTokens(input: SettleInput): void {
  for (const [name, value] of [
    ['promptTokens', input.promptTokens],
    ['completionTokens', input.completionTokens],
  ] as const) {
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) throw new RangeError(`settle ${name} must be a non-negative safe integer`);
  }
}

/**
 * The usage rows of `entries` (one account's, any order) for `query`: the reference every store's
 * SQL must agree with, and the memory store's implementation. Charges only; credits never count.
 */
export function sumUsage(entries: Iterable<LedgerEntry>, query: UsageQuery): UsageRow[] {
  const size = USAGE_PERIOD_MS[query.groupBy];
  const rows = new Map<string, UsageRow>();
  for (const entry of entries) {
    if (entry.kind !== 'charge' || entry.accountId !== query.accountId || entry.createdAt < query.from || entry.createdAt >= query.to) continue;
    if (query.keyId !== undefined && entry.keyId !== query.keyId) continue;
    if (query.model !== undefined && entry.model !== query.model) continue;
    const period = entry.createdAt - (entry.createdAt % size);
    const group = JSON.stringify([period, entry.keyId ?? null, entry.model ?? null]);
    let row = rows.get(group);
    if (row === undefined) {
      row = { period, requests: 0, promptTokens: 0, completionTokens: 0, micros: 0 };
      if (entry.keyId !== undefined) row.keyId = entry.keyId;
      if (entry.model !== undefined) row.model = entry.model;
      rows.set(group, row);
    }
    row.requests += 1;
    row.promptTokens += entry.promptTokens ?? 0;
    row.completionTokens += entry.completionTokens ?? 0;
    row.micros -= entry.micros;
  }
  return [...rows.values()].sort(compareUsageRows);
}

/** The rows' order: period, then key id, then model; an absent key id or model first, ids by code unit (ASCII in practice, as SQL's binary order). */
export function compareUsageRows(a: UsageRow, b: UsageRow): number {
  return a.period - b.period || compareOptional(a.keyId, b.keyId) || compareOptional(a.model, b.model);
}

function compareOptional(a: string | undefined, b: string | undefined): number {
  if (a === b) return 0;
  if (a === undefined) return -1;
  if (b === undefined) return 1;
  return a < b ? -1 : 1;
}
