import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isPlan } from '@tollgate/core';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { betterSqlite3Driver } from './better-sqlite3-driver';
import { bunSqliteDriver } from './bun-sqlite-driver';
import { nativeDatabase } from './native-database';
import { runtimeDriver } from './runtime-driver';
import type { SqliteDriver } from './sqlite-database';
import { column } from './sqlite-row';
import { sqliteStore } from './sqlite-store';
import { transaction } from './sqlite-transaction';

describe('SQLite drivers', () => {
  it('picks better-sqlite3 on Node when it is installed', () => {
    expect(runtimeDriver().name).toBe('better-sqlite3');
  });

  it('uses an injected driver, and its own database class', async () => {
    const opened: string[] = [];
    const driver: SqliteDriver = {
      name: 'counting',
      open: (path) => {
        opened.push(path);
        return betterSqlite3Driver(Database).open(path);
      },
    };
    const store = sqliteStore(':memory:', { driver });
    const account = await store.createAccount({ plan: 'free' });
    expect(await store.addCredits(account.id, 5)).toEqual({ balance: 5, held: 0, available: 5 });
    await store.close();
    await store.close();
    expect(opened).toEqual([':memory:']);
  });

  it("builds another runtime's driver without loading it, and says why it cannot open", () => {
    const driver = bunSqliteDriver();
    expect(driver.name).toBe('bun:sqlite');
    expect(() => driver.open(':memory:')).toThrow('cannot load bun:sqlite: it exists only on Bun');
  });

  it('refuses a driver that returns integers as BigInt rather than misread money', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-sqlite-'));
    const path = join(dir, 'big.db');
    try {
      const store = sqliteStore(path);
      const account = await store.createAccount({ plan: 'free' });
      await store.addCredits(account.id, 5);
      await store.close();
      const bigints: SqliteDriver = { name: 'bigint', open: (file) => nativeDatabase(new Database(file).defaultSafeIntegers(true)) };
      expect(() => sqliteStore(path, { driver: bigints })).toThrow('column user_version: expected a safe integer, got bigint');
      // Every column the store reads is checked the same way.
      const raw = bigints.open(path);
      const row = raw.prepare('SELECT balance, plan FROM accounts').get();
      raw.close();
      expect(row).toEqual({ balance: 5n, plan: 'free' });
      expect(() => column.integer(row!, 'balance')).toThrow('column balance: expected a safe integer, got bigint');
      expect(() => column.text(row!, 'balance')).toThrow('column balance: expected text, got bigint');
      expect(() => column.oneOf({ plan: 'gold' }, 'plan', isPlan)).toThrow('column plan: unexpected value gold');
      expect(column.optionalInteger({ n: null }, 'n')).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('rolls a failed transaction back, and the next one runs', () => {
    const db = betterSqlite3Driver().open(':memory:');
    db.exec('CREATE TABLE t (n INTEGER NOT NULL)');
    const insert = db.prepare('INSERT INTO t (n) VALUES (?)');
    const count = db.prepare('SELECT count(*) AS n FROM t');
    expect(() =>
      transaction(db, 'IMMEDIATE', () => {
        insert.run(1);
        throw new Error('midway');
      }),
    ).toThrow('midway');
    expect(count.get()).toEqual({ n: 0 });
    expect(transaction(db, 'IMMEDIATE', () => insert.run(2).changes)).toBe(1);
    expect(count.get()).toEqual({ n: 1 });
    expect(db.prepare('SELECT n FROM t WHERE n = ?').get(3)).toBeUndefined();
    db.close();
  });
});
