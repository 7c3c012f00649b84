import type { Sql } from 'postgres';

/** Any fixed number: the advisory lock that serialises migrations across instances. */
const MIGRATION_LOCK = 7_346_120_501;

/**
 * Schema migrations, applied in order and recorded in `tollgate_migrations`. Entries are
 * append-only (a trigger refuses UPDATE and DELETE) and a trigger adds every entry to
 * `tollgate_accounts.balance` in the inserting transaction, so balance = sum of entries always.
 * Exported for the migration test only (a database at an older version).
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE tollgate_accounts (
    id text PRIMARY KEY,
    plan text NOT NULL,
    state text NOT NULL,
    balance bigint NOT NULL DEFAULT 0,
    created_at bigint NOT NULL
  );
  CREATE TABLE tollgate_keys (
    seq bigserial NOT NULL,
    id text PRIMARY KEY,
    account_id text NOT NULL REFERENCES tollgate_accounts(id),
    name text NOT NULL,
    hash text NOT NULL UNIQUE,
    prefix text NOT NULL,
    created_at bigint NOT NULL,
    revoked_at bigint
  );
  CREATE INDEX tollgate_keys_account ON tollgate_keys (account_id, seq);
  CREATE TABLE tollgate_entries (
    seq bigserial PRIMARY KEY,
    id text NOT NULL UNIQUE,
    account_id text NOT NULL REFERENCES tollgate_accounts(id),
    micros bigint NOT NULL,
    kind text NOT NULL CHECK (kind IN ('credit', 'charge')),
    created_at bigint NOT NULL,
    hold_id text,
    request_id text,
    meta jsonb
  );
  CREATE INDEX tollgate_entries_account ON tollgate_entries (account_id, seq);
  CREATE TABLE tollgate_holds (
    id text PRIMARY KEY,
    account_id text NOT NULL REFERENCES tollgate_accounts(id),
    micros bigint NOT NULL,
    created_at bigint NOT NULL,
    expires_at bigint NOT NULL,
    request_id text,
    state text NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'expired', 'settled', 'released')),
    charged bigint NOT NULL DEFAULT 0,
    closed_at bigint
  );
  CREATE INDEX tollgate_holds_open ON tollgate_holds (account_id, expires_at) WHERE state = 'open';
  CREATE INDEX tollgate_holds_expiry ON tollgate_holds (expires_at) WHERE state = 'open';
  CREATE FUNCTION tollgate_entries_apply() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    UPDATE tollgate_accounts SET balance = balance + NEW.micros WHERE id = NEW.account_id;
    RETURN NEW;
  END $$;
  CREATE TRIGGER tollgate_entries_balance AFTER INSERT ON tollgate_entries
    FOR EACH ROW EXECUTE FUNCTION tollgate_entries_apply();
  CREATE FUNCTION tollgate_entries_frozen() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    RAISE EXCEPTION 'ledger entries are append-only';
  END $$;
  CREATE TRIGGER tollgate_entries_append_only BEFORE UPDATE OR DELETE ON tollgate_entries
    FOR EACH ROW EXECUTE FUNCTION tollgate_entries_frozen();
  `,
  // 2: what a stream delivered, checkpointed on its open hold; charged if the hold expires open.
  `
  ALTER TABLE tollgate_holds ADD COLUMN delivered_micros bigint NOT NULL DEFAULT 0;
  `,
  // 3: the operator's side (usage, paging, idempotent credits). A charge records the key and model
  // of its request (copied from its hold) and the tokens billed; a credit may carry an idempotency
  // key, unique across the store. tollgate_entries_usage covers the usage query (one account's
  // charges over a time range: an index-only scan). tollgate_entries_order gives an entry its seq
  // under the account's row lock, which it keeps until commit (the balance trigger updates that row
  // anyway): an account's entries then commit in seq order, so a page cursor on seq never skips an
  // entry that committed late.
  `
  ALTER TABLE tollgate_entries
    ADD COLUMN key_id text,
    ADD COLUMN model text,
    ADD COLUMN prompt_tokens bigint,
    ADD COLUMN completion_tokens bigint,
    ADD COLUMN idempotency_key text;
  CREATE UNIQUE INDEX tollgate_entries_idempotency ON tollgate_entries (idempotency_key) WHERE idempotency_key IS NOT NULL;
  CREATE INDEX tollgate_entries_usage ON tollgate_entries (account_id, created_at)
    INCLUDE (key_id, model, micros, prompt_tokens, completion_tokens) WHERE kind = 'charge';
  ALTER TABLE tollgate_holds ADD COLUMN key_id text, ADD COLUMN model text;
  CREATE INDEX tollgate_accounts_created ON tollgate_accounts (created_at, id COLLATE "C");
  CREATE FUNCTION tollgate_entries_order() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM 1 FROM tollgate_accounts WHERE id = NEW.account_id FOR NO KEY UPDATE;
    NEW.seq := nextval('tollgate_entries_seq_seq');
    RETURN NEW;
  END $$;
  CREATE TRIGGER tollgate_entries_order BEFORE INSERT ON tollgate_entries
    FOR EACH ROW EXECUTE FUNCTION tollgate_entries_order();
  `,
  // 4: per-key spend limits. A key may carry a budget (micros over a period); budget_spent counts
  // the key's charges since budget_since (the start of the period it counts), updated in the
  // transaction of every charge of the key while it has a budget — after the entry's insert, so
  // under the account's row lock, as every hold of the account reads it — and started from the
  // ledger when the budget is set. A counter of an earlier period reads as 0 (reset lazily on the
  // UTC boundary). Adding nullable and defaulted columns rewrites nothing.
  `
  ALTER TABLE tollgate_keys
    ADD COLUMN budget_micros bigint,
    ADD COLUMN budget_period text CHECK (budget_period IN ('total', 'day', 'month')),
    ADD COLUMN budget_spent bigint NOT NULL DEFAULT 0,
    ADD COLUMN budget_since bigint NOT NULL DEFAULT 0;
  `,
];

/**
 * Applies the migrations not yet applied, in one transaction under an advisory lock, so that two
 * instances starting at once neither race nor fail; running it again changes nothing.
 */
export async function migrate(sql: Sql): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`CREATE TABLE IF NOT EXISTS tollgate_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`;
    const [row] = await tx<{ version: number | null }[]>`SELECT max(version) AS version FROM tollgate_migrations`;
    const applied = row?.version ?? 0;
    for (const [version, migration] of MIGRATIONS.entries()) {
      if (version < applied) continue;
      await tx.unsafe(migration);
      await tx`INSERT INTO tollgate_migrations (version) VALUES (${version + 1})`;
    }
  });
}
