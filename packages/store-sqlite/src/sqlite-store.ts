import Database from 'better-sqlite3';
import type { Account, AccountState, Plan } from '@tollgate/core';
import {
  assertHoldInput,
  assertMicros,
  decideHold,
  generateKey,
  hashKey,
  keyPrefix,
  newAccountId,
  newEntryId,
  newHoldId,
  newKeyId,
  type HoldResult,
  type KeyInfo,
  type LedgerEntry,
  type SettleResult,
  type Store,
  type StoreOptions,
} from '@tollgate/billing';
import { migrate } from './sqlite-schema';

/** The SQLite store: a Store plus what the reference server needs at start and stop. */
export interface SqliteStore extends Store {
  /** Marks every open hold expired; for the one process serving the file, at its start. Returns how many. */
  releaseAllHolds(): Promise<number>;
  /** Closes the database. */
  close(): Promise<void>;
}

interface AccountRow {
  id: string;
  plan: Plan;
  state: AccountState;
  balance: number;
}
interface KeyRow {
  id: string;
  name: string;
  account_id: string;
  prefix: string;
  created_at: number;
  revoked_at: number | null;
}
interface HoldRow {
  id: string;
  account_id: string;
  state: string;
  charged: number;
  request_id: string | null;
}
interface EntryRow {
  id: string;
  account_id: string;
  micros: number;
  kind: 'credit' | 'charge';
  created_at: number;
  hold_id: string | null;
  request_id: string | null;
  meta: string | null;
}

/**
 * Directory + Ledger on SQLite (better-sqlite3, WAL). Every mutation is one IMMEDIATE
 * transaction, so the file may be shared with CLI processes; `hold` computes what is available and
 * inserts the hold under the same write lock.
 *
 * @example
 * const store = sqliteStore('./data/tollgate.db');
 * await store.releaseAllHolds(); // `serve` only: every open hold belonged to a dead process
 */
export function sqliteStore(path: string, options: StoreOptions & { busyTimeoutMs?: number } = {}): SqliteStore {
  const now = options.now ?? Date.now;
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5_000))}`);
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  migrate(db);

  const sql = {
    insertAccount: db.prepare('INSERT INTO accounts (id, plan, state, created_at) VALUES (?, ?, ?, ?)'),
    getAccount: db.prepare<[string], AccountRow>('SELECT id, plan, state, balance FROM accounts WHERE id = ?'),
    setState: db.prepare('UPDATE accounts SET state = ? WHERE id = ?'),
    setPlan: db.prepare('UPDATE accounts SET plan = ? WHERE id = ?'),
    insertKey: db.prepare('INSERT INTO keys (id, account_id, name, hash, prefix, created_at) VALUES (?, ?, ?, ?, ?, ?)'),
    listKeys: db.prepare<[string], KeyRow>('SELECT id, name, account_id, prefix, created_at, revoked_at FROM keys WHERE account_id = ? ORDER BY seq'),
    revokeKey: db.prepare('UPDATE keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?'),
    findKey: db.prepare<[string], { id: string; name: string; account_id: string; plan: Plan; state: AccountState }>(
      `SELECT k.id, k.name, k.account_id, a.plan, a.state FROM keys k JOIN accounts a ON a.id = k.account_id
       WHERE k.hash = ? AND k.revoked_at IS NULL`,
    ),
    insertEntry: db.prepare('INSERT INTO entries (id, account_id, micros, kind, created_at, hold_id, request_id, meta) VALUES (?, ?, ?, ?, ?, ?, ?, ?)'),
    entries: db.prepare<[string, number], EntryRow>(
      'SELECT id, account_id, micros, kind, created_at, hold_id, request_id, meta FROM entries WHERE account_id = ? ORDER BY seq DESC LIMIT ?',
    ),
    held: db.prepare<[string, number], { held: number }>(
      "SELECT coalesce(sum(micros), 0) AS held FROM holds WHERE account_id = ? AND state = 'open' AND expires_at > ?",
    ),
    insertHold: db.prepare('INSERT INTO holds (id, account_id, micros, created_at, expires_at, request_id) VALUES (?, ?, ?, ?, ?, ?)'),
    getHold: db.prepare<[string], HoldRow>('SELECT id, account_id, state, charged, request_id FROM holds WHERE id = ?'),
    closeHold: db.prepare('UPDATE holds SET state = ?, charged = ?, closed_at = ? WHERE id = ?'),
    expire: db.prepare("UPDATE holds SET state = 'expired' WHERE state = 'open' AND expires_at <= ?"),
    expireAll: db.prepare("UPDATE holds SET state = 'expired' WHERE state = 'open'"),
  };

  const account = (accountId: string): AccountRow => {
    const row = sql.getAccount.get(accountId);
    if (row === undefined) throw new Error(`unknown account ${accountId}`);
    return row;
  };
  const toAccount = (row: { id: string; plan: Plan; state: AccountState }): Account => ({ id: row.id, plan: row.plan, state: row.state });
  const balanceOf = (accountId: string) => {
    const { balance } = account(accountId);
    const { held } = sql.held.get(accountId, now())!;
    return { balance, held, available: balance - held };
  };
  // One read transaction: the balance and the holds come from the same snapshot.
  const readBalance = db.transaction((accountId: string) => balanceOf(accountId));
  const update = db.transaction((accountId: string, change: { plan?: Plan; state?: AccountState }): Account => {
    account(accountId);
    if (change.state !== undefined) sql.setState.run(change.state, accountId);
    if (change.plan !== undefined) sql.setPlan.run(change.plan, accountId);
    return toAccount(account(accountId));
  });
  const credit = db.transaction((accountId: string, micros: number, meta: string | null) => {
    account(accountId);
    sql.insertEntry.run(newEntryId(), accountId, micros, 'credit', now(), null, null, meta);
    return balanceOf(accountId);
  });
  const hold = db.transaction((accountId: string, input: Parameters<Store['hold']>[1]): HoldResult => {
    const at = now();
    const { balance } = account(accountId);
    const decision = decideHold(balance, sql.held.get(accountId, at)!.held, input);
    if (!decision.ok) return { ok: false, code: 'insufficient_balance', available: decision.available };
    const id = newHoldId();
    sql.insertHold.run(id, accountId, decision.micros, at, at + input.ttlMs, input.requestId ?? null);
    return { ok: true, holdId: id, micros: decision.micros };
  });
  const close = db.transaction((holdId: string, charge: Parameters<Store['settle']>[1] | undefined): SettleResult => {
    const row = sql.getHold.get(holdId);
    if (row === undefined) throw new Error(`unknown hold ${holdId}`);
    if (row.state === 'settled' || row.state === 'released') return { charged: row.charged, already: true };
    const at = now();
    if (charge === undefined) {
      sql.closeHold.run('released', 0, at, holdId);
      return { charged: 0, already: false };
    }
    sql.closeHold.run('settled', charge.micros, at, holdId);
    const meta = charge.meta === undefined ? null : JSON.stringify(charge.meta);
    sql.insertEntry.run(newEntryId(), row.account_id, charge.micros === 0 ? 0 : -charge.micros, 'charge', at, holdId, charge.requestId ?? row.request_id, meta);
    return { charged: charge.micros, already: false };
  });

  const store: SqliteStore = {
    async createAccount(input) {
      const id = input.id ?? newAccountId();
      sql.insertAccount.run(id, input.plan, 'active', now());
      return { id, plan: input.plan, state: 'active' };
    },
    async getAccount(accountId) {
      const row = sql.getAccount.get(accountId);
      return row === undefined ? undefined : toAccount(row);
    },
    async setAccountState(accountId, state) {
      return update.immediate(accountId, { state });
    },
    async setPlan(accountId, plan) {
      return update.immediate(accountId, { plan });
    },
    async createKey(accountId, name) {
      const key = generateKey();
      const hash = await hashKey(key);
      const id = newKeyId();
      // The foreign key refuses an unknown account.
      sql.insertKey.run(id, accountId, name, hash, keyPrefix(key), now());
      return { id, name, key };
    },
    async listKeys(accountId) {
      return sql.listKeys.all(accountId).map((row): KeyInfo => {
        const info: KeyInfo = { id: row.id, name: row.name, accountId: row.account_id, prefix: row.prefix, createdAt: row.created_at };
        if (row.revoked_at !== null) info.revokedAt = row.revoked_at;
        return info;
      });
    },
    async revokeKey(keyId) {
      if (sql.revokeKey.run(now(), keyId).changes === 0) throw new Error(`unknown key ${keyId}`);
    },
    async findKey(keyHash) {
      const row = sql.findKey.get(keyHash);
      return row === undefined ? undefined : { id: row.id, name: row.name, account: { id: row.account_id, plan: row.plan, state: row.state } };
    },
    async addCredits(accountId, micros, meta) {
      assertMicros('credits', micros);
      if (micros === 0) throw new RangeError('credits must be positive');
      return credit.immediate(accountId, micros, meta === undefined ? null : JSON.stringify(meta));
    },
    async getBalance(accountId) {
      return readBalance(accountId);
    },
    async hold(accountId, input) {
      assertHoldInput(input);
      return hold.immediate(accountId, input);
    },
    async settle(holdId, input) {
      assertMicros('settle micros', input.micros);
      return close.immediate(holdId, input);
    },
    async release(holdId) {
      return close.immediate(holdId, undefined);
    },
    async entries(accountId, options = {}) {
      return sql.entries.all(accountId, options.limit ?? -1).map(toEntry);
    },
    async releaseExpired() {
      return sql.expire.run(now()).changes;
    },
    async releaseAllHolds() {
      return sql.expireAll.run().changes;
    },
    async close() {
      if (db.open) db.close();
    },
  };
  return store;
}

function toEntry(row: EntryRow): LedgerEntry {
  const entry: LedgerEntry = { id: row.id, accountId: row.account_id, micros: row.micros, kind: row.kind, createdAt: row.created_at };
  if (row.hold_id !== null) entry.holdId = row.hold_id;
  if (row.request_id !== null) entry.requestId = row.request_id;
  if (row.meta !== null) entry.meta = JSON.parse(row.meta) as Record<string, unknown>;
  return entry;
}
