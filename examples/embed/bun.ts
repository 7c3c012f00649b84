// Bun: `bun bun.ts`. The SQLite store runs on bun:sqlite here.
import { sqliteStore } from '@tollgate/store-sqlite';
import { demoGateway } from './gateway.ts';

const store = sqliteStore(Bun.env.TOLLGATE_DB ?? 'tollgate.db');
const { gateway, demoKey } = await demoGateway(store);

const server = Bun.serve({
  hostname: '127.0.0.1',
  port: Number(Bun.env.PORT ?? 8080),
  fetch: gateway.fetch,
  // Bun closes a connection silent for 10 s by default: a slow model's first token or a long
  // non-streamed reply takes longer. The gateway bounds bodies and streams with its own timeouts.
  idleTimeout: 0,
});
console.log(JSON.stringify({ baseURL: `http://127.0.0.1:${server.port}/v1`, demoKey }));

process.once('SIGTERM', async () => {
  void server.stop(); // no new connections; requests and streams in flight finish and settle
  await gateway.idle();
  await store.close();
  process.exit(0);
});
