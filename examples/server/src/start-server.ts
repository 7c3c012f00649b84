import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { withinDeadline } from '@tollgate/core';
import { createAdminApi, createGateway, DEFAULT_STREAM_IDLE_TIMEOUT_MS, type Gateway, type RequestLog } from '@tollgate/gateway';
import { createPageFetcher } from '@tollgate/providers';
import type { Store } from '@tollgate/billing';
import { loadCatalogue } from './catalogue';
import { serveGateway } from './serve-gateway';
import { ConfigError, type ServerConfig } from './config';
import { createMetrics } from './metrics';
import { openLimiter, openStore } from './open-backends';
import { createWebhooks, type WebhookOptions, type Webhooks } from './webhooks';
import { nodeHashKey, nodeResolver, nodeTransport, releaseMemoryWhenIdle } from '@tollgate/node';

/** A running reference server. */
export interface RunningServer {
  url: string;
  port: number;
  adminUrl: string | undefined;
  gateway: Gateway;
  store: Store;
  /** The demo key, when this start created the demo account. */
  demoKey: string | undefined;
  /** The webhook sender, when `TOLLGATE_WEBHOOK_URL` and `TOLLGATE_WEBHOOK_SECRET` are set. */
  webhooks: Webhooks | undefined;
  /** Stops accepting, lets in-flight requests finish (up to the grace period), settles, closes. */
  close(): Promise<void>;
}

/** Options beyond the configuration (tests). */
export interface StartOptions {
  /** Where log lines go (default: JSON lines on stdout). */
  log?: (line: Record<string, unknown>) => void;
  /** Create the demo account on first start (default true). */
  demo?: boolean;
  /** Webhook delivery settings (retries, timeouts) for tests; the URL and secret come from the configuration. */
  webhooks?: Partial<Omit<WebhookOptions, 'url' | 'secret' | 'log'>>;
}

/**
 * Starts the reference server: the gateway on `config.port`, /metrics and /health on
 * `config.adminPort` (and the admin API under /admin/v1 when `config.adminToken` is set), on SQLite (or PostgreSQL) and an in-memory (or Redis) limiter.
 */
export async function startServer(config: ServerConfig, options: StartOptions = {}): Promise<RunningServer> {
  const log = options.log ?? ((line) => process.stdout.write(`${JSON.stringify(line)}\n`));
  const catalogue = loadCatalogue(config.cataloguePath, process.env, { upstreamMaxSockets: config.upstreamMaxSockets });
  const [store, limiter] = await Promise.all([openStore(config, { serving: true }), openLimiter(config)]);
  if (!config.databaseUrl) {
    // One process serves a SQLite file: every hold open at start belonged to a process that died.
    const released = await (store as Store & { releaseAllHolds(): Promise<number> }).releaseAllHolds();
    if (released > 0) log({ level: 'warn', msg: 'released holds of a previous run', count: released });
  } else {
    await store.releaseExpired();
  }
  // Instances sharing PostgreSQL come and go: whichever is alive sweeps the expired holds of a dead
  // one, charging its cut streams what they had checkpointed (docs/architecture.md, Billing).
  const sweepMs = Math.min(60_000, Math.max(1_000, config.holdTtlMs ?? 60_000));
  const sweep = config.databaseUrl
    ? setInterval(() => {
        store
          .releaseExpired()
          .catch((error: unknown) =>
            log({ level: 'error', msg: 'sweeping expired holds failed', error: error instanceof Error ? error.message : String(error) }),
          );
      }, sweepMs).unref()
    : undefined;
  const metrics = createMetrics();
  // Events for the operator's systems (docs/events.md): signed webhooks, queued off the request path.
  const webhooks = config.webhook ? createWebhooks({ ...config.webhook, log, userAgent: config.version, ...options.webhooks }) : undefined;
  if (!webhooks && config.lowBalanceMicros !== undefined)
    log({ level: 'warn', msg: 'TOLLGATE_LOW_BALANCE_MICROS is set without webhooks: no events are sent' });
  const events = webhooks ? { onEvent: webhooks.send, ...(config.lowBalanceMicros !== undefined ? { lowBalanceMicros: config.lowBalanceMicros } : {}) } : {};
  const gateway = configured(() =>
    createGateway({
      version: config.version,
      store,
      limiter,
      providers: catalogue.providers,
      models: catalogue.models,
      characters: catalogue.characters,
      pageFetcher: createPageFetcher({ resolve: nodeResolver(), transport: nodeTransport() }),
      hashKey: nodeHashKey,
      ...events,
      fetchMicrosPerCall: config.fetchMicrosPerCall,
      onLimiterError: config.onLimiterError,
      ...(config.sharedSearchFetchPerMinute !== undefined ? { sharedSearchFetchPerMinute: config.sharedSearchFetchPerMinute } : {}),
      ...(config.maxInFlight !== undefined ? { maxInFlight: config.maxInFlight } : {}),
      ...(config.holdTtlMs !== undefined ? { holdTtlMs: config.holdTtlMs } : {}),
      ...(config.keyCacheMs !== undefined ? { keyCacheMs: config.keyCacheMs } : {}),
      ...(config.upstreamHeadersTimeoutMs !== undefined ? { upstreamHeadersTimeoutMs: config.upstreamHeadersTimeoutMs } : {}),
      ...(config.upstreamBodyTimeoutMs !== undefined ? { upstreamBodyTimeoutMs: config.upstreamBodyTimeoutMs } : {}),
      ...(config.streamIdleTimeoutMs !== undefined ? { streamIdleTimeoutMs: config.streamIdleTimeoutMs } : {}),
      ...(config.clientStallTimeoutMs !== undefined ? { clientStallTimeoutMs: config.clientStallTimeoutMs } : {}),
      onSettleError: ({ requestId, accountId, micros, error }) => {
        log({ level: 'error', msg: 'settlement failed: charge by hand', requestId, accountId, micros, error: (error as Error)?.message });
      },
      log: (record: RequestLog) => {
        metrics.record(record);
        log({ level: record.status >= 500 ? 'error' : 'info', msg: 'request', ...record });
      },
    }),
  );
  const demoKey = options.demo === false ? undefined : await createDemoAccount(store, config.dataDir);

  // The gateway on createNodeListener of @tollgate/node (no Hono adapter on the hot path), every
  // reply below the gateway one the docs describe (serve-gateway.ts).
  const server = await listen(
    serveGateway({
      fetch: gateway.fetch,
      version: config.version,
      hostname: config.host,
      port: config.port,
      onError: (error) => log({ level: 'error', msg: 'unhandled gateway error', error: (error as Error)?.message }),
      // The gateway cuts a stream whose client takes nothing for its stall limit (slot freed, charged
      // what it delivered); ten seconds later the connection itself is closed, not kept for good.
      stallTimeoutMs: (config.clientStallTimeoutMs ?? config.streamIdleTimeoutMs ?? DEFAULT_STREAM_IDLE_TIMEOUT_MS) + 10_000,
    }),
  );
  const port = (server.address() as AddressInfo).port;
  // Once closing, every reply not yet started says `Connection: close`: a keep-alive client then
  // opens a new connection (refused at once) instead of sending its next request on a socket that
  // is about to be cut.
  let stopping = false;
  const replies = new Set<ServerResponse>();
  server.on('request', (_request: IncomingMessage, response: ServerResponse) => {
    if (stopping) return void response.setHeader('connection', 'close');
    replies.add(response);
    response.once('close', () => replies.delete(response));
  });
  const url = `http://${hostOf(config.host)}:${port}`;
  // V8 collects only when allocation calls for it: after a burst (say 1,000 streams) an idle server
  // would keep their garbage, and its RSS the peak, for as long as it idles (docs/configuration.md).
  const releaser =
    config.releaseMemory === 'idle'
      ? releaseMemoryWhenIdle({
          onRelease: ({ heapBefore, heapAfter, rssBefore, rssAfter, ms }) =>
            log({ level: 'info', msg: 'memory released', heapMb: [mb(heapBefore), mb(heapAfter)], rssMb: [mb(rssBefore), mb(rssAfter)], ms: Math.round(ms) }),
        })
      : undefined;

  let admin: Server | undefined;
  let adminUrl: string | undefined;
  if (config.adminPort !== 0) {
    const app = new Hono();
    // A load balancer's check: 503 while the store or the limiter store does not answer (every paid
    // request would be a 503 then), each asked one cheap read with a 2 s deadline.
    const probe = async (read: () => Promise<unknown>): Promise<boolean> => {
      try {
        return (await withinDeadline(read(), 2_000)).ok;
      } catch {
        return false;
      }
    };
    app.get('/health', async (c) => {
      const [storeUp, limiterUp] = await Promise.all([
        probe(() => store.getAccount('acc_health_probe')),
        probe(() => limiter.inFlight('{$health}:probe', Date.now())),
      ]);
      const down = [...(storeUp ? [] : ['store']), ...(limiterUp ? [] : ['limiter'])];
      const body = { status: down.length === 0 ? 'ok' : 'unavailable', version: config.version, active: gateway.active, simulator: catalogue.simulator };
      return down.length === 0 ? c.json(body) : c.json({ ...body, down }, 503);
    });
    app.get('/metrics', (c) =>
      c.text(metrics.render(gateway.active) + (webhooks?.renderMetrics() ?? ''), 200, { 'content-type': 'text/plain; version=0.0.4' }),
    );
    if (config.adminToken !== undefined) {
      // The operator's API (docs/admin-api.md), only with a token: without one, /admin/* is a 404.
      const adminApi = createAdminApi({
        store,
        // Its revokes and account changes reach this gateway's key cache at once (keyCacheMs).
        gateway,
        token: config.adminToken,
        ...(webhooks ? { onEvent: webhooks.send } : {}),
        onError: (error) => log({ level: 'error', msg: 'admin request failed', error: error instanceof Error ? error.message : String(error) }),
      });
      app.all('/admin/*', async (c) => {
        const startedAt = Date.now();
        const response = await adminApi.fetch(c.req.raw);
        // An audit line per call: method, path (ids only; bodies and the token are never logged) and status.
        log({ level: 'info', msg: 'admin request', method: c.req.method, path: c.req.path, status: response.status, latencyMs: Date.now() - startedAt });
        return response;
      });
    }
    // overrideGlobalObjects: false — Hono's adapter would otherwise swap the process's global
    // Request and Response for its own, under the gateway too (which bench/ measures without them).
    admin = await listen(serve({ fetch: app.fetch, port: config.adminPort, hostname: config.host, overrideGlobalObjects: false }) as Server);
    adminUrl = `http://${hostOf(config.host)}:${(admin.address() as AddressInfo).port}`;
  } else if (config.adminToken !== undefined) {
    log({ level: 'warn', msg: 'TOLLGATE_ADMIN_TOKEN is set but ADMIN_PORT=0 turns the admin port off: no admin API' });
  }
  log({
    level: 'info',
    msg: 'listening',
    url,
    admin: adminUrl,
    simulator: catalogue.simulator,
    store: config.databaseUrl ? 'postgres' : 'sqlite',
    limiter: config.redisUrl ? 'redis' : 'memory',
    webhooks: config.webhook ? new URL(config.webhook.url).origin : undefined,
  });

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      stopping = true;
      clearInterval(sweep);
      releaser?.stop();
      for (const response of replies) if (!response.headersSent) response.setHeader('connection', 'close');
      // Resolved once the listening sockets and every connection are gone, so close() leaves nothing open.
      const closed = [server, admin].map((each) => each && new Promise<void>((resolve) => each.close(() => resolve())));
      const grace = new Promise<'timeout'>((resolve) => setTimeout(resolve, config.shutdownGraceSeconds * 1000, 'timeout').unref());
      if ((await Promise.race([gateway.idle().then(() => 'idle' as const), grace])) === 'timeout') {
        // Past the grace period: cut the remaining streams; each pays for what it delivered.
        server.closeAllConnections();
        await Promise.race([gateway.idle(), new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
      }
      server.closeAllConnections();
      admin?.closeAllConnections();
      await Promise.all(closed);
      if (webhooks) {
        // Events of the last requests (their balance reads run a tick after them) get one last attempt.
        await new Promise((resolve) => setTimeout(resolve, 20));
        await webhooks.close();
      }
      await limiter.close?.();
      await store.close?.();
      log({ level: 'info', msg: 'stopped' });
    })();
    return closing;
  };
  return { url, port, adminUrl, gateway, store, demoKey, webhooks, close };
}

/** Bytes as whole MB, for a log line. */
function mb(bytes: number): number {
  return Math.round(bytes / 1e6);
}

/** The host part of a URL: an IPv6 address in brackets. */
function hostOf(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

async function listen(server: Server): Promise<Server> {
  if (server.listening) return server;
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  return server;
}

/** On first start: a demo account with $5 of credits and a key, printed once. */
async function createDemoAccount(store: Store, dataDir: string): Promise<string | undefined> {
  mkdirSync(dataDir, { recursive: true });
  const marker = join(dataDir, 'demo-account.json');
  if (existsSync(marker)) return undefined;
  const account = await store.createAccount({ plan: 'plus' });
  await store.addCredits(account.id, 5_000_000, { note: 'demo credits' });
  const key = await store.createKey(account.id, 'demo');
  writeFileSync(marker, `${JSON.stringify({ accountId: account.id, keyId: key.id, createdAt: new Date().toISOString() })}\n`);
  return key.key;
}

/** Configuration mistakes found by createGateway (prices, routes) are ConfigErrors: exit code 2, clear message. */
function configured<T>(build: () => T): T {
  try {
    return build();
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
}
