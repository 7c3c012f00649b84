// Node, plain node:http: a (req, res) listener, also what Express and Fastify take. Run: `npx tsx node-http.ts`.
import { createServer } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { sqliteStore } from '@tollgate/store-sqlite';
import { demoGateway } from './gateway.ts';

const store = sqliteStore(process.env.TOLLGATE_DB ?? 'tollgate.db');
// The API at /api/v1/...: the gateway sees the whole path, so it is told its base path.
const { gateway, demoKey } = await demoGateway(store, { basePath: '/api' });

// getRequestListener turns Node's request into a web Request (its body a stream, aborted when the
// client goes) and writes the Response with backpressure.
const server = createServer(getRequestListener(gateway.fetch));
server.listen(Number(process.env.PORT ?? 8080), '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 8080;
  console.log(JSON.stringify({ baseURL: `http://127.0.0.1:${port}/api/v1`, demoKey }));
});

process.once('SIGTERM', async () => {
  server.close(); // no new connections; requests and streams in flight finish and settle
  await gateway.idle();
  await store.close();
  process.exit(0);
});
