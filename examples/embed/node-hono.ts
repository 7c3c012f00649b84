// Node + Hono: the gateway mounted at /api of a Hono app. Run: `npx tsx node-hono.ts`.
import { serve } from '@hono/node-server';
import { sqliteStore } from '@tollgate/store-sqlite';
import { Hono } from 'hono';
import { mount } from 'hono/mount';
import { demoGateway } from './gateway.ts';

const store = sqliteStore(process.env.TOLLGATE_DB ?? 'tollgate.db');
const { gateway, demoKey } = await demoGateway(store);

const app = new Hono();
app.get('/', (c) => c.text('My app'));
// mount() strips /api before the gateway routes the path, so /api/v1/models is its /v1/models.
app.all('/api/*', mount(gateway.fetch));

const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: Number(process.env.PORT ?? 8080) }, ({ port }) => {
  console.log(JSON.stringify({ baseURL: `http://127.0.0.1:${port}/api/v1`, demoKey }));
});

process.once('SIGTERM', async () => {
  server.close(); // no new connections; requests and streams in flight finish and settle
  await gateway.idle();
  await store.close();
  process.exit(0);
});
