// Deno: `deno run --allow-net=127.0.0.1 --allow-env --allow-read --allow-write deno.ts`. The SQLite store runs on node:sqlite here.
import { sqliteStore } from '@tollgate/store-sqlite';
import { demoGateway } from './gateway.ts';

const store = sqliteStore(Deno.env.get('TOLLGATE_DB') ?? 'tollgate.db');
const { gateway, demoKey } = await demoGateway(store);

const server = Deno.serve(
  {
    hostname: '127.0.0.1',
    port: Number(Deno.env.get('PORT') ?? 8080),
    onListen: ({ port }) => console.log(JSON.stringify({ baseURL: `http://127.0.0.1:${port}/v1`, demoKey })),
  },
  gateway.fetch,
);

Deno.addSignalListener('SIGTERM', async () => {
  await server.shutdown(); // no new connections; requests and streams in flight finish and settle
  await gateway.idle();
  await store.close();
  Deno.exit(0);
});
