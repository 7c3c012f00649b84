/**
 * The verified-key cache (key-cache.ts, docs/architecture.md "Key cache"): hits skip
 * `store.findKey`, entries expire after `keyCacheMs` on the gateway's clock, changes made through
 * the admin actions and admin API given the gateway take effect at the next request, changes made
 * anywhere else within `keyCacheMs`, and the cache never holds more than its bound.
 */
import { describe, expect, it, vi } from 'vitest';
import { ERROR_CATALOGUE, type ErrorCode } from '@tollgate/core';
import { type KeyRecord, memoryStore, type Store } from '@tollgate/billing';
import { createAdminApi } from './admin-api';
import { createAdminActions } from './admin-actions';
import { createKeyCache, DEFAULT_KEY_CACHE_MS, KEY_CACHE_MAX_ENTRIES } from './key-cache';
import { chatBody, setup, type SetupOptions } from '../test/test-harness';
import { manualClock } from '../test/test-timers';

const ADMIN_TOKEN = 'admin-token-0123456789-abcdef';

/** A gateway over a memory store whose `findKey` calls are counted; balance reads are never rate-limited. */
async function counted(options: SetupOptions = {}) {
  const clock = manualClock();
  const store = memoryStore({ now: clock.now });
  const findKey = vi.spyOn(store, 'findKey');
  const t = await setup({ clock, store, ...options });
  const asks = () => findKey.mock.calls.length;
  const balance = async (key = t.key) => (await t.get('/v1/balance', { authorization: `Bearer ${key}` })).status;
  return { ...t, asks, balance };
}

/** The error code of a refusal, after checking its status is the catalogue's. */
async function codeOf(response: Response): Promise<ErrorCode> {
  const { code } = ((await response.json()) as { error: { code: ErrorCode } }).error;
  expect(response.status).toBe(ERROR_CATALOGUE[code].status);
  return code;
}

describe('hits and expiry', () => {
  it('asks the store once for a key used again within keyCacheMs (default 1 s), on every route', async () => {
    expect(DEFAULT_KEY_CACHE_MS).toBe(1_000);
    const t = await counted();
    expect((await t.post('/v1/chat/completions', chatBody())).status).toBe(200);
    expect(t.asks()).toBe(1);
    expect((await t.get('/v1/models')).status).toBe(200);
    expect(await t.balance()).toBe(200);
    t.clock.advance(999);
    expect((await t.post('/v1/chat/completions', chatBody())).status).toBe(200);
    expect(t.asks()).toBe(1);
    t.clock.advance(1);
    expect(await t.balance()).toBe(200);
    expect(t.asks()).toBe(2);
    // The answer asked at that moment is trusted for the next keyCacheMs.
    t.clock.advance(999);
    expect(await t.balance()).toBe(200);
    expect(t.asks()).toBe(2);
  });

  it('trusts a key for exactly keyCacheMs when set, then asks again', async () => {
    const t = await counted({ keyCacheMs: 30_000 });
    expect(await t.balance()).toBe(200);
    t.clock.advance(29_999);
    expect(await t.balance()).toBe(200);
    expect(t.asks()).toBe(1);
    t.clock.advance(1);
    expect(await t.balance()).toBe(200);
    expect(t.asks()).toBe(2);
  });

  it('with keyCacheMs: 0 asks the store on every request', async () => {
    const t = await counted({ keyCacheMs: 0 });
    for (let index = 0; index < 3; index++) expect(await t.balance()).toBe(200);
    expect((await t.post('/v1/chat/completions', chatBody())).status).toBe(200);
    expect(t.asks()).toBe(4);
    await t.store.revokeKey(t.keyId);
    expect(await codeOf(await t.get('/v1/balance'))).toBe('invalid_api_key');
  });

  it('never keeps an unknown key: one created a moment later works at once', async () => {
    const t = await counted();
    const unknown = `sk_svc_${'A1b2C3d4E5'.repeat(4)}xyz`;
    expect(await t.balance(unknown)).toBe(401);
    expect(await t.balance(unknown)).toBe(401);
    expect(t.asks()).toBe(2);
    const created = await t.store.createKey(t.accountId, 'new');
    expect(await t.balance(created.key)).toBe(200);
  });

  it('trusts nothing when the clock went back: the bound stays keyCacheMs of clock time', async () => {
    const t = await counted();
    expect(await t.balance()).toBe(200);
    t.clock.advance(-60_000);
    expect(await t.balance()).toBe(200);
    expect(t.asks()).toBe(2);
  });

  it('checks the account state on a cached key as on a fresh one', async () => {
    const t = await counted();
    await t.store.setAccountState(t.accountId, 'under_18');
    // Asked now: the under-18 account is cached, and refused on every hit.
    expect(await codeOf(await t.get('/v1/balance'))).toBe('account_under_18');
    expect(await codeOf(await t.post('/v1/chat/completions', chatBody()))).toBe('account_under_18');
    expect(t.asks()).toBe(1);
    expect(t.fake.requests).toHaveLength(0);
  });

  it('caches no app user: their account is read on every request', async () => {
    const target = { accountId: '' };
    const t = await counted({ authenticate: async (token) => (token === 'app-user' ? { accountId: target.accountId, funding: 'credits' } : undefined) });
    target.accountId = t.accountId;
    const getAccount = vi.spyOn(t.store, 'getAccount');
    expect(await t.balance('app-user')).toBe(200);
    await t.store.setAccountState(t.accountId, 'disabled');
    expect(await codeOf(await t.get('/v1/balance', { authorization: 'Bearer app-user' }))).toBe('account_disabled');
    expect(getAccount).toHaveBeenCalledTimes(2);
    expect(t.asks()).toBe(0);
  });
});

describe('changes through this gateway: at the next request', () => {
  /** An admin API over the test store, given the test gateway (as the reference server wires them). */
  function adminApi(t: Awaited<ReturnType<typeof counted>>) {
    const admin = createAdminApi({ store: t.store, token: ADMIN_TOKEN, gateway: t.gateway });
    return async (method: string, path: string, body?: unknown) => {
      const init: RequestInit = { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } };
      if (body !== undefined) init.body = JSON.stringify(body);
      const response = await admin.fetch(new Request(`http://admin.test/admin/v1${path}`, init));
      expect(response.status).toBe(200);
      return response.json();
    };
  }

  it('a key revoked through the admin API is refused (401 invalid_api_key) at its very next request; other keys stay cached', async () => {
    const t = await counted();
    const admin = adminApi(t);
    const other = await t.store.createKey(t.accountId, 'other');
    expect((await t.post('/v1/chat/completions', chatBody())).status).toBe(200);
    expect(await t.balance(other.key)).toBe(200);
    expect(t.asks()).toBe(2);
    await admin('POST', `/keys/${t.keyId}/revoke`);
    expect(await codeOf(await t.post('/v1/chat/completions', chatBody()))).toBe('invalid_api_key');
    expect(await codeOf(await t.get('/v1/models'))).toBe('invalid_api_key');
    expect(await t.balance(other.key)).toBe(200);
    expect(t.asks()).toBe(4); // the revoked key twice (unknown keys are not kept); the other key still cached
    expect(t.fake.requests).toHaveLength(1);
  });

  it("an account disabled through the admin API gets account_disabled at its keys' next request; enabled again, 200 at once", async () => {
    const t = await counted();
    const admin = adminApi(t);
    expect(await t.balance()).toBe(200);
    expect((await admin('PUT', `/accounts/${t.accountId}/state`, { state: 'disabled' })).state).toBe('disabled');
    expect(await codeOf(await t.post('/v1/chat/completions', chatBody()))).toBe('account_disabled');
    expect(await codeOf(await t.get('/v1/balance'))).toBe('account_disabled');
    await admin('PUT', `/accounts/${t.accountId}/state`, { state: 'active' });
    expect((await t.post('/v1/chat/completions', chatBody())).status).toBe(200);
    expect(t.fake.requests).toHaveLength(1);
  });

  it('a plan set through the admin API applies at the next request (model_requires_plan lifted)', async () => {
    const t = await counted();
    const admin = adminApi(t);
    expect(await codeOf(await t.post('/v1/chat/completions', chatBody({ model: 'smart' })))).toBe('model_requires_plan');
    await admin('PUT', `/accounts/${t.accountId}/plan`, { plan: 'plus' });
    expect((await t.post('/v1/chat/completions', chatBody({ model: 'smart' }))).status).toBe(200);
  });

  it("setting a state drops only that account's keys", async () => {
    const t = await counted();
    const stranger = await t.store.createAccount({ plan: 'free' });
    const strangerKey = await t.store.createKey(stranger.id, 'stranger');
    expect(await t.balance()).toBe(200);
    expect(await t.balance(strangerKey.key)).toBe(200);
    expect((await createAdminActions(t.store, { gateway: t.gateway }).setAccountState(stranger.id, 'deleted')).ok).toBe(true);
    expect(await t.balance()).toBe(200);
    expect(t.asks()).toBe(2);
    expect(await codeOf(await t.get('/v1/balance', { authorization: `Bearer ${strangerKey.key}` }))).toBe('account_deleted');
    expect(t.asks()).toBe(3);
  });

  it('a revoke racing the first request of a key: the answer read before it is used once, never kept', async () => {
    const clock = manualClock();
    const store = memoryStore({ now: clock.now });
    const real = store.findKey.bind(store);
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The store reads the key (live), then the revoke lands before that answer reaches the gateway.
    const slow = vi.spyOn(store, 'findKey').mockImplementationOnce(async (digest) => {
      const record = await real(digest);
      await gate;
      return record;
    });
    const t = await setup({ clock, store });
    const first = t.get('/v1/balance');
    await vi.waitFor(() => expect(slow).toHaveBeenCalledTimes(1));
    expect((await createAdminActions(t.store, { gateway: t.gateway }).revokeKey(t.keyId)).ok).toBe(true);
    release();
    expect((await first).status).toBe(200); // it began before the revoke
    expect(await codeOf(await t.get('/v1/balance'))).toBe('invalid_api_key');
  });

  it('admin actions without the gateway leave its cache alone: the change is seen within keyCacheMs', async () => {
    const t = await counted();
    expect(await t.balance()).toBe(200);
    await createAdminActions(t.store).revokeKey(t.keyId);
    expect(await t.balance()).toBe(200);
    t.clock.advance(DEFAULT_KEY_CACHE_MS);
    expect(await t.balance()).toBe(401);
  });
});

describe('changes made elsewhere (another instance, the CLI, the store directly): within keyCacheMs', () => {
  it('a key revoked on the store is served until keyCacheMs after it was verified, and refused from then on', async () => {
    const t = await counted({ keyCacheMs: 5_000 });
    expect(await t.balance()).toBe(200);
    t.clock.advance(2_000);
    await t.store.revokeKey(t.keyId);
    t.clock.advance(2_999);
    expect(await t.balance()).toBe(200);
    t.clock.advance(1);
    expect(await codeOf(await t.get('/v1/balance'))).toBe('invalid_api_key');
  });

  it('an account disabled on the store is refused with account_disabled once keyCacheMs passed, not before', async () => {
    const t = await counted();
    expect((await t.post('/v1/chat/completions', chatBody())).status).toBe(200);
    await t.store.setAccountState(t.accountId, 'disabled');
    expect(await t.balance()).toBe(200);
    t.clock.advance(DEFAULT_KEY_CACHE_MS - 1);
    expect((await t.post('/v1/chat/completions', chatBody())).status).toBe(200);
    t.clock.advance(1);
    expect(await codeOf(await t.post('/v1/chat/completions', chatBody()))).toBe('account_disabled');
    expect(t.fake.requests).toHaveLength(2);
  });

  it("the gateway's forgetKey and forgetAccount drop what an embedder changed on the store in this process", async () => {
    const t = await counted();
    expect(await t.balance()).toBe(200);
    await t.store.setAccountState(t.accountId, 'disabled');
    t.gateway.forgetAccount(t.accountId);
    expect(await codeOf(await t.get('/v1/balance'))).toBe('account_disabled');
    await t.store.setAccountState(t.accountId, 'active');
    t.gateway.forgetAccount(t.accountId);
    expect(await t.balance()).toBe(200);
    await t.store.revokeKey(t.keyId);
    t.gateway.forgetKey(t.keyId);
    expect(await codeOf(await t.get('/v1/balance'))).toBe('invalid_api_key');
  });
});

describe('bounds and options', () => {
  /** A store whose every digest is a live key of its own account, counting asks. */
  function everyKeyLive(): Pick<Store, 'findKey'> & { asks: string[] } {
    const asks: string[] = [];
    return {
      asks,
      findKey: async (digest): Promise<KeyRecord> => {
        asks.push(digest);
        return { id: `key_${digest}`, name: 'k', account: { id: `acc_${digest}`, plan: 'free', state: 'active' } };
      },
    };
  }

  it(`holds at most ${KEY_CACHE_MAX_ENTRIES.toLocaleString('en')} keys, evicting the oldest first`, async () => {
    const store = everyKeyLive();
    const cache = createKeyCache(store, { now: () => 0 });
    for (let index = 0; index <= KEY_CACHE_MAX_ENTRIES; index++) await cache.find(`d${index}`);
    expect(cache.size).toBe(KEY_CACHE_MAX_ENTRIES);
    expect(store.asks).toHaveLength(KEY_CACHE_MAX_ENTRIES + 1);
    // The newest is kept (a record, no promise), the oldest was evicted (asked again).
    expect(cache.find(`d${KEY_CACHE_MAX_ENTRIES}`)).toMatchObject({ id: `key_d${KEY_CACHE_MAX_ENTRIES}` });
    expect(cache.find('d1')).toMatchObject({ id: 'key_d1' });
    await cache.find('d0');
    expect(store.asks).toHaveLength(KEY_CACHE_MAX_ENTRIES + 2);
    expect(cache.size).toBe(KEY_CACHE_MAX_ENTRIES);
  });

  it('a key asked again after it expired is kept as the newest, so a busy key is not the next evicted', async () => {
    const store = everyKeyLive();
    const clock = manualClock();
    const cache = createKeyCache(store, { now: clock.now, maxEntries: 2 });
    await cache.find('a');
    await cache.find('b');
    clock.advance(DEFAULT_KEY_CACHE_MS);
    await cache.find('a'); // expired: asked again and moved behind b
    await cache.find('c'); // evicts b, the oldest
    expect(cache.size).toBe(2);
    expect(cache.find('a')).toMatchObject({ id: 'key_a' });
    expect(cache.find('c')).toMatchObject({ id: 'key_c' });
    await cache.find('b');
    expect(store.asks).toEqual(['a', 'b', 'a', 'c', 'b']);
  });

  it('drops an expired key that the store no longer finds, rather than keep asking through a stale entry', async () => {
    const live = everyKeyLive();
    let revoked = false;
    const clock = manualClock();
    const cache = createKeyCache({ findKey: (digest) => (revoked ? Promise.resolve(undefined) : live.findKey(digest)) }, { now: clock.now });
    await cache.find('a');
    expect(cache.size).toBe(1);
    revoked = true;
    clock.advance(DEFAULT_KEY_CACHE_MS);
    expect(await cache.find('a')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('refuses a keyCacheMs that is not a non-negative whole number of milliseconds', async () => {
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(setup({ keyCacheMs: bad })).rejects.toThrow(`keyCacheMs must be a non-negative whole number of milliseconds, not ${String(bad)}`);
    }
    expect((await setup({ keyCacheMs: 0 })).gateway.active).toBe(0);
  });
});
