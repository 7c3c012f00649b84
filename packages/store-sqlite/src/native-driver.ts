import { loadModule } from './load-module';
import { type NativeDatabase, nativeDatabase } from './native-database';
import type { SqliteDriver } from './sqlite-database';

/** A native database class: better-sqlite3's `Database`, node:sqlite's `DatabaseSync`, bun:sqlite's `Database`. */
export type NativeConstructor = new (path: string) => NativeDatabase;

/**
 * A driver that opens files with a native database class, found by `load` on the first open (so a
 * driver for another runtime can be built, and only fails if it is used).
 */
export function nativeDriver(name: string, load: () => unknown): SqliteDriver {
  let Database: unknown;
  return {
    name,
    open(path) {
      Database ??= load();
      if (typeof Database !== 'function') throw new TypeError(`${name}: no database class to open ${path} with`);
      const native: unknown = Reflect.construct(Database, [path]);
      if (!isNativeDatabase(native)) throw new TypeError(`${name}: the database class did not return a database`);
      return nativeDatabase(native);
    },
  };
}

/** Loads `specifier` and takes `member` of it (or the module itself), explaining a failure with `hint`. */
export function loadMember(specifier: string, member: string | undefined, hint: string): unknown {
  let loaded: unknown;
  try {
    loaded = loadModule(specifier);
  } catch (error) {
    throw new Error(`cannot load ${specifier}: ${hint}`, { cause: error });
  }
  return member === undefined || (typeof loaded !== 'object' && typeof loaded !== 'function') || loaded === null ? loaded : Reflect.get(loaded, member);
}

function isNativeDatabase(value: unknown): value is NativeDatabase {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof Reflect.get(value, 'exec') === 'function' &&
    typeof Reflect.get(value, 'prepare') === 'function' &&
    typeof Reflect.get(value, 'close') === 'function'
  );
}
