import { betterSqlite3Driver } from './better-sqlite3-driver';
import { bunSqliteDriver } from './bun-sqlite-driver';
import { isInstalled } from './load-module';
import { nodeSqliteDriver } from './node-sqlite-driver';
import type { SqliteDriver } from './sqlite-database';

/**
 * The driver for the runtime this runs on: bun:sqlite on Bun, node:sqlite on Deno, and on Node
 * better-sqlite3 when it is installed (Node 20 has nothing else) or else node:sqlite (Node >= 22.13).
 * Nothing is loaded until the driver opens a file.
 *
 * @example
 * runtimeDriver().name; // 'bun:sqlite' under Bun
 */
export function runtimeDriver(): SqliteDriver {
  if ('Bun' in globalThis) return bunSqliteDriver();
  if ('Deno' in globalThis) return nodeSqliteDriver();
  return isInstalled('better-sqlite3') ? betterSqlite3Driver() : nodeSqliteDriver();
}
