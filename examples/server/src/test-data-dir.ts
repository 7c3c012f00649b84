/**
 * Test helper of the reference server's suites: fresh data directories under the system's temp
 * directory, every one removed once the test file's tests are over.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/**
 * Returns a function that makes a new data directory named `tollgate-<name>-…` each call; call it
 * once at a test file's top level (it registers the file's `afterAll` that removes them).
 *
 * @example
 * const dataDir = tempDataDirs('admin');
 * const config = loadConfig({ PORT: '0', TOLLGATE_DATA_DIR: dataDir() });
 */
export function tempDataDirs(name: string): () => string {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(join(tmpdir(), `tollgate-${name}-`));
    dirs.push(dir);
    return dir;
  };
}
