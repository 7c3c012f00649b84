import type { KeyRecord, Store } from '@tollgate/billing';

/** How long a verified key is trusted without asking the store when `keyCacheMs` is not set. */
export const DEFAULT_KEY_CACHE_MS = 1_000;
/** Keys kept at most: a flood of distinct valid keys evicts the oldest rather than growing memory. */
export const KEY_CACHE_MAX_ENTRIES = 10_000;

/**
 * Verified keys by digest, trusted for `keyCacheMs` (docs/architecture.md, Key cache). A found key
 * is kept with the time it was asked for; an unknown key is never kept, so a key created a moment
 * ago works at once. `forgetKey`/`forgetAccount` drop entries at once (the admin actions call them).
 */
export interface KeyCache {
  /** The live key of a digest: a fresh cached record as it is (no promise), else the store's answer. */
  find(digest: string): KeyRecord | undefined | Promise<KeyRecord | undefined>;
  /** Drops a key, so its next request asks the store. */
  forgetKey(keyId: string): void;
  /** Drops every key of an account, so their next requests ask the store. */
  forgetAccount(accountId: string): void;
  /** Entries kept (expired ones included until they are asked for again or evicted). */
  readonly size: number;
}

/** Options of {@link createKeyCache}. */
export interface KeyCacheOptions {
  /** The gateway's `keyCacheMs` as given: a non-negative whole number of milliseconds; 0 turns the cache off. */
  keyCacheMs?: number | undefined;
  /** The gateway's clock, unix milliseconds. */
  now: () => number;
  /** Entries kept at most (tests lower it). */
  maxEntries?: number;
}

interface Entry {
  record: KeyRecord;
  /** When the store was asked (before its answer): the entry is no fresher than that. */
  askedAt: number;
}

/** A key cache over `store.findKey`; a bad `keyCacheMs` throws here, as other options do in `createGateway`. */
export function createKeyCache(store: Pick<Store, 'findKey'>, options: KeyCacheOptions): KeyCache {
  const ttlMs = options.keyCacheMs ?? DEFAULT_KEY_CACHE_MS;
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 0) {
    throw new Error(`keyCacheMs must be a non-negative whole number of milliseconds, not ${String(options.keyCacheMs)}`);
  }
  if (ttlMs === 0) return { find: (digest) => store.findKey(digest), forgetKey() {}, forgetAccount() {}, size: 0 };
  const { now } = options;
  const maxEntries = options.maxEntries ?? KEY_CACHE_MAX_ENTRIES;
  const entries = new Map<string, Entry>();
  // Bumped by every forget: an answer asked for before a forget is not kept, since the store may
  // have read the key before the change the forget is for (a revoke racing a first request).
  let generation = 0;

  const ask = async (digest: string, askedAt: number): Promise<KeyRecord | undefined> => {
    const asked = generation;
    const record = await store.findKey(digest);
    if (record === undefined || asked !== generation) return record;
    entries.delete(digest); // a concurrent ask may have kept it: re-insert it as the newest
    if (entries.size >= maxEntries) {
      const oldest = entries.keys().next();
      if (!oldest.done) entries.delete(oldest.value);
    }
    entries.set(digest, { record, askedAt });
    return record;
  };

  /** Drops the entries `matches` picks: a scan, but only on an admin change, never per request. */
  const forget = (matches: (record: KeyRecord) => boolean) => {
    generation++;
    for (const [digest, entry] of entries) if (matches(entry.record)) entries.delete(digest);
  };

  return {
    find(digest) {
      const at = now();
      const entry = entries.get(digest);
      if (entry !== undefined) {
        const age = at - entry.askedAt;
        // A clock that went back (age < 0) trusts nothing: the bound stays keyCacheMs of real time.
        if (age >= 0 && age < ttlMs) return entry.record;
        entries.delete(digest);
      }
      return ask(digest, at);
    },
    forgetKey: (keyId) => forget((record) => record.id === keyId),
    forgetAccount: (accountId) => forget((record) => record.account.id === accountId),
    get size() {
      return entries.size;
    },
  };
}
