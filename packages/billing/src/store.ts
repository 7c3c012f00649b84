import type { Account, AccountState, Plan, Refusal, Result } from '@tollgate/core';

/** A key as the directory finds it: the key row and its account. */
export interface KeyRecord {
  /** Key id (not the secret). */
  id: string;
  /** The name given at creation. */
  name: string;
  /** The owning account. */
  account: Account;
}

/** A key as listed: never the secret, only its first characters. */
export interface KeyInfo {
  id: string;
  name: string;
  accountId: string;
  /** `sk_svc_` and the first 4 characters of the secret, for people to tell keys apart. */
  prefix: string;
  /** Unix milliseconds. */
  createdAt: number;
  /** Unix milliseconds; absent while the key is live. */
  revokedAt?: number;
}

/** A key as created: the only time the secret is shown. */
export interface CreatedKey {
  id: string;
  name: string;
  /** `sk_svc_` + 43 base62 characters. */
  key: string;
}

/**
 * Accounts and keys. Keys are stored only as SHA-256 hex digests of the whole key.
 */
export interface Directory {
  /** Creates an account (state `active`). */
  createAccount(input: { plan: Plan; id?: string }): Promise<Account>;
  /** Finds an account by id. */
  getAccount(accountId: string): Promise<Account | undefined>;
  /** Sets an account's state; throws when the account does not exist. */
  setAccountState(accountId: string, state: AccountState): Promise<Account>;
  /** Sets an account's plan; throws when the account does not exist. */
  setPlan(accountId: string, plan: Plan): Promise<Account>;
  /** Creates a key for an account; the secret is returned once and stored only as its hash. */
  createKey(accountId: string, name: string): Promise<CreatedKey>;
  /** Lists an account's keys, revoked ones included. */
  listKeys(accountId: string): Promise<KeyInfo[]>;
  /** Revokes a key; it stops at the next request. Idempotent. */
  revokeKey(keyId: string): Promise<void>;
  /** Finds a live (not revoked) key by the SHA-256 hex digest of the whole key. */
  findKey(keyHash: string): Promise<KeyRecord | undefined>;
}

/** An account's money: `available = balance - held`. All micro-dollars, integers. */
export interface Balance {
  balance: number;
  held: number;
  available: number;
}

/** An append-only ledger entry. The balance is the sum of an account's entries. */
export interface LedgerEntry {
  id: string;
  accountId: string;
  /** Signed micro-dollars: credits positive, charges negative. */
  micros: number;
  kind: 'credit' | 'charge';
  /** Unix milliseconds. */
  createdAt: number;
  /** The hold a charge settles. */
  holdId?: string;
  /** The request a charge pays for. */
  requestId?: string;
  /** Free-form details (model, tokens, note), JSON-serialisable. */
  meta?: Record<string, unknown>;
}

/** What to hold. */
export interface HoldInput {
  /** The amount wanted. */
  micros: number;
  /**
   * The least amount that still serves the request. When `available < micros` but
   * `available >= minimum`, all of `available` is held (the caller lowers its output limit to fit).
   * Defaults to `micros` (all or nothing).
   */
  minimum?: number;
  /** How long the hold lives before it is released on its own (a crashed instance's holds). */
  ttlMs: number;
  /** The request the hold is for. */
  requestId?: string;
}

/** A hold refused for want of money. */
export interface InsufficientBalance extends Refusal<'insufficient_balance'> {
  /** Micro-dollars available when the hold was refused (negative when the balance is). */
  available: number;
}

/** A hold that was placed. */
export interface Hold {
  /** The hold's id, for `settle` and `release`. */
  holdId: string;
  /** What was held: `micros`, or all of `available` when that is at least `minimum`. */
  micros: number;
}

/** The outcome of a hold: expected refusals are results, not exceptions. */
export type HoldResult = Result<Hold, InsufficientBalance>;

/** What a settle charges. */
export interface SettleInput {
  /**
   * The cost to charge, integer micro-dollars >= 0. The gateway never asks for more than the hold
   * (usage beyond the limits it sent upstream is billed at those limits); a store still accepts
   * more from other callers, and the balance may then go negative.
   */
  micros: number;
  requestId?: string;
  meta?: Record<string, unknown>;
}

/** The outcome of settle or release. `already` is true when the hold had already been settled or released. */
export interface SettleResult {
  /** What this hold was charged in the end (0 for a release). */
  charged: number;
  already: boolean;
}

/** A stream's delivered cost so far, recorded on its open hold by {@link Ledger.checkpoint}. */
export interface HoldCheckpoint {
  /** The stream's hold. */
  holdId: string;
  /** What the stream delivered so far, integer micro-dollars >= 0 (never recorded above the hold). */
  micros: number;
  /** The hold then lives at least this long from now: a stream still delivering keeps its hold. */
  ttlMs: number;
}

/**
 * Balances, holds and the append-only entries. Every method is atomic; `hold` never lets the
 * sum held exceed what is available, whatever the concurrency.
 */
export interface Ledger {
  /** Adds credits (micro-dollars > 0) as a credit entry. */
  addCredits(accountId: string, micros: number, meta?: Record<string, unknown>): Promise<Balance>;
  /** The balance, open (unexpired) holds and what is available. */
  getBalance(accountId: string): Promise<Balance>;
  /** Holds credit for a request; refuses when less than `minimum` is available (or the balance is negative). */
  hold(accountId: string, input: HoldInput): Promise<HoldResult>;
  /**
   * Charges a hold and closes it. Idempotent: a second settle or a settle after release charges
   * nothing. Works after the hold expired, unless `releaseExpired` charged it its checkpoint first.
   */
  settle(holdId: string, input: SettleInput): Promise<SettleResult>;
  /** Closes a hold without a charge. Idempotent. */
  release(holdId: string): Promise<SettleResult>;
  /** An account's entries, newest first. */
  entries(accountId: string, options?: { limit?: number }): Promise<LedgerEntry[]>;
  /**
   * Records what streams delivered on their open holds, all in one atomic write (the gateway
   * batches every stream of a tick into one call), so a crash loses at most one tick of delivery.
   * Per hold it raises the recorded amount, never lowers it, never past the hold's `micros`, and
   * extends the hold's expiry to at least `ttlMs` from now. Holds no longer open, and unknown ones,
   * are skipped. Returns how many holds it recorded. Optional: without it the gateway writes none,
   * and a stream cut by a crash is charged nothing.
   */
  checkpoint?(checkpoints: readonly HoldCheckpoint[]): Promise<number>;
  /**
   * Closes holds whose expiry passed; returns how many. A hold with a checkpointed amount is
   * charged that amount (a `charge` entry with the hold's request id and meta `{ outcome:
   * 'checkpoint' }`), and a later settle or release of it is `already`; a hold without one is
   * released for nothing, and may still be settled once.
   */
  releaseExpired(): Promise<number>;
}

/** Directory and Ledger in one store, as the gateway takes it. */
export interface Store extends Directory, Ledger {
  /** Frees connections and timers. */
  close?(): Promise<void>;
}

/** Options every store factory takes. */
export interface StoreOptions {
  /** The clock, unix milliseconds; injected in tests. */
  now?: () => number;
}
