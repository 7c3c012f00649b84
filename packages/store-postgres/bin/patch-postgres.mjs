#!/usr/bin/env node
/**
 * `tollgate-patch-postgres [project dir]` (this repository's root postinstall; embedders run it
 * from their own postinstall): guards the `postgres` driver (postgres.js 3.4.x) against a write on a closed
 * connection, which otherwise ends the whole process.
 *
 * The driver defers small writes behind `setImmediate(nextWrite)`. When the connection closes
 * before that callback runs (a database restart, a proxy dropping idle connections), `closed()`
 * has set `socket = null`, and `nextWrite` throws `TypeError: Cannot read properties of null
 * (reading 'write')` from the immediate: no caller can catch it, and Node exits. The reliability
 * suite's PostgreSQL restart scenario (the repository's reliability/scenarios/postgres-restart.ts) hit it about one
 * run in five. Upstream: porsager/postgres issues 1066, 1154 and 1208, fixes 1168, 1176 and 1209,
 * unreleased as of 3.4.9.
 *
 * The patch does what upstream's 1209 does: a `nextWrite` without a socket rejects the queries it
 * carried with the driver's own CONNECTION_CLOSED error (a catchable rejection, which the store
 * turns into the spec's 503) instead of throwing; and `closed()` forgets the dead connection's
 * pending write and timer, so a reconnected socket never sends a stale half-query and later small
 * writes are flushed again (a cleared but non-null timer stopped every later flush).
 *
 * Idempotent; a no-op when the driver is absent or already fixed. If the driver's code changed
 * so that the patch no longer applies, it says so and exits 1 rather than leave the crash in.
 * See this package's README.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const MARK = '/* tollgate: nextWrite guard */';

const NEXT_WRITE = `  function nextWrite(fn) {
    const x = socket.write(chunk, fn)`;
const NEXT_WRITE_GUARDED = `  function nextWrite(fn) {
    ${MARK}
    if (socket === null) {
      nextWriteTimer !== null && clearImmediate(nextWriteTimer)
      chunk = nextWriteTimer = null
      error(Errors.connection('CONNECTION_CLOSED', options))
      return false
    }
    const x = socket.write(chunk, fn)`;

const CLOSED = `    incomings = null
    clearImmediate(nextWriteTimer)`;
const CLOSED_FORGETS = `    incomings = null
    clearImmediate(nextWriteTimer)
    chunk = nextWriteTimer = null`;

/**
 * The patched text of one connection.js, or undefined when it is patched already.
 * @param {string} source
 * @param {string} file for the error message
 * @returns {string | undefined}
 */
export function patchConnection(source, file) {
  if (source.includes(MARK)) return undefined;
  if (!source.includes(NEXT_WRITE) || !source.includes(CLOSED)) {
    throw new Error(
      `${file}: the postgres driver's write scheduler is not the one this patch knows (porsager/postgres 3.4.x); review scripts/patch-postgres.mjs`,
    );
  }
  return source.replace(NEXT_WRITE, NEXT_WRITE_GUARDED).replace(CLOSED, CLOSED_FORGETS);
}

/** Patches every build of the driver (ESM, CommonJS, Cloudflare) in `root`'s node_modules. */
export function patchPostgres(root) {
  const driver = join(root, 'node_modules', 'postgres');
  if (!existsSync(driver)) return [];
  const patched = [];
  for (const build of ['src', 'cjs/src', 'cf/src']) {
    const file = join(driver, build, 'connection.js');
    if (!existsSync(file)) continue;
    const next = patchConnection(readFileSync(file, 'utf8'), file);
    if (next === undefined) continue;
    writeFileSync(file, next);
    patched.push(file);
  }
  return patched;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    const patched = patchPostgres(resolve(process.argv[2] ?? process.cwd()));
    if (patched.length > 0) console.log(`patch-postgres: guarded nextWrite in ${patched.length} build(s) of the postgres driver`);
  } catch (error) {
    console.error(`patch-postgres: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}
