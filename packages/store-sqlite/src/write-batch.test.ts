import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { betterSqlite3Driver } from './better-sqlite3-driver';
import type { SqliteDatabase } from './sqlite-database';
import { sqliteStore } from './sqlite-store';
import { writeBatch } from './write-batch';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A database file with a table `t(v)`, opened through the store's driver, and its path. */
function openFile(): { db: SqliteDatabase; path: string } {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-batch-'));
  dirs.push(dir);
  const path = join(dir, 'batch.db');
  const db = betterSqlite3Driver().open(path);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA busy_timeout = 0');
  db.exec('CREATE TABLE t (v INTEGER NOT NULL UNIQUE)');
  return { db, path };
}

/** Every `v` in `t`, as another connection sees it (only committed rows). */
function committed(path: string): number[] {
  const other = new Database(path, { readonly: true });
  try {
    return other
      .prepare('SELECT v FROM t ORDER BY v')
      .all()
      .map((row) => (row as { v: number }).v);
  } finally {
    other.close();
  }
}

describe('writeBatch', () => {
  it('commits the writes queued in one turn together, after the turn, each seeing the ones before it', async () => {
    const { db, path } = openFile();
    const batch = writeBatch(db);
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    const count = db.prepare('SELECT count(*) AS n FROM t');
    const seen: number[] = [];
    const writes = [1, 2, 3].map((v) =>
      batch.run(() => {
        seen.push((count.get() as { n: number }).n);
        insert.run(v);
        return v * 10;
      }),
    );
    // Nothing runs, let alone commits, before the turn ends.
    expect(seen).toEqual([]);
    expect(committed(path)).toEqual([]);
    expect(await Promise.all(writes)).toEqual([10, 20, 30]);
    expect(seen).toEqual([0, 1, 2]);
    expect(committed(path)).toEqual([1, 2, 3]);
    db.close();
  });

  it('undoes a failed write alone: its own statements roll back, the others of its batch commit', async () => {
    const { db, path } = openFile();
    const batch = writeBatch(db);
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    const first = batch.run(() => insert.run(1));
    const failed = batch.run(() => {
      insert.run(2);
      insert.run(1); // UNIQUE: throws after its first insert went in
    });
    const third = batch.run(() => insert.run(3));
    await expect(failed).rejects.toThrow(/UNIQUE/);
    await first;
    await third;
    expect(committed(path)).toEqual([1, 3]);
    db.close();
  });

  it('rolls a lone failed write back whole', async () => {
    const { db, path } = openFile();
    const batch = writeBatch(db);
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    await expect(
      batch.run(() => {
        insert.run(5);
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(committed(path)).toEqual([]);
    await batch.run(() => insert.run(6));
    expect(committed(path)).toEqual([6]);
    db.close();
  });

  it('fails every write of the batch when the write lock cannot be had, and runs none of them', async () => {
    const { db, path } = openFile();
    const batch = writeBatch(db);
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    const locker = new Database(path);
    locker.exec('BEGIN IMMEDIATE');
    let ran = 0;
    const writes = [1, 2].map((v) =>
      batch.run(() => {
        ran++;
        insert.run(v);
      }),
    );
    const outcomes = await Promise.allSettled(writes);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
    expect(String((outcomes[0] as PromiseRejectedResult).reason)).toMatch(/locked|busy/i);
    expect(ran).toBe(0);
    locker.exec('ROLLBACK');
    locker.close();
    // The next batch goes through.
    await batch.run(() => insert.run(3));
    expect(committed(path)).toEqual([3]);
    db.close();
  });

  it('fails the whole batch with the write’s own error when its savepoint cannot be undone', async () => {
    const { db, path } = openFile();
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    // A database whose ROLLBACK TO fails, as it does once SQLite has ended the transaction itself
    // (SQLITE_FULL, SQLITE_IOERR): the writes before the failed one are then gone as well.
    const broken: SqliteDatabase = {
      exec: (sql) => db.exec(sql),
      prepare: (sql) =>
        sql.startsWith('ROLLBACK TO')
          ? {
              run: () => {
                throw new Error('no transaction is active');
              },
              get: () => undefined,
              all: () => [],
            }
          : db.prepare(sql),
      close: () => db.close(),
    };
    const batch = writeBatch(broken);
    const writes = [
      batch.run(() => insert.run(1)),
      batch.run(() => {
        throw new Error('disk full');
      }),
      batch.run(() => insert.run(3)),
    ];
    const outcomes = await Promise.allSettled(writes);
    expect(outcomes.map((outcome) => (outcome.status === 'rejected' ? String(outcome.reason) : 'ok'))).toEqual([
      'Error: disk full',
      'Error: disk full',
      'Error: disk full',
    ]);
    expect(committed(path)).toEqual([]);
    db.close();
  });

  it('never reports a write done that its RELEASE failed to keep, nor shifts the others’ outcomes', async () => {
    const { db, path } = openFile();
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    // A RELEASE that fails once (SQLITE_NOMEM or an I/O error while the transaction stays open):
    // the write it ends is then undone by its ROLLBACK TO, so it must not be reported done.
    let releases = 0;
    const flaky: SqliteDatabase = {
      exec: (sql) => db.exec(sql),
      prepare: (sql) => {
        const statement = db.prepare(sql);
        if (!sql.startsWith('RELEASE')) return statement;
        return {
          run: (...params) => {
            releases++;
            if (releases === 2) throw new Error('out of memory');
            return statement.run(...params);
          },
          get: (...params) => statement.get(...params),
          all: (...params) => statement.all(...params),
        };
      },
      close: () => db.close(),
    };
    const batch = writeBatch(flaky);
    const writes = [1, 2, 3].map((v) => batch.run(() => insert.run(v).changes));
    const outcomes = await Promise.allSettled(writes);
    const reported = outcomes.map((outcome) => (outcome.status === 'rejected' ? String(outcome.reason) : 'ok'));
    const kept = committed(path);
    // The failed RELEASE undid the second write alone.
    expect(kept).toEqual([1, 3]);
    // Each write is reported done exactly when its row is on disk.
    expect(reported).toEqual([1, 2, 3].map((v) => (kept.includes(v) ? 'ok' : 'Error: out of memory')));
    db.close();
  });

  it('flush commits what is queued at once', async () => {
    const { db, path } = openFile();
    const batch = writeBatch(db);
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    const write = batch.run(() => insert.run(7));
    batch.flush();
    expect(committed(path)).toEqual([7]);
    await write;
    batch.flush(); // nothing queued: nothing happens
    db.close();
  });
});

describe('sqliteStore with batched writes', () => {
  it('every other call first commits the writes queued before it (read your writes)', async () => {
    const store = sqliteStore(':memory:');
    const account = await store.createAccount({ plan: 'pro' });
    await store.addCredits(account.id, 1_000);
    const hold = await store.hold(account.id, { micros: 400, ttlMs: 60_000 });
    if (!hold.ok) throw new Error('hold refused');
    const settling = store.settle(hold.value.holdId, { micros: 300 });
    // Not awaited: the settle is queued, and the reads below must see it.
    expect(await store.getBalance(account.id)).toEqual({ balance: 700, held: 0, available: 700 });
    expect((await store.entries(account.id)).map((entry) => entry.micros)).toEqual([-300, 1_000]);
    expect(await settling).toEqual({ charged: 300, already: false });
    const second = store.hold(account.id, { micros: 100, ttlMs: 60_000 });
    expect(await store.getBalance(account.id)).toEqual({ balance: 700, held: 100, available: 600 });
    expect((await second).ok).toBe(true);
    await store.close();
  });

  it('close commits what is queued', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-batch-'));
    dirs.push(dir);
    const path = join(dir, 'tollgate.db');
    const first = sqliteStore(path);
    const account = await first.createAccount({ plan: 'pro' });
    await first.addCredits(account.id, 1_000);
    const held = first.hold(account.id, { micros: 250, ttlMs: 60_000 });
    await first.close();
    expect((await held).ok).toBe(true);
    const second = sqliteStore(path);
    expect(await second.getBalance(account.id)).toEqual({ balance: 1_000, held: 250, available: 750 });
    await second.close();
  });

  it('holds made in one turn never take more than the balance', async () => {
    const store = sqliteStore(':memory:');
    const account = await store.createAccount({ plan: 'pro' });
    await store.addCredits(account.id, 1_000);
    const results = await Promise.all(Array.from({ length: 50 }, () => store.hold(account.id, { micros: 30, ttlMs: 60_000 })));
    const held = results.reduce((sum, result) => sum + (result.ok ? result.value.micros : 0), 0);
    expect(held).toBe(1_000 - (1_000 % 30));
    expect(results.filter((result) => result.ok)).toHaveLength(33);
    expect(await store.getBalance(account.id)).toEqual({ balance: 1_000, held, available: 1_000 - held });
    await store.close();
  });
});
