/**
 * A PostgreSQL restart must not leave the store waiting long after the server is back (issue #20,
 * found by reliability/scenarios/postgres-restart.ts): the driver's default reconnect backoff grows
 * to 7-20 s after a few refused connections, so requests hung for up to 20 s after recovery. The
 * outage is a TCP proxy in front of a real server, taken down and brought back on the same port.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { findPostgresBin, startPostgres, type PostgresServer } from '../test/postgres-server';
import { tcpProxy } from '../test/tcp-proxy';
import { postgresStore } from './postgres-store';

const installed = findPostgresBin() !== undefined;

(installed ? describe : describe.skip)('postgresStore across a database outage', () => {
  let pg: PostgresServer | undefined;
  afterAll(async () => {
    await pg?.stop();
  });

  it('fails fast while the database is down and serves within about a second once it is back', async () => {
    pg = await startPostgres();
    const direct = new URL(await pg.createDatabase('reconnect'));
    const gate = await tcpProxy({ host: direct.hostname, port: Number(direct.port) });
    const url = new URL(direct);
    url.port = String(gate.port());
    const store = postgresStore(url.toString(), { max: 2 });
    try {
      const account = await store.createAccount({ plan: 'free' });
      await gate.down();
      // Enough refused connections that the driver's default backoff (3^n / 100 s, up to 20 s) would pass seconds.
      for (let attempt = 0; attempt < 8; attempt++) {
        const started = performance.now();
        await expect(store.getBalance(account.id)).rejects.toThrow();
        expect(performance.now() - started).toBeLessThan(2_000);
      }
      await gate.up();
      const started = performance.now();
      await expect(store.getBalance(account.id)).resolves.toEqual({ balance: 0, held: 0, available: 0 });
      expect(performance.now() - started).toBeLessThan(1_500);
    } finally {
      await store.close();
      await gate.down();
    }
  }, 60_000);
});
