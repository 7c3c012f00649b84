/**
 * The driver must never end the process when a connection closes under a pending write (issue #20,
 * found by reliability/scenarios/postgres-restart.ts): postgres.js 3.4.x throws from a
 * `setImmediate` when its socket is gone, where no caller can catch it. bin/patch-postgres.mjs
 * (the root postinstall) guards it; this test fails if the guard is missing or stops working.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without declarations
import { patchConnection } from '../bin/patch-postgres.mjs';
import { findPostgresBin, type PostgresServer, startPostgres } from '../test/postgres-server';
import { tcpProxy } from '../test/tcp-proxy';

describe('bin/patch-postgres.mjs', () => {
  it('has guarded every build of the installed driver', () => {
    const entry = createRequire(import.meta.url).resolve('postgres');
    const driver = entry.slice(0, entry.lastIndexOf('/postgres/') + '/postgres'.length);
    for (const build of ['src', 'cjs/src', 'cf/src']) {
      expect(readFileSync(join(driver, build, 'connection.js'), 'utf8')).toContain('/* tollgate: nextWrite guard */');
    }
  });

  it('patches once, and refuses a driver whose code it does not know', () => {
    const source = '  function nextWrite(fn) {\n    const x = socket.write(chunk, fn)\n  }\n    incomings = null\n    clearImmediate(nextWriteTimer)\n';
    const patched = patchConnection(source, 'x.js');
    expect(patched).toContain('if (socket === null) {');
    expect(patched).toContain("error(Errors.connection('CONNECTION_CLOSED', options))");
    expect(patched).toContain('clearImmediate(nextWriteTimer)\n    chunk = nextWriteTimer = null');
    expect(patchConnection(patched, 'x.js')).toBeUndefined();
    expect(() => patchConnection('function nextWrite() {}', 'y.js')).toThrow(/y\.js: the postgres driver/);
  });
});

const installed = findPostgresBin() !== undefined;

(installed ? describe : describe.skip)('the postgres driver when its connection closes', () => {
  let pg: PostgresServer | undefined;
  afterAll(async () => {
    await pg?.stop();
  });

  it('rejects a query on a connection whose socket closed (CONNECTION_CLOSED), and serves again after', async () => {
    pg = await startPostgres();
    const direct = new URL(await pg.createDatabase('guard'));
    const gate = await tcpProxy({ host: direct.hostname, port: Number(direct.port) });
    const url = new URL(direct);
    url.port = String(gate.port());
    const sql = postgres(url.toString(), { max: 2, onnotice: () => {}, backoff: () => 0.2 });
    try {
      // A reserved connection stays pinned after its socket dies: the next small write is deferred
      // to an immediate that finds no socket (unguarded: an uncaught TypeError ends the process).
      const reserved = await sql.reserve();
      expect(await reserved`SELECT 1 AS one`).toEqual([{ one: 1 }]);
      await gate.down();
      await new Promise((resolve) => setTimeout(resolve, 200));
      await expect(reserved`SELECT 2 AS two`).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' });
      reserved.release();
      await gate.up();
      await expect
        .poll(
          async () =>
            sql`SELECT 3 AS three`.then(
              (rows) => rows[0]?.three,
              () => undefined,
            ),
          { timeout: 10_000 },
        )
        .toBe(3);
    } finally {
      await sql.end({ timeout: 1 });
      await gate.down();
    }
  }, 60_000);
});
