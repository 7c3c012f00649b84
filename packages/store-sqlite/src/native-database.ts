import type { SqliteDatabase, SqliteRow, SqliteValue } from './sqlite-database';

/**
 * A statement of better-sqlite3, node:sqlite or bun:sqlite: the calls the adapter makes. Parameters
 * are `unknown[]` (methods compare their parameters both ways) so each library's own typings, with
 * named-parameter overloads, still fit; the adapter binds only {@link SqliteValue}s.
 */
export interface NativeStatement {
  /** Runs a write. */
  run(...params: unknown[]): { changes: number | bigint };
  /** The first row: `undefined` (better-sqlite3, node:sqlite) or `null` (bun:sqlite) when none. */
  get(...params: unknown[]): unknown;
  /** Every row. */
  all(...params: unknown[]): unknown[];
}

/**
 * A database of better-sqlite3 (`Database`), node:sqlite (`DatabaseSync`) or bun:sqlite
 * (`Database`), typed by the calls the adapter makes, so no driver's types are needed to build
 * this package and any of the three (or a look-alike) can be handed in.
 */
export interface NativeDatabase {
  /** Runs statements that return nothing. */
  exec(sql: string): unknown;
  /** Prepares a statement. */
  prepare(sql: string): NativeStatement;
  /** Closes the database. */
  close(): unknown;
}

/**
 * Wraps an open native database in the store's {@link SqliteDatabase}: the three drivers differ
 * only in what `get` returns for no row and in how `changes` is typed, and both are evened out here.
 *
 * @example
 * import Database from 'better-sqlite3';
 * const store = sqliteStore('ignored', { driver: { name: 'mine', open: () => nativeDatabase(new Database('x.db')) } });
 */
export function nativeDatabase(native: NativeDatabase): SqliteDatabase {
  return {
    exec(sql) {
      native.exec(sql);
    },
    prepare(sql) {
      const statement = native.prepare(sql);
      return {
        run: (...params) => ({ changes: Number(statement.run(...params).changes) }),
        get: (...params) => {
          const row = statement.get(...params);
          return isRow(row) ? row : undefined;
        },
        all: (...params) => statement.all(...params).filter(isRow),
      };
    },
    close() {
      native.close();
    },
  };
}

function isRow(value: unknown): value is SqliteRow {
  return typeof value === 'object' && value !== null;
}
