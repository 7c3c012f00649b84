/**
 * Where a scenario's reference server keeps its ledger: a SQLite file in the scenario's data
 * directory, or a fresh database on a PostgreSQL server the runner started.
 */
import { join } from 'node:path';
import type { Store } from '@tollgate/billing';
import { sqliteStore } from '@tollgate/store-sqlite';
import { postgresStore } from '@tollgate/store-postgres';
import type { PostgresServer } from '../../packages/store-postgres/test/postgres-server';
import type { LedgerTarget } from './ledger';

/** A scenario's ledger: how to open its Store, the env for `tollgate serve`, and where to read it. */
export interface Backend {
  kind: 'sqlite' | 'postgres';
  env: Record<string, string>;
  target: LedgerTarget;
  /** Opens the Store in this process (accounts, keys, credits); close it when done. */
  open(): Store & { close?(): Promise<void> };
}

let databases = 0;

/** SQLite under `dir` (the file `tollgate serve` opens with TOLLGATE_DATA_DIR=dir). */
export function sqliteBackend(dir: string): Backend {
  const file = join(dir, 'tollgate.db');
  return { kind: 'sqlite', env: {}, target: { sqlite: file }, open: () => sqliteStore(file) };
}

/** A new database on `server`, with `holdTtlMs` for the holds of dead instances. */
export async function postgresBackend(server: PostgresServer, holdTtlMs: number): Promise<Backend> {
  const url = await server.createDatabase(`reliability_${process.pid}_${++databases}_${Date.now()}`);
  return {
    kind: 'postgres',
    env: { DATABASE_URL: url, TOLLGATE_HOLD_TTL_MS: String(holdTtlMs) },
    target: { postgres: url },
    open: () => postgresStore(url, { max: 2 }),
  };
}
