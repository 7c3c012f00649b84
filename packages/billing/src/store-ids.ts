import { randomBase62 } from '@tollgate/core';

/** A new account id: `acc_` + 20 base62 characters. */
export function newAccountId(): string {
  return `acc_${randomBase62(20)}`;
}

/** A new key id (not the secret): `key_` + 20 base62 characters. */
export function newKeyId(): string {
  return `key_${randomBase62(20)}`;
}

/** Base62 digits in byte order, so a fixed-width number written in them sorts as the number does. */
const ORDERED_BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * The time part of a hold or entry id: the milliseconds since 1970 as 8 base62 digits in byte order
 * (62^8 ms is some 6,900 years). Ids made later sort later, so the index on a table's id takes each
 * new row at its end, as the rowid does, instead of at a random page: a batch of writes dirties one
 * index page instead of one per row (docs/benchmarks.md, "Group commit").
 */
export function timeBase62(ms: number): string {
  let rest = Math.max(0, Math.floor(ms));
  let out = '';
  for (let digit = 0; digit < 8; digit++) {
    out = ORDERED_BASE62.charAt(rest % 62) + out;
    rest = Math.floor(rest / 62);
  }
  return out;
}

/** A new hold id: `hold_` + 24 base62 characters, the first 8 the time (ids sort by when they were made). */
export function newHoldId(): string {
  return `hold_${timeBase62(Date.now())}${randomBase62(16)}`;
}

/** A new ledger entry id: `ent_` + 24 base62 characters, the first 8 the time (ids sort by when they were made). */
export function newEntryId(): string {
  return `ent_${timeBase62(Date.now())}${randomBase62(16)}`;
}

/** What `KeyInfo.prefix` shows of a key: `sk_svc_` and the first 4 characters of the secret. */
export function keyPrefix(key: string): string {
  return key.slice(0, 11);
}
