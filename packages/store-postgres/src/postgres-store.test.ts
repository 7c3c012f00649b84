import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { hashKey } from '@tollgate/billing';
import { runStoreCases } from '@tollgate/testing/store-contract';
import { findPostgresBin, startPostgres, type PostgresServer } from '../test/postgres-server';
import { MIGRATIONS } from './postgres-schema';
import { postgresStore } from './postgres-store';

const TABLES = ['tollgate_accounts', 'tollgate_keys', 'tollgate_entries', 'tollgate_holds'];
const installed = findPostgresBin() !== undefined;

if (!installed && process.env.CI === 'true') {
  describe('store-postgres', () => {
    it('needs PostgreSQL in CI', () => {
      throw new Error('PostgreSQL is not installed: .ci/run must install postgresql');
    });
  });
} else if (!installed) {
  console.warn('\n\n*** store-postgres: PostgreSQL is not installed; SKIPPING the PostgreSQL store tests ***\n\n');
  describe.skip('store-postgres (PostgreSQL not installed)', () => {
    it('skipped', () => {});
  });
} else {
  let server: Promise<PostgresServer> | undefined;
  let databases = 0;
  const started = () => (server ??= startPostgres());
  afterAll(async () => {
    if (server !== undefined) await (await server).stop();
  });
  /** A fresh database per case, so global counts such as releaseExpired() start from zero. */
  const fresh = async () => {
    const pg = await started();
    const name = `case_${++databases}`;
    return { pg, name, url: await pg.createDatabase(name) };
  };

  runStoreCases('postgres', async ({ now }) => {
    const { pg, name, url } = await fresh();
    const store = postgresStore(url, { now, max: 8 });
    return {
      store,
      dump: async () => {
        const sql = postgres(url, { max: 1 });
        try {
          const tables = await Promise.all(TABLES.map((table) => sql.unsafe(`SELECT * FROM ${table}`)));
          return JSON.stringify(tables);
        } finally {
          await sql.end();
        }
      },
      cleanup: () => pg.dropDatabase(name),
    };
  });

  /**
   * The contract again on a database whose default collation is ICU en-US, where 'key_Z' sorts
   * after 'key_a': listings and usage rows must still come in byte order, as on every other store.
   * (PostgreSQL before 15 has no LOCALE_PROVIDER: the database then has the server's collation.)
   */
  runStoreCases('postgres, ICU en-US collation', async ({ now }) => {
    const pg = await started();
    const name = `case_${++databases}`;
    const admin = postgres(pg.url, { max: 1, onnotice: () => {} });
    try {
      const [version] = await admin<{ server_version_num: string }[]>`SHOW server_version_num`;
      const icu = Number(version?.server_version_num) >= 150_000 ? ` TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.utf8'` : '';
      await admin.unsafe(`CREATE DATABASE "${name}"${icu}`);
    } finally {
      await admin.end();
    }
    const store = postgresStore(pg.url.replace(/\/tollgate$/, `/${name}`), { now, max: 8 });
    return { store, cleanup: () => pg.dropDatabase(name) };
  });

  describe('postgresStore', () => {
    it('migrates once when several instances start at once, and they share holds exactly', async () => {
      const { pg, name, url } = await fresh();
      const stores = Array.from({ length: 4 }, () => postgresStore(url, { max: 5 }));
      try {
        expect(await Promise.all(stores.map((store) => store.getAccount('acc_none')))).toEqual([undefined, undefined, undefined, undefined]);
        const sql = postgres(url, { max: 1 });
        expect(await sql`SELECT version FROM tollgate_migrations ORDER BY version`).toEqual(MIGRATIONS.map((_, index) => ({ version: index + 1 })));
        await sql.end();
        const account = await stores[0]!.createAccount({ plan: 'free' });
        await stores[1]!.addCredits(account.id, 1_000);
        const results = await Promise.all(Array.from({ length: 120 }, (_, index) => stores[index % 4]!.hold(account.id, { micros: 9, ttlMs: 60_000 })));
        expect(results.filter((result) => result.ok).length).toBe(111);
        expect(await stores[2]!.getBalance(account.id)).toEqual({ balance: 1_000, held: 999, available: 1 });
        // One hold settled from every instance at once is charged once.
        const hold = results.find((result) => result.ok);
        if (!hold?.ok) throw new Error('no hold');
        const settles = await Promise.all(stores.map((store) => store.settle(hold.value.holdId, { micros: 9 })));
        expect(settles.filter((result) => !result.already)).toEqual([{ charged: 9, already: false }]);
        expect(await stores[3]!.getBalance(account.id)).toEqual({ balance: 991, held: 990, available: 1 });
      } finally {
        await Promise.all(stores.map((store) => store.close()));
        await pg.dropDatabase(name);
      }
    });

    it('keeps a key to its budget across instances: simultaneous holds, and holds racing settles', async () => {
      const { pg, name, url } = await fresh();
      const stores = Array.from({ length: 4 }, () => postgresStore(url, { max: 5 }));
      try {
        const account = await stores[0]!.createAccount({ plan: 'free' });
        await stores[1]!.addCredits(account.id, 1_000_000);
        const { id: key } = await stores[2]!.createKey(account.id, 'shared');
        await stores[3]!.setKeyBudget(key, { micros: 1_000, period: 'day' });
        const results = await Promise.all(
          Array.from({ length: 120 }, (_, index) => stores[index % 4]!.hold(account.id, { micros: 9, ttlMs: 60_000, keyId: key })),
        );
        expect(results.filter((result) => result.ok).length).toBe(111);
        for (const result of results) if (!result.ok) expect(result.error).toMatchObject({ reason: 'key_budget', available: 1 });

        const { id: racing } = await stores[0]!.createKey(account.id, 'racing');
        await stores[1]!.setKeyBudget(racing, { micros: 1_000, period: 'month' });
        const charged = await Promise.all(
          Array.from({ length: 60 }, async (_, index): Promise<number> => {
            const held = await stores[index % 4]!.hold(account.id, { micros: 100, ttlMs: 60_000, keyId: racing });
            if (!held.ok) return 0;
            // Settled from another instance than the one that held.
            await stores[(index + 1) % 4]!.settle(held.value.holdId, { micros: 100 });
            return 100;
          }),
        );
        expect(charged.reduce((sum, micros) => sum + micros, 0)).toBe(1_000);
        expect((await stores[2]!.getKey(racing))?.budget?.spent).toBe(1_000);
      } finally {
        await Promise.all(stores.map((store) => store.close()));
        await pg.dropDatabase(name);
      }
    });

    it("counts a charge that commits while a key's budget is being set (setKeyBudget waits for the account's row lock)", async () => {
      const { pg, name, url } = await fresh();
      const time = Date.UTC(2026, 10, 26, 12);
      const store = postgresStore(url, { max: 2, now: () => time });
      const sql = postgres(url, { max: 2, onnotice: () => {} });
      try {
        const account = await store.createAccount({ plan: 'free' });
        await store.addCredits(account.id, 10_000);
        const { id: key } = await store.createKey(account.id, 'late');
        let late: Promise<{ budget?: { spent: number } }> | undefined;
        // A settle of the key commits while the budget is set: it holds the account's row lock from its
        // entry's insert to its commit, and wrote no counter (the key had no budget yet).
        await sql.begin(async (tx) => {
          await tx`INSERT INTO tollgate_entries (id, account_id, micros, kind, created_at, key_id)
            VALUES ('ent_late', ${account.id}, -300, 'charge', ${time}, ${key})`;
          late = store.setKeyBudget(key, { micros: 1_000, period: 'day' });
          await new Promise((resolve) => setTimeout(resolve, 300));
        });
        expect((await late)?.budget?.spent).toBe(300);
        expect(await store.hold(account.id, { micros: 701, ttlMs: 60_000, keyId: key })).toMatchObject({
          ok: false,
          error: { reason: 'key_budget', available: 700 },
        });
      } finally {
        await sql.end();
        await store.close();
        await pg.dropDatabase(name);
      }
    });

    it('never revives a hold that a later hold of its account already counted as expired, however late its renewal runs', async () => {
      const { pg, name, url } = await fresh();
      // One connection: the renewal waits behind the second hold, as on a busy pool; it was asked
      // for before the first hold expired (its clock read then, with the old statement).
      let clock = 0;
      const scripted: number[] = [];
      const store = postgresStore(url, { now: () => scripted.shift() ?? clock, max: 1 });
      try {
        const account = await store.createAccount({ plan: 'plus' });
        await store.addCredits(account.id, 1_000);
        const first = await store.hold(account.id, { micros: 1_000, ttlMs: 1_000 });
        if (!first.ok) throw new Error('no first hold');
        clock = 1_001;
        const second = store.hold(account.id, { micros: 1_000, ttlMs: 60_000 });
        scripted.push(999);
        const renewal = store.checkpoint([{ holdId: first.value.holdId, micros: 0, ttlMs: 60_000 }]);
        const [held, renewed] = await Promise.all([second, renewal]);
        // One of them, never both: never more held than the balance.
        expect(held.ok && renewed === 1).toBe(false);
        const balance = await store.getBalance(account.id);
        expect(balance.held).toBeLessThanOrEqual(balance.balance);
      } finally {
        await store.close();
        await pg.dropDatabase(name);
      }
    });

    it('holds, renewals, settles and sweeps of four instances over shared accounts at once: no lock cycle, every hold closed once', async () => {
      const { pg, name, url } = await fresh();
      let clock = 0;
      const stores = Array.from({ length: 4 }, () => postgresStore(url, { now: () => clock, max: 4 }));
      try {
        const accounts = await Promise.all([0, 1, 2].map(() => stores[0]!.createAccount({ plan: 'plus' })));
        for (const account of accounts) await stores[0]!.addCredits(account.id, 1_000_000);
        const holdIds: string[] = [];
        for (let round = 0; round < 12; round++) {
          const held = await Promise.all(
            Array.from({ length: 12 }, (_, index) => stores[index % 4]!.hold(accounts[index % 3]!.id, { micros: 1_000, ttlMs: 100 + (index % 2) * 1_000 })),
          );
          const ids = held.flatMap((result) => (result.ok ? [result.value.holdId] : []));
          holdIds.push(...ids);
          clock += 60;
          // Renewals of many holds over every account (a batch per instance), settles and sweeps, all at once.
          await Promise.all([
            ...stores.map((store, index) => store.checkpoint(ids.filter((_, at) => at % 4 !== index).map((holdId) => ({ holdId, micros: 10, ttlMs: 100 })))),
            ...ids.filter((_, at) => at % 3 === 0).map((holdId, at) => stores[at % 4]!.settle(holdId, { micros: 500 })),
            stores[1]!.releaseExpired(),
            stores[3]!.releaseExpired(),
          ]);
          clock += 100;
        }
        clock += 10_000;
        await stores[2]!.releaseExpired();
        const sql = postgres(url, { max: 1 });
        try {
          // Every hold closed once: settled (charged once), or expired with nothing delivered.
          const [open] = await sql<{ count: string }[]>`SELECT count(*) FROM tollgate_holds WHERE state = 'open'`;
          expect(Number(open?.count)).toBe(0);
          const perHold = await sql<{ hold_id: string; charges: string }[]>`
            SELECT hold_id, count(*) AS charges FROM tollgate_entries WHERE kind = 'charge' GROUP BY hold_id HAVING count(*) > 1`;
          expect(perHold).toEqual([]);
          const [drift] = await sql<{ count: string }[]>`
            SELECT count(*) FROM tollgate_accounts a WHERE a.balance <> (SELECT coalesce(sum(micros), 0) FROM tollgate_entries e WHERE e.account_id = a.id)`;
          expect(Number(drift?.count)).toBe(0);
        } finally {
          await sql.end();
        }
        expect(holdIds.length).toBe(144);
      } finally {
        await Promise.all(stores.map((store) => store.close()));
        await pg.dropDatabase(name);
      }
    });

    it('keeps everything across a restart and refuses to rewrite entries', async () => {
      const { pg, name, url } = await fresh();
      try {
        const first = postgresStore(url);
        const account = await first.createAccount({ plan: 'pro' });
        await first.addCredits(account.id, 2_000, { note: 'top-up' });
        const { key, id } = await first.createKey(account.id, 'server');
        const entries = await first.entries(account.id);
        await first.close();

        const second = postgresStore(url);
        expect(await second.getBalance(account.id)).toEqual({ balance: 2_000, held: 0, available: 2_000 });
        expect(await second.entries(account.id)).toEqual(entries);
        expect(entries[0]?.meta).toEqual({ note: 'top-up' });
        expect((await second.findKey(await hashKey(key)))?.id).toBe(id);
        await second.close();

        const sql = postgres(url, { max: 1, onnotice: () => {} });
        await expect(sql`UPDATE tollgate_entries SET micros = 5`).rejects.toThrow('ledger entries are append-only');
        await expect(sql`DELETE FROM tollgate_entries`).rejects.toThrow('ledger entries are append-only');
        await sql.end();
      } finally {
        await pg.dropDatabase(name);
      }
    });

    it("migrates a database of the first schema, and charges its instances' checkpoints once the holds expire", async () => {
      const { pg, name, url } = await fresh();
      let time = 1_000_000;
      try {
        const sql = postgres(url, { max: 1, onnotice: () => {} });
        await sql.begin(async (tx) => {
          await tx`CREATE TABLE tollgate_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`;
          await tx.unsafe(MIGRATIONS[0] ?? '');
          await tx`INSERT INTO tollgate_migrations (version) VALUES (1)`;
          await tx`INSERT INTO tollgate_accounts (id, plan, state, created_at) VALUES ('acc_old', 'pro', 'active', 1)`;
          await tx`INSERT INTO tollgate_entries (id, account_id, micros, kind, created_at) VALUES ('ent_1', 'acc_old', 1000, 'credit', 1)`;
          await tx`INSERT INTO tollgate_holds (id, account_id, micros, created_at, expires_at, request_id)
            VALUES ('hold_old', 'acc_old', 400, 1, 1000500, 'req_old')`;
        });
        // Two instances on the old database: one migrates, the other's checkpoints and sweep see the new column.
        const [a, b] = [postgresStore(url, { now: () => time }), postgresStore(url, { now: () => time })];
        expect(await a.getBalance('acc_old')).toEqual({ balance: 1_000, held: 400, available: 600 });
        expect(await b.checkpoint([{ holdId: 'hold_old', micros: 250, ttlMs: 100 }])).toBe(1);
        expect(await sql`SELECT version FROM tollgate_migrations ORDER BY version`).toEqual(MIGRATIONS.map((_, index) => ({ version: index + 1 })));
        time += 500;
        const swept = await Promise.all([a.releaseExpired(), b.releaseExpired()]);
        expect(swept.sort()).toEqual([0, 1]);
        expect(await b.getBalance('acc_old')).toEqual({ balance: 750, held: 0, available: 750 });
        expect((await a.entries('acc_old', { limit: 1 }))[0]).toMatchObject({
          micros: -250,
          holdId: 'hold_old',
          requestId: 'req_old',
          meta: { outcome: 'checkpoint' },
        });
        await Promise.all([a.close(), b.close(), sql.end()]);
      } finally {
        await pg.dropDatabase(name);
      }
    });

    it("commits an account's entries in ledger order, so an entries cursor never skips one that committed late", async () => {
      const { pg, name, url } = await fresh();
      const store = postgresStore(url, { max: 2 });
      const sql = postgres(url, { max: 2, onnotice: () => {} });
      try {
        const account = await store.createAccount({ plan: 'free' });
        await store.addCredits(account.id, 1);
        // Another writer holds the account's row lock (as a settle does while it commits)...
        let late: Promise<unknown> | undefined;
        await sql.begin(async (tx) => {
          await tx`SELECT 1 FROM tollgate_accounts WHERE id = ${account.id} FOR NO KEY UPDATE`;
          // ...while the store adds a credit: it waits for the lock before it takes its position.
          late = store.addCredits(account.id, 2);
          await new Promise((resolve) => setTimeout(resolve, 300));
          await tx`INSERT INTO tollgate_entries (id, account_id, micros, kind, created_at) VALUES ('ent_first', ${account.id}, 3, 'credit', 1)`;
        });
        await late;
        // The entry that committed first comes first: a reader who paged between the two commits misses nothing.
        expect((await store.entriesPage(account.id)).items.map((entry) => entry.micros)).toEqual([1, 3, 2]);
      } finally {
        await sql.end();
        await store.close();
        await pg.dropDatabase(name);
      }
    });

    it('reports a database it cannot reach from the methods, not at construction', async () => {
      const store = postgresStore('postgres://postgres@127.0.0.1:1/none', { max: 1 });
      await expect(store.getAccount('acc_x')).rejects.toThrow();
      await store.close();
    });
  });
}
