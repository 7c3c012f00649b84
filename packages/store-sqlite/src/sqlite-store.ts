import { type Account, type AccountState, isAccountState, isPlan, type Plan } from '@tollgate/core';
import {
  generateKey,
  hashKey,
  type HoldResult,
  isKeyBudgetPeriod,
  type KeyBudget,
  type KeyInfo,
  type LedgerEntry,
  type SettleInput,
  type SettleResult,
  type Store,
  type StoreOptions,
  type UsageRow,
} from '@tollgate/billing';
import {
  addKeySpend,
  assertCheckpoints,
  assertCreditInput,
  assertHoldInput,
  assertKeyBudget,
  assertMicros,
  assertSettleTokens,
  assertUsageQuery,
  budgetPeriodStart,
  CHECKPOINT_CHARGE_META,
  decideHold,
  decodeAccountsCursor,
  decodeEntriesCursor,
  encodeAccountsCursor,
  encodeEntriesCursor,
  keyBudgetRemaining,
  keyBudgetStatus,
  type KeySpend,
  keyPrefix,
  newAccountId,
  newEntryId,
  newHoldId,
  newKeyId,
  pageLimit,
  USAGE_PERIOD_MS,
} from '@tollgate/billing/store-kit';
import { runtimeDriver } from './runtime-driver';
import { type SqliteDatabase, type SqliteDriver, type SqliteRow, WAL_AUTOCHECKPOINT_PAGES } from './sqlite-database';
import { column } from './sqlite-row';
import { migrate } from './sqlite-schema';
import { transaction } from './sqlite-transaction';
import { writeBatch } from './write-batch';

/** The SQLite store: a Store plus what the reference server needs at start and stop. */
export interface SqliteStore extends Store {
  checkpoint: NonNullable<Store['checkpoint']>;
  /**
   * Closes every open hold, as `releaseExpired` does an expired one (a checkpointed hold is charged
   * its checkpoint); for the one process serving the file, at its start. Returns how many.
   */
  releaseAllHolds(): Promise<number>;
  /** Closes the database. */
  close(): Promise<void>;
}

/** Options of {@link sqliteStore}. */
export interface SqliteStoreOptions extends StoreOptions {
  /** How long a writer waits for another process's write lock, in ms (default 5,000). */
  busyTimeoutMs?: number;
  /** The driver that opens the file (default {@link runtimeDriver}: the one for this runtime). */
  driver?: SqliteDriver;
  /**
   * Checkpoint the WAL every this many ms on a thread of the driver's own (a second connection),
   * so that no commit of the serving thread runs a checkpoint and its waits for the disk (some
   * 25-40 ms under load, docs/benchmarks.md); better-sqlite3's driver starts the thread once the
   * WAL first reaches 10,000 pages. Where the driver cannot (better-sqlite3 with a class you
   * passed, node:sqlite, bun:sqlite) and when unset, SQLite checkpoints in the commit that crosses
   * 10,000 pages of WAL. For a long-lived server (`serve` sets 1,000), not a CLI command.
   */
  checkpointEveryMs?: number;
}

/** The columns of an entry, as toEntry reads them. */
const ENTRY_COLUMNS =
  'seq, id, account_id, micros, kind, created_at, hold_id, request_id, meta, key_id, model, prompt_tokens, completion_tokens, idempotency_key';

/** A key's budget and spend counter, as toBudget reads them (from a join, aliased `k`). */
const KEY_BUDGET_COLUMNS = 'k.budget_micros, k.budget_period, k.budget_spent, k.budget_since';

/** The columns of a key, as toKeyInfo reads them. */
const KEY_COLUMNS = 'id, name, account_id, prefix, created_at, revoked_at, budget_micros, budget_period, budget_spent, budget_since';

interface AccountRow {
  id: string;
  plan: Plan;
  state: AccountState;
  balance: number;
}

/**
 * Directory + Ledger on SQLite (WAL), on whichever driver the runtime has: better-sqlite3 (Node),
 * node:sqlite (Node >= 22.13, Deno) or bun:sqlite (Bun); the schema and every statement are the
 * same on each, so one file opens under all of them. Every mutation runs under an IMMEDIATE
 * transaction, so the file may be shared with CLI processes; `hold` computes what is available and
 * inserts the hold under the same write lock. The request path's writes are group-committed: those
 * of one event-loop turn share a transaction (packages/store-sqlite/src/write-batch.ts).
 *
 * @example
 * const store = sqliteStore('./data/tollgate.db');
 * await store.releaseAllHolds(); // `serve` only: every open hold belonged to a dead process
 */
export function sqliteStore(path: string, options: SqliteStoreOptions = {}): SqliteStore {
  const now = options.now ?? Date.now;
  const driver = options.driver ?? runtimeDriver();
  const db: SqliteDatabase = driver.open(path);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 5_000))}`);
  db.exec('PRAGMA synchronous = NORMAL');
  // Checkpoint the WAL into the file every 10,000 pages (about 40 MB) instead of SQLite's 1,000
  // (docs/benchmarks.md, "Group commit"); the WAL file keeps that size on disk once grown.
  const autocheckpoint = (pages: number) => db.exec(`PRAGMA wal_autocheckpoint = ${pages}`);
  autocheckpoint(WAL_AUTOCHECKPOINT_PAGES);
  db.exec('PRAGMA foreign_keys = ON');
  migrate(db);
  // Asked for once the file is in WAL mode and migrated. While the thread runs, the commit's own
  // checkpoint stays as a backstop ten times further (only a load the thread cannot keep up with
  // reaches it); back at 10,000 pages if the thread ends before the store closes.
  let open = true;
  let closing: Promise<void> | undefined;
  const whileOpen = (pages: number) => () => {
    if (open) autocheckpoint(pages);
  };
  const background =
    options.checkpointEveryMs === undefined || path === ':memory:' || path === ''
      ? undefined
      : driver.backgroundCheckpoints?.(path, options.checkpointEveryMs, {
          onStarted: whileOpen(10 * WAL_AUTOCHECKPOINT_PAGES),
          onFailed: whileOpen(WAL_AUTOCHECKPOINT_PAGES),
        });

  const sql = {
    insertAccount: db.prepare('INSERT INTO accounts (id, plan, state, created_at) VALUES (?, ?, ?, ?)'),
    getAccount: db.prepare('SELECT id, plan, state, balance FROM accounts WHERE id = ?'),
    setState: db.prepare('UPDATE accounts SET state = ? WHERE id = ?'),
    setPlan: db.prepare('UPDATE accounts SET plan = ? WHERE id = ?'),
    insertKey: db.prepare('INSERT INTO keys (id, account_id, name, hash, prefix, created_at) VALUES (?, ?, ?, ?, ?, ?)'),
    listKeys: db.prepare(`SELECT ${KEY_COLUMNS} FROM keys WHERE account_id = ? ORDER BY seq`),
    revokeKey: db.prepare('UPDATE keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?'),
    findKey: db.prepare(
      `SELECT k.id, k.name, k.account_id, a.plan, a.state FROM keys k JOIN accounts a ON a.id = k.account_id
       WHERE k.hash = ? AND k.revoked_at IS NULL`,
    ),
    getKey: db.prepare(`SELECT ${KEY_COLUMNS} FROM keys WHERE id = ?`),
    setKeyName: db.prepare('UPDATE keys SET name = ? WHERE id = ?'),
    setKeyBudget: db.prepare('UPDATE keys SET budget_micros = ?, budget_period = ?, budget_spent = ?, budget_since = ? WHERE id = ?'),
    setKeySpend: db.prepare('UPDATE keys SET budget_spent = ?, budget_since = ? WHERE id = ?'),
    // The key's charges since its period began (entries_usage covers it: the account's charges by time).
    keyCharged: db.prepare(
      "SELECT coalesce(-sum(micros), 0) AS spent FROM entries WHERE account_id = ? AND kind = 'charge' AND created_at >= ? AND key_id = ?",
    ),
    keyHeld: db.prepare("SELECT coalesce(sum(micros), 0) AS held FROM holds WHERE account_id = ? AND state = 'open' AND expires_at > ? AND key_id = ?"),
    firstAccounts: db.prepare('SELECT id, plan, state, created_at FROM accounts ORDER BY created_at, id LIMIT ?'),
    accountsAfter: db.prepare('SELECT id, plan, state, created_at FROM accounts WHERE (created_at, id) > (?, ?) ORDER BY created_at, id LIMIT ?'),
    insertEntry: db.prepare(
      `INSERT INTO entries (id, account_id, micros, kind, created_at, hold_id, request_id, meta, key_id, model, prompt_tokens, completion_tokens, idempotency_key)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    entries: db.prepare(`SELECT ${ENTRY_COLUMNS} FROM entries WHERE account_id = ? ORDER BY seq DESC LIMIT ?`),
    entriesAfter: db.prepare(`SELECT ${ENTRY_COLUMNS} FROM entries WHERE account_id = ? AND seq > ? ORDER BY seq LIMIT ?`),
    credited: db.prepare(`SELECT ${ENTRY_COLUMNS} FROM entries WHERE idempotency_key = ?`),
    // Reads entries_usage alone (a covering index): `kind = 'charge'` is its partial-index condition.
    usage: db.prepare(
      `SELECT created_at - (created_at % ?) AS period, key_id, model, count(*) AS requests,
              coalesce(sum(prompt_tokens), 0) AS prompt_tokens, coalesce(sum(completion_tokens), 0) AS completion_tokens, -sum(micros) AS micros
       FROM entries
       WHERE account_id = ? AND kind = 'charge' AND created_at >= ? AND created_at < ?
         AND (? IS NULL OR key_id = ?) AND (? IS NULL OR model = ?)
       GROUP BY period, key_id, model ORDER BY period, key_id, model`,
    ),
    held: db.prepare("SELECT coalesce(sum(micros), 0) AS held FROM holds WHERE account_id = ? AND state = 'open' AND expires_at > ?"),
    // What a hold decides on, in one statement (one step into SQLite instead of three): the
    // account's balance, its open holds, and the hold's key (null columns without one).
    holdView: db.prepare(
      `SELECT a.balance,
              (SELECT coalesce(sum(h.micros), 0) FROM holds h WHERE h.account_id = a.id AND h.state = 'open' AND h.expires_at > ?) AS held,
              k.account_id AS key_account, ${KEY_BUDGET_COLUMNS}
       FROM accounts a LEFT JOIN keys k ON k.id = ? WHERE a.id = ?`,
    ),
    insertHold: db.prepare('INSERT INTO holds (id, account_id, micros, created_at, expires_at, request_id, key_id, model) VALUES (?, ?, ?, ?, ?, ?, ?, ?)'),
    // A hold with its key's budget columns (null without a key, an unknown key or a budget): a
    // settle reads both in one statement.
    getHold: db.prepare(
      `SELECT h.id, h.account_id, h.state, h.charged, h.request_id, h.key_id, h.model, k.account_id AS key_account, ${KEY_BUDGET_COLUMNS}
       FROM holds h LEFT JOIN keys k ON k.id = h.key_id WHERE h.id = ?`,
    ),
    closeHold: db.prepare('UPDATE holds SET state = ?, charged = ?, closed_at = ? WHERE id = ?'),
    checkpoint: db.prepare(
      "UPDATE holds SET delivered_micros = min(micros, max(delivered_micros, ?)), expires_at = max(expires_at, ?) WHERE id = ? AND state = 'open' AND expires_at > ?",
    ),
    // `?` is the expiry bound: now for releaseExpired, past every expiry for releaseAllHolds.
    checkpointed: db.prepare(
      "SELECT id, account_id, request_id, key_id, model, delivered_micros FROM holds WHERE state = 'open' AND expires_at <= ? AND delivered_micros > 0",
    ),
    expire: db.prepare("UPDATE holds SET state = 'expired' WHERE state = 'open' AND expires_at <= ?"),
  };
  // The request path's writes (hold, settle, release, checkpoint) commit together per turn of the
  // event loop; every other call first commits what is queued, so it sees every write made before it.
  const writes = writeBatch(db);

  const account = (accountId: string): AccountRow => {
    const row = sql.getAccount.get(accountId);
    if (row === undefined) throw new Error(`unknown account ${accountId}`);
    return toAccountRow(row);
  };
  const heldBy = (accountId: string, at: number): number => {
    const row = sql.held.get(accountId, at);
    return row === undefined ? 0 : column.integer(row, 'held');
  };
  const balanceOf = (accountId: string) => {
    const { balance } = account(accountId);
    const held = heldBy(accountId, now());
    return { balance, held, available: balance - held };
  };
  /** The key row's budget and spend counter (undefined: an unknown key). */
  const keyBudgetOf = (keyId: string): KeyBudgetRow | undefined => {
    const row = sql.getKey.get(keyId);
    return row === undefined ? undefined : { accountId: column.text(row, 'account_id'), ...toBudget(row) };
  };
  /**
   * What the budget of a hold's key leaves, read under the hold's write lock (undefined: no key, an
   * unknown key, or no budget). `key` is the key's row as the hold's statement joined it.
   */
  const keyRemaining = (accountId: string, keyId: string | undefined, key: KeyBudgetRow | undefined, at: number): number | undefined => {
    if (keyId === undefined || key === undefined) return undefined;
    if (key.accountId !== accountId) throw new Error(`key ${keyId} is not of account ${accountId}`);
    if (key.budget === undefined) return undefined;
    const held = sql.keyHeld.get(accountId, at, keyId);
    return keyBudgetRemaining(key.budget, key.spend, held === undefined ? 0 : column.integer(held, 'held'), at);
  };
  /**
   * Adds a charge to its key's period counter, in the charge's transaction (a key without a budget
   * keeps none). `key` is the key's row read in this transaction (undefined: an unknown key).
   */
  const chargeKey = (keyId: string | null, key: KeyBudgetRow | undefined, micros: number, at: number): void => {
    if (keyId === null || key?.budget === undefined) return;
    const spend = addKeySpend(key.budget.period, key.spend, micros, at);
    sql.setKeySpend.run(spend.spent, spend.since, keyId);
  };
  const toKeyInfo = (row: SqliteRow): KeyInfo => {
    const info = toKeyInfoBase(row);
    const { budget, spend } = toBudget(row);
    if (budget !== undefined) info.budget = keyBudgetStatus(budget, spend, now());
    return info;
  };
  const update = (accountId: string, change: { plan?: Plan; state?: AccountState }): Account =>
    transaction(db, 'IMMEDIATE', () => {
      account(accountId);
      if (change.state !== undefined) sql.setState.run(change.state, accountId);
      if (change.plan !== undefined) sql.setPlan.run(change.plan, accountId);
      return toAccount(account(accountId));
    });
  const close = (holdId: string, charge: SettleInput | undefined): Promise<SettleResult> =>
    writes.run(() => {
      const found = sql.getHold.get(holdId);
      if (found === undefined) throw new Error(`unknown hold ${holdId}`);
      const row = toHoldRow(found);
      if (row.state === 'settled' || row.state === 'released') return { charged: row.charged, already: true };
      const at = now();
      if (charge === undefined) {
        sql.closeHold.run('released', 0, at, holdId);
        return { charged: 0, already: false };
      }
      sql.closeHold.run('settled', charge.micros, at, holdId);
      const meta = charge.meta === undefined ? null : JSON.stringify(charge.meta);
      sql.insertEntry.run(
        newEntryId(),
        row.accountId,
        charge.micros === 0 ? 0 : -charge.micros,
        'charge',
        at,
        holdId,
        charge.requestId ?? row.requestId,
        meta,
        row.keyId,
        row.model,
        charge.promptTokens ?? null,
        charge.completionTokens ?? null,
        null,
      );
      chargeKey(row.keyId, joinedKey(found), charge.micros, at);
      return { charged: charge.micros, already: false };
    });

  /** Closes the open holds that expire by `bound`: the checkpointed ones charged, the others released. */
  const closeExpired = (bound: number): number =>
    transaction(db, 'IMMEDIATE', () => {
      const at = now();
      const meta = JSON.stringify(CHECKPOINT_CHARGE_META);
      const charged = sql.checkpointed.all(bound);
      for (const row of charged) {
        const holdId = column.text(row, 'id');
        const micros = column.integer(row, 'delivered_micros');
        const keyId = column.optionalText(row, 'key_id');
        sql.closeHold.run('settled', micros, at, holdId);
        sql.insertEntry.run(
          newEntryId(),
          column.text(row, 'account_id'),
          -micros,
          'charge',
          at,
          holdId,
          column.optionalText(row, 'request_id'),
          meta,
          keyId,
          column.optionalText(row, 'model'),
          null,
          null,
          null,
        );
        chargeKey(keyId, keyId === null ? undefined : keyBudgetOf(keyId), micros, at);
      }
      return charged.length + sql.expire.run(bound).changes;
    });

  return {
    async createAccount(input) {
      const id = input.id ?? newAccountId();
      sql.insertAccount.run(id, input.plan, 'active', now());
      return { id, plan: input.plan, state: 'active' };
    },
    async getAccount(accountId) {
      writes.flush();
      const row = sql.getAccount.get(accountId);
      return row === undefined ? undefined : toAccount(toAccountRow(row));
    },
    async setAccountState(accountId, state) {
      writes.flush();
      return update(accountId, { state });
    },
    async setPlan(accountId, plan) {
      writes.flush();
      return update(accountId, { plan });
    },
    async createKey(accountId, name) {
      writes.flush();
      const key = generateKey();
      const hash = await hashKey(key);
      const id = newKeyId();
      // The foreign key refuses an unknown account.
      sql.insertKey.run(id, accountId, name, hash, keyPrefix(key), now());
      return { id, name, key };
    },
    async listKeys(accountId) {
      writes.flush();
      return sql.listKeys.all(accountId).map(toKeyInfo);
    },
    async listAccounts(options = {}) {
      writes.flush();
      const limit = pageLimit(options.limit);
      const after = options.cursor === undefined ? undefined : decodeAccountsCursor(options.cursor);
      // One more than the page: whether it is there says whether there is a next page.
      const rows = after === undefined ? sql.firstAccounts.all(limit + 1) : sql.accountsAfter.all(after.createdAt, after.id, limit + 1);
      const items = rows.slice(0, limit);
      const last = items.at(-1);
      const page = { items: items.map(toListedAccount) };
      return rows.length > limit && last !== undefined
        ? { ...page, next: encodeAccountsCursor({ createdAt: column.integer(last, 'created_at'), id: column.text(last, 'id') }) }
        : page;
    },
    async getKey(keyId) {
      writes.flush();
      const row = sql.getKey.get(keyId);
      return row === undefined ? undefined : toKeyInfo(row);
    },
    async setKeyName(keyId, name) {
      writes.flush();
      return transaction(db, 'IMMEDIATE', () => {
        if (sql.setKeyName.run(name, keyId).changes === 0) throw new Error(`unknown key ${keyId}`);
        const row = sql.getKey.get(keyId);
        if (row === undefined) throw new Error(`unknown key ${keyId}`);
        return toKeyInfo(row);
      });
    },
    async setKeyBudget(keyId, budget) {
      writes.flush();
      assertKeyBudget(budget);
      // Under the write lock: no charge of the key is written between the count and the update.
      return transaction(db, 'IMMEDIATE', () => {
        const found = sql.getKey.get(keyId);
        if (found === undefined) throw new Error(`unknown key ${keyId}`);
        if (budget === null) sql.setKeyBudget.run(null, null, 0, 0, keyId);
        else {
          const since = budgetPeriodStart(budget.period, now());
          const charged = sql.keyCharged.get(column.text(found, 'account_id'), since, keyId);
          sql.setKeyBudget.run(budget.micros, budget.period, charged === undefined ? 0 : column.integer(charged, 'spent'), since, keyId);
        }
        const row = sql.getKey.get(keyId);
        if (row === undefined) throw new Error(`unknown key ${keyId}`);
        return toKeyInfo(row);
      });
    },
    async revokeKey(keyId) {
      writes.flush();
      if (sql.revokeKey.run(now(), keyId).changes === 0) throw new Error(`unknown key ${keyId}`);
    },
    async findKey(keyHash) {
      const row = sql.findKey.get(keyHash);
      if (row === undefined) return undefined;
      const account = { id: column.text(row, 'account_id'), plan: column.oneOf(row, 'plan', isPlan), state: column.oneOf(row, 'state', isAccountState) };
      return { id: column.text(row, 'id'), name: column.text(row, 'name'), account };
    },
    async addCredits(accountId, micros, meta) {
      writes.flush();
      assertMicros('credits', micros);
      if (micros === 0) throw new RangeError('credits must be positive');
      const note = meta === undefined ? null : JSON.stringify(meta);
      return transaction(db, 'IMMEDIATE', () => {
        account(accountId);
        sql.insertEntry.run(newEntryId(), accountId, micros, 'credit', now(), null, null, note, null, null, null, null, null);
        return balanceOf(accountId);
      });
    },
    async getBalance(accountId) {
      writes.flush();
      // One read transaction: the balance and the holds come from the same snapshot.
      return transaction(db, 'DEFERRED', () => balanceOf(accountId));
    },
    async hold(accountId, input): Promise<HoldResult> {
      assertHoldInput(input);
      return writes.run(() => {
        const at = now();
        const view = sql.holdView.get(at, input.keyId ?? null, accountId);
        if (view === undefined) throw new Error(`unknown account ${accountId}`);
        const remaining = keyRemaining(accountId, input.keyId, joinedKey(view), at);
        const decision = decideHold(column.integer(view, 'balance'), column.integer(view, 'held'), input, remaining);
        if (!decision.ok) return decision;
        const id = newHoldId();
        sql.insertHold.run(id, accountId, decision.value, at, at + input.ttlMs, input.requestId ?? null, input.keyId ?? null, input.model ?? null);
        return { ok: true, value: { holdId: id, micros: decision.value } };
      });
    },
    async settle(holdId, input) {
      assertMicros('settle micros', input.micros);
      assertSettleTokens(input);
      return close(holdId, input);
    },
    async release(holdId) {
      return close(holdId, undefined);
    },
    async creditOnce(accountId, input) {
      writes.flush();
      assertCreditInput(input);
      const note = input.meta === undefined ? null : JSON.stringify(input.meta);
      // Under the write lock: the look-up and the insert are one step for every process on the file.
      return transaction(db, 'IMMEDIATE', () => {
        const found = sql.credited.get(input.idempotencyKey);
        if (found !== undefined) {
          const first = toEntry(found);
          if (first.accountId !== accountId || first.micros !== input.micros) {
            return { ok: false, error: { code: 'idempotency_conflict', message: 'this idempotency key was used for another account or amount' } };
          }
          return { ok: true, value: { entry: first, balance: balanceOf(accountId), replayed: true } };
        }
        account(accountId);
        const id = newEntryId();
        sql.insertEntry.run(id, accountId, input.micros, 'credit', now(), null, null, note, null, null, null, null, input.idempotencyKey);
        const inserted = sql.credited.get(input.idempotencyKey);
        if (inserted === undefined || column.text(inserted, 'id') !== id) throw new Error('credit not recorded');
        return { ok: true, value: { entry: toEntry(inserted), balance: balanceOf(accountId), replayed: false } };
      });
    },
    async entries(accountId, options = {}) {
      writes.flush();
      return sql.entries.all(accountId, options.limit ?? -1).map(toEntry);
    },
    async entriesPage(accountId, options = {}) {
      writes.flush();
      const limit = pageLimit(options.limit);
      const after = options.cursor === undefined ? 0 : decodeEntriesCursor(options.cursor, accountId);
      const rows = sql.entriesAfter.all(accountId, after, limit + 1);
      const items = rows.slice(0, limit);
      const last = items.at(-1);
      return rows.length > limit && last !== undefined
        ? { items: items.map(toEntry), next: encodeEntriesCursor(accountId, column.integer(last, 'seq')) }
        : { items: items.map(toEntry) };
    },
    async usage(query) {
      writes.flush();
      assertUsageQuery(query);
      const keyId = query.keyId ?? null;
      const model = query.model ?? null;
      return sql.usage.all(USAGE_PERIOD_MS[query.groupBy], query.accountId, query.from, query.to, keyId, keyId, model, model).map(toUsageRow);
    },
    async checkpoint(checkpoints) {
      assertCheckpoints(checkpoints);
      if (checkpoints.length === 0) return 0;
      // One write for the whole batch, committed with the other writes of this turn.
      return writes.run(() => {
        const at = now();
        let count = 0;
        for (const { holdId, micros, ttlMs } of checkpoints) count += sql.checkpoint.run(micros, at + ttlMs, holdId, at).changes;
        return count;
      });
    },
    async releaseExpired() {
      writes.flush();
      return closeExpired(now());
    },
    async releaseAllHolds() {
      writes.flush();
      return closeExpired(Number.MAX_SAFE_INTEGER);
    },
    close() {
      // One close for every caller: a second one resolves only once the connection is closed too.
      closing ??= (async () => {
        open = false;
        writes.flush();
        // The thread's connection first: the store's, closed last, checkpoints what is left and removes the WAL.
        await background?.stop();
        writes.flush(); // anything queued while the thread stopped
        db.close();
      })();
      return closing;
    },
  };
}

function toAccountRow(row: SqliteRow): AccountRow {
  return {
    id: column.text(row, 'id'),
    plan: column.oneOf(row, 'plan', isPlan),
    state: column.oneOf(row, 'state', isAccountState),
    balance: column.integer(row, 'balance'),
  };
}

/** An account row without its balance (a listing). */
function toListedAccount(row: SqliteRow): Account {
  return { id: column.text(row, 'id'), plan: column.oneOf(row, 'plan', isPlan), state: column.oneOf(row, 'state', isAccountState) };
}

function toAccount(row: AccountRow): Account {
  return { id: row.id, plan: row.plan, state: row.state };
}

function toHoldRow(row: SqliteRow) {
  return {
    accountId: column.text(row, 'account_id'),
    state: column.text(row, 'state'),
    charged: column.integer(row, 'charged'),
    requestId: column.optionalText(row, 'request_id'),
    keyId: column.optionalText(row, 'key_id'),
    model: column.optionalText(row, 'model'),
  };
}

function toUsageRow(row: SqliteRow): UsageRow {
  const usage: UsageRow = {
    period: column.integer(row, 'period'),
    requests: column.integer(row, 'requests'),
    promptTokens: column.integer(row, 'prompt_tokens'),
    completionTokens: column.integer(row, 'completion_tokens'),
    micros: column.integer(row, 'micros'),
  };
  const keyId = column.optionalText(row, 'key_id');
  const model = column.optionalText(row, 'model');
  if (keyId !== null) usage.keyId = keyId;
  if (model !== null) usage.model = model;
  return usage;
}

/** A key's account, budget (absent without one) and spend counter. */
interface KeyBudgetRow {
  accountId: string;
  budget?: KeyBudget;
  spend: KeySpend;
}

/** The key a statement joined (`key_account` and the budget columns), or undefined when none matched. */
function joinedKey(row: SqliteRow): KeyBudgetRow | undefined {
  const accountId = column.optionalText(row, 'key_account');
  return accountId === null ? undefined : { accountId, ...toBudget(row) };
}

/** A key row's budget (absent without one) and its spend counter. */
function toBudget(row: SqliteRow): { budget?: KeyBudget; spend: KeySpend } {
  const spend = { spent: column.integer(row, 'budget_spent'), since: column.integer(row, 'budget_since') };
  const micros = column.optionalInteger(row, 'budget_micros');
  if (micros === null) return { spend };
  return { budget: { micros, period: column.oneOf(row, 'budget_period', isKeyBudgetPeriod) }, spend };
}

function toKeyInfoBase(row: SqliteRow): KeyInfo {
  const info: KeyInfo = {
    id: column.text(row, 'id'),
    name: column.text(row, 'name'),
    accountId: column.text(row, 'account_id'),
    prefix: column.text(row, 'prefix'),
    createdAt: column.integer(row, 'created_at'),
  };
  const revokedAt = column.optionalInteger(row, 'revoked_at');
  if (revokedAt !== null) info.revokedAt = revokedAt;
  return info;
}

function toEntry(row: SqliteRow): LedgerEntry {
  const entry: LedgerEntry = {
    id: column.text(row, 'id'),
    accountId: column.text(row, 'account_id'),
    micros: column.integer(row, 'micros'),
    kind: column.oneOf(row, 'kind', isEntryKind),
    createdAt: column.integer(row, 'created_at'),
  };
  const holdId = column.optionalText(row, 'hold_id');
  const requestId = column.optionalText(row, 'request_id');
  const meta = column.optionalText(row, 'meta');
  if (holdId !== null) entry.holdId = holdId;
  if (requestId !== null) entry.requestId = requestId;
  if (meta !== null) entry.meta = parseMeta(meta);
  const keyId = column.optionalText(row, 'key_id');
  const model = column.optionalText(row, 'model');
  const promptTokens = column.optionalInteger(row, 'prompt_tokens');
  const completionTokens = column.optionalInteger(row, 'completion_tokens');
  const idempotencyKey = column.optionalText(row, 'idempotency_key');
  if (keyId !== null) entry.keyId = keyId;
  if (model !== null) entry.model = model;
  if (promptTokens !== null) entry.promptTokens = promptTokens;
  if (completionTokens !== null) entry.completionTokens = completionTokens;
  if (idempotencyKey !== null) entry.idempotencyKey = idempotencyKey;
  return entry;
}

function isEntryKind(value: unknown): value is LedgerEntry['kind'] {
  return value === 'credit' || value === 'charge';
}

/** An entry's `meta`, written by this store as a JSON object. */
function parseMeta(text: string): Record<string, unknown> {
  const parsed: unknown = JSON.parse(text);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new TypeError('column meta: expected a JSON object');
  return { ...parsed };
}
