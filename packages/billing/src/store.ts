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
  /** The key's spend limit and what it spent in the current period; absent when it has none. */
  budget?: KeyBudgetStatus;
}

/** The period a key budget counts over: its whole life, or the UTC day or month (reset on the UTC boundary). */
export type KeyBudgetPeriod = 'total' | 'day' | 'month';

/**
 * A key's spend limit: the key's charges in one period plus its open holds never exceed `micros`
 * (integer micro-dollars >= 0). It limits the key on top of the account's balance, never instead.
 */
export interface KeyBudget {
  micros: number;
  period: KeyBudgetPeriod;
}

/** A key budget as read back, with the current period's spend. */
export interface KeyBudgetStatus extends KeyBudget {
  /**
   * Micro-dollars the key was charged since `periodStart` (settled charges, crash checkpoint
   * charges included; open holds are not). Kept as a counter by the store, not summed per read.
   */
  spent: number;
  /** Start of the current period, unix milliseconds: UTC midnight, the 1st of the UTC month, or 0 for `total`. */
  periodStart: number;
}

/** A key as created: the only time the secret is shown. */
export interface CreatedKey {
  id: string;
  name: string;
  /** `sk_svc_` + 43 base62 characters. */
  key: string;
}

/**
 * One page of a listing, oldest first. `next` is an opaque cursor for the following page; it is
 * absent on the last page (a page may be full and still the last). Cursors stay valid while rows
 * are added (keyset: a cursor names the last row it returned, never an offset), so no row repeats
 * and none already there is skipped; rows added after a page was read come on later pages.
 */
export interface Page<T> {
  items: T[];
  next?: string;
}

/** Options of a paged listing. */
export interface PageOptions {
  /** Rows per page, 1..1000 (default 100). */
  limit?: number;
  /**
   * The `next` of the previous page of the same listing; absent for the first page. Anything else
   * (garbled, another listing's, another account's) throws `InvalidCursorError` (`code:
   * 'invalid_cursor'`), never a guessed page. A limit outside 1..1000 throws a RangeError.
   */
  cursor?: string;
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
  /** Lists accounts in creation order (creation time, then id), a page at a time. */
  listAccounts(options?: PageOptions): Promise<Page<Account>>;
  /** A key by id (revoked ones included), never its secret or hash. */
  getKey(keyId: string): Promise<KeyInfo | undefined>;
  /** Renames a key (a revoked one too) and returns it; throws when the key does not exist. */
  setKeyName(keyId: string, name: string): Promise<KeyInfo>;
  /**
   * Sets a key's spend limit (`null` clears it) and returns the key; throws when the key does not
   * exist, a RangeError for a malformed budget. The key's spend in the current period is counted
   * from the ledger at this moment (a month's charges of the key at most; the whole history for
   * `total`), atomically with the charges being written, and kept as a counter from then on.
   */
  setKeyBudget(keyId: string, budget: KeyBudget | null): Promise<KeyInfo>;
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
  /** Charges: the key that made the request (absent for a signed-in app user). */
  keyId?: string;
  /** Charges: the public model id the request named (absent for page fetches, which have none). */
  model?: string;
  /**
   * Charges: prompt tokens billed. Absent when the request has no tokens (images, search, fetch)
   * and on a checkpoint charge (a crash-cut stream: its cost was recorded, not its tokens).
   */
  promptTokens?: number;
  /** Charges: completion tokens billed; absent as `promptTokens` is. */
  completionTokens?: number;
  /** Credits: the idempotency key it was added under by `creditOnce`, if any. */
  idempotencyKey?: string;
}

/** A credit that a replay must not add twice (a payment webhook). */
export interface CreditInput {
  /** Micro-dollars > 0. */
  micros: number;
  /** 1..255 characters, unique across the store (not per account): the same key again adds nothing. */
  idempotencyKey: string;
  /** Recorded with the first credit; a replay's meta is ignored. */
  meta?: Record<string, unknown>;
}

/**
 * The same idempotency key came with another account or amount. Not a code of the gateway's error
 * catalogue: only the admin API meets it (409).
 */
export interface IdempotencyConflict {
  code: 'idempotency_conflict';
  message: string;
}

/** A credit added, or found already added under its idempotency key (`replayed`). */
export interface Credited {
  entry: LedgerEntry;
  balance: Balance;
  replayed: boolean;
}

/** What {@link Ledger.usage} sums. */
export interface UsageQuery {
  accountId: string;
  /** Unix milliseconds (>= 0), inclusive. */
  from: number;
  /** Unix milliseconds, exclusive; `from <= to`, else a RangeError. */
  to: number;
  /** Periods start on UTC hour or day boundaries (multiples of 3,600,000 or 86,400,000 ms). A period cut by `from` or `to` sums only its part inside. */
  groupBy: 'hour' | 'day';
  /** Only this key's charges. */
  keyId?: string;
  /** Only this model's charges. */
  model?: string;
}

/**
 * One period's charges for one key and model, summed from the ledger's charge entries (so it
 * equals what was charged, to the micro; credits never count). Only periods with charges have rows.
 * Rows come ordered by period, then key id, then model, an absent key id or model first.
 */
export interface UsageRow {
  /** Start of the UTC hour or day, unix milliseconds. */
  period: number;
  /** Absent for charges of signed-in app users. */
  keyId?: string;
  /** Absent for charges without a model (page fetches). */
  model?: string;
  /** Charge entries: one per request that was charged (a checkpoint charge counts as its request; a zero charge counts too). */
  requests: number;
  /** Summed; entries without tokens count 0. */
  promptTokens: number;
  completionTokens: number;
  /** Micro-dollars spent (positive: the negated sum of the charges). */
  micros: number;
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
  /**
   * The key that made the request, recorded on the charge entry (usage per key). When the key (of
   * this account) has a budget, the hold must fit it too: see {@link Ledger.hold}.
   */
  keyId?: string;
  /** The public model id, recorded on the charge entry (usage per model). */
  model?: string;
}

/** A hold refused for want of money. */
export interface InsufficientBalance extends Refusal<'insufficient_balance'> {
  /**
   * What refused it: the account's balance, or the budget of the key that asked (the balance is
   * checked first: a hold both would refuse is `balance`). Absent from stores that predate key
   * budgets: read it as `balance`.
   */
  reason?: 'balance' | 'key_budget';
  /**
   * Micro-dollars available when the hold was refused (negative when the balance is); for
   * `key_budget`, what the key's budget had left (budget − spent in the period − the key's open
   * holds; negative when past it).
   */
  available: number;
}

/** A hold that was placed. */
export interface Hold {
  /** The hold's id, for `settle` and `release`. */
  holdId: string;
  /**
   * What was held: `micros`, or all of what is left when that is at least `minimum` — the smaller
   * of the available balance and the key budget's remainder.
   */
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
  /** Prompt tokens billed, recorded on the charge entry (usage); a non-negative safe integer, else a RangeError. */
  promptTokens?: number;
  /** Completion tokens billed, recorded on the charge entry (usage); as `promptTokens`. */
  completionTokens?: number;
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
 * sum held exceed what is available, nor a key's holds exceed what its budget has left, whatever
 * the concurrency. Every charge of a key with a budget adds to the key's period counter in the
 * charge's own transaction.
 */
export interface Ledger {
  /** Adds credits (micro-dollars > 0) as a credit entry. */
  addCredits(accountId: string, micros: number, meta?: Record<string, unknown>): Promise<Balance>;
  /** The balance, open (unexpired) holds and what is available. */
  getBalance(accountId: string): Promise<Balance>;
  /**
   * Holds credit for a request; refuses when less than `minimum` is available (or the balance is
   * negative). When `input.keyId` names a key of this account with a budget, the hold must also fit
   * what the budget has left — budget − the key's charges since the period's UTC start − the key's
   * open holds — checked in the same atomic step as the balance, so concurrent holds of one key never
   * hold past it (refused with `reason: 'key_budget'`). A key id the store does not know is only
   * recorded; a known key of another account throws.
   */
  hold(accountId: string, input: HoldInput): Promise<HoldResult>;
  /**
   * Charges a hold and closes it. Idempotent: a second settle or a settle after release charges
   * nothing. Works after the hold expired, unless `releaseExpired` charged it its checkpoint first.
   */
  settle(holdId: string, input: SettleInput): Promise<SettleResult>;
  /** Closes a hold without a charge. Idempotent. */
  release(holdId: string): Promise<SettleResult>;
  /**
   * Adds credits once per idempotency key: a replay with the same account and amount adds nothing
   * and returns the first entry (`replayed: true`) with the current balance; the same key with
   * another account or amount is an `idempotency_conflict`. Atomic under concurrency: two racing
   * calls add once. An unknown account (with a key not yet used) throws, as `addCredits` does.
   */
  creditOnce(accountId: string, input: CreditInput): Promise<Result<Credited, IdempotencyConflict>>;
  /** An account's entries, newest first. */
  entries(accountId: string, options?: { limit?: number }): Promise<LedgerEntry[]>;
  /** An account's entries in ledger order (oldest first: the order they were committed in), a page at a time. */
  entriesPage(accountId: string, options?: PageOptions): Promise<Page<LedgerEntry>>;
  /**
   * Usage summed from the charge entries of `[from, to)`, grouped by UTC period, key and model.
   * Indexed: a month of a million entries answers in well under a second.
   */
  usage(query: UsageQuery): Promise<UsageRow[]>;
  /**
   * Records what streams delivered on their open holds, all in one atomic write (the gateway
   * batches every stream of a tick into one call), so a crash loses at most one tick of delivery.
   * Per hold it raises the recorded amount, never lowers it, never past the hold's `micros`, and
   * extends the hold's expiry to at least `ttlMs` from now. Holds no longer open, holds whose expiry
   * has passed (they stopped counting as held, so their money may be held again: a late renewal
   * must not bring them back; the sweep closes them at their last checkpoint), and unknown ones are
   * skipped. Returns how many holds it recorded. Optional: without it the gateway writes none,
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
