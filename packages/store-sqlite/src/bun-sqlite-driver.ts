import { type NativeConstructor, loadMember, nativeDriver } from './native-driver';
import type { SqliteDriver } from './sqlite-database';

/**
 * The `bun:sqlite` driver (`Database`): Bun only.
 *
 * @example
 * import { Database } from 'bun:sqlite';
 * const store = sqliteStore('./data/tollgate.db', { driver: bunSqliteDriver(Database) });
 */
export function bunSqliteDriver(Database?: NativeConstructor): SqliteDriver {
  return nativeDriver('bun:sqlite', () => Database ?? loadMember('bun:sqlite', 'Database', 'it exists only on Bun'));
}
