/**
 * Signed webhooks (webhooks.ts, docs/events.md) over a real loopback receiver: the signature
 * verifies with the documented recipe, a receiver that fails or is down gets retries with backoff
 * and the same event id, the queue is bounded, the secret and the target's reply never reach the
 * log, and a target that hangs adds no latency to a chat request of the reference server.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GatewayEvent } from '@tollgate/gateway';
import { freePort } from '@tollgate/testing/server';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from './cli';
import { loadConfig } from './config';
import { startServer, type RunningServer } from './start-server';
import { createWebhooks, signWebhook, verifyWebhook, type Webhooks } from './webhooks';
import { tempDataDirs } from './test-data-dir';

const dataDir = tempDataDirs('webhooks');

const SECRET = 'whsec-test-0123456789-abcdefghij';

/** One request the receiver got. */
interface Received {
  at: number;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A loopback receiver; `answer` decides each reply (a status, or 'hang' to never answer). */
async function receiver(answer: (index: number) => number | 'hang' = () => 200) {
  const received: Received[] = [];
  const hanging: ServerResponse[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ at: Date.now(), headers: request.headers, body: Buffer.concat(chunks).toString('utf8') });
      const reply = answer(received.length - 1);
      if (reply === 'hang') return void hanging.push(response);
      response.writeHead(reply, { 'content-type': 'text/plain' });
      response.end(`receiver-body-${reply}-do-not-log`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/tollgate?token=target-token-do-not-log`;
  return { url, received, hanging, server };
}

const servers: Server[] = [];
const senders: Webhooks[] = [];
const running: RunningServer[] = [];

afterEach(async () => {
  // Receivers first: a delivery they hold open then fails at once instead of holding a close.
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  for (const sender of senders.splice(0)) await sender.close(100);
  for (const server of running.splice(0)) await server.close();
});

function sender(url: string, logs: Record<string, unknown>[], options: Partial<Parameters<typeof createWebhooks>[0]> = {}): Webhooks {
  const webhooks = createWebhooks({ url, secret: SECRET, log: (line) => logs.push(line), retryBaseMs: 50, ...options });
  senders.push(webhooks);
  return webhooks;
}

function event(n = 1): GatewayEvent {
  return { id: `evt_key_revoked_key_${n}`, type: 'key.revoked', created_at: '2026-11-26T17:00:00.000Z', key_id: `key_${n}`, account_id: 'acc_1' };
}

/** The receiver's check, as docs/events.md writes it, with node:crypto only. */
function documentedVerify(secret: string, header: string, rawBody: string, nowSeconds = Math.floor(Date.now() / 1000)): boolean {
  const parts = Object.fromEntries(header.split(',').map((part) => part.split('=', 2) as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > 300 || !parts.v1) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${rawBody}`).digest();
  const given = Buffer.from(parts.v1, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

describe('webhook deliveries', () => {
  it('POSTs the event as JSON with its id, type and a signature that verifies with the documented recipe', async () => {
    const target = await receiver();
    const logs: Record<string, unknown>[] = [];
    const webhooks = sender(target.url, logs, { userAgent: 'tollgate/0.1.0' });
    webhooks.send(event());
    await expect.poll(() => webhooks.counts.delivered).toBe(1);
    const [got] = target.received;
    if (!got) throw new Error('nothing received');
    expect(JSON.parse(got.body)).toEqual(event());
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['user-agent']).toBe('tollgate/0.1.0');
    expect(got.headers['tollgate-event-id']).toBe('evt_key_revoked_key_1');
    expect(got.headers['tollgate-event-type']).toBe('key.revoked');
    const signature = String(got.headers['tollgate-signature']);
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(documentedVerify(SECRET, signature, got.body)).toBe(true);
    expect(verifyWebhook(SECRET, signature, got.body)).toBe(true);
    // A changed body, another secret, an old timestamp: refused.
    expect(documentedVerify(SECRET, signature, got.body.replace('acc_1', 'acc_2'))).toBe(false);
    expect(verifyWebhook('another-secret-0123456789', signature, got.body)).toBe(false);
    expect(verifyWebhook(SECRET, signature, got.body, { nowSeconds: Math.floor(Date.now() / 1000) + 301 })).toBe(false);
    expect(verifyWebhook(SECRET, signWebhook(SECRET, got.body, 1_000), got.body)).toBe(false);
    expect(verifyWebhook(SECRET, undefined, got.body)).toBe(false);
    expect(logs).toEqual([]);
  });

  it('retries a receiver that answers 500, with growing waits, under the same event id; a 2xx ends it', async () => {
    const target = await receiver((index) => (index < 3 ? 500 : 204));
    const logs: Record<string, unknown>[] = [];
    const webhooks = sender(target.url, logs, { retryBaseMs: 100, random: () => 0.999 });
    webhooks.send(event());
    await expect.poll(() => webhooks.counts.delivered, { timeout: 5_000 }).toBe(1);
    expect(target.received).toHaveLength(4);
    expect(new Set(target.received.map((got) => got.headers['tollgate-event-id']))).toEqual(new Set(['evt_key_revoked_key_1']));
    expect(new Set(target.received.map((got) => got.body)).size).toBe(1);
    for (const got of target.received) expect(verifyWebhook(SECRET, String(got.headers['tollgate-signature']), got.body)).toBe(true);
    // Waits of about 100, 200 and 400 ms (jitter near its top here).
    const gaps = target.received.slice(1).map((got, index) => got.at - (target.received[index]?.at ?? 0));
    expect(gaps[0]).toBeGreaterThanOrEqual(90);
    expect(gaps[1]).toBeGreaterThanOrEqual(190);
    expect(gaps[2]).toBeGreaterThanOrEqual(390);
    expect(gaps[2]).toBeGreaterThan(gaps[0] ?? 0);
    expect(webhooks.counts).toEqual({ delivered: 1, failed: 0, dropped: 0, attemptsFailed: 3 });
    expect(logs.map((line) => [line.msg, line.attempt, line.status])).toEqual([
      ['webhook delivery failed', 1, 500],
      ['webhook delivery failed', 2, 500],
      ['webhook delivery failed', 3, 500],
    ]);
    const text = JSON.stringify(logs);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('do-not-log'); // neither the target's body nor the URL's token
    expect(text).not.toContain('/hooks/tollgate');
  });

  it('a receiver that is down gets its attempts, then the event is given up and counted', async () => {
    const port = await freePort(); // nothing listens there
    const logs: Record<string, unknown>[] = [];
    const webhooks = sender(`http://127.0.0.1:${port}/hook`, logs, { retryBaseMs: 20, maxAttempts: 3 });
    webhooks.send(event());
    await expect.poll(() => webhooks.counts.failed, { timeout: 5_000 }).toBe(1);
    expect(webhooks.counts).toMatchObject({ delivered: 0, failed: 1, attemptsFailed: 3 });
    expect(logs.map((line) => line.msg)).toEqual(['webhook delivery failed', 'webhook delivery failed', 'webhook event given up']);
    expect(logs[0]).toMatchObject({ level: 'warn', eventId: 'evt_key_revoked_key_1', type: 'key.revoked', target: `http://127.0.0.1:${port}` });
    expect(String(logs[0]?.error)).toMatch(/ECONNREFUSED|fetch failed/);
    expect(JSON.stringify(logs)).not.toContain(SECRET);
    expect(webhooks.pending).toBe(0);
  });

  it('a failure whose message quotes the URL logs the origin in its place, never the path or query', async () => {
    const logs: Record<string, unknown>[] = [];
    const url = 'https://hooks.example.test/in/T0k3nInPath?sig=S3cretQuery';
    const fetch: typeof globalThis.fetch = async () => {
      throw new TypeError(`Failed to parse URL from ${url}`, { cause: { code: 'ERR_INVALID_URL' } });
    };
    const webhooks = sender(url, logs, { fetch, maxAttempts: 1 });
    webhooks.send(event());
    await expect.poll(() => webhooks.counts.failed, { timeout: 5_000 }).toBe(1);
    expect(logs[0]?.error).toBe('Failed to parse URL from https://hooks.example.test (ERR_INVALID_URL)');
    expect(JSON.stringify(logs)).not.toMatch(/T0k3nInPath|S3cretQuery/);
  });

  it('an outage logs at most 20 failure lines every 10 seconds; the counters have them all', async () => {
    const port = await freePort();
    const logs: Record<string, unknown>[] = [];
    const webhooks = sender(`http://127.0.0.1:${port}/hook`, logs, { maxAttempts: 1, concurrency: 8 });
    for (let n = 1; n <= 30; n++) webhooks.send(event(n));
    await expect.poll(() => webhooks.counts.failed, { timeout: 5_000 }).toBe(30);
    expect(logs).toHaveLength(20);
    expect(logs.every((line) => line.msg === 'webhook event given up')).toBe(true);
  });

  it('an attempt that takes longer than its timeout failed; the event is retried', async () => {
    const target = await receiver((index) => (index === 0 ? 'hang' : 200));
    const logs: Record<string, unknown>[] = [];
    const webhooks = sender(target.url, logs, { timeoutMs: 150, retryBaseMs: 10 });
    webhooks.send(event());
    await expect.poll(() => webhooks.counts.delivered, { timeout: 5_000 }).toBe(1);
    expect(target.received).toHaveLength(2);
    expect(logs).toEqual([expect.objectContaining({ msg: 'webhook delivery failed', attempt: 1, error: 'timeout after 150 ms' })]);
  });

  it('the queue is bounded: past it the oldest events are dropped, counted and logged once', async () => {
    const target = await receiver(() => 'hang');
    const logs: Record<string, unknown>[] = [];
    const webhooks = sender(target.url, logs, { maxQueue: 2, concurrency: 1, timeoutMs: 60_000 });
    for (let n = 1; n <= 5; n++) webhooks.send(event(n));
    expect(webhooks.counts.dropped).toBe(3);
    await expect.poll(() => target.received.length).toBe(1);
    // The three oldest were dropped as the five came in: key_4 is in flight, key_5 waits.
    expect(target.received[0]?.headers['tollgate-event-id']).toBe('evt_key_revoked_key_4');
    expect(webhooks.pending).toBe(2);
    expect(logs).toEqual([expect.objectContaining({ level: 'warn', msg: 'webhook queue full: oldest event dropped', maxQueue: 2, dropped: 1 })]);
    expect(webhooks.renderMetrics()).toContain('tollgate_webhook_events_total{outcome="dropped"} 3');
  });

  it('send never throws nor waits, even for an event it cannot serialise', () => {
    const webhooks = sender('http://127.0.0.1:9/never', []);
    const circular = { ...event() } as GatewayEvent & { self?: unknown };
    circular.self = circular;
    const started = performance.now();
    expect(() => webhooks.send(circular)).not.toThrow();
    expect(performance.now() - started).toBeLessThan(50);
  });
});

describe('the reference server with webhooks', () => {
  async function start(url: string, logs: Record<string, unknown>[], env: Record<string, string> = {}) {
    const server = await startServer(
      loadConfig({
        PORT: '0',
        ADMIN_PORT: String(await freePort()),
        TOLLGATE_DATA_DIR: dataDir(),
        TOLLGATE_WEBHOOK_URL: url,
        TOLLGATE_WEBHOOK_SECRET: SECRET,
        // The demo account's $5: its first charge crosses it.
        TOLLGATE_LOW_BALANCE_MICROS: '5000000',
        ...env,
      }),
      { log: (line) => logs.push(line), webhooks: { retryBaseMs: 50, timeoutMs: 30_000 } },
    );
    running.push(server);
    return server;
  }

  const chat = (server: RunningServer) =>
    fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.demoKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'sim-fast', max_tokens: 20, messages: [{ role: 'user', content: 'Hello' }] }),
    });

  it('a target that hangs adds no latency to a chat request; balance.low arrives signed', async () => {
    const target = await receiver(() => 'hang');
    const logs: Record<string, unknown>[] = [];
    const server = await start(target.url, logs);
    // A baseline without events in the way (the first request is the one that crosses the threshold,
    // so the receiver starts hanging on its event); then requests while it hangs.
    const started = performance.now();
    const first = await chat(server);
    expect(first.status).toBe(200);
    await first.text();
    const firstMs = performance.now() - started;
    await expect.poll(() => target.received.length).toBe(1);
    expect(target.hanging).toHaveLength(1); // the receiver holds the delivery open

    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      const reply = await chat(server);
      expect(reply.status).toBe(200);
      await reply.text();
      times.push(performance.now() - t0);
    }
    // Each request completes while the receiver hangs, well within the 30 s delivery timeout.
    expect(Math.max(...times)).toBeLessThan(Math.max(1_000, 5 * firstMs));
    expect(target.hanging).toHaveLength(1);

    const [got] = target.received;
    const body = JSON.parse(got?.body ?? '{}') as GatewayEvent;
    const account = (
      await server.store.findKey(
        createHash('sha256')
          .update(server.demoKey ?? '')
          .digest('hex'),
      )
    )?.account.id;
    expect(body).toMatchObject({ type: 'balance.low', account_id: account, threshold_micros: 5_000_000 });
    expect(got?.headers['tollgate-event-id']).toBe(body.id);
    expect(verifyWebhook(SECRET, String(got?.headers['tollgate-signature']), got?.body ?? '')).toBe(true);
    expect(JSON.stringify(logs)).not.toContain(SECRET);
    expect(logs.find((line) => line.msg === 'listening')).toMatchObject({ webhooks: new URL(target.url).origin });
  });

  it('the admin API revoking a key sends key.revoked once; /metrics counts deliveries', async () => {
    const target = await receiver((index) => (index === 0 ? 503 : 200));
    const logs: Record<string, unknown>[] = [];
    const token = 'admin-token-0123456789-abcdef';
    const server = await start(target.url, logs, { TOLLGATE_ADMIN_TOKEN: token, TOLLGATE_LOW_BALANCE_MICROS: '' });
    const account = (await server.store.createAccount({ plan: 'free' })).id;
    const key = await server.store.createKey(account, 'laptop');
    const revoke = () => fetch(`${server.adminUrl}/admin/v1/keys/${key.id}/revoke`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect((await revoke()).status).toBe(200);
    expect((await revoke()).status).toBe(200);
    await expect.poll(() => server.webhooks?.counts.delivered, { timeout: 5_000 }).toBe(1);
    // A 503 first, then the retry: the same event twice, nothing for the repeat revoke.
    expect(target.received.map((got) => got.headers['tollgate-event-id'])).toEqual([`evt_key_revoked_${key.id}`, `evt_key_revoked_${key.id}`]);
    const metrics = await (await fetch(`${server.adminUrl}/metrics`)).text();
    expect(metrics).toContain('tollgate_webhook_events_total{outcome="delivered"} 1');
    expect(metrics).toContain('tollgate_webhook_attempts_failed_total 1');
    expect(JSON.stringify(logs)).not.toContain(SECRET);
    expect(JSON.stringify(logs)).not.toContain('do-not-log');
  });

  it('the CLI revoking a key sends key.revoked before it exits, once', async () => {
    const target = await receiver();
    const env = { TOLLGATE_DATA_DIR: dataDir(), TOLLGATE_WEBHOOK_URL: target.url, TOLLGATE_WEBHOOK_SECRET: SECRET };
    const saved = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
    Object.assign(process.env, env);
    try {
      const run = async (...args: string[]) => {
        let stdout = '';
        expect(await main([...args, '--json'], (text) => (stdout += text))).toBe(0);
        return JSON.parse(stdout) as { id: string };
      };
      const account = await run('accounts', 'create');
      const key = await run('keys', 'create', '--account', account.id, '--name', 'laptop');
      await run('keys', 'revoke', key.id);
      // Delivered before main returned.
      expect(target.received.map((got) => got.headers['tollgate-event-id'])).toEqual([`evt_key_revoked_${key.id}`]);
      expect(verifyWebhook(SECRET, String(target.received[0]?.headers['tollgate-signature']), target.received[0]?.body ?? '')).toBe(true);
      await run('keys', 'revoke', key.id);
      expect(target.received).toHaveLength(1);
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it('the webhook settings: both or neither, an http(s) URL, a secret of 16 characters', () => {
    const base = { TOLLGATE_DATA_DIR: dataDir() };
    expect(loadConfig(base).webhook).toBeUndefined();
    expect(loadConfig({ ...base, TOLLGATE_WEBHOOK_URL: 'https://example.test/hook', TOLLGATE_WEBHOOK_SECRET: SECRET }).webhook).toEqual({
      url: 'https://example.test/hook',
      secret: SECRET,
    });
    expect(() => loadConfig({ ...base, TOLLGATE_WEBHOOK_URL: 'https://example.test/hook' })).toThrow(/without TOLLGATE_WEBHOOK_SECRET/);
    expect(() => loadConfig({ ...base, TOLLGATE_WEBHOOK_SECRET: SECRET })).toThrow(/without TOLLGATE_WEBHOOK_URL/);
    expect(() => loadConfig({ ...base, TOLLGATE_WEBHOOK_URL: 'ftp://example.test', TOLLGATE_WEBHOOK_SECRET: SECRET })).toThrow(/http/);
    // A user or password in the URL: fetch refuses such a URL (its error quotes it), so it is refused here, unquoted.
    for (const url of ['https://hookuser:S3cretTok3n@example.test/hook', 'https://S3cretTok3n@example.test/hook']) {
      expect(() => loadConfig({ ...base, TOLLGATE_WEBHOOK_URL: url, TOLLGATE_WEBHOOK_SECRET: SECRET })).toThrow(/user or password/);
      expect(() => loadConfig({ ...base, TOLLGATE_WEBHOOK_URL: url, TOLLGATE_WEBHOOK_SECRET: SECRET })).not.toThrow(/S3cretTok3n/);
    }
    expect(() => loadConfig({ ...base, TOLLGATE_WEBHOOK_URL: 'https://example.test', TOLLGATE_WEBHOOK_SECRET: 'short' })).toThrow(/at least 16 characters/);
    try {
      loadConfig({ ...base, TOLLGATE_WEBHOOK_URL: 'https://example.test', TOLLGATE_WEBHOOK_SECRET: 'short secret' });
    } catch (error) {
      expect((error as Error).message).not.toContain('short secret');
    }
    expect(loadConfig({ ...base, TOLLGATE_LOW_BALANCE_MICROS: '250000' }).lowBalanceMicros).toBe(250_000);
    expect(() => loadConfig({ ...base, TOLLGATE_LOW_BALANCE_MICROS: '0' })).toThrow(/TOLLGATE_LOW_BALANCE_MICROS/);
  });
});
