import { randomBase62 } from '@tollgate/core';

/** A new account id: `acc_` + 20 base62 characters. */
export function newAccountId(): string {
  return `acc_${randomBase62(20)}`;
}

/** A new key id (not the secret): `key_` + 20 base62 characters. */
export function newKeyId(): string {
  return `key_${randomBase62(20)}`;
}

/** A new hold id: `hold_` + 24 base62 characters. */
export function newHoldId(): string {
  return `hold_${randomBase62(24)}`;
}

/** A new ledger entry id: `ent_` + 24 base62 characters. */
export function newEntryId(): string {
  return `ent_${randomBase62(24)}`;
}

/** What `KeyInfo.prefix` shows of a key: `sk_svc_` and the first 4 characters of the secret. */
export function keyPrefix(key: string): string {
  return key.slice(0, 11);
}
