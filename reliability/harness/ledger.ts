/**
 * The invariant, read straight from the store's tables (the SQLite file or the PostgreSQL
 * database), not through the gateway: for every account, balance = sum of its ledger entries; no
 * hold left open once its request ended; every request that reached the model charged exactly its
 * usage, at most once, and never above its hold.
 */
import Database from 'better-sqlite3';
import postgres from 'postgres';
import { check, type Check } from './result';

/** Where the ledger lives. */
export type LedgerTarget = { sqlite: string } | { postgres: string };

interface AccountRow {
  id: string;
  balance: number;
  sum: number;
}
interface HoldRow {
  id: string;
  account_id: string;
  micros: number;
  state: string;
  charged: number;
  request_id: string | null;
  expires_at: number;
  created_at: number;
  closed_at: number | null;
}
interface ChargeRow {
  request_id: string | null;
  micros: number;
}

/** The rows the invariant reads. */
export interface Ledger {
  accounts: AccountRow[];
  holds: HoldRow[];
  /** Charge entries (micros negative: what was taken). */
  charges: ChargeRow[];
}

/** Reads accounts with the sum of their entries, every hold, and every charge entry. */
export async function readLedger(target: LedgerTarget): Promise<Ledger> {
  if ('sqlite' in target) {
    const db = new Database(target.sqlite, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    try {
      return {
        accounts: db
          .prepare('SELECT a.id, a.balance, COALESCE((SELECT SUM(micros) FROM entries e WHERE e.account_id = a.id), 0) AS sum FROM accounts a')
          .all() as AccountRow[],
        holds: db.prepare('SELECT id, account_id, micros, state, charged, request_id, expires_at, created_at, closed_at FROM holds').all() as HoldRow[],
        charges: db.prepare("SELECT request_id, micros FROM entries WHERE kind = 'charge'").all() as ChargeRow[],
      };
    } finally {
      db.close();
    }
  }
  const sql = postgres(target.postgres, { max: 1, onnotice: () => {}, connect_timeout: 10 });
  try {
    const accounts = await sql<AccountRow[]>`
      SELECT a.id, a.balance::float8 AS balance,
        COALESCE((SELECT SUM(micros) FROM tollgate_entries e WHERE e.account_id = a.id), 0)::float8 AS sum
      FROM tollgate_accounts a`;
    const holds = await sql<HoldRow[]>`
      SELECT id, account_id, micros::float8 AS micros, state, charged::float8 AS charged, request_id, expires_at::float8 AS expires_at,
        created_at::float8 AS created_at, closed_at::float8 AS closed_at FROM tollgate_holds`;
    const charges = await sql<ChargeRow[]>`SELECT request_id, micros::float8 AS micros FROM tollgate_entries WHERE kind = 'charge'`;
    return { accounts: [...accounts], holds: [...holds], charges: [...charges] };
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/** What each request id was charged in all (positive micros) and in how many entries. */
export function chargesByRequest(ledger: Ledger): Map<string, { micros: number; entries: number }> {
  const out = new Map<string, { micros: number; entries: number }>();
  for (const charge of ledger.charges) {
    if (charge.request_id === null) continue;
    const seen = out.get(charge.request_id) ?? { micros: 0, entries: 0 };
    seen.micros += -charge.micros;
    seen.entries += charge.micros === 0 ? 0 : 1;
    out.set(charge.request_id, seen);
  }
  return out;
}

/** Options of {@link invariantChecks}. */
export interface InvariantOptions {
  /** Request id -> the exact charge its usage makes. */
  expected?: Map<string, number>;
  /** Check that no hold is open (every request ended). Default true. */
  noOpenHolds?: boolean;
}

/** The invariant's checks on one ledger. */
export function invariantChecks(ledger: Ledger, options: InvariantOptions = {}): Check[] {
  const off = ledger.accounts.filter((account) => account.balance !== account.sum);
  const checks = [
    check(
      'balance = sum of ledger entries, every account',
      off.length === 0,
      off.length === 0 ? `${ledger.accounts.length} accounts` : `${off.length} accounts off, e.g. ${JSON.stringify(off[0])}`,
    ),
  ];
  if (options.noOpenHolds !== false) {
    const open = ledger.holds.filter((hold) => hold.state === 'open');
    checks.push(check('no hold left open once its request ended', open.length === 0, `${open.length} open of ${ledger.holds.length}`));
  }
  const charged = chargesByRequest(ledger);
  const twice = [...charged].filter(([, seen]) => seen.entries > 1);
  checks.push(
    check(
      'no request charged twice',
      twice.length === 0,
      twice.length === 0 ? `${charged.size} request ids charged` : `${twice.length}, e.g. ${twice[0]?.[0]}`,
    ),
  );
  const over = ledger.holds.filter((hold) => hold.charged > hold.micros);
  checks.push(
    check(
      'no charge above its hold',
      over.length === 0,
      over.length === 0 ? `${ledger.holds.length} holds` : `${over.length}, e.g. charged ${over[0]?.charged} on a hold of ${over[0]?.micros}`,
    ),
  );
  if (options.expected) {
    const wrong = [...options.expected].filter(([requestId, micros]) => (charged.get(requestId)?.micros ?? 0) !== micros);
    checks.push(
      check(
        'every request that reached the model charged exactly its usage',
        wrong.length === 0,
        wrong.length === 0
          ? `${options.expected.size} requests`
          : `${wrong.length} of ${options.expected.size} off, e.g. ${wrong[0]?.[0]}: expected ${wrong[0]?.[1]}, charged ${charged.get(wrong[0]?.[0] ?? '')?.micros ?? 0}`,
      ),
    );
  }
  return checks;
}
