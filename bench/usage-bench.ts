/**
 * `store.usage()` on a month of a million charges: fills SQLite (a temp file) and PostgreSQL (a
 * throwaway server from the store's test helper) with the same 1,000,000 charge entries over
 * 1,000 accounts x 5 keys x 4 models, one busy account holding a tenth of them, then times
 * `usage()` for the busy account over the whole month, grouped by day and by hour (median of 7
 * runs after a warm-up), checks its sums against the ledger's, and prints one JSON line. Exits 1
 * when a median reaches 200 ms.
 *
 * Run: npx tsx bench/usage-bench.ts [entries]
 *
 * The fill writes rows directly (SQL, in batches) rather than through hold/settle, which would
 * take hours at this size; on PostgreSQL the entry triggers are off during the fill and the
 * balances are set from the sums after it (the ledger invariant holds at the end, and is checked).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import postgres from 'postgres';
import type { Store, UsageQuery } from '@tollgate/billing';
import { postgresStore } from '../packages/store-postgres/src/postgres-store';
import { startPostgres } from '../packages/store-postgres/test/postgres-server';
import { sqliteStore } from '../packages/store-sqlite/src/sqlite-store';
import { random } from '../reliability/harness/random';

const ENTRIES = Number(process.argv[2] ?? 1_000_000);
const ACCOUNTS = 1_000;
const KEYS = 5;
const MODELS = ['fast', 'smart', 'painter', 'web'];
const BUSY_SHARE = 0.1;
const FROM = Date.UTC(2026, 9, 1); // October 2026: 31 days
const TO = Date.UTC(2026, 10, 1);
const BATCH = 5_000;
const RUNS = 7;
const LIMIT_MS = 200;

const accountId = (index: number) => `acc_bench${String(index).padStart(11, '0')}`;
const BUSY = accountId(0);

interface Row {
  id: string;
  account_id: string;
  micros: number;
  kind: 'charge';
  created_at: number;
  hold_id: string;
  request_id: string;
  key_id: string;
  model: string;
  prompt_tokens: number | null;
  completion_tokens: number | null;
}

/** The charge rows, a batch at a time: a tenth on the busy account, the rest spread over the others. */
function* batches(): Generator<Row[]> {
  const next = random(19);
  let batch: Row[] = [];
  const busyCount = Math.round(ENTRIES * BUSY_SHARE);
  for (let index = 0; index < ENTRIES; index++) {
    const account = index < busyCount ? 0 : 1 + (index % (ACCOUNTS - 1));
    const model = MODELS[Math.floor(next() * MODELS.length)] ?? 'fast';
    const tokens = model === 'fast' || model === 'smart';
    batch.push({
      id: `ent_bench${String(index).padStart(15, '0')}`,
      account_id: accountId(account),
      micros: -Math.floor(1 + next() * 20_000),
      kind: 'charge',
      created_at: FROM + Math.floor(next() * (TO - FROM)),
      hold_id: `hold_bench${String(index).padStart(14, '0')}`,
      request_id: `req_bench${String(index).padStart(15, '0')}`,
      key_id: `key_bench${String(account).padStart(6, '0')}_${Math.floor(next() * KEYS)}`,
      model,
      prompt_tokens: tokens ? Math.floor(next() * 4_000) : null,
      completion_tokens: tokens ? Math.floor(next() * 1_000) : null,
    });
    if (batch.length === BATCH) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

const CREDIT = 1_000_000_000_000;

/** What {@link measure} reports: medians and maxima in ms, rows returned. */
interface Measured {
  dayMs: number;
  dayMaxMs: number;
  dayRows: number;
  hourMs: number;
  hourMaxMs: number;
  hourRows: number;
  filteredHourMs: number;
  busyCharges: number;
}

/** Times `usage()` grouped by day and by hour, and checks its sums against the ledger's. */
async function measure(store: Store, ledgerSum: () => Promise<{ micros: number; count: number }>): Promise<Measured> {
  const result: Measured = { dayMs: 0, dayMaxMs: 0, dayRows: 0, hourMs: 0, hourMaxMs: 0, hourRows: 0, filteredHourMs: 0, busyCharges: 0 };
  const expected = await ledgerSum();
  for (const groupBy of ['day', 'hour'] as const) {
    const query: UsageQuery = { accountId: BUSY, from: FROM, to: TO, groupBy };
    const rows = await store.usage(query); // warm-up
    const micros = rows.reduce((sum, row) => sum + row.micros, 0);
    const requests = rows.reduce((sum, row) => sum + row.requests, 0);
    if (micros !== expected.micros || requests !== expected.count) throw new Error(`usage by ${groupBy} does not sum to the ledger's charges`);
    const times: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const started = performance.now();
      await store.usage(query);
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    result[`${groupBy}Ms`] = round(times[Math.floor(RUNS / 2)] ?? 0);
    result[`${groupBy}MaxMs`] = round(times.at(-1) ?? 0);
    result[`${groupBy}Rows`] = rows.length;
  }
  // A filtered query (one key, one model): same index, fewer rows out.
  const started = performance.now();
  await store.usage({ accountId: BUSY, from: FROM, to: TO, groupBy: 'hour', keyId: `key_bench000000_0`, model: 'fast' });
  result.filteredHourMs = round(performance.now() - started);
  result.busyCharges = expected.count;
  return result;
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}

async function benchSqlite(dir: string) {
  const path = join(dir, 'usage.db');
  await sqliteStore(path).close(); // migrates
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const filled = performance.now();
  const insertAccount = db.prepare("INSERT INTO accounts (id, plan, state, created_at) VALUES (?, 'pro', 'active', ?)");
  const insertCredit = db.prepare("INSERT INTO entries (id, account_id, micros, kind, created_at) VALUES (?, ?, ?, 'credit', ?)");
  const insertEntry = db.prepare(
    `INSERT INTO entries (id, account_id, micros, kind, created_at, hold_id, request_id, key_id, model, prompt_tokens, completion_tokens)
     VALUES (@id, @account_id, @micros, @kind, @created_at, @hold_id, @request_id, @key_id, @model, @prompt_tokens, @completion_tokens)`,
  );
  db.transaction(() => {
    for (let index = 0; index < ACCOUNTS; index++) {
      insertAccount.run(accountId(index), FROM - 1_000);
      insertCredit.run(`ent_credit${index}`, accountId(index), CREDIT, FROM - 1_000);
    }
  })();
  const insertBatch = db.transaction((batch: Row[]) => {
    for (const row of batch) insertEntry.run(row);
  });
  for (const batch of batches()) insertBatch(batch);
  db.exec('ANALYZE');
  const fillMs = Math.round(performance.now() - filled);
  const plan = db
    .prepare(
      `EXPLAIN QUERY PLAN SELECT created_at - (created_at % 86400000) AS period, key_id, model, count(*), sum(prompt_tokens), sum(completion_tokens), -sum(micros)
       FROM entries WHERE account_id = ? AND kind = 'charge' AND created_at >= ? AND created_at < ? GROUP BY period, key_id, model`,
    )
    .all(BUSY, FROM, TO)
    .map((row) => (row as { detail: string }).detail)
    .join('; ');
  const invariant = db
    .prepare('SELECT count(*) AS n FROM accounts a WHERE a.balance <> (SELECT coalesce(sum(micros), 0) FROM entries e WHERE e.account_id = a.id)')
    .get() as { n: number };
  if (invariant.n !== 0) throw new Error('sqlite: balance != sum of entries');
  const sum = db.prepare(
    "SELECT -sum(micros) AS micros, count(*) AS count FROM entries WHERE account_id = ? AND kind = 'charge' AND created_at >= ? AND created_at < ?",
  );
  const store = sqliteStore(path);
  try {
    const result = await measure(store, async () => sum.get(BUSY, FROM, TO) as { micros: number; count: number });
    return { fillMs, ...result, plan };
  } finally {
    await store.close();
    db.close();
  }
}

async function benchPostgres() {
  const server = await startPostgres();
  const store = postgresStore(server.url);
  const sql = postgres(server.url, { max: 1, onnotice: () => {} });
  try {
    await store.getAccount('acc_none'); // migrates
    const filled = performance.now();
    await sql`ALTER TABLE tollgate_entries DISABLE TRIGGER USER`;
    const accounts = Array.from({ length: ACCOUNTS }, (_, index) => ({ id: accountId(index), plan: 'pro', state: 'active', created_at: FROM - 1_000 }));
    await sql`INSERT INTO tollgate_accounts ${sql(accounts)}`;
    const credits = accounts.map((account, index) => ({
      id: `ent_credit${index}`,
      account_id: account.id,
      micros: CREDIT,
      kind: 'credit',
      created_at: FROM - 1_000,
    }));
    await sql`INSERT INTO tollgate_entries ${sql(credits)}`;
    for (const batch of batches()) await sql`INSERT INTO tollgate_entries ${sql(batch)}`;
    await sql`ALTER TABLE tollgate_entries ENABLE TRIGGER USER`;
    await sql`UPDATE tollgate_accounts a SET balance = s.total FROM (SELECT account_id, sum(micros) AS total FROM tollgate_entries GROUP BY account_id) s WHERE s.account_id = a.id`;
    // What autovacuum does on a live database: statistics, and the visibility map an index-only scan reads.
    await sql`VACUUM ANALYZE tollgate_entries`;
    await sql`VACUUM ANALYZE tollgate_accounts`;
    const fillMs = Math.round(performance.now() - filled);
    const [bad] = await sql<{ n: string }[]>`SELECT count(*) AS n FROM tollgate_accounts a
      WHERE a.balance <> (SELECT coalesce(sum(micros), 0) FROM tollgate_entries e WHERE e.account_id = a.id)`;
    if (Number(bad?.n) !== 0) throw new Error('postgres: balance != sum of entries');
    const explained = await sql.unsafe(
      `EXPLAIN SELECT created_at - (created_at % 86400000) AS period, key_id, model, count(*), sum(prompt_tokens), sum(completion_tokens), -sum(micros)
       FROM tollgate_entries WHERE account_id = $1 AND kind = 'charge' AND created_at >= $2 AND created_at < $3 GROUP BY 1, 2, 3`,
      [BUSY, FROM, TO],
    );
    const plan = explained
      .map((row) => String(row['QUERY PLAN']).trim())
      .filter((line) => /Scan/.test(line))
      .join('; ');
    const result = await measure(store, async () => {
      const [row] = await sql<{ micros: string; count: string }[]>`SELECT -sum(micros) AS micros, count(*) AS count FROM tollgate_entries
        WHERE account_id = ${BUSY} AND kind = 'charge' AND created_at >= ${FROM} AND created_at < ${TO}`;
      return { micros: Number(row?.micros), count: Number(row?.count) };
    });
    return { fillMs, ...result, plan };
  } finally {
    await sql.end();
    await store.close();
    await server.stop();
  }
}

const dir = mkdtempSync(join(tmpdir(), 'tollgate-usage-bench-'));
try {
  const sqlite = await benchSqlite(dir);
  const pg = await benchPostgres();
  const slowest = Math.max(sqlite.dayMs, sqlite.hourMs, pg.dayMs, pg.hourMs);
  const ok = slowest < LIMIT_MS;
  console.log(
    JSON.stringify({
      bench: 'usage',
      entries: ENTRIES,
      accounts: ACCOUNTS,
      keysPerAccount: KEYS,
      models: MODELS.length,
      month: [new Date(FROM).toISOString(), new Date(TO).toISOString()],
      sqlite,
      postgres: pg,
      limitMs: LIMIT_MS,
      ok,
    }),
  );
  if (!ok) process.exitCode = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
