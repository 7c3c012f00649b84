import { createLimiter } from '@tollgate/limiter';
import { limiterKeys } from '@tollgate/limiter/store-kit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLimiterStoreCases } from '@tollgate/testing/store-contract';
import { hashTag } from './group-by-hash-tag';
import { redisLimiter } from './redis-limiter';
import type { RedisLike } from './redis-like';
import { hasRedisServer, startRedis, type RedisServer } from '../test/redis-server';

const T0 = 1_700_000_000_000;
const available = hasRedisServer();

if (!available) {
  if (process.env.CI === 'true') {
    it('redis-server is installed (required in CI)', () => {
      throw new Error('redis-server is not installed: the Redis limiter tests cannot run');
    });
  } else {
    console.warn('\n*** SKIPPING @tollgate/store-redis tests: redis-server is not installed. ***\n');
  }
}

describe.runIf(available)('redisLimiter on a real redis-server', () => {
  let server: RedisServer;
  let client: Redis;
  let n = 0;

  beforeAll(async () => {
    server = await startRedis();
    client = new Redis(server.url);
  });
  afterAll(async () => {
    client?.disconnect();
    await server?.stop();
  });

  runLimiterStoreCases('redis', async () => ({ store: redisLimiter(client, { prefix: `case${n++}:` }) }));

  it('accepts an ioredis client as RedisLike', () => {
    const like: RedisLike = client;
    expect(typeof like.evalsha).toBe('function');
  });

  it('hash-tags keys per account and expires them once their state lapses (+ slack)', async () => {
    const limiter = createLimiter({ store: redisLimiter(client, { expirySlackMs: 1000 }), now: () => T0 });
    expect(await limiter.admit({ id: 'acc_keys', plan: 'free' }, 'chat')).toEqual({ ok: true });
    expect(await client.get('tollgate:{acc_keys}:rate:plan')).toBe(String(T0 + 1000));
    const ttl = await client.pttl('tollgate:{acc_keys}:rate:plan');
    expect(ttl).toBeGreaterThan(1500);
    expect(ttl).toBeLessThanOrEqual(2000);
    const slot = await limiter.acquire({ id: 'acc_keys', plan: 'free' }, 'chat');
    expect(slot.ok).toBe(true);
    const leases = await client.zrange('tollgate:{acc_keys}:flight', 0, -1, 'WITHSCORES');
    expect(leases).toHaveLength(2);
    expect(leases[1]).toBe(String(T0 + 600_000));
    if (slot.ok) await slot.value.release();
    expect(await client.zcard('tollgate:{acc_keys}:flight')).toBe(0);
  });

  it('never sends keys of two hash tags to one script', async () => {
    const calls: string[][] = [];
    const spy: RedisLike = {
      evalsha: (sha, numkeys, ...rest) => {
        calls.push(rest.slice(0, numkeys).map(String));
        return client.evalsha(sha, numkeys, ...rest);
      },
      eval: (script, numkeys, ...rest) => {
        calls.push(rest.slice(0, numkeys).map(String));
        return client.eval(script, numkeys, ...rest);
      },
    };
    const limiter = createLimiter({ store: redisLimiter(spy), now: () => T0, sharedSearchFetchPerMinute: 60, maxInFlight: 5 });
    await limiter.admit({ id: 'acc_tags', plan: 'pro' }, 'search');
    await limiter.acquire({ id: 'acc_tags', plan: 'pro' }, 'search');
    expect(calls.length).toBeGreaterThanOrEqual(4);
    for (const keys of calls) expect(new Set(keys.map(hashTag)).size).toBe(1);
  });

  it('takes the account back when the service-wide slot refuses (compensation)', async () => {
    const store = redisLimiter(client, { prefix: 'comp:' });
    const plan = { key: limiterKeys.plan('acc_comp'), intervalMs: 1000, burst: 7 };
    const shared = { key: limiterKeys.sharedSearchFetch(), intervalMs: 10_000, burst: 1 };
    expect(await store.rate([{ ...plan, key: limiterKeys.plan('acc_other') }, shared], T0)).toEqual({ ok: true });
    expect(await store.rate([plan], T0)).toEqual({ ok: true });
    expect(await client.get('comp:{acc_comp}:rate:plan')).toBe(String(T0 + 1000));
    expect(await store.rate([plan, shared], T0)).toEqual({ ok: false, error: { index: 1, retryAfterMs: 10_000 } });
    expect(await client.get('comp:{acc_comp}:rate:plan')).toBe(String(T0 + 1000));

    const flight = { key: limiterKeys.flight('acc_comp'), max: 2 };
    const service = { key: limiterKeys.serviceFlight(), max: 1 };
    expect(await store.acquire([{ ...flight, key: limiterKeys.flight('acc_other') }, service], 'l1', 60_000, T0)).toEqual({ ok: true });
    expect(await store.acquire([flight, service], 'l2', 60_000, T0)).toEqual({ ok: false, error: { index: 1 } });
    expect(await store.inFlight(flight.key, T0)).toBe(0);
  });

  it('a refused request through createLimiter consumes nothing across slots', async () => {
    let time = T0;
    const limiter = createLimiter({ store: redisLimiter(client, { prefix: 'shared:' }), now: () => time, sharedSearchFetchPerMinute: 6 });
    expect(await limiter.admit({ id: 'acc_a', plan: 'free' }, 'search')).toEqual({ ok: true });
    const b = { id: 'acc_b', plan: 'free' } as const;
    expect(await limiter.admit(b, 'fetch')).toEqual({ ok: false, error: { code: 'upstream_busy', retryAfter: 10 } });
    for (let i = 0; i < 7; i++) expect(await limiter.admit(b, 'chat')).toEqual({ ok: true });
    expect(await limiter.admit(b, 'chat')).toEqual({ ok: false, error: { code: 'rate_limit_exceeded', retryAfter: 1 } });
    time = T0 + 10_000;
    expect(await limiter.admit({ id: 'acc_c', plan: 'free' }, 'fetch')).toEqual({ ok: true });
  });

  it('falls back to EVAL after SCRIPT FLUSH and loads the script again', async () => {
    let evals = 0;
    const counting: RedisLike = {
      evalsha: (...args) => client.evalsha(...args),
      eval: (...args) => {
        evals++;
        return client.eval(...args);
      },
    };
    const store = redisLimiter(counting, { prefix: 'flush:' });
    const limit = { key: '{acc_f}:rate:plan', intervalMs: 1000, burst: 2 };
    await store.rate([limit], T0);
    await client.script('FLUSH');
    const before = evals;
    expect(await store.rate([limit], T0)).toEqual({ ok: true });
    expect(evals).toBe(before + 1);
    expect(await store.rate([limit], T0)).toEqual({ ok: false, error: { index: 0, retryAfterMs: 1000 } });
    expect(evals).toBe(before + 1);
  });

  it('refuses a prefix with braces', () => {
    expect(() => redisLimiter(client, { prefix: 'a{b}:' })).toThrow(TypeError);
  });
});

describe.runIf(available)('createLimiter when Redis is down', () => {
  let server: RedisServer;
  let client: Redis;

  beforeAll(async () => {
    server = await startRedis();
    // Fail fast instead of queueing commands while reconnecting.
    client = new Redis(server.url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => {});
    await new Promise((resolve) => client.once('ready', resolve));
  });
  afterAll(async () => {
    client?.disconnect();
    await server?.stop();
  });

  it('fails closed with service_unavailable by default, admits when open', async () => {
    const closed = createLimiter({ store: redisLimiter(client) });
    const open = createLimiter({ store: redisLimiter(client), onStoreError: 'open' });
    const account = { id: 'acc_down', plan: 'free' } as const;
    expect(await closed.admit(account, 'chat')).toEqual({ ok: true });
    await server.stop();
    expect(await closed.admit(account, 'chat')).toEqual({ ok: false, error: { code: 'service_unavailable', retryAfter: 1 } });
    expect(await closed.acquire(account, 'chat')).toEqual({ ok: false, error: { code: 'service_unavailable', retryAfter: 1 } });
    expect(await open.admit(account, 'chat')).toEqual({ ok: true });
    const slot = await open.acquire(account, 'chat');
    expect(slot.ok).toBe(true);
    if (slot.ok) await expect(slot.value.release()).resolves.toBeUndefined();
  });

  it('a client that queues while reconnecting is cut off by storeTimeoutMs', async () => {
    const queueing = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: null });
    queueing.on('error', () => {});
    try {
      const limiter = createLimiter({ store: redisLimiter(queueing), storeTimeoutMs: 50 });
      expect(await limiter.admit({ id: 'acc_q', plan: 'free' }, 'chat')).toEqual({ ok: false, error: { code: 'service_unavailable', retryAfter: 1 } });
    } finally {
      queueing.disconnect();
    }
  });
});
