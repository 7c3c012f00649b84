import { startCheckpointThread } from './checkpoint-thread';
import { resolveModule } from './load-module';
import { type NativeConstructor, loadMember, nativeDriver } from './native-driver';
import { type SqliteDriver, WAL_AUTOCHECKPOINT_PAGES } from './sqlite-database';

/**
 * The WAL size at which the checkpoint thread starts: the pages (of 4 KiB) at which the store
 * checkpoints inside a commit. A store that never writes that much never starts it; one that does
 * has its first checkpoint in a commit, then none.
 */
const START_AT_BYTES = WAL_AUTOCHECKPOINT_PAGES * 4_096;

/**
 * The better-sqlite3 driver: Node 20 and up (a native addon; Bun and Deno cannot load it).
 * better-sqlite3 is an optional peer dependency, loaded on the first open; pass its `Database`
 * class to load it yourself (a bundler then sees the import). When it loads the module itself it
 * can also checkpoint on a worker thread (`backgroundCheckpoints`, which `checkpointEveryMs` of
 * the store asks for); with a class of yours it cannot (a class does not cross threads).
 *
 * @example
 * import Database from 'better-sqlite3';
 * const store = sqliteStore('./data/tollgate.db', { driver: betterSqlite3Driver(Database) });
 */
export function betterSqlite3Driver(Database?: NativeConstructor): SqliteDriver {
  const driver = nativeDriver(
    'better-sqlite3',
    () => Database ?? loadMember('better-sqlite3', undefined, 'install it (npm install better-sqlite3), or on Node >= 22.13 use nodeSqliteDriver()'),
  );
  if (Database !== undefined) return driver;
  return {
    ...driver,
    backgroundCheckpoints: (path, intervalMs, events) =>
      startCheckpointThread({ modulePath: resolveModule('better-sqlite3'), path, intervalMs, startAtBytes: START_AT_BYTES, ...events }),
  };
}
