import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, type ErrorCode, type Funding } from '@tollgate/core';
import { createAdminActions } from './admin-actions';
import type { AppPrincipal } from './gateway-options';
import { chatBody, setup, type SetupOptions, type TestGateway } from '../test/test-harness';

/** Asserts a refusal before billing: status, exact error record, version, and no request id or funding. */
async function expectRefusal(response: Response, code: ErrorCode): Promise<void> {
  const entry = ERROR_CATALOGUE[code];
  expect(response.status).toBe(entry.status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(response.headers.get('x-service-version')).toBe('tollgate/test');
  expect(response.headers.get('x-request-id')).toBeNull();
  expect(response.headers.get('x-funding')).toBeNull();
  expect(await response.json()).toEqual({ error: { message: entry.message, type: entry.type, param: null, code } });
}

/** The stores' digest of a key, computed synchronously (as `nodeHashKey` of `@tollgate/node` does). */
const hashKey = { sync: (key: string) => createHash('sha256').update(key).digest('hex') };

/**
 * The operator's actions on the test gateway's store, given the gateway: a revoke or an account
 * change reaches its key cache at once (key-cache.test.ts covers changes made around it).
 */
const adminOf = (t: TestGateway) => createAdminActions(t.store, { gateway: t.gateway });

/** A well-formed service key that no account holds. */
const UNKNOWN_KEY = `sk_svc_${'A1b2C3d4E5'.repeat(4)}xyz`;

const CHARACTER = 'You are Captain Marrow, a weary pirate who speaks only in riddles.';

/** A gateway whose app admits `app-included` and `app-credits` tokens for the test account. */
async function appSetup(options: SetupOptions = {}) {
  const target = { accountId: '' };
  const seen: string[] = [];
  const t = await setup({
    characters: [CHARACTER, 'You are Nova, a starship AI.'],
    authenticate: async (token): Promise<AppPrincipal | undefined> => {
      seen.push(token);
      const funding: Record<string, Funding> = { 'app-included': 'included', 'app-credits': 'credits' };
      if (token === 'app-ghost') return { accountId: 'acc_does_not_exist', funding: 'credits' };
      return funding[token] ? { accountId: target.accountId, funding: funding[token] } : undefined;
    },
    ...options,
  });
  target.accountId = t.accountId;
  const asApp = (token: string, body: unknown) => t.post('/v1/chat/completions', body, { authorization: `Bearer ${token}` });
  return { ...t, asApp, seen };
}

function characterChat(userText: string, extra: Record<string, unknown> = {}) {
  return chatBody({
    messages: [
      { role: 'system', content: `${CHARACTER} Never break character.` },
      { role: 'user', content: userText },
    ],
    ...extra,
  });
}

describe('401: keys and tokens (spec Authentication 3-4)', () => {
  it('refuses a missing header, a scheme that is not Bearer, and an empty token with invalid_api_key', async () => {
    const t = await setup();
    const none = await t.gateway.fetch(
      new Request('http://gateway.test/v1/chat/completions', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(chatBody()),
      }),
    );
    await expectRefusal(none, 'invalid_api_key');
    await expectRefusal(await t.post('/v1/chat/completions', chatBody(), { authorization: `Basic ${t.key}` }), 'invalid_api_key');
    await expectRefusal(await t.post('/v1/chat/completions', chatBody(), { authorization: t.key }), 'invalid_api_key');
    await expectRefusal(await t.post('/v1/chat/completions', chatBody(), { authorization: 'Bearer ' }), 'invalid_api_key');
    await expectRefusal(await t.get('/v1/models', { authorization: 'Token abc' }), 'invalid_api_key');
    expect(t.fake.requests).toHaveLength(0);
  });

  it('refuses an unknown key, and sk_ tokens that are not a whole sk_svc_ key, with invalid_api_key', async () => {
    const t = await setup();
    for (const token of [UNKNOWN_KEY, 'sk_svc_short', `sk_live_${'a'.repeat(43)}`, `${t.key}x`, t.key.slice(0, -1), 'sk_']) {
      await expectRefusal(await t.post('/v1/chat/completions', chatBody(), { authorization: `Bearer ${token}` }), 'invalid_api_key');
    }
    await expectRefusal(await t.get('/v1/models', { authorization: `Bearer ${UNKNOWN_KEY}` }), 'invalid_api_key');
    // Only HTTP's own whitespace (space, tab) around the token is dropped: a key with a no-break
    // space, a vertical tab or a form feed beside it is not the whole key.
    for (const header of [`Bearer ${t.key}\u00a0`, `Bearer ${t.key}\u000b`, `Bearer ${t.key}\u000c`]) {
      await expectRefusal(await t.get('/v1/models', { authorization: header }), 'invalid_api_key');
    }
    // In front, the token no longer starts with sk_: not a key of the service at all.
    await expectRefusal(await t.get('/v1/models', { authorization: `Bearer \u00a0${t.key}` }), 'invalid_token');
    expect((await t.get('/v1/models', { authorization: `Bearer \t ${t.key} \t` })).status).toBe(200);
  });

  it('refuses a bearer token that is not a key of the service with invalid_token, asking for the whole sk_svc_ key', async () => {
    const t = await setup();
    for (const token of ['hello', 'sk-proj-abcdefghijklmnop', 'eyJhbGciOiJIUzI1NiJ9.e30.sig']) {
      const response = await t.post('/v1/chat/completions', chatBody(), { authorization: `Bearer ${token}` });
      await expectRefusal(response, 'invalid_token');
    }
    expect(ERROR_CATALOGUE.invalid_token.message).toContain('whole sk_svc_ key');
    await expectRefusal(await t.get('/v1/models', { authorization: 'Bearer not-a-key' }), 'invalid_token');
  });

  it('admits the key with the scheme in any case, and says credits', async () => {
    const t = await setup();
    const response = await t.post('/v1/chat/completions', chatBody(), { authorization: `bearer ${t.key}` });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-funding')).toBe('credits');
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('finds keys through the hashKey option when one is given, synchronous or not', async () => {
    const seen: string[] = [];
    const sync = await setup({
      hashKey: (key) => {
        seen.push(key);
        return hashKey.sync(key);
      },
    });
    expect((await sync.post('/v1/chat/completions', chatBody())).status).toBe(200);
    expect(seen).toEqual([sync.key]);
    const async = await setup({ hashKey: async (key) => hashKey.sync(key) });
    expect((await async.get('/v1/models')).status).toBe(200);
    // A hasher that disagrees with the store's digest finds no key: the option is what is used.
    const wrong = await setup({ hashKey: () => '0'.repeat(64) });
    await expectRefusal(await wrong.post('/v1/chat/completions', chatBody()), 'invalid_api_key');
  });

  it("stops a revoked key at the very next request, while the account's other key goes on", async () => {
    const t = await setup();
    const other = await t.store.createKey(t.accountId, 'other');
    expect((await t.post('/v1/chat/completions', chatBody())).status).toBe(200);
    expect((await t.get('/v1/models')).status).toBe(200);
    await adminOf(t).revokeKey(t.keyId);
    await expectRefusal(await t.post('/v1/chat/completions', chatBody()), 'invalid_api_key');
    await expectRefusal(await t.get('/v1/models'), 'invalid_api_key');
    expect((await t.post('/v1/chat/completions', chatBody(), { authorization: `Bearer ${other.key}` })).status).toBe(200);
    expect(t.fake.requests).toHaveLength(2);
  });

  it('never asks the app about sk_ tokens; refuses tokens the app does not know, and app users of missing accounts, with invalid_token', async () => {
    const t = await appSetup();
    await expectRefusal(await t.asApp('sk_svc_short', chatBody()), 'invalid_api_key');
    await expectRefusal(await t.asApp(UNKNOWN_KEY, chatBody()), 'invalid_api_key');
    expect(t.seen).toEqual([]);
    await expectRefusal(await t.asApp('stranger', chatBody()), 'invalid_token');
    await expectRefusal(await t.asApp('app-ghost', chatBody()), 'invalid_token');
    expect(t.seen).toEqual(['stranger', 'app-ghost']);
  });
});

describe('403: account states, plans and characters', () => {
  for (const [state, code] of [
    ['disabled', 'account_disabled'],
    ['deleted', 'account_deleted'],
    ['under_18', 'account_under_18'],
  ] as const) {
    it(`refuses a ${state} account with ${code} on chat and on GET /v1/models, for keys and app users`, async () => {
      const t = await appSetup();
      await adminOf(t).setAccountState(t.accountId, state);
      await expectRefusal(await t.post('/v1/chat/completions', chatBody()), code);
      await expectRefusal(await t.get('/v1/models'), code);
      await expectRefusal(await t.asApp('app-included', chatBody()), code);
      expect(t.fake.requests).toHaveLength(0);
      await adminOf(t).setAccountState(t.accountId, 'active');
      expect((await t.post('/v1/chat/completions', chatBody())).status).toBe(200);
    });
  }

  it("does not count refused 403s against the plan's requests a minute", async () => {
    const t = await setup();
    await adminOf(t).setAccountState(t.accountId, 'disabled');
    for (let i = 0; i < 10; i++) await expectRefusal(await t.post('/v1/chat/completions', chatBody()), 'account_disabled');
    await adminOf(t).setAccountState(t.accountId, 'active');
    for (let i = 0; i < 7; i++) expect((await t.post('/v1/chat/completions', chatBody())).status).toBe(200);
    expect((await t.post('/v1/chat/completions', chatBody())).status).toBe(429);
  });

  it('refuses a model above the plan with model_requires_plan (type plan) even with plenty of credits', async () => {
    const t = await setup({ credits: 1_000_000_000 });
    const before = await t.balance();
    await expectRefusal(await t.post('/v1/chat/completions', chatBody({ model: 'smart' })), 'model_requires_plan');
    expect(ERROR_CATALOGUE.model_requires_plan.type).toBe('plan');
    expect(await t.balance()).toEqual(before);
    expect(t.fake.requests).toHaveLength(0);
    await adminOf(t).setPlan(t.accountId, 'plus');
    const admitted = await t.post('/v1/chat/completions', chatBody({ model: 'smart' }));
    expect(admitted.status).toBe(200);
    expect(t.fake.requests[0]?.body.model).toBe('gpt-4o');
  });

  it('refuses a keyed chat whose first system message opens with a character prompt', async () => {
    const t = await appSetup();
    await expectRefusal(await t.post('/v1/chat/completions', characterChat('Ahoy')), 'characters_app_only');
    const parts = chatBody({
      messages: [
        { role: 'system', content: [{ type: 'text', text: '  You are Nova, a starship AI. Be brief.' }] },
        { role: 'user', content: 'hi' },
      ],
    });
    await expectRefusal(await t.post('/v1/chat/completions', parts), 'characters_app_only');
    expect(t.fake.requests).toHaveLength(0);
  });

  it('lets keyed chats through when the character prompt is not at the start of the first system message', async () => {
    const t = await appSetup();
    const quoted = chatBody({
      messages: [
        { role: 'system', content: `Quote: ${CHARACTER}` },
        { role: 'user', content: 'hi' },
      ],
    });
    expect((await t.post('/v1/chat/completions', quoted)).status).toBe(200);
    const second = chatBody({
      messages: [
        { role: 'system', content: 'Be helpful.' },
        { role: 'system', content: CHARACTER },
        { role: 'user', content: 'hi' },
      ],
    });
    expect((await t.post('/v1/chat/completions', second)).status).toBe(200);
    const prefixOnly = chatBody({
      messages: [
        { role: 'system', content: CHARACTER.slice(0, 20) },
        { role: 'user', content: 'hi' },
      ],
    });
    expect((await t.post('/v1/chat/completions', prefixOnly)).status).toBe(200);
  });
});

describe('app principals (the authenticate option, docs/embedding.md)', () => {
  it('allows characters to app users and says the funding the app gave', async () => {
    const t = await appSetup();
    const included = await t.asApp('app-included', characterChat('Ahoy'));
    expect(included.status).toBe(200);
    expect(included.headers.get('x-funding')).toBe('included');
    expect(included.headers.get('x-request-id')).toMatch(/^req_/);
    const credits = await t.asApp('app-credits', characterChat('Ahoy'));
    expect(credits.status).toBe(200);
    expect(credits.headers.get('x-funding')).toBe('credits');
  });

  it('holds and charges nothing for included use, and charges credits use to the account', async () => {
    const t = await appSetup();
    const start = await t.balance();
    const entries = (await t.store.entries(t.accountId)).length;
    const included = await t.asApp('app-included', chatBody());
    expect(included.status).toBe(200);
    await included.json();
    expect(await t.balance()).toEqual(start);
    expect(await t.store.entries(t.accountId)).toHaveLength(entries);

    const credits = await t.asApp('app-credits', chatBody());
    expect(credits.status).toBe(200);
    await credits.json();
    const cost = t.logs.at(-1)?.costMicros;
    expect(cost).toBeGreaterThan(0);
    expect(await t.balance()).toEqual({ balance: start.balance - cost!, held: 0, available: start.balance - cost! });
  });

  it('refuses a character chat whose last user message holds more than 8,000 bytes of text with message_too_long', async () => {
    const t = await appSetup();
    // Two bytes per character: 4,001 characters are 8,002 bytes, though fewer than 8,000 characters.
    await expectRefusal(await t.asApp('app-included', characterChat('é'.repeat(4_001))), 'message_too_long');
    await expectRefusal(await t.asApp('app-credits', characterChat('a'.repeat(8_001))), 'message_too_long');
    expect(t.fake.requests).toHaveLength(0);
    expect((await t.asApp('app-included', characterChat('é'.repeat(4_000)))).status).toBe(200);
    const earlierLong = chatBody({
      messages: [
        { role: 'system', content: CHARACTER },
        { role: 'user', content: 'a'.repeat(9_000) },
        { role: 'assistant', content: 'Arr.' },
        { role: 'user', content: 'short' },
      ],
    });
    expect((await t.asApp('app-included', earlierLong)).status).toBe(200);
    expect((await t.asApp('app-included', chatBody({ messages: [{ role: 'user', content: 'a'.repeat(9_000) }] }))).status).toBe(200);
  });
});
