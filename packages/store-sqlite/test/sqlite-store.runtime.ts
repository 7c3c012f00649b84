/**
 * The Store contract on the runtime's own SQLite driver, for `bun test` (bun:sqlite) and
 * `deno test` (node:sqlite); packages/store-sqlite/src/sqlite-runtimes.test.ts runs both and checks
 * they passed. Bun maps the suite's `vitest` import to bun:test; Deno's config (deno.json here)
 * maps it to vitest-on-deno.ts.
 *
 * With TOLLGATE_SQLITE_SHARED_FILE set, it also opens that file (written by better-sqlite3), checks
 * what it holds and appends a credit, so the parent can see the same file went both ways.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runtimeDriver } from '../src/runtime-driver';
import { sqliteStore } from '../src/sqlite-store';
import { runStoreCases } from './store-cases';

const driver = runtimeDriver();

/** Every row of every table, then the raw bytes of the file and its WAL. */
function dump(path: string): string {
  const db = driver.open(path);
  try {
    const rows = ['accounts', 'keys', 'entries', 'holds'].map((table) => JSON.stringify(db.prepare(`SELECT * FROM ${table}`).all()));
    const files = [path, `${path}-wal`].filter(existsSync).map((file) => readFileSync(file).toString('latin1'));
    return [...rows, ...files].join('\n');
  } finally {
    db.close();
  }
}

runStoreCases(`sqlite file (${driver.name})`, async ({ now }) => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-sqlite-'));
  const path = join(dir, 'tollgate.db');
  return {
    store: sqliteStore(path, { now, driver }),
    dump: async () => dump(path),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

runStoreCases(`sqlite :memory: (${driver.name})`, async ({ now }) => ({ store: sqliteStore(':memory:', { now, driver }) }));

const shared = process.env.TOLLGATE_SQLITE_SHARED_FILE;
if (shared !== undefined) {
  describe(`a file better-sqlite3 wrote, on ${driver.name}`, () => {
    it('reads its accounts, keys and entries, and appends to its ledger', async () => {
      const store = sqliteStore(shared, { driver });
      try {
        expect(await store.getAccount('acc_shared')).toEqual({ id: 'acc_shared', plan: 'plus', state: 'active' });
        expect((await store.findKey(process.env.TOLLGATE_SQLITE_SHARED_KEY_HASH ?? ''))?.account.id).toBe('acc_shared');
        const before = await store.entries('acc_shared');
        expect(before.at(-1)).toMatchObject({ micros: 1_000, kind: 'credit', meta: { by: 'better-sqlite3' } });
        const after = await store.addCredits('acc_shared', 10, { by: driver.name });
        expect(after.balance).toBe(before.reduce((sum, entry) => sum + entry.micros, 0) + 10);
      } finally {
        await store.close();
      }
    });
  });
}
