import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { hashKey } from '@tollgate/billing';
import { runStoreCases } from '@tollgate/testing/store-contract';
import { betterSqlite3Driver } from './better-sqlite3-driver';
import { startCheckpointThread } from './checkpoint-thread';
import { resolveModule } from './load-module';
import type { SqliteDatabase } from './sqlite-database';
import { MIGRATIONS } from './sqlite-schema';
import { sqliteStore } from './sqlite-store';

/** Every row of every table, as text. */
function dumpRows(path: string): string {
  const db = new Database(path, { readonly: true });
  try {
    return ['accounts', 'keys', 'entries', 'holds'].map((table) => JSON.stringify(db.prepare(`SELECT * FROM ${table}`).all())).join('\n');
  } finally {
    db.close();
  }
}

runStoreCases('sqlite file', async ({ now }) => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-sqlite-'));
  const path = join(dir, 'tollgate.db');
  const store = sqliteStore(path, { now });
  return {
    store,
    // Rows, and the raw bytes of the database and its WAL: the secret must be nowhere.
    dump: async () => [dumpRows(path), ...[path, `${path}-wal`].filter(existsSync).map((file) => readFileSync(file).toString('latin1'))].join('\n'),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

runStoreCases('sqlite :memory:', async ({ now }) => ({ store: sqliteStore(':memory:', { now }) }));

/** Runs `body` with a file path in a temp dir of its own, removed afterwards whatever happens. */
async function inTempDir(name: string, body: (path: string, dir: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-sqlite-'));
  try {
    await body(join(dir, name), dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('sqliteStore on a file', () => {
  it('keeps balances, keys, entries and open holds across a restart; releaseAllHolds frees the holds', async () => {
    await inTempDir('tollgate.db', async (path) => {
      let time = 1_700_000_000_000;
      const now = () => time;
      const first = sqliteStore(path, { now });
      const account = await first.createAccount({ plan: 'pro' });
      await first.addCredits(account.id, 2_000, { note: 'top-up' });
      const { key, id: keyId } = await first.createKey(account.id, 'server');
      const hold = await first.hold(account.id, { micros: 500, ttlMs: 900_000 });
      const settled = await first.hold(account.id, { micros: 300, ttlMs: 900_000, requestId: 'req_1' });
      if (!hold.ok || !settled.ok) throw new Error('hold refused');
      await first.settle(settled.value.holdId, { micros: 250, meta: { model: 'fast' } });
      const entries = await first.entries(account.id);
      await first.close();
      await first.close();

      time += 1_000;
      const second = sqliteStore(path, { now });
      expect(await second.getAccount(account.id)).toEqual({ id: account.id, plan: 'pro', state: 'active' });
      expect(await second.getBalance(account.id)).toEqual({ balance: 1_750, held: 500, available: 1_250 });
      expect(await second.entries(account.id)).toEqual(entries);
      expect(entries.map((entry) => entry.micros)).toEqual([-250, 2_000]);
      expect((await second.findKey(await hashKey(key)))?.id).toBe(keyId);
      expect(await second.releaseAllHolds()).toBe(1);
      expect(await second.releaseAllHolds()).toBe(0);
      expect(await second.getBalance(account.id)).toEqual({ balance: 1_750, held: 0, available: 1_750 });
      // The dead process's request could still settle later: it is charged once.
      expect(await second.settle(hold.value.holdId, { micros: 100 })).toEqual({ charged: 100, already: false });
      expect(await second.settle(hold.value.holdId, { micros: 100 })).toEqual({ charged: 100, already: true });
      expect((await second.getBalance(account.id)).balance).toBe(1_650);
      await second.close();
    });
  });

  it('charges at restart what the dead process checkpointed, and releases the rest (releaseAllHolds)', async () => {
    await inTempDir('crash.db', async (path) => {
      const first = sqliteStore(path);
      const account = await first.createAccount({ plan: 'pro' });
      await first.addCredits(account.id, 1_000);
      const streaming = await first.hold(account.id, { micros: 400, ttlMs: 900_000, requestId: 'req_cut' });
      const silent = await first.hold(account.id, { micros: 300, ttlMs: 900_000 });
      if (!streaming.ok || !silent.ok) throw new Error('hold refused');
      expect(await first.checkpoint([{ holdId: streaming.value.holdId, micros: 150, ttlMs: 900_000 }])).toBe(1);
      // The process dies without closing the database: what was committed is on the file.
      const second = sqliteStore(path);
      expect(await second.releaseAllHolds()).toBe(2);
      expect(await second.releaseAllHolds()).toBe(0);
      const [charge] = await second.entries(account.id, { limit: 1 });
      expect(charge).toMatchObject({ micros: -150, kind: 'charge', holdId: streaming.value.holdId, requestId: 'req_cut', meta: { outcome: 'checkpoint' } });
      expect(await second.getBalance(account.id)).toEqual({ balance: 850, held: 0, available: 850 });
      // The cut stream's settle never comes now; if it did, it would charge nothing more.
      expect(await second.settle(streaming.value.holdId, { micros: 390 })).toEqual({ charged: 150, already: true });
      await Promise.all([first.close(), second.close()]);
    });
  });

  it('migrates a file of the first schema: open holds gain a checkpoint of 0 and keep their money', async () => {
    await inTempDir('v1.db', async (path) => {
      const old = new Database(path);
      old.exec(MIGRATIONS[0] ?? '');
      old.exec('PRAGMA user_version = 1');
      old.prepare("INSERT INTO accounts (id, plan, state, created_at) VALUES ('acc_old', 'pro', 'active', 1)").run();
      old.prepare("INSERT INTO entries (id, account_id, micros, kind, created_at) VALUES ('ent_1', 'acc_old', 1000, 'credit', 1)").run();
      old
        .prepare("INSERT INTO holds (id, account_id, micros, created_at, expires_at, request_id) VALUES ('hold_old', 'acc_old', 400, 1, 9e15, 'req_old')")
        .run();
      old.close();
      const store = sqliteStore(path);
      const version = new Database(path, { readonly: true });
      expect(version.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
      version.close();
      expect(await store.getBalance('acc_old')).toEqual({ balance: 1_000, held: 400, available: 600 });
      expect(await store.checkpoint([{ holdId: 'hold_old', micros: 250, ttlMs: 1_000 }])).toBe(1);
      expect(await store.releaseAllHolds()).toBe(1);
      expect(await store.getBalance('acc_old')).toEqual({ balance: 750, held: 0, available: 750 });
      await store.close();
      // Opening it again migrates nothing more.
      const again = sqliteStore(path);
      expect((await again.entries('acc_old')).map((entry) => entry.micros)).toEqual([-250, 1_000]);
      // What migration 3 added reads the old rows: no key, model or tokens on them, and usage counts them.
      expect((await again.entriesPage('acc_old')).items.map((entry) => [entry.micros, entry.keyId, entry.model, entry.promptTokens])).toEqual([
        [1_000, undefined, undefined, undefined],
        [-250, undefined, undefined, undefined],
      ]);
      expect(await again.usage({ accountId: 'acc_old', from: 0, to: Number.MAX_SAFE_INTEGER, groupBy: 'day' })).toEqual([
        { period: expect.any(Number), requests: 1, promptTokens: 0, completionTokens: 0, micros: 250 },
      ]);
      expect((await again.listAccounts()).items).toEqual([{ id: 'acc_old', plan: 'pro', state: 'active' }]);
      await again.close();
    });
  });

  it("migrates a file of schema 3 to key budgets: its keys have none, and a budget set on one counts the key's earlier charges", async () => {
    await inTempDir('v3.db', async (path) => {
      const old = new Database(path);
      for (const migration of MIGRATIONS.slice(0, 3)) old.exec(migration);
      old.exec('PRAGMA user_version = 3');
      old.prepare("INSERT INTO accounts (id, plan, state, created_at) VALUES ('acc_old', 'pro', 'active', 1)").run();
      old.prepare("INSERT INTO keys (id, account_id, name, hash, prefix, created_at) VALUES ('key_old', 'acc_old', 'old', 'h', 'sk_svc_abcd', 1)").run();
      old.prepare("INSERT INTO entries (id, account_id, micros, kind, created_at) VALUES ('ent_1', 'acc_old', 1000, 'credit', 1)").run();
      old.prepare("INSERT INTO entries (id, account_id, micros, kind, created_at, key_id) VALUES ('ent_2', 'acc_old', -300, 'charge', 2, 'key_old')").run();
      old.close();
      const store = sqliteStore(path, { now: () => 10 });
      expect((await store.getKey('key_old'))?.budget).toBeUndefined();
      expect((await store.listKeys('acc_old')).map((key) => key.budget)).toEqual([undefined]);
      expect((await store.setKeyBudget('key_old', { micros: 500, period: 'total' })).budget).toEqual({
        micros: 500,
        period: 'total',
        spent: 300,
        periodStart: 0,
      });
      expect(await store.hold('acc_old', { micros: 201, ttlMs: 1_000, keyId: 'key_old' })).toMatchObject({
        ok: false,
        error: { reason: 'key_budget', available: 200 },
      });
      await store.close();
    });
  });

  it('reads open holds through the partial indexes of open holds only, and checkpoints the WAL every 10,000 pages', async () => {
    await inTempDir('plan.db', async (path) => {
      const store = sqliteStore(path);
      const account = await store.createAccount({ plan: 'pro' });
      await store.addCredits(account.id, 1_000);
      const settled = await store.hold(account.id, { micros: 100, ttlMs: 60_000 });
      const open = await store.hold(account.id, { micros: 200, ttlMs: 60_000 });
      if (!settled.ok || !open.ok) throw new Error('hold refused');
      await store.settle(settled.value.holdId, { micros: 50 });
      const db = new Database(path);
      const plan = (sql: string) =>
        db
          .prepare(`EXPLAIN QUERY PLAN ${sql}`)
          .all()
          .map((row) => (row as { detail: string }).detail)
          .join('; ');
      expect(plan("SELECT sum(micros) FROM holds WHERE account_id = 'a' AND state = 'open' AND expires_at > 1")).toMatch(/USING (COVERING )?INDEX holds_open/);
      expect(plan("SELECT sum(micros) FROM holds WHERE account_id = 'a' AND state = 'open' AND expires_at > 1 AND key_id = 'k'")).toMatch(/INDEX holds_open/);
      expect(plan("SELECT id FROM holds WHERE state = 'open' AND expires_at <= 1 AND delivered_micros > 0")).toMatch(/INDEX holds_expiry/);
      // Only the open hold is in them.
      const indexed = (index: string) => (db.prepare(`SELECT count(*) AS n FROM holds INDEXED BY ${index} WHERE state = 'open'`).get() as { n: number }).n;
      expect([indexed('holds_open'), indexed('holds_expiry')]).toEqual([1, 1]);
      expect(db.prepare("SELECT sql FROM sqlite_master WHERE name = 'holds_open'").pluck().get()).toMatch(/WHERE state = 'open'/);
      db.close();
      await store.close();
      // A connection's own setting: the store sets it on the connection it opens.
      const pragmas: string[] = [];
      const recording = betterSqlite3Driver();
      const recorded = sqliteStore(path, {
        driver: {
          name: 'recording',
          open: (file) => {
            const opened = recording.open(file);
            const exec = (sql: string) => {
              pragmas.push(sql);
              opened.exec(sql);
            };
            return { exec, prepare: (sql) => opened.prepare(sql), close: () => opened.close() };
          },
        },
      });
      expect(pragmas).toContain('PRAGMA wal_autocheckpoint = 10000');
      await recorded.close();
    });
  });

  it('opens its connection in WAL, with a busy timeout, synchronous NORMAL and foreign keys on; flushes and closes it once', async () => {
    await inTempDir('settings.db', async (path) => {
      const better = betterSqlite3Driver();
      /** Opens the store with a driver that keeps its connection, to read the settings in effect on it. */
      const open = (options: { busyTimeoutMs?: number } = {}) => {
        let connection: SqliteDatabase | undefined;
        let closes = 0;
        const store = sqliteStore(path, {
          ...options,
          driver: {
            name: 'kept',
            open: (file) => {
              const opened = better.open(file);
              connection = opened;
              return {
                exec: (sql) => opened.exec(sql),
                prepare: (sql) => opened.prepare(sql),
                close: () => {
                  closes++;
                  opened.close();
                },
              };
            },
          },
        });
        const pragma = (name: string) => Object.values(connection?.prepare(`PRAGMA ${name}`).get() ?? {})[0];
        return { store, pragma, closes: () => closes };
      };
      const first = open();
      expect([first.pragma('journal_mode'), first.pragma('busy_timeout'), first.pragma('synchronous'), first.pragma('foreign_keys')]).toEqual([
        'wal',
        5_000,
        1,
        1,
      ]);
      const account = await first.store.createAccount({ plan: 'pro' });
      await first.store.addCredits(account.id, 1_000);
      // A hold queued in this turn's batch, then close at once: the close commits it.
      const held = first.store.hold(account.id, { micros: 300, ttlMs: 60_000 });
      await first.store.close();
      expect((await held).ok).toBe(true);
      await first.store.close();
      expect(first.closes()).toBe(1);
      for (const [given, set] of [
        [250, 250],
        [-5, 0],
        [1.7, 1],
      ] as const) {
        const other = open({ busyTimeoutMs: given });
        expect(other.pragma('busy_timeout')).toBe(set);
        await other.store.close();
      }
      const reader = new Database(path, { readonly: true });
      expect(reader.prepare("SELECT sum(micros) AS held FROM holds WHERE state = 'open'").get()).toEqual({ held: 300 });
      reader.close();
    });
  });

  it('checkpoints the WAL on a thread of its own with checkpointEveryMs, keeping the commit’s own as a backstop; close stops it first', async () => {
    await inTempDir('background.db', async (path, dir) => {
      const better = betterSqlite3Driver();
      const results: { busy: number; log: number; checkpointed: number }[] = [];
      let stops = 0;
      let connection: SqliteDatabase | undefined;
      const store = sqliteStore(path, {
        checkpointEveryMs: 50,
        driver: {
          name: 'observed',
          open: (file) => (connection = better.open(file)),
          backgroundCheckpoints: (file, intervalMs, events) => {
            expect([file, intervalMs]).toEqual([path, 50]);
            const thread = startCheckpointThread({
              modulePath: resolveModule('better-sqlite3'),
              path: file,
              intervalMs,
              startAtBytes: 256 * 1024,
              ...events,
              onCheckpoint: (result) => results.push(result),
            });
            return {
              stop: () => {
                stops++;
                return thread.stop();
              },
            };
          },
        },
      });
      const account = await store.createAccount({ plan: 'pro' });
      // Not started while the WAL is under startAtBytes: the commit's own checkpoint is as without one.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(statSync(`${path}-wal`).size).toBeLessThan(256 * 1024);
      expect(results).toEqual([]);
      expect(connection?.prepare('PRAGMA wal_autocheckpoint').get()).toEqual({ wal_autocheckpoint: 10_000 });
      for (let index = 0; index < 100; index++) await store.addCredits(account.id, 1 + index);
      // Started once the WAL passed it: the commit's checkpoint steps back to a backstop, and the
      // thread copies the WAL's frames into the file (a checkpoint that moved every frame there was).
      await expect.poll(() => connection?.prepare('PRAGMA wal_autocheckpoint').get(), { timeout: 5_000 }).toEqual({ wal_autocheckpoint: 100_000 });
      await expect.poll(() => results.some((result) => result.log > 0 && result.checkpointed === result.log), { timeout: 5_000 }).toBe(true);
      expect(results.every((result) => result.busy === 0)).toBe(true);
      // Two closes at once: the second resolves only once the connection is closed too (it waits for the first's thread).
      const closes = [store.close(), store.close()];
      await closes[1];
      expect(() => connection?.prepare('SELECT 1')).toThrow(/not open/);
      await closes[0];
      expect(stops).toBe(1);
      // The store's connection closed last: it checkpointed the rest and removed the WAL.
      expect(existsSync(`${path}-wal`)).toBe(false);
      const reader = new Database(path, { readonly: true });
      expect(reader.prepare('SELECT balance FROM accounts').get()).toEqual({ balance: 5_050 });
      reader.close();
      // Without the option, or on `:memory:`, no thread, and SQLite's checkpoint in the commit at 10,000 pages.
      for (const [file, options] of [
        [path, {}],
        [':memory:', { checkpointEveryMs: 50 }],
      ] as const) {
        let asked = 0;
        const plain = sqliteStore(file, {
          ...options,
          driver: {
            name: 'plain',
            open: (opened) => (connection = better.open(opened)),
            backgroundCheckpoints: () => {
              asked++;
              return undefined;
            },
          },
        });
        expect(asked).toBe(0);
        expect(connection?.prepare('PRAGMA wal_autocheckpoint').get()).toEqual({ wal_autocheckpoint: 10_000 });
        await plain.close();
      }
      // A thread that cannot start (here: no module at that path) ends: the commit's checkpoint is back at 10,000 pages.
      const failing = sqliteStore(path, {
        checkpointEveryMs: 50,
        driver: {
          name: 'failing',
          open: (file) => (connection = better.open(file)),
          backgroundCheckpoints: (file, intervalMs, events) =>
            startCheckpointThread({ modulePath: join(dir, 'missing.js'), path: file, intervalMs, ...events }),
        },
      });
      const failed = connection;
      expect(failed?.prepare('PRAGMA wal_autocheckpoint').get()).toEqual({ wal_autocheckpoint: 100_000 });
      await expect.poll(() => failed?.prepare('PRAGMA wal_autocheckpoint').get(), { timeout: 5_000 }).toEqual({ wal_autocheckpoint: 10_000 });
      await failing.close();
      // better-sqlite3's own driver has the thread; with a class passed in it cannot.
      expect(typeof betterSqlite3Driver().backgroundCheckpoints).toBe('function');
      expect(betterSqlite3Driver(Database).backgroundCheckpoints).toBeUndefined();
    });
  });

  it('takes the write lock first for every read-then-write, so a write of another process meanwhile is waited for, not an error', async () => {
    await inTempDir('locked.db', async (path) => {
      // Another process writes and keeps its write transaction open for 300 ms. A store transaction
      // begun meanwhile without the lock (DEFERRED) would read the older snapshot, then fail with
      // SQLITE_BUSY at its first write; IMMEDIATE waits for the lock (busy_timeout) and reads after.
      const script = `
        const db = new (require('better-sqlite3'))(process.argv[1]);
        db.exec('BEGIN IMMEDIATE');
        db.exec('UPDATE accounts SET state = state');
        process.stdout.write('locked\\n');
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
        db.exec('COMMIT');
        db.close();`;
      const lockedWhile = async <T>(run: () => Promise<T>): Promise<T> => {
        const child = spawn(process.execPath, ['-e', script, path], { stdio: ['ignore', 'pipe', 'inherit'] });
        const exited = new Promise((resolve) => child.once('exit', resolve));
        await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
        try {
          return await run();
        } finally {
          await exited;
        }
      };
      let time = 1_700_000_000_000;
      const store = sqliteStore(path, { now: () => time });
      const account = await store.createAccount({ plan: 'pro' });
      const { id: keyId } = await store.createKey(account.id, 'k');
      await store.addCredits(account.id, 1_000);
      const hold = await store.hold(account.id, { micros: 100, ttlMs: 1_000 });
      if (!hold.ok) throw new Error('hold refused');
      await store.checkpoint?.([{ holdId: hold.value.holdId, micros: 40, ttlMs: 1_000 }]);
      expect((await lockedWhile(() => store.addCredits(account.id, 500))).balance).toBe(1_500);
      expect(await lockedWhile(() => store.creditOnce(account.id, { micros: 7, idempotencyKey: 'once' }))).toMatchObject({ ok: true });
      expect(await lockedWhile(() => store.setAccountState(account.id, 'disabled'))).toMatchObject({ state: 'disabled' });
      expect(await lockedWhile(() => store.setKeyName(keyId, 'renamed'))).toMatchObject({ name: 'renamed' });
      expect(await lockedWhile(() => store.setKeyBudget(keyId, { micros: 1_000, period: 'day' }))).toMatchObject({ id: keyId });
      time += 2_000;
      // The expired hold's checkpoint is charged (40), under the other process's write.
      expect(await lockedWhile(() => store.releaseExpired())).toBe(1);
      expect(await store.getBalance(account.id)).toEqual({ balance: 1_467, held: 0, available: 1_467 });
      await store.close();
    });
  });

  it('refuses to rewrite or delete ledger entries', async () => {
    await inTempDir('x.db', async (path) => {
      const fileStore = sqliteStore(path);
      const other = await fileStore.createAccount({ plan: 'free' });
      await fileStore.addCredits(other.id, 10);
      const raw = new Database(path);
      expect(() => raw.prepare('UPDATE entries SET micros = 1000').run()).toThrow('ledger entries are append-only');
      expect(() => raw.prepare('DELETE FROM entries').run()).toThrow('ledger entries are append-only');
      raw.close();
      expect((await fileStore.getBalance(other.id)).balance).toBe(10);
      await fileStore.close();
    });
  });

  it('never holds more than the balance when several processes hold at once', async () => {
    await inTempDir('shared.db', async (path) => {
      const store = sqliteStore(path);
      const account = await store.createAccount({ plan: 'free' });
      await store.addCredits(account.id, 1_000);
      const worker = new URL('./sqlite-hold-worker.ts', import.meta.url).pathname;
      const run = () => promisify(execFile)(process.execPath, ['--import', 'tsx', worker, path, account.id, '80', '7'], { cwd: process.cwd() });
      const outputs = await Promise.all([run(), run(), run()]);
      const held = outputs.reduce((sum, output) => sum + (JSON.parse(output.stdout) as { held: number }).held, 0);
      expect(held).toBe(994);
      expect(await store.getBalance(account.id)).toEqual({ balance: 1_000, held: 994, available: 6 });
      await store.close();
    });
  }, 60_000);

  it("never holds more than a key's budget when several processes hold on that key at once", async () => {
    await inTempDir('shared.db', async (path) => {
      const store = sqliteStore(path);
      const account = await store.createAccount({ plan: 'free' });
      await store.addCredits(account.id, 100_000);
      const { id: key } = await store.createKey(account.id, 'shared');
      await store.setKeyBudget(key, { micros: 1_000, period: 'month' });
      const worker = new URL('./sqlite-hold-worker.ts', import.meta.url).pathname;
      const run = () => promisify(execFile)(process.execPath, ['--import', 'tsx', worker, path, account.id, '80', '7', key], { cwd: process.cwd() });
      const outputs = await Promise.all([run(), run(), run()]);
      const held = outputs.reduce((sum, output) => sum + (JSON.parse(output.stdout) as { held: number }).held, 0);
      expect(held).toBe(994);
      expect(await store.getBalance(account.id)).toEqual({ balance: 100_000, held: 994, available: 99_006 });
      expect(await store.hold(account.id, { micros: 7, ttlMs: 60_000, keyId: key })).toMatchObject({
        ok: false,
        error: { reason: 'key_budget', available: 6 },
      });
      await store.close();
    });
  }, 60_000);
});
