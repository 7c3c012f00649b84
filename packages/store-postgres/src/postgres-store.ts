import postgres from 'postgres';
import type { Account, AccountState, Plan } from '@tollgate/core';
import {
  generateKey,
  hashKey,
  type IdempotencyConflict,
  isKeyBudgetPeriod,
  type KeyBudgetPeriod,
  type KeyInfo,
  type LedgerEntry,
  type SettleResult,
  type Store,
  type StoreOptions,
  type UsageRow,
} from '@tollgate/billing';
import {
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
  keyPrefix,
  newAccountId,
  newEntryId,
  newHoldId,
  newKeyId,
  pageLimit,
  USAGE_PERIOD_MS,
} from '@tollgate/billing/store-kit';
import { migrate } from './postgres-schema';

/** The PostgreSQL store: a Store with `close` and `checkpoint` always present. */
export type PostgresStore = Store & { close(): Promise<void>; checkpoint: NonNullable<Store['checkpoint']> };

/** Options of `postgresStore`. */
export interface PostgresStoreOptions extends StoreOptions {
  /** Most connections in the pool (default 10). */
  max?: number;
}

type Int = string | number | bigint;

/** An entry row, as toEntry reads it. */
interface EntryRow {
  seq: Int;
  id: string;
  account_id: string;
  micros: Int;
  kind: 'credit' | 'charge';
  created_at: Int;
  hold_id: string | null;
  request_id: string | null;
  meta: Record<string, unknown> | null;
  key_id: string | null;
  model: string | null;
  prompt_tokens: Int | null;
  completion_tokens: Int | null;
  idempotency_key: string | null;
}

const ENTRY_COLUMNS = [
  'seq',
  'id',
  'account_id',
  'micros',
  'kind',
  'created_at',
  'hold_id',
  'request_id',
  'meta',
  'key_id',
  'model',
  'prompt_tokens',
  'completion_tokens',
  'idempotency_key',
];

interface KeyRow {
  id: string;
  name: string;
  account_id: string;
  prefix: string;
  created_at: Int;
  revoked_at: Int | null;
  budget_micros: Int | null;
  budget_period: string | null;
  budget_spent: Int;
  budget_since: Int;
}

const KEY_COLUMNS = ['id', 'name', 'account_id', 'prefix', 'created_at', 'revoked_at', 'budget_micros', 'budget_period', 'budget_spent', 'budget_since'];

const CONFLICT: IdempotencyConflict = { code: 'idempotency_conflict', message: 'this idempotency key was used for another account or amount' };

/**
 * Directory + Ledger on PostgreSQL (the `postgres` driver), for several gateway instances sharing
 * one database. Migrations run at startup and every method awaits them. `hold` runs under a row
 * lock on the account (SELECT ... FOR UPDATE); settle and release close a hold with one
 * conditional UPDATE, so a retried settle never charges twice. Times come from the injected clock.
 *
 * @example
 * const store = postgresStore(process.env.DATABASE_URL!);
 * const account = await store.createAccount({ plan: 'plus' });
 */
export function postgresStore(url: string, options: PostgresStoreOptions = {}): PostgresStore {
  const now = options.now ?? Date.now;
  // Reconnect at most half a second apart (the driver's default grows to 20 s): a restarted database is used again at once.
  const sql = postgres(url, { max: options.max ?? 10, onnotice: () => {}, backoff: (retries: number) => Math.min(0.05 * 2 ** retries, 0.5) });
  const migrated = migrate(sql);
  // Reported by the first method that awaits it, not as an unhandled rejection.
  migrated.catch(() => {});

  const account = async (tx: postgres.Sql | postgres.TransactionSql, accountId: string, lock = false) => {
    const rows = lock
      ? await tx<
          { id: string; plan: Plan; state: AccountState; balance: Int }[]
        >`SELECT id, plan, state, balance FROM tollgate_accounts WHERE id = ${accountId} FOR UPDATE`
      : await tx<
          { id: string; plan: Plan; state: AccountState; balance: Int }[]
        >`SELECT id, plan, state, balance FROM tollgate_accounts WHERE id = ${accountId}`;
    const row = rows[0];
    if (row === undefined) throw new Error(`unknown account ${accountId}`);
    return row;
  };
  const balanceOf = async (tx: postgres.Sql | postgres.TransactionSql, accountId: string) => {
    const [row] = await tx<{ balance: Int; held: Int }[]>`
      SELECT a.balance, (SELECT coalesce(sum(h.micros), 0) FROM tollgate_holds h
                         WHERE h.account_id = a.id AND h.state = 'open' AND h.expires_at > ${now()}) AS held
      FROM tollgate_accounts a WHERE a.id = ${accountId}`;
    if (row === undefined) throw new Error(`unknown account ${accountId}`);
    const balance = toNumber(row.balance);
    const held = toNumber(row.held);
    return { balance, held, available: balance - held };
  };
  /**
   * The account's open holds and, when the hold names a key, the key's budget, spend counter and
   * open holds, in one statement (no round trip more than a hold without a key). Read under the
   * account's row lock: every charge of the account updates its key's counter under it too.
   */
  const heldFor = async (tx: postgres.TransactionSql, accountId: string, keyId: string | undefined, at: number) => {
    const open = tx`SELECT coalesce(sum(micros), 0) FROM tollgate_holds WHERE account_id = ${accountId} AND state = 'open' AND expires_at > ${at}`;
    if (keyId === undefined) {
      const [row] = await tx<{ held: Int }[]>`SELECT (${open}) AS held`;
      return { held: toNumber(row?.held ?? 0), keyRemaining: undefined };
    }
    const [row] = await tx<(KeyRow & { held: Int; key_held: Int; key_id: string | null })[]>`
      SELECT (${open}) AS held, (${open} AND key_id = ${keyId}) AS key_held, k.id AS key_id, k.account_id, k.budget_micros, k.budget_period,
             k.budget_spent, k.budget_since
      FROM (SELECT 1) AS one LEFT JOIN tollgate_keys k ON k.id = ${keyId}`;
    if (row === undefined) throw new Error('no row');
    const held = toNumber(row.held);
    // A key id the store does not know is only recorded on the charge.
    if (row.key_id === null) return { held, keyRemaining: undefined };
    if (row.account_id !== accountId) throw new Error(`key ${keyId} is not of account ${accountId}`);
    const { budget, spend } = toBudget({ ...row, id: keyId });
    return { held, keyRemaining: budget === undefined ? undefined : keyBudgetRemaining(budget, spend, toNumber(row.key_held), at) };
  };
  /**
   * Adds a charge to its key's period counter (a key without a budget keeps none), in the charge's
   * transaction and after its entry's insert, so under the account's row lock. One statement: the
   * period's start is the one of the key's period (from budgetPeriodStart), and the counter is
   * added to, started again (a later period: the lazy reset), or left (a charge of an earlier
   * period), as addKeySpend does.
   */
  const chargeKey = async (tx: postgres.TransactionSql, keyId: string | null, micros: number, at: number) => {
    if (keyId === null) return;
    const start = tx`(CASE budget_period WHEN 'day' THEN ${budgetPeriodStart('day', at)}::bigint
                                         WHEN 'month' THEN ${budgetPeriodStart('month', at)}::bigint ELSE 0::bigint END)`;
    await tx`UPDATE tollgate_keys
      SET budget_spent = CASE WHEN ${start} > budget_since THEN ${micros}::bigint
                              WHEN ${start} = budget_since THEN budget_spent + ${micros}::bigint ELSE budget_spent END,
          budget_since = greatest(budget_since, ${start})
      WHERE id = ${keyId} AND budget_micros IS NOT NULL`;
  };
  const toKeyInfo = (row: KeyRow): KeyInfo => {
    const info = toKeyInfoBase(row);
    const { budget, spend } = toBudget(row);
    if (budget !== undefined) info.budget = keyBudgetStatus(budget, spend, now());
    return info;
  };
  const update = async (accountId: string, change: 'plan' | 'state', value: string): Promise<Account> => {
    await migrated;
    const rows =
      change === 'plan'
        ? await sql<
            { id: string; plan: Plan; state: AccountState }[]
          >`UPDATE tollgate_accounts SET plan = ${value} WHERE id = ${accountId} RETURNING id, plan, state`
        : await sql<
            { id: string; plan: Plan; state: AccountState }[]
          >`UPDATE tollgate_accounts SET state = ${value} WHERE id = ${accountId} RETURNING id, plan, state`;
    const row = rows[0];
    if (row === undefined) throw new Error(`unknown account ${accountId}`);
    return { id: row.id, plan: row.plan, state: row.state };
  };
  const close = async (holdId: string, charge: Parameters<Store['settle']>[1] | undefined): Promise<SettleResult> => {
    await migrated;
    return sql.begin(async (tx) => {
      const at = now();
      const state = charge === undefined ? 'released' : 'settled';
      const charged = charge?.micros ?? 0;
      // Only one caller can move a hold out of open/expired: the row lock makes the others see it closed.
      const [row] = await tx<{ account_id: string; request_id: string | null; key_id: string | null; model: string | null }[]>`
        UPDATE tollgate_holds SET state = ${state}, charged = ${charged}, closed_at = ${at}
        WHERE id = ${holdId} AND state IN ('open', 'expired') RETURNING account_id, request_id, key_id, model`;
      if (row === undefined) {
        const [existing] = await tx<{ charged: Int }[]>`SELECT charged FROM tollgate_holds WHERE id = ${holdId}`;
        if (existing === undefined) throw new Error(`unknown hold ${holdId}`);
        return { charged: toNumber(existing.charged), already: true };
      }
      if (charge !== undefined) {
        const meta = charge.meta === undefined ? null : tx.json(charge.meta as postgres.JSONValue);
        await tx`INSERT INTO tollgate_entries (id, account_id, micros, kind, created_at, hold_id, request_id, meta, key_id, model, prompt_tokens, completion_tokens)
          VALUES (${newEntryId()}, ${row.account_id}, ${charged === 0 ? 0 : -charged}, 'charge', ${at}, ${holdId},
                  ${charge.requestId ?? row.request_id}, ${meta}::jsonb, ${row.key_id}, ${row.model},
                  ${charge.promptTokens ?? null}, ${charge.completionTokens ?? null})`;
        await chargeKey(tx, row.key_id, charged, at);
      }
      return { charged, already: false };
    });
  };

  return {
    async createAccount(input) {
      await migrated;
      const id = input.id ?? newAccountId();
      await sql`INSERT INTO tollgate_accounts (id, plan, state, created_at) VALUES (${id}, ${input.plan}, 'active', ${now()})`;
      return { id, plan: input.plan, state: 'active' };
    },
    async getAccount(accountId) {
      await migrated;
      const [row] = await sql<{ id: string; plan: Plan; state: AccountState }[]>`SELECT id, plan, state FROM tollgate_accounts WHERE id = ${accountId}`;
      return row === undefined ? undefined : { id: row.id, plan: row.plan, state: row.state };
    },
    setAccountState: (accountId, state) => update(accountId, 'state', state),
    setPlan: (accountId, plan) => update(accountId, 'plan', plan),
    async createKey(accountId, name) {
      await migrated;
      const key = generateKey();
      const id = newKeyId();
      // The foreign key refuses an unknown account.
      await sql`INSERT INTO tollgate_keys (id, account_id, name, hash, prefix, created_at)
        VALUES (${id}, ${accountId}, ${name}, ${await hashKey(key)}, ${keyPrefix(key)}, ${now()})`;
      return { id, name, key };
    },
    async listKeys(accountId) {
      await migrated;
      const rows = await sql<KeyRow[]>`SELECT ${sql(KEY_COLUMNS)} FROM tollgate_keys WHERE account_id = ${accountId} ORDER BY seq`;
      return rows.map(toKeyInfo);
    },
    async listAccounts(options = {}) {
      const limit = pageLimit(options.limit);
      const after = options.cursor === undefined ? undefined : decodeAccountsCursor(options.cursor);
      await migrated;
      // Ids compare byte-wise (COLLATE "C"), as in every other store, whatever the database's collation.
      const where = after === undefined ? sql`` : sql`WHERE (created_at, id COLLATE "C") > (${after.createdAt}::bigint, ${after.id} COLLATE "C")`;
      const rows = await sql<{ id: string; plan: Plan; state: AccountState; created_at: Int }[]>`
        SELECT id, plan, state, created_at FROM tollgate_accounts ${where} ORDER BY created_at, id COLLATE "C" LIMIT ${limit + 1}`;
      const items = rows.slice(0, limit).map((row): Account => ({ id: row.id, plan: row.plan, state: row.state }));
      const last = rows[limit - 1];
      return rows.length > limit && last !== undefined
        ? { items, next: encodeAccountsCursor({ createdAt: toNumber(last.created_at), id: last.id }) }
        : { items };
    },
    async getKey(keyId) {
      await migrated;
      const [row] = await sql<KeyRow[]>`SELECT ${sql(KEY_COLUMNS)} FROM tollgate_keys WHERE id = ${keyId}`;
      return row === undefined ? undefined : toKeyInfo(row);
    },
    async setKeyName(keyId, name) {
      await migrated;
      const [row] = await sql<KeyRow[]>`UPDATE tollgate_keys SET name = ${name} WHERE id = ${keyId} RETURNING ${sql(KEY_COLUMNS)}`;
      if (row === undefined) throw new Error(`unknown key ${keyId}`);
      return toKeyInfo(row);
    },
    async setKeyBudget(keyId, budget) {
      assertKeyBudget(budget);
      await migrated;
      return sql.begin(async (tx) => {
        const [key] = await tx<{ account_id: string }[]>`SELECT account_id FROM tollgate_keys WHERE id = ${keyId}`;
        if (key === undefined) throw new Error(`unknown key ${keyId}`);
        // The account's row lock: a charge of the key takes it to insert its entry (and keeps it to
        // commit), so none is written between the count below and the update, and none is missed.
        await account(tx, key.account_id, true);
        let row: KeyRow | undefined;
        if (budget === null) {
          [row] = await tx<KeyRow[]>`UPDATE tollgate_keys SET budget_micros = NULL, budget_period = NULL, budget_spent = 0, budget_since = 0
            WHERE id = ${keyId} RETURNING ${tx(KEY_COLUMNS)}`;
        } else {
          const since = budgetPeriodStart(budget.period, now());
          [row] = await tx<KeyRow[]>`
            UPDATE tollgate_keys SET budget_micros = ${budget.micros}, budget_period = ${budget.period}, budget_since = ${since},
              budget_spent = (SELECT coalesce(-sum(micros), 0) FROM tollgate_entries
                              WHERE account_id = ${key.account_id} AND kind = 'charge' AND created_at >= ${since}::bigint AND key_id = ${keyId})
            WHERE id = ${keyId} RETURNING ${tx(KEY_COLUMNS)}`;
        }
        if (row === undefined) throw new Error(`unknown key ${keyId}`);
        return toKeyInfo(row);
      });
    },
    async revokeKey(keyId) {
      await migrated;
      const rows = await sql`UPDATE tollgate_keys SET revoked_at = coalesce(revoked_at, ${now()}) WHERE id = ${keyId} RETURNING id`;
      if (rows.length === 0) throw new Error(`unknown key ${keyId}`);
    },
    async findKey(keyHash) {
      await migrated;
      const [row] = await sql<{ id: string; name: string; account_id: string; plan: Plan; state: AccountState }[]>`
        SELECT k.id, k.name, k.account_id, a.plan, a.state FROM tollgate_keys k JOIN tollgate_accounts a ON a.id = k.account_id
        WHERE k.hash = ${keyHash} AND k.revoked_at IS NULL`;
      return row === undefined ? undefined : { id: row.id, name: row.name, account: { id: row.account_id, plan: row.plan, state: row.state } };
    },
    async addCredits(accountId, micros, meta) {
      assertMicros('credits', micros);
      if (micros === 0) throw new RangeError('credits must be positive');
      await migrated;
      return sql.begin(async (tx) => {
        await account(tx, accountId);
        await tx`INSERT INTO tollgate_entries (id, account_id, micros, kind, created_at, meta)
          VALUES (${newEntryId()}, ${accountId}, ${micros}, 'credit', ${now()}, ${meta === undefined ? null : tx.json(meta as postgres.JSONValue)}::jsonb)`;
        return balanceOf(tx, accountId);
      });
    },
    async getBalance(accountId) {
      await migrated;
      return balanceOf(sql, accountId);
    },
    async hold(accountId, input) {
      assertHoldInput(input);
      await migrated;
      return sql.begin(async (tx) => {
        // The account row lock serialises holds (and balance changes) of one account across instances;
        // the sum below is a new statement, so it sees every hold committed before the lock was granted.
        const { balance } = await account(tx, accountId, true);
        const at = now();
        const { held, keyRemaining } = await heldFor(tx, accountId, input.keyId, at);
        const decision = decideHold(toNumber(balance), held, input, keyRemaining);
        if (!decision.ok) return decision;
        const id = newHoldId();
        await tx`INSERT INTO tollgate_holds (id, account_id, micros, created_at, expires_at, request_id, key_id, model)
          VALUES (${id}, ${accountId}, ${decision.value}, ${at}, ${at + input.ttlMs}, ${input.requestId ?? null}, ${input.keyId ?? null}, ${input.model ?? null})`;
        return { ok: true as const, value: { holdId: id, micros: decision.value } };
      });
    },
    async settle(holdId, input) {
      assertMicros('settle micros', input.micros);
      assertSettleTokens(input);
      return close(holdId, input);
    },
    release: (holdId) => close(holdId, undefined),
    async creditOnce(accountId, input) {
      assertCreditInput(input);
      await migrated;
      return sql.begin(async (tx) => {
        const meta = input.meta === undefined ? null : tx.json(input.meta as postgres.JSONValue);
        // The unique index decides: of two racing calls, the second waits for the first to commit,
        // then inserts nothing and reads the first's entry (a new statement sees the commit).
        const [inserted] = await tx<EntryRow[]>`
          INSERT INTO tollgate_entries (id, account_id, micros, kind, created_at, meta, idempotency_key)
          VALUES (${newEntryId()}, ${accountId}, ${input.micros}, 'credit', ${now()}, ${meta}::jsonb, ${input.idempotencyKey})
          ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
          RETURNING ${tx(ENTRY_COLUMNS)}`;
        if (inserted !== undefined) return { ok: true, value: { entry: toEntry(inserted), balance: await balanceOf(tx, accountId), replayed: false } };
        const [first] = await tx<EntryRow[]>`SELECT ${tx(ENTRY_COLUMNS)} FROM tollgate_entries WHERE idempotency_key = ${input.idempotencyKey}`;
        if (first === undefined) throw new Error(`credit ${input.idempotencyKey} neither added nor found`);
        const entry = toEntry(first);
        if (entry.accountId !== accountId || entry.micros !== input.micros) return { ok: false, error: CONFLICT };
        return { ok: true, value: { entry, balance: await balanceOf(tx, accountId), replayed: true } };
      });
    },
    async entries(accountId, options = {}) {
      await migrated;
      const rows = await sql<EntryRow[]>`
        SELECT ${sql(ENTRY_COLUMNS)} FROM tollgate_entries WHERE account_id = ${accountId} ORDER BY seq DESC LIMIT ${options.limit ?? null}`;
      return rows.map(toEntry);
    },
    async entriesPage(accountId, options = {}) {
      const limit = pageLimit(options.limit);
      const after = options.cursor === undefined ? 0 : decodeEntriesCursor(options.cursor, accountId);
      await migrated;
      const rows = await sql<EntryRow[]>`
        SELECT ${sql(ENTRY_COLUMNS)} FROM tollgate_entries WHERE account_id = ${accountId} AND seq > ${after}::bigint ORDER BY seq LIMIT ${limit + 1}`;
      const items = rows.slice(0, limit).map(toEntry);
      const last = rows[limit - 1];
      return rows.length > limit && last !== undefined ? { items, next: encodeEntriesCursor(accountId, toNumber(last.seq)) } : { items };
    },
    async usage(query) {
      assertUsageQuery(query);
      await migrated;
      // An index-only scan of tollgate_entries_usage: `kind = 'charge'` is its partial-index condition.
      const rows = await sql<
        { period: Int; key_id: string | null; model: string | null; requests: Int; prompt_tokens: Int; completion_tokens: Int; micros: Int }[]
      >`
        SELECT created_at - (created_at % ${USAGE_PERIOD_MS[query.groupBy]}::bigint) AS period, key_id, model, count(*) AS requests,
               coalesce(sum(prompt_tokens), 0) AS prompt_tokens, coalesce(sum(completion_tokens), 0) AS completion_tokens, -sum(micros) AS micros
        FROM tollgate_entries
        WHERE account_id = ${query.accountId} AND kind = 'charge' AND created_at >= ${query.from}::bigint AND created_at < ${query.to}::bigint
          ${query.keyId === undefined ? sql`` : sql`AND key_id = ${query.keyId}`}
          ${query.model === undefined ? sql`` : sql`AND model = ${query.model}`}
        GROUP BY period, key_id, model
        ORDER BY period, key_id COLLATE "C" NULLS FIRST, model COLLATE "C" NULLS FIRST`;
      return rows.map((row) => {
        const usage: UsageRow = {
          period: toNumber(row.period),
          requests: toNumber(row.requests),
          promptTokens: toNumber(row.prompt_tokens),
          completionTokens: toNumber(row.completion_tokens),
          micros: toNumber(row.micros),
        };
        if (row.key_id !== null) usage.keyId = row.key_id;
        if (row.model !== null) usage.model = row.model;
        return usage;
      });
    },
    async checkpoint(checkpoints) {
      assertCheckpoints(checkpoints);
      if (checkpoints.length === 0) return 0;
      await migrated;
      const holdIds = [...new Set(checkpoints.map((checkpoint) => checkpoint.holdId))];
      return sql.begin(async (tx) => {
        // The holds, then their accounts, each in id order: the order every writer takes them in
        // (a settle: its hold, then its account by the balance trigger; releaseExpired: as here), so
        // no two writes wait on each other in a cycle.
        const open = await tx<{ account_id: string }[]>`
          SELECT account_id FROM tollgate_holds WHERE id IN ${tx(holdIds)} AND state = 'open' ORDER BY id FOR UPDATE`;
        if (open.length === 0) return 0;
        // Shared locks on the accounts: a hold() of one (FOR UPDATE) waits for this renewal, and the
        // clock is read once every hold() before it has committed, so a hold that one of them counted
        // as expired (and held its money again) is never renewed, however long this call waited for
        // a connection or a lock.
        await tx`SELECT id FROM tollgate_accounts WHERE id IN ${tx([...new Set(open.map((row) => row.account_id))])} ORDER BY id FOR SHARE`;
        const at = now();
        const rows = checkpoints.map(({ holdId, micros, ttlMs }) => ({ hold_id: holdId, micros, expires_at: at + ttlMs }));
        const result = await tx`
          WITH batch AS (
            SELECT hold_id, max(micros) AS micros, max(expires_at) AS expires_at
            FROM jsonb_to_recordset(${tx.json(rows)}::jsonb) AS c(hold_id text, micros bigint, expires_at bigint) GROUP BY hold_id
          )
          UPDATE tollgate_holds h
          SET delivered_micros = least(h.micros, greatest(h.delivered_micros, b.micros)), expires_at = greatest(h.expires_at, b.expires_at)
          FROM batch b WHERE h.id = b.hold_id AND h.state = 'open' AND h.expires_at > ${at}`;
        return result.count;
      });
    },
    async releaseExpired() {
      await migrated;
      return sql.begin(async (tx) => {
        const at = now();
        // Every expired hold locked first, in id order, then the accounts of those it charges, in id
        // order (the order of checkpoint); a hold a concurrent settle closed first no longer matches
        // once its lock is granted (the WHERE is re-checked), so it is never charged twice.
        const expired = await tx<
          { id: string; account_id: string; request_id: string | null; key_id: string | null; model: string | null; delivered_micros: Int }[]
        >`
          SELECT id, account_id, request_id, key_id, model, delivered_micros FROM tollgate_holds
          WHERE state = 'open' AND expires_at <= ${at} ORDER BY id FOR UPDATE`;
        if (expired.length === 0) return 0;
        const charged = expired.filter((row) => toNumber(row.delivered_micros) > 0);
        if (charged.length > 0) {
          await tx`SELECT id FROM tollgate_accounts WHERE id IN ${tx([...new Set(charged.map((row) => row.account_id))])} ORDER BY id FOR UPDATE`;
        }
        for (const row of charged) {
          const micros = toNumber(row.delivered_micros);
          await tx`UPDATE tollgate_holds SET state = 'settled', charged = ${micros}, closed_at = ${at} WHERE id = ${row.id}`;
          await tx`INSERT INTO tollgate_entries (id, account_id, micros, kind, created_at, hold_id, request_id, meta, key_id, model)
            VALUES (${newEntryId()}, ${row.account_id}, ${-micros}, 'charge', ${at}, ${row.id}, ${row.request_id},
                    ${tx.json({ ...CHECKPOINT_CHARGE_META })}::jsonb, ${row.key_id}, ${row.model})`;
          await chargeKey(tx, row.key_id, micros, at);
        }
        const released = expired.filter((row) => toNumber(row.delivered_micros) === 0).map((row) => row.id);
        if (released.length > 0) await tx`UPDATE tollgate_holds SET state = 'expired' WHERE id IN ${tx(released)}`;
        return expired.length;
      });
    },
    async close() {
      await migrated.catch(() => {});
      await sql.end({ timeout: 5 });
    },
  };
}

/** A key row's budget (absent without one) and its spend counter. */
function toBudget(row: KeyRow): { budget?: { micros: number; period: KeyBudgetPeriod }; spend: { spent: number; since: number } } {
  const spend = { spent: toNumber(row.budget_spent), since: toNumber(row.budget_since) };
  if (row.budget_micros === null) return { spend };
  if (!isKeyBudgetPeriod(row.budget_period)) throw new TypeError(`key ${row.id}: unexpected budget period ${String(row.budget_period)}`);
  return { budget: { micros: toNumber(row.budget_micros), period: row.budget_period }, spend };
}

function toKeyInfoBase(row: KeyRow): KeyInfo {
  const info: KeyInfo = { id: row.id, name: row.name, accountId: row.account_id, prefix: row.prefix, createdAt: toNumber(row.created_at) };
  if (row.revoked_at !== null) info.revokedAt = toNumber(row.revoked_at);
  return info;
}

function toEntry(row: EntryRow): LedgerEntry {
  const entry: LedgerEntry = { id: row.id, accountId: row.account_id, micros: toNumber(row.micros), kind: row.kind, createdAt: toNumber(row.created_at) };
  if (row.hold_id !== null) entry.holdId = row.hold_id;
  if (row.request_id !== null) entry.requestId = row.request_id;
  if (row.meta !== null) entry.meta = row.meta;
  if (row.key_id !== null) entry.keyId = row.key_id;
  if (row.model !== null) entry.model = row.model;
  if (row.prompt_tokens !== null) entry.promptTokens = toNumber(row.prompt_tokens);
  if (row.completion_tokens !== null) entry.completionTokens = toNumber(row.completion_tokens);
  if (row.idempotency_key !== null) entry.idempotencyKey = row.idempotency_key;
  return entry;
}

/** A bigint column as a JS number; amounts are safe integers by construction, and checked here. */
function toNumber(value: Int): number {
  const number = Number(value);
  if (!Number.isSafeInteger(number)) throw new RangeError(`database value ${String(value)} is not a safe integer`);
  return number;
}
