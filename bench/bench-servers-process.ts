/**
 * Child process of the chat bench: the reference server (SQLite store, memory limiter) and the
 * bare node:http pass-through proxy, both in front of the upstream at `process.argv[2]`. Creates
 * `process.argv[3]` pro accounts with credits and a key each, prints
 * `{"gateway":…,"bare":…,"keys":[…]}` on one line, then serves until its stdin closes (a normal
 * exit, so `--cpu-prof` writes its profile). `BENCH_MONEY=off`: the money path taken out (below).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Store } from '@tollgate/billing';
import { loadConfig } from '../examples/server/src/config';
import { startServer } from '../examples/server/src/start-server';
import { writeBenchCatalogue } from './bench-catalogue';

const upstreamUrl = process.argv[2]!;
const accounts = Number(process.argv[3] ?? 1_000);

const dir = mkdtempSync(join(tmpdir(), 'tollgate-bench-'));
const catalogue = writeBenchCatalogue(dir, upstreamUrl);
process.env.BENCH_UPSTREAM_KEY = 'bench-upstream-key';
// TOLLGATE_UPSTREAM_MAX_SOCKETS passes through (bench/open-streams.ts raises it to hold every stream open upstream).
const maxSockets = process.env.TOLLGATE_UPSTREAM_MAX_SOCKETS;
const server = await startServer(
  loadConfig({
    PORT: '0',
    ADMIN_PORT: '0',
    TOLLGATE_DATA_DIR: dir,
    TOLLGATE_CATALOGUE: catalogue,
    ...(maxSockets ? { TOLLGATE_UPSTREAM_MAX_SOCKETS: maxSockets } : {}),
  }),
  {
    log: () => {},
    demo: false,
  },
);
// Plan limits are per account (pro: 10 requests a second, burst 61, 10 in flight): spread the load.
const keys: string[] = [];
for (let index = 0; index < accounts; index++) {
  const account = await server.store.createAccount({ plan: 'pro' });
  await server.store.addCredits(account.id, 1_000_000_000);
  keys.push((await server.store.createKey(account.id, 'bench')).key);
}

// BENCH_MONEY=off measures a floor, never a configuration: hold, settle, release and checkpoint
// answer at once and write nothing (the key lookup still reads the file), so the gateway's CPU
// with no money path at all can be read beside the shipped one (docs/benchmarks.md, "Issue #17:
// the streamed target against the gateway with no money path at all").
if (process.env.BENCH_MONEY === 'off') {
  let holds = 0;
  const noMoney: Pick<Store, 'hold' | 'settle' | 'release' | 'checkpoint'> = {
    hold: async (_accountId, input) => ({ ok: true, value: { holdId: `bench-hold-${holds++}`, micros: input.micros } }),
    settle: async (_holdId, input) => ({ charged: input.micros, already: false }),
    release: async () => ({ charged: 0, already: false }),
    checkpoint: async () => 0,
  };
  Object.assign(server.store, noMoney);
}

const { port: upstreamPort } = new URL(upstreamUrl);
// The baseline: pipes requests and replies through unchanged, as thin as a Node proxy gets.
const bare = createServer((incoming, outgoing) => {
  const upstream = httpRequest({ host: '127.0.0.1', port: upstreamPort, method: incoming.method, path: incoming.url, headers: incoming.headers }, (reply) => {
    outgoing.writeHead(reply.statusCode ?? 502, reply.headers);
    reply.pipe(outgoing);
  });
  upstream.on('error', () => outgoing.destroy());
  incoming.pipe(upstream);
});
await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));

process.stdout.write(`${JSON.stringify({ gateway: server.url, bare: `http://127.0.0.1:${(bare.address() as AddressInfo).port}`, keys })}\n`);
process.stdin.resume();
process.stdin.on('end', () => {
  bare.closeAllConnections();
  bare.close();
  void server.close().finally(() => {
    rmSync(dir, { recursive: true, force: true });
    process.exit(0);
  });
});
