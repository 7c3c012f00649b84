import { type NativeConstructor, loadMember, nativeDriver } from './native-driver';
import type { SqliteDriver } from './sqlite-database';

/**
 * The `node:sqlite` driver (`DatabaseSync`): Deno 2.2 and up, and Node 22.13 and up (earlier 22.x
 * only with `--experimental-sqlite`). Node prints an ExperimentalWarning when it first loads it.
 *
 * @example
 * import { DatabaseSync } from 'node:sqlite';
 * const store = sqliteStore('./data/tollgate.db', { driver: nodeSqliteDriver(DatabaseSync) });
 */
export function nodeSqliteDriver(DatabaseSync?: NativeConstructor): SqliteDriver {
  return nativeDriver(
    'node:sqlite',
    () => DatabaseSync ?? loadMember('node:sqlite', 'DatabaseSync', 'it needs Node >= 22.13 or Deno >= 2.2; on Node 20 install better-sqlite3'),
  );
}
