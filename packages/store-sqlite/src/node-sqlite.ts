/**
 * `@tollgate/store-sqlite/node-sqlite`: the store on node:sqlite (Node >= 22.13 and Deno), chosen by the import rather than
 * by the runtime. Nothing of another driver is loaded.
 */
import { nodeSqliteDriver } from './node-sqlite-driver';
import { type SqliteStore, type SqliteStoreOptions, sqliteStore as storeWith } from './sqlite-store';

/**
 * The SQLite store on node:sqlite: `sqliteStore` of the package's main entry with its driver fixed.
 *
 * @example
 * import { sqliteStore } from '@tollgate/store-sqlite/node-sqlite';
 * const store = sqliteStore('./data/tollgate.db');
 */
export function sqliteStore(path: string, options: Omit<SqliteStoreOptions, 'driver'> = {}): SqliteStore {
  return storeWith(path, { ...options, driver: nodeSqliteDriver() });
}

export { nodeSqliteDriver };
export type { SqliteStore, SqliteStoreOptions };
export type { SqliteDatabase, SqliteDriver } from './sqlite-database';
