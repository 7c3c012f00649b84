import { type Account, ACCOUNT_STATES, hasControlCharacter, isAccountState, isPlan, PLAN_NAMES } from '@tollgate/core';
import {
  type Balance,
  InvalidCursorError,
  isKeyBudgetPeriod,
  KEY_BUDGET_PERIODS,
  type KeyBudget,
  type KeyInfo,
  type LedgerEntry,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  MAX_PAGE_LIMIT,
  type Page,
  type Store,
  type UsageRow,
} from '@tollgate/billing';
import type { Gateway } from './create-gateway';
import { type EventHook, emitEvent, keyRevokedEvent } from './events';

/**
 * Why an admin action refused: an unknown account or key (`not_found`), a value it does not take
 * (`invalid_parameter`, with the field in `param`), or an idempotency key already used for another
 * credit (`idempotency_conflict`). Store faults (a database down) are thrown, not returned.
 */
export interface AdminRefusal {
  code: 'not_found' | 'invalid_parameter' | 'idempotency_conflict';
  message: string;
  /** The field refused (`invalid_parameter` only). */
  param?: string;
}

/** What an admin action answers: its value, or why not. */
export type AdminResult<T> = { ok: true; value: T } | { ok: false; error: AdminRefusal };

/** A key as created: its record, and the secret, shown this once. */
export interface AdminCreatedKey {
  key: KeyInfo;
  secret: string;
}

/** A credit added: the entry (absent when added without an idempotency key), the balance after, and whether it was a replay. */
export interface AdminCredit {
  entry?: LedgerEntry;
  balance: Balance;
  replayed: boolean;
}

/** A usage query as the actions take it (times in unix milliseconds, `[from, to)`). */
export interface AdminUsageQuery {
  from: number;
  to: number;
  groupBy: 'hour' | 'day';
  keyId?: string;
  model?: string;
}

/**
 * The operator's actions on accounts, keys and credits, one implementation shared by the admin
 * HTTP API (`admin-api.ts`) and the reference server's CLI (`examples/server/src/cli.ts`). Each
 * checks its inputs at run time (they may come from JSON or a command line) and answers
 * `not_found` for an unknown account or key, whatever the store does with one.
 */
export interface AdminActions {
  createAccount(input?: { plan?: unknown }): Promise<AdminResult<Account>>;
  getAccount(accountId: string): Promise<AdminResult<Account>>;
  listAccounts(page?: { limit?: number; cursor?: string }): Promise<AdminResult<Page<Account>>>;
  setPlan(accountId: string, plan: unknown): Promise<AdminResult<Account>>;
  setAccountState(accountId: string, state: unknown): Promise<AdminResult<Account>>;
  createKey(accountId: string, name: unknown): Promise<AdminResult<AdminCreatedKey>>;
  listKeys(accountId: string): Promise<AdminResult<KeyInfo[]>>;
  getKey(keyId: string): Promise<AdminResult<KeyInfo>>;
  /** Revokes a key (again: nothing changes) and answers it as it now is. */
  revokeKey(keyId: string): Promise<AdminResult<KeyInfo>>;
  renameKey(keyId: string, name: unknown): Promise<AdminResult<KeyInfo>>;
  /**
   * Sets a key's spend limit (`micros`: a whole number of micro-dollars >= 0; `period`: `total`,
   * `day` or `month`, UTC), or clears it (`null`), and answers the key with its budget. A revoked
   * key may have one too.
   */
  setKeyBudget(keyId: string, budget: { micros: unknown; period: unknown } | null): Promise<AdminResult<KeyInfo>>;
  /**
   * Adds credits. With an idempotency key the credit is added once per key across the store: a
   * replay (same account and amount) adds nothing and answers the first entry, `replayed: true`;
   * another account or amount is `idempotency_conflict`.
   */
  addCredits(accountId: string, input: { micros: unknown; idempotencyKey?: string; note?: unknown }): Promise<AdminResult<AdminCredit>>;
  getBalance(accountId: string): Promise<AdminResult<Balance>>;
  /** Entries oldest first, a page at a time. */
  listEntries(accountId: string, page?: { limit?: number; cursor?: string }): Promise<AdminResult<Page<LedgerEntry>>>;
  /** The newest entries, newest first, and the balance (the CLI's `usage`). */
  recentEntries(accountId: string, limit: number): Promise<AdminResult<{ balance: Balance; entries: LedgerEntry[] }>>;
  usage(accountId: string, query: AdminUsageQuery): Promise<AdminResult<UsageRow[]>>;
}

/** Longest key name. */
export const MAX_KEY_NAME = 100;
/** Longest credit note. */
export const MAX_NOTE = 500;

/** Options of {@link createAdminActions}. */
export interface AdminActionsOptions {
  /** Told `key.revoked` when a live key is revoked (not on a repeat); never awaited, a throw is ignored. */
  onEvent?: EventHook;
  /**
   * The gateway serving this store in this process: revoking a key, or setting an account's state or
   * plan, drops the key or the account's keys from its key cache before the action answers, so its
   * next request there sees the change. Without it, and on every other instance, the change is seen
   * within the gateways' `keyCacheMs` (docs/architecture.md, Key cache).
   */
  gateway?: Pick<Gateway, 'forgetKey' | 'forgetAccount'>;
}

/**
 * The actions over a store.
 *
 * @example
 * const actions = createAdminActions(store, { gateway }); // gateway: the createGateway() serving `store`
 * const created = await actions.createKey(accountId, 'laptop');
 * if (created.ok) console.log(created.value.secret); // shown once
 */
export function createAdminActions(store: Store, options: AdminActionsOptions = {}): AdminActions {
  const accountExists = async (accountId: string) => (await store.getAccount(accountId)) !== undefined;
  /** Runs `run` on a known account; a throw for an account that does not exist (any more) is `not_found` too. */
  const onAccount = async <T>(accountId: string, run: () => Promise<AdminResult<T>>): Promise<AdminResult<T>> => {
    if (!(await accountExists(accountId))) return noAccount(accountId);
    try {
      return await run();
    } catch (error) {
      if (!(await accountExists(accountId))) return noAccount(accountId);
      throw error;
    }
  };
  const onKey = async <T>(keyId: string, run: () => Promise<T>): Promise<AdminResult<T>> => {
    if ((await store.getKey(keyId)) === undefined) return noKey(keyId);
    try {
      return { ok: true, value: await run() };
    } catch (error) {
      if ((await store.getKey(keyId)) === undefined) return noKey(keyId);
      throw error;
    }
  };
  /**
   * Runs a write that changes what requests of a key or an account see, then drops what the gateway
   * cached of it, before the action answers; also when the write threw, since it may have landed.
   */
  const changing = async <T>(change: { keyId: string } | { accountId: string }, write: () => Promise<T>): Promise<T> => {
    try {
      return await write();
    } finally {
      const { gateway } = options;
      if (gateway && 'keyId' in change) gateway.forgetKey(change.keyId);
      else if (gateway && 'accountId' in change) gateway.forgetAccount(change.accountId);
    }
  };
  const keyNow = async (keyId: string): Promise<KeyInfo> => {
    const key = await store.getKey(keyId);
    if (key === undefined) throw new Error(`key ${keyId} vanished`);
    return key;
  };

  return {
    async createAccount(input = {}) {
      const plan = input.plan ?? 'free';
      if (!isPlan(plan)) return invalid('plan', `plan must be one of ${PLAN_NAMES.join(', ')}.`);
      return { ok: true, value: await store.createAccount({ plan }) };
    },
    async getAccount(accountId) {
      const account = await store.getAccount(accountId);
      return account === undefined ? noAccount(accountId) : { ok: true, value: account };
    },
    async listAccounts(page = {}) {
      const checked = checkPage(page);
      if (!checked.ok) return checked;
      return pageOrBadCursor(page, () => store.listAccounts(checked.value));
    },
    async setPlan(accountId, plan) {
      if (!isPlan(plan)) return invalid('plan', `plan must be one of ${PLAN_NAMES.join(', ')}.`);
      return onAccount(accountId, async () => ({ ok: true, value: await changing({ accountId }, () => store.setPlan(accountId, plan)) }));
    },
    async setAccountState(accountId, state) {
      if (!isAccountState(state)) return invalid('state', `state must be one of ${ACCOUNT_STATES.join(', ')}.`);
      return onAccount(accountId, async () => ({ ok: true, value: await changing({ accountId }, () => store.setAccountState(accountId, state)) }));
    },
    async createKey(accountId, name) {
      const checked = checkName(name);
      if (!checked.ok) return checked;
      return onAccount(accountId, async () => {
        const created = await store.createKey(accountId, checked.value);
        return { ok: true, value: { key: await keyNow(created.id), secret: created.key } };
      });
    },
    async listKeys(accountId) {
      return onAccount(accountId, async () => ({ ok: true, value: await store.listKeys(accountId) }));
    },
    async getKey(keyId) {
      const key = await store.getKey(keyId);
      return key === undefined ? noKey(keyId) : { ok: true, value: key };
    },
    async revokeKey(keyId) {
      const { onEvent } = options;
      return onKey(keyId, async () => {
        // Live before, revoked now: `key.revoked` (two revokes racing may both report it, with one id).
        const wasLive = onEvent !== undefined && (await store.getKey(keyId))?.revokedAt === undefined;
        await changing({ keyId }, () => store.revokeKey(keyId));
        const key = await keyNow(keyId);
        if (wasLive && key.revokedAt !== undefined) emitEvent(onEvent, keyRevokedEvent({ ...key, revokedAt: key.revokedAt }));
        return key;
      });
    },
    async renameKey(keyId, name) {
      const checked = checkName(name);
      if (!checked.ok) return checked;
      return onKey(keyId, () => store.setKeyName(keyId, checked.value));
    },
    async setKeyBudget(keyId, budget) {
      const checked = checkBudget(budget);
      if (!checked.ok) return checked;
      return onKey(keyId, () => store.setKeyBudget(keyId, checked.value));
    },
    async addCredits(accountId, input) {
      const { micros, idempotencyKey, note } = input;
      if (typeof micros !== 'number' || !Number.isSafeInteger(micros) || micros <= 0) {
        return invalid('micros', `micros must be a whole number of micro-dollars from 1 to ${Number.MAX_SAFE_INTEGER}.`);
      }
      if (idempotencyKey !== undefined && !isIdempotencyKey(idempotencyKey)) {
        return invalid('Idempotency-Key', `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters.`);
      }
      if (note !== undefined && (typeof note !== 'string' || note.length > MAX_NOTE))
        return invalid('note', `note must be a string of at most ${MAX_NOTE} characters.`);
      const meta = { note: note ?? 'admin' };
      return onAccount(accountId, async (): Promise<AdminResult<AdminCredit>> => {
        const before = await store.getBalance(accountId);
        if (before.balance + micros > Number.MAX_SAFE_INTEGER) {
          return invalid('micros', `micros would take the balance past ${Number.MAX_SAFE_INTEGER} micro-dollars.`);
        }
        if (idempotencyKey === undefined) return { ok: true, value: { balance: await store.addCredits(accountId, micros, meta), replayed: false } };
        const credited = await store.creditOnce(accountId, { micros, idempotencyKey, meta });
        if (!credited.ok) return { ok: false, error: { code: 'idempotency_conflict', message: credited.error.message } };
        const { entry, balance, replayed } = credited.value;
        return { ok: true, value: { entry, balance, replayed } };
      });
    },
    async getBalance(accountId) {
      return onAccount(accountId, async () => ({ ok: true, value: await store.getBalance(accountId) }));
    },
    async listEntries(accountId, page = {}) {
      const checked = checkPage(page);
      if (!checked.ok) return checked;
      return onAccount(accountId, () => pageOrBadCursor(page, () => store.entriesPage(accountId, checked.value)));
    },
    async recentEntries(accountId, limit) {
      if (!Number.isSafeInteger(limit) || limit < 1) return invalid('limit', 'limit must be a positive whole number.');
      return onAccount(accountId, async () => {
        const [balance, entries] = await Promise.all([store.getBalance(accountId), store.entries(accountId, { limit })]);
        return { ok: true, value: { balance, entries } };
      });
    },
    async usage(accountId, query) {
      return onAccount(accountId, async () => {
        const rows = await store.usage({
          accountId,
          from: query.from,
          to: query.to,
          groupBy: query.groupBy,
          ...(query.keyId !== undefined ? { keyId: query.keyId } : {}),
          ...(query.model !== undefined ? { model: query.model } : {}),
        });
        return { ok: true, value: rows };
      });
    },
  };
}

/** Whether a string is a usable idempotency key: 1 to 255 visible ASCII characters. */
export function isIdempotencyKey(value: string): boolean {
  return value.length >= 1 && value.length <= MAX_IDEMPOTENCY_KEY_LENGTH && /^[\x21-\x7e]+$/.test(value);
}

function invalid(param: string, message: string): { ok: false; error: AdminRefusal } {
  return { ok: false, error: { code: 'invalid_parameter', param, message } };
}

function noAccount(accountId: string): { ok: false; error: AdminRefusal } {
  return { ok: false, error: { code: 'not_found', message: `No account ${JSON.stringify(accountId)}.` } };
}

function noKey(keyId: string): { ok: false; error: AdminRefusal } {
  return { ok: false, error: { code: 'not_found', message: `No key ${JSON.stringify(keyId)}.` } };
}

function checkName(name: unknown): AdminResult<string> {
  if (typeof name !== 'string' || name.trim().length === 0 || name.length > MAX_KEY_NAME || hasControlCharacter(name)) {
    return invalid('name', `name must be a string of 1 to ${MAX_KEY_NAME} characters without control characters.`);
  }
  return { ok: true, value: name };
}

function checkBudget(budget: { micros: unknown; period: unknown } | null): AdminResult<KeyBudget | null> {
  if (budget === null) return { ok: true, value: null };
  const { micros, period } = budget;
  if (typeof micros !== 'number' || !Number.isSafeInteger(micros) || micros < 0) {
    return invalid('micros', `micros must be a whole number of micro-dollars from 0 to ${Number.MAX_SAFE_INTEGER}.`);
  }
  if (!isKeyBudgetPeriod(period)) return invalid('period', `period must be one of ${KEY_BUDGET_PERIODS.join(', ')}.`);
  return { ok: true, value: { micros, period } };
}

function checkPage(page: { limit?: number; cursor?: string }): AdminResult<{ limit?: number; cursor?: string }> {
  const out: { limit?: number; cursor?: string } = {};
  if (page.limit !== undefined) {
    if (!Number.isSafeInteger(page.limit) || page.limit < 1 || page.limit > MAX_PAGE_LIMIT)
      return invalid('limit', `limit must be a whole number from 1 to ${MAX_PAGE_LIMIT}.`);
    out.limit = page.limit;
  }
  if (page.cursor !== undefined) {
    if (page.cursor.length === 0 || page.cursor.length > 1000) return invalid('cursor', 'cursor must be the next_cursor of a previous page.');
    out.cursor = page.cursor;
  }
  return { ok: true, value: out };
}

/** A page from the store; a cursor the store refuses (`InvalidCursorError`) is `invalid_parameter`. */
async function pageOrBadCursor<T>(page: { cursor?: string }, list: () => Promise<Page<T>>): Promise<AdminResult<Page<T>>> {
  try {
    return { ok: true, value: await list() };
  } catch (error) {
    // By class, or by code when two copies of @tollgate/billing are installed.
    if (page.cursor !== undefined && (error instanceof InvalidCursorError || (error as { code?: unknown } | null)?.code === 'invalid_cursor')) {
      return invalid('cursor', 'cursor must be the next_cursor of a previous page.');
    }
    throw error;
  }
}
