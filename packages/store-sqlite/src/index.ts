export { sqliteStore } from './sqlite-store';
export type { SqliteStore, SqliteStoreOptions } from './sqlite-store';
export type {
  BackgroundCheckpointEvents,
  BackgroundCheckpoints,
  SqliteDatabase,
  SqliteDriver,
  SqliteRow,
  SqliteStatement,
  SqliteValue,
} from './sqlite-database';
export { runtimeDriver } from './runtime-driver';
export { betterSqlite3Driver } from './better-sqlite3-driver';
export { nodeSqliteDriver } from './node-sqlite-driver';
export { bunSqliteDriver } from './bun-sqlite-driver';
export { nativeDatabase } from './native-database';
export type { NativeDatabase, NativeStatement } from './native-database';
export type { NativeConstructor } from './native-driver';
