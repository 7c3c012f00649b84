import type { Account, AccountState, Plan } from '@tollgate/core';
import { assertCheckpoints, CHECKPOINT_CHARGE_META } from './assert-checkpoint';
import { assertHoldInput, assertMicros, decideHold } from './decide-hold';
import { generateKey } from './generate-key';
import { hashKey } from './hash-key';
import { addKeySpend, assertKeyBudget, budgetPeriodStart, keyBudgetRemaining, keyBudgetStatus, type KeySpend } from './key-budget';
import { decodeAccountsCursor, decodeEntriesCursor, encodeAccountsCursor, encodeEntriesCursor, pageLimit } from './page-cursor';
import { keyPrefix, newAccountId, newEntryId, newHoldId, newKeyId } from './store-ids';
import type { Balance, KeyBudget, KeyInfo, LedgerEntry, SettleResult, Store, StoreOptions } from './store';
import { assertCreditInput, assertSettleTokens, assertUsageQuery, sumUsage } from './usage-rules';

/** A hold row: `state` is `open` until settled or released; `expired` holds may still be settled once. */
interface HoldRow {
  id: string;
  accountId: string;
  micros: number;
  expiresAt: number;
  requestId?: string;
  keyId?: string;
  model?: string;
  state: 'open' | 'expired' | 'settled' | 'released';
  charged: number;
  /** What the hold's stream delivered, as last checkpointed: charged if the hold expires open. */
  delivered: number;
}

interface KeyRow extends Omit<KeyInfo, 'budget'> {
  hash: string;
  /** The key's spend limit; absent when it has none. */
  budget?: KeyBudget;
  /** What the key was charged in its budget's period (kept only while it has a budget). */
  spend: KeySpend;
}

/** The memory store's data, exposed to its own tests only. */
export interface MemoryState {
  accounts: Map<string, Account & { balance: number; createdAt: number }>;
  keys: Map<string, KeyRow>;
  keysByHash: Map<string, string>;
  holds: Map<string, HoldRow>;
  /** Per account, oldest first. */
  entries: Map<string, LedgerEntry[]>;
  /** Credits added by creditOnce, by idempotency key. */
  credits: Map<string, LedgerEntry>;
}

/**
 * A Store in Maps, for tests and single-process embedding. Every method runs without an `await`
 * between its read and its write, so each is atomic on the one JS thread.
 *
 * @example
 * const store = memoryStore();
 * const account = await store.createAccount({ plan: 'plus' });
 * await store.addCredits(account.id, 5_000_000);
 * const { key } = await store.createKey(account.id, 'laptop');
 */
export function memoryStore(options: StoreOptions = {}): Store {
  return createMemoryStore(options).store;
}

/** The memory store and its state (the state is for tests that inspect what is stored). */
export function createMemoryStore(options: StoreOptions = {}): { store: Store; state: MemoryState } {
  const now = options.now ?? Date.now;
  const state: MemoryState = { accounts: new Map(), keys: new Map(), keysByHash: new Map(), holds: new Map(), entries: new Map(), credits: new Map() };

  const account = (id: string) => {
    const row = state.accounts.get(id);
    if (row === undefined) throw new Error(`unknown account ${id}`);
    return row;
  };
  const publicAccount = (row: Account): Account => ({ id: row.id, plan: row.plan, state: row.state });
  const heldBy = (accountId: string, at: number, keyId?: string): number => {
    let held = 0;
    for (const hold of state.holds.values())
      if (hold.accountId === accountId && hold.state === 'open' && hold.expiresAt > at && (keyId === undefined || hold.keyId === keyId)) held += hold.micros;
    return held;
  };
  /** What the budget of the hold's key leaves (undefined: no key, an unknown key, or no budget). */
  const keyRemaining = (accountId: string, keyId: string | undefined, at: number): number | undefined => {
    const row = keyId === undefined ? undefined : state.keys.get(keyId);
    if (row === undefined || keyId === undefined) return undefined;
    if (row.accountId !== accountId) throw new Error(`key ${keyId} is not of account ${accountId}`);
    return row.budget === undefined ? undefined : keyBudgetRemaining(row.budget, row.spend, heldBy(accountId, at, keyId), at);
  };
  const balanceOf = (accountId: string): Balance => {
    const { balance } = account(accountId);
    const held = heldBy(accountId, now());
    return { balance, held, available: balance - held };
  };
  const append = (entry: Omit<LedgerEntry, 'id' | 'createdAt'>): LedgerEntry => {
    const row = account(entry.accountId);
    row.balance += entry.micros;
    const full: LedgerEntry = { id: newEntryId(), createdAt: now(), ...entry };
    // A charge of a key with a budget adds to its period counter, in the same step as the entry.
    const key = full.kind === 'charge' && full.keyId !== undefined ? state.keys.get(full.keyId) : undefined;
    if (key?.budget !== undefined) key.spend = addKeySpend(key.budget.period, key.spend, full.micros === 0 ? 0 : -full.micros, full.createdAt);
    const list = state.entries.get(entry.accountId) ?? [];
    list.push(full);
    state.entries.set(entry.accountId, list);
    return full;
  };
  const keyInfo = (row: KeyRow): KeyInfo => {
    const info: KeyInfo = { id: row.id, name: row.name, accountId: row.accountId, prefix: row.prefix, createdAt: row.createdAt };
    if (row.revokedAt !== undefined) info.revokedAt = row.revokedAt;
    if (row.budget !== undefined) info.budget = keyBudgetStatus(row.budget, row.spend, now());
    return info;
  };
  /** A charge entry for a hold: the hold's request, key and model, and what the settle adds. */
  const chargeOf = (row: HoldRow, micros: number): Omit<LedgerEntry, 'id' | 'createdAt'> => {
    const entry: Omit<LedgerEntry, 'id' | 'createdAt'> = { accountId: row.accountId, micros: micros === 0 ? 0 : -micros, kind: 'charge', holdId: row.id };
    if (row.requestId !== undefined) entry.requestId = row.requestId;
    if (row.keyId !== undefined) entry.keyId = row.keyId;
    if (row.model !== undefined) entry.model = row.model;
    return entry;
  };
  const update = (accountId: string, change: Partial<Pick<Account, 'plan' | 'state'>>): Account => {
    const row = account(accountId);
    Object.assign(row, change);
    return publicAccount(row);
  };
  const hold = (holdId: string): HoldRow => {
    const row = state.holds.get(holdId);
    if (row === undefined) throw new Error(`unknown hold ${holdId}`);
    return row;
  };

  const store: Store = {
    async createAccount(input: { plan: Plan; id?: string }) {
      const id = input.id ?? newAccountId();
      if (state.accounts.has(id)) throw new Error(`account ${id} exists`);
      state.accounts.set(id, { id, plan: input.plan, state: 'active', balance: 0, createdAt: now() });
      return { id, plan: input.plan, state: 'active' };
    },
    async getAccount(accountId) {
      const row = state.accounts.get(accountId);
      return row === undefined ? undefined : publicAccount(row);
    },
    async setAccountState(accountId, accountState: AccountState) {
      return update(accountId, { state: accountState });
    },
    async setPlan(accountId, plan) {
      return update(accountId, { plan });
    },
    async createKey(accountId, name) {
      account(accountId);
      const key = generateKey();
      const hash = await hashKey(key);
      const id = newKeyId();
      state.keys.set(id, { id, name, accountId, prefix: keyPrefix(key), createdAt: now(), hash, spend: { spent: 0, since: 0 } });
      state.keysByHash.set(hash, id);
      return { id, name, key };
    },
    async listKeys(accountId) {
      const keys: KeyInfo[] = [];
      for (const row of state.keys.values()) if (row.accountId === accountId) keys.push(keyInfo(row));
      return keys;
    },
    async listAccounts(options = {}) {
      const limit = pageLimit(options.limit);
      const after = options.cursor === undefined ? undefined : decodeAccountsCursor(options.cursor);
      const rows = [...state.accounts.values()]
        .filter((row) => after === undefined || row.createdAt > after.createdAt || (row.createdAt === after.createdAt && row.id > after.id))
        .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      const items = rows.slice(0, limit);
      const last = items.at(-1);
      return rows.length > limit && last !== undefined
        ? { items: items.map(publicAccount), next: encodeAccountsCursor({ createdAt: last.createdAt, id: last.id }) }
        : { items: items.map(publicAccount) };
    },
    async getKey(keyId) {
      const row = state.keys.get(keyId);
      return row === undefined ? undefined : keyInfo(row);
    },
    async setKeyName(keyId, name) {
      const row = state.keys.get(keyId);
      if (row === undefined) throw new Error(`unknown key ${keyId}`);
      row.name = name;
      return keyInfo(row);
    },
    async setKeyBudget(keyId, budget) {
      assertKeyBudget(budget);
      const row = state.keys.get(keyId);
      if (row === undefined) throw new Error(`unknown key ${keyId}`);
      if (budget === null) {
        delete row.budget;
        row.spend = { spent: 0, since: 0 };
        return keyInfo(row);
      }
      // The counter starts from the ledger: the key's charges since the current period began.
      const since = budgetPeriodStart(budget.period, now());
      let spent = 0;
      for (const entry of state.entries.get(row.accountId) ?? [])
        if (entry.kind === 'charge' && entry.keyId === keyId && entry.createdAt >= since) spent -= entry.micros;
      row.budget = { micros: budget.micros, period: budget.period };
      row.spend = { spent, since };
      return keyInfo(row);
    },
    async revokeKey(keyId) {
      const row = state.keys.get(keyId);
      if (row === undefined) throw new Error(`unknown key ${keyId}`);
      row.revokedAt ??= now();
    },
    async findKey(keyHash) {
      const id = state.keysByHash.get(keyHash);
      const row = id === undefined ? undefined : state.keys.get(id);
      if (row === undefined || row.revokedAt !== undefined) return undefined;
      return { id: row.id, name: row.name, account: publicAccount(account(row.accountId)) };
    },
    async addCredits(accountId, micros, meta) {
      assertMicros('credits', micros);
      if (micros === 0) throw new RangeError('credits must be positive');
      account(accountId);
      append(meta === undefined ? { accountId, micros, kind: 'credit' } : { accountId, micros, kind: 'credit', meta });
      return balanceOf(accountId);
    },
    async getBalance(accountId) {
      return balanceOf(accountId);
    },
    async hold(accountId, input) {
      assertHoldInput(input);
      const at = now();
      const decision = decideHold(account(accountId).balance, heldBy(accountId, at), input, keyRemaining(accountId, input.keyId, at));
      if (!decision.ok) return decision;
      const id = newHoldId();
      const row: HoldRow = { id, accountId, micros: decision.value, expiresAt: at + input.ttlMs, state: 'open', charged: 0, delivered: 0 };
      if (input.requestId !== undefined) row.requestId = input.requestId;
      if (input.keyId !== undefined) row.keyId = input.keyId;
      if (input.model !== undefined) row.model = input.model;
      state.holds.set(id, row);
      return { ok: true, value: { holdId: id, micros: decision.value } };
    },
    async settle(holdId, input): Promise<SettleResult> {
      assertMicros('settle micros', input.micros);
      assertSettleTokens(input);
      const row = hold(holdId);
      if (row.state === 'settled' || row.state === 'released') return { charged: row.charged, already: true };
      row.state = 'settled';
      row.charged = input.micros;
      const entry = chargeOf(row, input.micros);
      if (input.requestId !== undefined) entry.requestId = input.requestId;
      if (input.meta !== undefined) entry.meta = input.meta;
      if (input.promptTokens !== undefined) entry.promptTokens = input.promptTokens;
      if (input.completionTokens !== undefined) entry.completionTokens = input.completionTokens;
      append(entry);
      return { charged: input.micros, already: false };
    },
    async release(holdId) {
      const row = hold(holdId);
      if (row.state === 'settled' || row.state === 'released') return { charged: row.charged, already: true };
      row.state = 'released';
      return { charged: 0, already: false };
    },
    async creditOnce(accountId, input) {
      assertCreditInput(input);
      const first = state.credits.get(input.idempotencyKey);
      if (first !== undefined) {
        if (first.accountId !== accountId || first.micros !== input.micros) {
          return { ok: false, error: { code: 'idempotency_conflict', message: 'this idempotency key was used for another account or amount' } };
        }
        return { ok: true, value: { entry: { ...first }, balance: balanceOf(accountId), replayed: true } };
      }
      account(accountId);
      const entry = append({
        accountId,
        micros: input.micros,
        kind: 'credit',
        idempotencyKey: input.idempotencyKey,
        ...(input.meta === undefined ? {} : { meta: input.meta }),
      });
      state.credits.set(input.idempotencyKey, entry);
      return { ok: true, value: { entry: { ...entry }, balance: balanceOf(accountId), replayed: false } };
    },
    async entries(accountId, options = {}) {
      const list = (state.entries.get(accountId) ?? []).map((entry) => ({ ...entry })).reverse();
      return options.limit === undefined ? list : list.slice(0, options.limit);
    },
    async entriesPage(accountId, options = {}) {
      const limit = pageLimit(options.limit);
      // The position in the account's append-only list is its ledger order: 1 for the first entry.
      const after = options.cursor === undefined ? 0 : decodeEntriesCursor(options.cursor, accountId);
      const list = state.entries.get(accountId) ?? [];
      const items = list.slice(after, after + limit).map((entry) => ({ ...entry }));
      const end = after + items.length;
      return end < list.length ? { items, next: encodeEntriesCursor(accountId, end) } : { items };
    },
    async usage(query) {
      assertUsageQuery(query);
      return sumUsage(state.entries.get(query.accountId) ?? [], query);
    },
    async checkpoint(checkpoints) {
      assertCheckpoints(checkpoints);
      const at = now();
      let count = 0;
      for (const checkpoint of checkpoints) {
        const row = state.holds.get(checkpoint.holdId);
        // An expired hold no longer counts as held (its money may be held again): never revive it.
        if (row === undefined || row.state !== 'open' || row.expiresAt <= at) continue;
        row.delivered = Math.min(row.micros, Math.max(row.delivered, checkpoint.micros));
        row.expiresAt = Math.max(row.expiresAt, at + checkpoint.ttlMs);
        count++;
      }
      return count;
    },
    async releaseExpired() {
      const at = now();
      let count = 0;
      for (const row of state.holds.values()) {
        if (row.state !== 'open' || row.expiresAt > at) continue;
        count++;
        if (row.delivered === 0) {
          row.state = 'expired';
          continue;
        }
        // The stream's instance died mid-stream: it pays what it had delivered at its last checkpoint.
        row.state = 'settled';
        row.charged = row.delivered;
        append({ ...chargeOf(row, row.delivered), meta: { ...CHECKPOINT_CHARGE_META } });
      }
      return count;
    },
  };
  return { store, state };
}
