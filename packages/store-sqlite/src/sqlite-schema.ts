import { column } from './sqlite-row';
import type { SqliteDatabase } from './sqlite-database';
import { transaction } from './sqlite-transaction';

/**
 * Schema migrations, applied in order; `PRAGMA user_version` records how many ran. Entries are
 * append-only (triggers refuse UPDATE and DELETE) and a trigger keeps `accounts.balance` equal to
 * the sum of the account's entries, in the same transaction as every insert. Exported for the
 * migration test only (a file at an older version).
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE accounts (
    id TEXT PRIMARY KEY,
    plan TEXT NOT NULL,
    state TEXT NOT NULL,
    balance INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL
  );
  CREATE TABLE keys (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    name TEXT NOT NULL,
    hash TEXT NOT NULL UNIQUE,
    prefix TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
  );
  CREATE INDEX keys_account ON keys(account_id, seq);
  CREATE TABLE entries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    micros INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('credit', 'charge')),
    created_at INTEGER NOT NULL,
    hold_id TEXT,
    request_id TEXT,
    meta TEXT
  );
  CREATE INDEX entries_account ON entries(account_id, seq);
  CREATE TRIGGER entries_balance AFTER INSERT ON entries BEGIN
    UPDATE accounts SET balance = balance + NEW.micros WHERE id = NEW.account_id;
  END;
  CREATE TRIGGER entries_no_update BEFORE UPDATE ON entries BEGIN SELECT RAISE(ABORT, 'ledger entries are append-only'); END;
  CREATE TRIGGER entries_no_delete BEFORE DELETE ON entries BEGIN SELECT RAISE(ABORT, 'ledger entries are append-only'); END;
  CREATE TABLE holds (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    micros INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    request_id TEXT,
    state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'expired', 'settled', 'released')),
    charged INTEGER NOT NULL DEFAULT 0,
    closed_at INTEGER
  );
  CREATE INDEX holds_open ON holds(account_id, state, expires_at);
  CREATE INDEX holds_expiry ON holds(state, expires_at);
  `,
  // 2: what a stream delivered, checkpointed on its open hold; charged if the hold expires open.
  `
  ALTER TABLE holds ADD COLUMN delivered_micros INTEGER NOT NULL DEFAULT 0;
  `,
  // 3: the operator's side (usage, paging, idempotent credits). A charge records the key and model
  // of its request (copied from its hold) and the tokens billed; a credit may carry an idempotency
  // key, unique across the store. entries_usage covers the usage query (charges of one account over
  // a time range): it is read alone, without touching the table.
  `
  ALTER TABLE entries ADD COLUMN key_id TEXT;
  ALTER TABLE entries ADD COLUMN model TEXT;
  ALTER TABLE entries ADD COLUMN prompt_tokens INTEGER;
  ALTER TABLE entries ADD COLUMN completion_tokens INTEGER;
  ALTER TABLE entries ADD COLUMN idempotency_key TEXT;
  CREATE UNIQUE INDEX entries_idempotency ON entries(idempotency_key) WHERE idempotency_key IS NOT NULL;
  CREATE INDEX entries_usage ON entries(account_id, created_at, key_id, model, micros, prompt_tokens, completion_tokens) WHERE kind = 'charge';
  ALTER TABLE holds ADD COLUMN key_id TEXT;
  ALTER TABLE holds ADD COLUMN model TEXT;
  CREATE INDEX accounts_created ON accounts(created_at, id);
  `,
  // 4: per-key spend limits. A key may carry a budget (micros over a period); budget_spent counts
  // the key's charges since budget_since (the start of the period it counts), updated in the
  // transaction of every charge of the key while it has a budget, and started from the ledger when
  // the budget is set. A counter of an earlier period reads as 0 (reset lazily on the UTC boundary).
  `
  ALTER TABLE keys ADD COLUMN budget_micros INTEGER;
  ALTER TABLE keys ADD COLUMN budget_period TEXT CHECK (budget_period IN ('total', 'day', 'month'));
  ALTER TABLE keys ADD COLUMN budget_spent INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE keys ADD COLUMN budget_since INTEGER NOT NULL DEFAULT 0;
  `,
  // 5: the holds' indexes cover open holds only (what every query of them reads, as in
  // @tollgate/store-postgres): a settled hold leaves them, so they stay a few pages however many
  // holds the file keeps, and a batch of holds and settles dirties those pages, not one per account.
  `
  DROP INDEX holds_open;
  DROP INDEX holds_expiry;
  CREATE INDEX holds_open ON holds(account_id, expires_at) WHERE state = 'open';
  CREATE INDEX holds_expiry ON holds(expires_at) WHERE state = 'open';
  `,
];

/**
 * Applies the migrations not yet applied, each in one IMMEDIATE transaction. Plain SQL on the
 * driver interface, so a file migrated by one driver is current for every other.
 */
export function migrate(db: SqliteDatabase): void {
  const readVersion = db.prepare('PRAGMA user_version');
  const userVersion = () => {
    const row = readVersion.get();
    return row === undefined ? 0 : column.integer(row, 'user_version');
  };
  MIGRATIONS.forEach((sql, index) => {
    if (userVersion() > index) return;
    transaction(db, 'IMMEDIATE', () => {
      // Re-read under the write lock: another process may have migrated meanwhile.
      if (userVersion() > index) return;
      db.exec(sql);
      db.exec(`PRAGMA user_version = ${index + 1}`);
    });
  });
}
