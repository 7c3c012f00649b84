/**
 * `@tollgate/store-sqlite/bun`: the store on bun:sqlite (Bun), chosen by the import rather than
 * by the runtime. Nothing of another driver is loaded.
 */
import { bunSqliteDriver } from './bun-sqlite-driver';
import { type SqliteStore, type SqliteStoreOptions, sqliteStore as storeWith } from './sqlite-store';

/**
 * The SQLite store on bun:sqlite: `sqliteStore` of the package's main entry with its driver fixed.
 *
 * @example
 * import { sqliteStore } from '@tollgate/store-sqlite/bun';
 * const store = sqliteStore('./data/tollgate.db');
 */
export function sqliteStore(path: string, options: Omit<SqliteStoreOptions, 'driver'> = {}): SqliteStore {
  return storeWith(path, { ...options, driver: bunSqliteDriver() });
}

export { bunSqliteDriver };
export type { SqliteStore, SqliteStoreOptions };
export type { SqliteDatabase, SqliteDriver } from './sqlite-database';
