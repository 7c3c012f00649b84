/**
 * The admin HTTP API (admin-api.ts, docs/admin-api.md) over the memory store, through its fetch:
 * every route, every error, the token, idempotent credits and pagination.
 */
import { describe, expect, it } from 'vitest';
import { hashKey, memoryStore, type Store } from '@tollgate/billing';
import { createAdminApi } from './admin-api';

const TOKEN = 'admin-token-0123456789-abcdef';

interface Reply {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

function harness(store: Store = memoryStore(), onError?: (error: unknown) => void) {
  const admin = createAdminApi({ store, token: TOKEN, ...(onError ? { onError } : {}) });
  const texts: string[] = [];
  const call = async (
    method: string,
    path: string,
    options: { body?: unknown; headers?: Record<string, string>; token?: string | null } = {},
  ): Promise<Reply> => {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token !== null) headers.authorization = `Bearer ${options.token ?? TOKEN}`;
    const init: RequestInit = { method, headers };
    if (options.body !== undefined) init.body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    const response = await admin.fetch(new Request(`http://admin.test${path}`, init));
    const text = await response.text();
    texts.push(text);
    return { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text), text };
  };
  const account = async (plan = 'free') => (await call('POST', '/admin/v1/accounts', { body: { plan } })).body as { id: string };
  const credit = (accountId: string, micros: unknown, key: string) =>
    call('POST', `/admin/v1/accounts/${accountId}/credits`, { body: { micros }, headers: { 'idempotency-key': key } });
  return { store, admin, call, account, credit, texts };
}

/** The error envelope exactly: four fields, `param` the field or null. */
function expectError(reply: Reply, status: number, code: string, param: string | null = null) {
  expect(reply.status).toBe(status);
  expect(reply.headers.get('content-type')).toBe('application/json');
  expect(Object.keys(reply.body)).toEqual(['error']);
  expect(Object.keys(reply.body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  expect(reply.body.error).toMatchObject({ code, param, type: status === 503 ? 'server_error' : 'invalid_request_error' });
  expect(typeof reply.body.error.message).toBe('string');
}

describe('admin token', () => {
  it('answers 401 invalid_admin_token to a missing, wrong, truncated or non-Bearer token, on every path', async () => {
    const { call } = harness();
    for (const path of ['/admin/v1/accounts', '/admin/v1/nope', '/elsewhere']) {
      expectError(await call('GET', path, { token: null }), 401, 'invalid_admin_token');
      expectError(await call('GET', path, { token: 'wrong-token-0123456789-abcdef' }), 401, 'invalid_admin_token');
      expectError(await call('GET', path, { token: TOKEN.slice(0, -1) }), 401, 'invalid_admin_token');
      expectError(await call('GET', path, { token: `${TOKEN}x` }), 401, 'invalid_admin_token');
      expectError(await call('GET', path, { token: '' }), 401, 'invalid_admin_token');
      expectError(await call('GET', path, { token: null, headers: { authorization: `Basic ${TOKEN}` } }), 401, 'invalid_admin_token');
    }
    const refused = await call('GET', '/admin/v1/accounts', { token: null });
    expect(refused.headers.get('www-authenticate')).toBe('Bearer');
    // Bearer is matched case-insensitively and the token trimmed, as the gateway does for keys.
    expect((await call('GET', '/admin/v1/accounts', { token: null, headers: { authorization: `bearer  ${TOKEN} ` } })).status).toBe(200);
  });

  it('refuses a token shorter than 16 characters at creation', () => {
    expect(() => createAdminApi({ store: memoryStore(), token: 'short' })).toThrow(/16 characters/);
    expect(() => createAdminApi({ store: memoryStore(), token: undefined as unknown as string })).toThrow(/16 characters/);
  });
});

describe('routing', () => {
  it('unknown paths are 404 not_found, a wrong method 405 method_not_allowed with Allow', async () => {
    const { call } = harness();
    for (const path of [
      '/admin/v1',
      '/admin/v1/',
      '/admin/v1/things',
      '/admin/v1/accounts/a/b/c',
      '/admin/v1/keys',
      '/admin/v1/accounts/x/nope',
      '/v1/models',
      '/admin/v1/accounts/%E0%A4%A',
      // A control character is in no id (PostgreSQL refuses a NUL outright: a 503 before).
      '/admin/v1/accounts/%00',
      '/admin/v1/keys/key%01x',
    ]) {
      expectError(await call('GET', path), 404, 'not_found');
    }
    const wrong = await call('DELETE', '/admin/v1/accounts');
    expectError(wrong, 405, 'method_not_allowed');
    expect(wrong.headers.get('allow')).toBe('GET, POST');
    expect((await call('GET', '/admin/v1/keys/key_x/revoke')).headers.get('allow')).toBe('POST');
    expectError(await call('POST', '/admin/v1/accounts/acc_x/balance'), 405, 'method_not_allowed');
  });

  it('a store that throws is 503 service_unavailable, handed to onError, never a 500', async () => {
    const errors: unknown[] = [];
    const store = memoryStore();
    const broken = new Proxy(store, {
      get(target, name, receiver) {
        if (name === 'getAccount' || name === 'listAccounts') return async () => Promise.reject(new Error('database down'));
        return Reflect.get(target, name, receiver);
      },
    });
    const { call } = harness(broken, (error) => errors.push(error));
    const reply = await call('GET', '/admin/v1/accounts/acc_1');
    expectError(reply, 503, 'service_unavailable');
    expect(reply.text).not.toContain('database down');
    expectError(await call('GET', '/admin/v1/accounts'), 503, 'service_unavailable');
    expect(errors).toHaveLength(2);
  });
});

describe('a body that does not arrive', () => {
  it('is 408 request_timeout after 10 seconds on the clock', async () => {
    let calls = 0;
    // The request starts at 0; every later look at the clock is 20 s on, past the body's 10 s.
    const admin = createAdminApi({ store: memoryStore(), token: TOKEN, now: () => (calls++ === 0 ? 0 : 20_000) });
    const body = new ReadableStream<Uint8Array>({ pull: () => new Promise(() => {}) });
    const request = new Request('http://admin.test/admin/v1/accounts', {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}` },
      body,
      duplex: 'half',
    } as RequestInit);
    const response = await admin.fetch(request);
    expectError({ status: response.status, headers: response.headers, body: await response.json(), text: '' }, 408, 'request_timeout');
  });
});

describe('a store that throws for an unknown account', () => {
  it('is 404 not_found, not 503: the account is looked up again after the throw', async () => {
    const store = memoryStore();
    const { id } = await store.createAccount({ plan: 'free' });
    let lookups = 0;
    // The account is there for the first look, gone by the time the store writes (as a store
    // shared with another process may see it), and the store throws its own "unknown account".
    const vanishing = new Proxy(store, {
      get(target, name, receiver) {
        if (name === 'getAccount') return async (accountId: string) => (lookups++ === 0 ? target.getAccount(accountId) : undefined);
        if (name === 'setPlan') return async (accountId: string) => Promise.reject(new Error(`unknown account ${accountId}`));
        return Reflect.get(target, name, receiver);
      },
    });
    const errors: unknown[] = [];
    const { call } = harness(vanishing, (error) => errors.push(error));
    expectError(await call('PUT', `/admin/v1/accounts/${id}/plan`, { body: { plan: 'pro' } }), 404, 'not_found');
    expect(errors).toEqual([]);
  });
});

describe('accounts', () => {
  it('creates (201, plan free by default), gets, sets plan and state', async () => {
    const { call } = harness();
    const created = await call('POST', '/admin/v1/accounts', { body: { plan: 'plus' } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ object: 'account', id: expect.stringMatching(/^acc_/), plan: 'plus', state: 'active' });
    const id = created.body.id as string;
    const bare = await call('POST', '/admin/v1/accounts');
    expect(bare.status).toBe(201);
    expect(bare.body.plan).toBe('free');
    expect((await call('POST', '/admin/v1/accounts', { body: {} })).body.plan).toBe('free');
    expect((await call('GET', `/admin/v1/accounts/${id}`)).body).toEqual(created.body);
    const plan = await call('PUT', `/admin/v1/accounts/${id}/plan`, { body: { plan: 'max' } });
    expect(plan.status).toBe(200);
    expect(plan.body).toEqual({ object: 'account', id, plan: 'max', state: 'active' });
    const state = await call('PUT', `/admin/v1/accounts/${id}/state`, { body: { state: 'disabled' } });
    expect(state.body).toEqual({ object: 'account', id, plan: 'max', state: 'disabled' });
    expect((await call('GET', `/admin/v1/accounts/${id}`)).body.state).toBe('disabled');
  });

  it('refuses bad input with 400 naming the field, and unknown accounts with 404', async () => {
    const { call, account } = harness();
    const { id } = await account();
    expectError(await call('POST', '/admin/v1/accounts', { body: { plan: 'gold' } }), 400, 'invalid_parameter', 'plan');
    expectError(await call('POST', '/admin/v1/accounts', { body: { plan: 1 } }), 400, 'invalid_parameter', 'plan');
    expectError(await call('POST', '/admin/v1/accounts', { body: { plan: 'free', id: 'acc_mine' } }), 400, 'invalid_parameter', 'id');
    expectError(await call('POST', '/admin/v1/accounts', { body: '{"plan":' }), 400, 'invalid_request_body');
    expectError(await call('POST', '/admin/v1/accounts', { body: '[]' }), 400, 'invalid_request_body');
    expectError(await call('POST', '/admin/v1/accounts', { body: '{"plan":"free","plan":"max"}' }), 400, 'invalid_request_body');
    expectError(await call('POST', '/admin/v1/accounts', { body: 'x'.repeat(70_000) }), 413, 'request_too_large');
    expectError(await call('PUT', `/admin/v1/accounts/${id}/plan`, { body: {} }), 400, 'invalid_parameter', 'plan');
    expectError(await call('PUT', `/admin/v1/accounts/${id}/plan`, { body: { plan: 'Plus' } }), 400, 'invalid_parameter', 'plan');
    expectError(await call('PUT', `/admin/v1/accounts/${id}/state`, { body: { state: 'banned' } }), 400, 'invalid_parameter', 'state');
    expectError(await call('PUT', `/admin/v1/accounts/${id}/state`, { body: { state: null } }), 400, 'invalid_parameter', 'state');
    expectError(await call('GET', `/admin/v1/accounts/${id}?verbose=1`), 400, 'invalid_parameter', 'verbose');
    for (const [method, path, body] of [
      ['GET', '/admin/v1/accounts/acc_nope', undefined],
      ['PUT', '/admin/v1/accounts/acc_nope/plan', { plan: 'pro' }],
      ['PUT', '/admin/v1/accounts/acc_nope/state', { state: 'active' }],
      ['GET', '/admin/v1/accounts/acc_nope/keys', undefined],
      ['POST', '/admin/v1/accounts/acc_nope/keys', { name: 'x' }],
      ['GET', '/admin/v1/accounts/acc_nope/balance', undefined],
      ['GET', '/admin/v1/accounts/acc_nope/entries', undefined],
      ['GET', '/admin/v1/accounts/acc_nope/usage?from=2026-11-01&to=2026-11-02', undefined],
    ] as const) {
      expectError(await call(method, path, body === undefined ? {} : { body }), 404, 'not_found');
    }
  });

  it('lists accounts in pages: limit, next_cursor, the last page has none, and every account once', async () => {
    let tick = Date.UTC(2026, 0, 1);
    // Accounts are listed by creation time (then id): a clock that moves keeps the creation order.
    const { call, account } = harness(memoryStore({ now: () => tick++ }));
    const ids: string[] = [];
    for (let index = 0; index < 7; index++) ids.push((await account()).id);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const reply: Reply = await call('GET', `/admin/v1/accounts?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(reply.status).toBe(200);
      expect(reply.body.object).toBe('list');
      expect(reply.body.data.length).toBeLessThanOrEqual(3);
      seen.push(...reply.body.data.map((each: { id: string }) => each.id));
      cursor = reply.body.next_cursor;
      pages++;
    } while (cursor !== null);
    expect(pages).toBe(3);
    expect(seen).toEqual(ids);
    const all = await call('GET', '/admin/v1/accounts');
    expect(all.body.data.map((each: { id: string }) => each.id)).toEqual(ids);
    expect(all.body.next_cursor).toBeNull();
    for (const limit of ['0', '1001', 'x', '-1', '1.5', ''])
      expectError(await call('GET', `/admin/v1/accounts?limit=${limit}`), 400, 'invalid_parameter', 'limit');
    expectError(await call('GET', '/admin/v1/accounts?cursor=garbage'), 400, 'invalid_parameter', 'cursor');
    expectError(await call('GET', '/admin/v1/accounts?cursor='), 400, 'invalid_parameter', 'cursor');
    expectError(await call('GET', '/admin/v1/accounts?limit=1&limit=2'), 400, 'invalid_parameter', 'limit');
    expectError(await call('GET', '/admin/v1/accounts?offset=2'), 400, 'invalid_parameter', 'offset');
  });
});

describe('keys', () => {
  it('creates a key (its secret shown once), lists, gets, renames and revokes; no reply ever shows a hash or a secret again', async () => {
    const { call, account, store, texts } = harness();
    const { id } = await account('pro');
    const created = await call('POST', `/admin/v1/accounts/${id}/keys`, { body: { name: 'laptop' } });
    expect(created.status).toBe(201);
    const secret = created.body.secret as string;
    expect(secret).toMatch(/^sk_svc_[A-Za-z0-9]{43}$/);
    expect(created.body).toEqual({
      object: 'key',
      id: expect.stringMatching(/^key_/),
      name: 'laptop',
      account_id: id,
      prefix: secret.slice(0, 11),
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      revoked_at: null,
      budget: null,
      secret,
    });
    const keyId = created.body.id as string;
    const { secret: _shown, ...info } = created.body;
    expect((await store.findKey(await hashKey(secret)))?.id).toBe(keyId);

    expect((await call('GET', `/admin/v1/keys/${keyId}`)).body).toEqual(info);
    const list = await call('GET', `/admin/v1/accounts/${id}/keys`);
    expect(list.body).toEqual({ object: 'list', data: [info], next_cursor: null });
    const renamed = await call('PATCH', `/admin/v1/keys/${keyId}`, { body: { name: 'desktop' } });
    expect(renamed.body).toEqual({ ...info, name: 'desktop' });
    const revoked = await call('POST', `/admin/v1/keys/${keyId}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.revoked_at).toMatch(/Z$/);
    expect(await store.findKey(await hashKey(secret))).toBeUndefined();
    // Idempotent: the same revocation time again.
    expect((await call('POST', `/admin/v1/keys/${keyId}/revoke`, { body: {} })).body).toEqual(revoked.body);
    expect((await call('GET', `/admin/v1/accounts/${id}/keys`)).body.data).toEqual([revoked.body]);

    const hash = await hashKey(secret);
    const others = texts.filter((text) => text !== created.text);
    expect(others.length).toBeGreaterThan(5);
    for (const text of others) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(secret.slice(11));
      expect(text).not.toContain(hash);
      expect(text).not.toContain('secret');
    }
    expect(created.text).not.toContain(hash);
  });

  it('refuses bad names and unknown keys', async () => {
    const { call, account } = harness();
    const { id } = await account();
    for (const name of ['', '   ', 'x'.repeat(101), 'tab\there', 42, null]) {
      expectError(await call('POST', `/admin/v1/accounts/${id}/keys`, { body: { name } }), 400, 'invalid_parameter', 'name');
    }
    expectError(await call('POST', `/admin/v1/accounts/${id}/keys`, { body: {} }), 400, 'invalid_parameter', 'name');
    expectError(await call('POST', `/admin/v1/accounts/${id}/keys`, { body: { name: 'a', secret: 'x' } }), 400, 'invalid_parameter', 'secret');
    const { body } = await call('POST', `/admin/v1/accounts/${id}/keys`, { body: { name: 'ok' } });
    expectError(await call('PATCH', `/admin/v1/keys/${body.id}`, { body: { name: '' } }), 400, 'invalid_parameter', 'name');
    expectError(await call('GET', '/admin/v1/keys/key_nope'), 404, 'not_found');
    expectError(await call('PATCH', '/admin/v1/keys/key_nope', { body: { name: 'x' } }), 404, 'not_found');
    expectError(await call('POST', '/admin/v1/keys/key_nope/revoke'), 404, 'not_found');
    expectError(await call('POST', `/admin/v1/keys/${body.id}/revoke`, { body: { now: true } }), 400, 'invalid_parameter', 'now');
  });
});

describe('key budgets', () => {
  it("PUT /keys/{id}/budget sets a spend limit, GET shows it with the period's spend, DELETE clears it", async () => {
    let time = Date.UTC(2026, 10, 26, 13);
    const store = memoryStore({ now: () => time });
    const { call, account } = harness(store);
    const { id } = await account();
    await call('POST', `/admin/v1/accounts/${id}/credits`, { body: { micros: 100_000 }, headers: { 'idempotency-key': 'budget-test' } });
    const key = (await call('POST', `/admin/v1/accounts/${id}/keys`, { body: { name: 'ci' } })).body as { id: string };
    const path = `/admin/v1/keys/${key.id}/budget`;
    const set = await call('PUT', path, { body: { micros: 5_000, period: 'day' } });
    expect(set.status).toBe(200);
    expect(set.headers.get('cache-control')).toBe('no-store');
    expect(set.body).toMatchObject({ object: 'key', id: key.id, account_id: id });
    expect(set.body.budget).toEqual({ micros: 5_000, period: 'day', spent_micros: 0, period_start: '2026-11-26T00:00:00.000Z' });

    // The key's charges count; the spend is the period's.
    const hold = await store.hold(id, { micros: 1_000, ttlMs: 60_000, keyId: key.id });
    if (!hold.ok) throw new Error('hold refused');
    await store.settle(hold.value.holdId, { micros: 1_200 });
    expect((await call('GET', `/admin/v1/keys/${key.id}`)).body.budget).toEqual({
      micros: 5_000,
      period: 'day',
      spent_micros: 1_200,
      period_start: '2026-11-26T00:00:00.000Z',
    });
    expect((await call('GET', `/admin/v1/accounts/${id}/keys`)).body.data[0].budget.spent_micros).toBe(1_200);
    time = Date.UTC(2026, 10, 27);
    expect((await call('GET', `/admin/v1/keys/${key.id}`)).body.budget).toMatchObject({ spent_micros: 0, period_start: '2026-11-27T00:00:00.000Z' });
    time = Date.UTC(2026, 10, 27, 9);
    // Changing the period recounts the key's charges of the new period from the ledger; total has no period start.
    expect((await call('PUT', path, { body: { micros: 9_000, period: 'month' } })).body.budget).toEqual({
      micros: 9_000,
      period: 'month',
      spent_micros: 1_200,
      period_start: '2026-11-01T00:00:00.000Z',
    });
    expect((await call('PUT', path, { body: { micros: 0, period: 'total' } })).body.budget).toEqual({
      micros: 0,
      period: 'total',
      spent_micros: 1_200,
      period_start: null,
    });
    // The store now refuses the key's holds for its budget.
    expect(await store.hold(id, { micros: 0, ttlMs: 60_000, keyId: key.id })).toMatchObject({ ok: false, error: { reason: 'key_budget' } });

    const cleared = await call('DELETE', path);
    expect(cleared.status).toBe(200);
    expect(cleared.body.budget).toBeNull();
    expect((await call('GET', `/admin/v1/keys/${key.id}`)).body.budget).toBeNull();
    expect((await call('DELETE', path, { body: {} })).body.budget).toBeNull();
    expect((await store.hold(id, { micros: 0, ttlMs: 60_000, keyId: key.id })).ok).toBe(true);
  });

  it('refuses a malformed budget naming the field, an unknown key with 404, and other methods with 405', async () => {
    const { call, account, store } = harness();
    const { id } = await account();
    const key = (await call('POST', `/admin/v1/accounts/${id}/keys`, { body: { name: 'ci' } })).body as { id: string };
    const path = `/admin/v1/keys/${key.id}/budget`;
    for (const micros of [-1, 1.5, '100', null, Number.MAX_SAFE_INTEGER + 2, true]) {
      expectError(await call('PUT', path, { body: { micros, period: 'day' } }), 400, 'invalid_parameter', 'micros');
    }
    for (const period of ['week', 'DAY', '', 1, null]) {
      expectError(await call('PUT', path, { body: { micros: 10, period } }), 400, 'invalid_parameter', 'period');
    }
    expectError(await call('PUT', path, { body: { period: 'day' } }), 400, 'invalid_parameter', 'micros');
    expectError(await call('PUT', path, { body: { micros: 10 } }), 400, 'invalid_parameter', 'period');
    expectError(await call('PUT', path, { body: { micros: 10, period: 'day', spent: 0 } }), 400, 'invalid_parameter', 'spent');
    expectError(await call('DELETE', path, { body: { micros: 0 } }), 400, 'invalid_parameter', 'micros');
    expectError(await call('PUT', path, { body: '[1]' }), 400, 'invalid_request_body');
    // Nothing was set by any of them.
    expect((await store.getKey(key.id))?.budget).toBeUndefined();
    expectError(await call('PUT', '/admin/v1/keys/key_nope/budget', { body: { micros: 10, period: 'day' } }), 404, 'not_found');
    expectError(await call('DELETE', '/admin/v1/keys/key_nope/budget'), 404, 'not_found');
    const wrong = await call('GET', path);
    expectError(wrong, 405, 'method_not_allowed');
    expect(wrong.headers.get('allow')).toBe('PUT, DELETE');
    expectError(await call('POST', path, { body: { micros: 10, period: 'day' } }), 405, 'method_not_allowed');
  });
});

describe('credits', () => {
  it('adds once per Idempotency-Key: 201 first, then 200 with Idempotent-Replayed: true and the same entry', async () => {
    const { call, account, credit } = harness();
    const { id } = await account();
    const first = await credit(id, 2_500_000, 'payment-1');
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBe('false');
    expect(first.body).toEqual({
      object: 'credit',
      entry: expect.objectContaining({ object: 'ledger_entry', account_id: id, kind: 'credit', micros: 2_500_000, idempotency_key: 'payment-1' }),
      balance: { account_id: id, object: 'balance', balance_micros: 2_500_000, held_micros: 0, available_micros: 2_500_000 },
    });
    const replay = await credit(id, 2_500_000, 'payment-1');
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.entry).toEqual(first.body.entry);
    expect(replay.body.balance.balance_micros).toBe(2_500_000);
    const note = await call('POST', `/admin/v1/accounts/${id}/credits`, { body: { micros: 1, note: 'refund #7' }, headers: { 'idempotency-key': 'refund-7' } });
    expect(note.body.entry.meta).toEqual({ note: 'refund #7' });
    expect((await call('GET', `/admin/v1/accounts/${id}/balance`)).body).toEqual({
      object: 'balance',
      balance_micros: 2_500_001,
      held_micros: 0,
      available_micros: 2_500_001,
      account_id: id,
    });
  });

  it('the same key with another amount or account is 409 idempotency_conflict, and adds nothing', async () => {
    const { account, credit, store } = harness();
    const a = await account();
    const b = await account();
    expect((await credit(a.id, 100, 'k1')).status).toBe(201);
    expectError(await credit(a.id, 101, 'k1'), 409, 'idempotency_conflict');
    expectError(await credit(b.id, 100, 'k1'), 409, 'idempotency_conflict');
    expect((await store.getBalance(a.id)).balance).toBe(100);
    expect((await store.getBalance(b.id)).balance).toBe(0);
  });

  it('20 concurrent identical calls add once', async () => {
    const { account, credit, store } = harness();
    const { id } = await account();
    const replies = await Promise.all(Array.from({ length: 20 }, () => credit(id, 777, 'webhook-evt-1')));
    expect(replies.filter((reply) => reply.status === 201)).toHaveLength(1);
    expect(replies.filter((reply) => reply.status === 200 && reply.headers.get('idempotent-replayed') === 'true')).toHaveLength(19);
    expect(new Set(replies.map((reply) => reply.body.entry.id)).size).toBe(1);
    expect((await store.getBalance(id)).balance).toBe(777);
    expect(await store.entries(id)).toHaveLength(1);
  });

  it('refuses a missing or bad Idempotency-Key, bad amounts and unknown accounts', async () => {
    const { call, account, credit } = harness();
    const { id } = await account();
    expectError(await call('POST', `/admin/v1/accounts/${id}/credits`, { body: { micros: 5 } }), 400, 'invalid_parameter', 'Idempotency-Key');
    expectError(await credit(id, 5, 'x'.repeat(256)), 400, 'invalid_parameter', 'Idempotency-Key');
    expectError(await credit(id, 5, 'has space'), 400, 'invalid_parameter', 'Idempotency-Key');
    for (const micros of [0, -1, 1.5, '100', null, true, Number.MAX_SAFE_INTEGER + 1, 1e300]) {
      expectError(await credit(id, micros, `bad-${String(micros)}`), 400, 'invalid_parameter', 'micros');
    }
    expectError(await call('POST', `/admin/v1/accounts/${id}/credits`, { body: {}, headers: { 'idempotency-key': 'k' } }), 400, 'invalid_parameter', 'micros');
    expectError(
      await call('POST', `/admin/v1/accounts/${id}/credits`, { body: { micros: 1, note: 7 }, headers: { 'idempotency-key': 'k' } }),
      400,
      'invalid_parameter',
      'note',
    );
    expectError(await credit('acc_nope', 5, 'k'), 404, 'not_found');
    // Up to the largest safe integer is taken; past it the balance would not be exact.
    expect((await credit(id, Number.MAX_SAFE_INTEGER, 'max')).status).toBe(201);
    expectError(await credit(id, 1, 'one-more'), 400, 'invalid_parameter', 'micros');
  });
});

describe('ledger entries and usage', () => {
  it('pages through the entries oldest first; a cursor of another account is 400', async () => {
    const { call, account, credit, store } = harness();
    const { id } = await account();
    const other = await account();
    for (let index = 1; index <= 5; index++) await credit(id, index, `c${index}`);
    const hold = await store.hold(id, { micros: 3, ttlMs: 60_000, requestId: 'req_1', keyId: 'key_1', model: 'm' });
    if (!hold.ok) throw new Error('no hold');
    await store.settle(hold.value.holdId, { micros: 2, promptTokens: 10, completionTokens: 4 });
    const seen: any[] = [];
    let cursor: string | null = null;
    do {
      const reply: Reply = await call('GET', `/admin/v1/accounts/${id}/entries?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(reply.status).toBe(200);
      seen.push(...reply.body.data);
      cursor = reply.body.next_cursor;
    } while (cursor !== null);
    expect(seen.map((entry) => entry.micros)).toEqual([1, 2, 3, 4, 5, -2]);
    expect(seen.at(-1)).toMatchObject({
      kind: 'charge',
      key_id: 'key_1',
      model: 'm',
      prompt_tokens: 10,
      completion_tokens: 4,
      request_id: 'req_1',
      idempotency_key: null,
    });
    const page = await call('GET', `/admin/v1/accounts/${id}/entries?limit=2`);
    expectError(await call('GET', `/admin/v1/accounts/${other.id}/entries?cursor=${page.body.next_cursor}`), 400, 'invalid_parameter', 'cursor');
  });

  it('sums usage per UTC hour or day, key and model, filtered; validates the query', async () => {
    let now = Date.UTC(2026, 10, 26, 13, 30);
    const store = memoryStore({ now: () => now });
    const { call, account, credit } = harness(store);
    const { id } = await account();
    await credit(id, 1_000_000, 'fund');
    const charge = async (keyId: string, model: string, micros: number) => {
      const hold = await store.hold(id, { micros, ttlMs: 60_000, keyId, model });
      if (!hold.ok) throw new Error('no hold');
      await store.settle(hold.value.holdId, { micros, promptTokens: 3, completionTokens: 2 });
    };
    await charge('key_a', 'm1', 100);
    await charge('key_a', 'm1', 50);
    await charge('key_b', 'm2', 7);
    now = Date.UTC(2026, 10, 26, 15, 5);
    await charge('key_a', 'm1', 10);
    const day = await call('GET', `/admin/v1/accounts/${id}/usage?from=2026-11-26&to=2026-11-27&group_by=day`);
    expect(day.status).toBe(200);
    expect(day.body).toEqual({
      account_id: id,
      object: 'list',
      group_by: 'day',
      from: '2026-11-26T00:00:00.000Z',
      to: '2026-11-27T00:00:00.000Z',
      data: [
        {
          object: 'usage',
          period_start: '2026-11-26T00:00:00.000Z',
          key_id: 'key_a',
          model: 'm1',
          requests: 3,
          prompt_tokens: 9,
          completion_tokens: 6,
          cost_micros: 160,
        },
        {
          object: 'usage',
          period_start: '2026-11-26T00:00:00.000Z',
          key_id: 'key_b',
          model: 'm2',
          requests: 1,
          prompt_tokens: 3,
          completion_tokens: 2,
          cost_micros: 7,
        },
      ],
    });
    const hour = await call('GET', `/admin/v1/accounts/${id}/usage?from=${Date.UTC(2026, 10, 26) / 1000}&to=2026-11-26T16:00:00Z&group_by=hour&key_id=key_a`);
    expect(hour.body.data.map((row: any) => [row.period_start, row.cost_micros])).toEqual([
      ['2026-11-26T13:00:00.000Z', 150],
      ['2026-11-26T15:00:00.000Z', 10],
    ]);
    const model = await call('GET', `/admin/v1/accounts/${id}/usage?from=2026-11-26&to=2026-11-27&model=m2`);
    expect(model.body.group_by).toBe('day');
    expect(model.body.data.map((row: any) => row.cost_micros)).toEqual([7]);
    const bad: [string, string][] = [
      ['to=2026-11-27', 'from'],
      ['from=2026-11-26', 'to'],
      ['from=2026-11-26&to=2026-11-26', 'to'],
      ['from=2026-11-27&to=2026-11-26', 'to'],
      ['from=2026-02-30&to=2026-03-02', 'from'],
      ['from=yesterday&to=2026-11-27', 'from'],
      ['from=2026-11-26T10:00:00&to=2026-11-27', 'from'],
      ['from=2026-11-26&to=2026-11-27&group_by=week', 'group_by'],
      ['from=2026-01-01&to=2026-03-01&group_by=hour', 'to'],
      ['from=2025-01-01&to=2026-03-01', 'to'],
      ['from=2026-11-26&to=2026-11-27&key_id=', 'key_id'],
      ['from=2026-11-26&to=2026-11-27&limit=5', 'limit'],
      ['from=2026-11-26&from=2026-11-25&to=2026-11-27', 'from'],
    ];
    for (const [query, param] of bad) expectError(await call('GET', `/admin/v1/accounts/${id}/usage?${query}`), 400, 'invalid_parameter', param);
  });
});
