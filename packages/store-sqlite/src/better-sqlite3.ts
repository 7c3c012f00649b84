/**
 * `@tollgate/store-sqlite/better-sqlite3`: the store on better-sqlite3 (Node >= 20, with better-sqlite3 installed), chosen by the import rather than
 * by the runtime. Nothing of another driver is loaded.
 */
import { betterSqlite3Driver } from './better-sqlite3-driver';
import { type SqliteStore, type SqliteStoreOptions, sqliteStore as storeWith } from './sqlite-store';

/**
 * The SQLite store on better-sqlite3: `sqliteStore` of the package's main entry with its driver fixed.
 *
 * @example
 * import { sqliteStore } from '@tollgate/store-sqlite/better-sqlite3';
 * const store = sqliteStore('./data/tollgate.db');
 */
export function sqliteStore(path: string, options: Omit<SqliteStoreOptions, 'driver'> = {}): SqliteStore {
  return storeWith(path, { ...options, driver: betterSqlite3Driver() });
}

export { betterSqlite3Driver };
export type { SqliteStore, SqliteStoreOptions };
export type { SqliteDatabase, SqliteDriver } from './sqlite-database';
