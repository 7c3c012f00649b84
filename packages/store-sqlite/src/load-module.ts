import { createRequire } from 'node:module';

/**
 * Loads a module by name, synchronously, when a driver first opens a file. Loading late is what
 * lets one package serve three runtimes: importing it on Bun never loads better-sqlite3 (a native
 * addon Bun and Deno cannot load), and on Node never asks for `bun:sqlite`. `require` rather than
 * `import()` keeps `sqliteStore` synchronous; Bun and Deno both provide `node:module`.
 */
export function loadModule(specifier: string): unknown {
  return createRequire(import.meta.url)(specifier);
}

/** Where a package's entry file is, as `require.resolve` finds it from here (for a worker thread to load it). */
export function resolveModule(specifier: string): string {
  return createRequire(import.meta.url).resolve(specifier);
}

/** Whether a package can be found from here, without loading it. */
export function isInstalled(specifier: string): boolean {
  try {
    resolveModule(specifier);
    return true;
  } catch {
    return false;
  }
}
