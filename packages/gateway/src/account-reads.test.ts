/**
 * `GET /v1/balance` and `GET /v1/usage` (handle-account-reads.ts, docs/http-api.md): a key reads
 * its own account, authenticated and state-checked like every route, free, and outside the rate
 * limits and in-flight slots.
 */
import { describe, expect, it } from 'vitest';
import { chatBody, setup } from '../test/test-harness';

const FROM = '2027-01-15';
const TO = '2027-01-16';

describe('GET /v1/balance', () => {
  it('answers the caller account balance, held and available micro-dollars', async () => {
    const t = await setup({ credits: 1_234_567 });
    const reply = await t.get('/v1/balance');
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('application/json');
    expect(reply.headers.get('x-service-version')).toBe('tollgate/test');
    expect(await reply.json()).toEqual({ object: 'balance', balance_micros: 1_234_567, held_micros: 0, available_micros: 1_234_567 });
    const hold = await t.store.hold(t.accountId, { micros: 1_000, ttlMs: 60_000 });
    expect(hold.ok).toBe(true);
    expect(await (await t.get('/v1/balance?anything=1')).json()).toEqual({
      object: 'balance',
      balance_micros: 1_234_567,
      held_micros: 1_000,
      available_micros: 1_233_567,
    });
  });

  it('is authenticated and state-checked like every route; POST is 405', async () => {
    const t = await setup();
    const none = await t.gateway.fetch(new Request('http://gateway.test/v1/balance'));
    expect(none.status).toBe(401);
    expect((await none.json()).error.code).toBe('invalid_api_key');
    expect((await t.get('/v1/balance', { authorization: `Bearer sk_svc_${'A'.repeat(43)}` })).status).toBe(401);
    expect((await t.post('/v1/balance', {})).status).toBe(405);
    await t.store.setAccountState(t.accountId, 'disabled');
    const disabled = await t.get('/v1/balance');
    expect(disabled.status).toBe(403);
    expect((await disabled.json()).error.code).toBe('account_disabled');
    expect((await t.get('/v1/usage?from=2027-01-15&to=2027-01-16')).status).toBe(403);
  });

  it('counts toward no rate limit: after the plan refuses with 429, balance and usage still answer 200', async () => {
    const t = await setup({ plan: 'free' });
    // Reads first: they take nothing of the free plan's burst of 7.
    for (let index = 0; index < 30; index++) expect((await t.get('/v1/balance')).status).toBe(200);
    const statuses: number[] = [];
    for (let index = 0; index < 8; index++) statuses.push((await t.post('/v1/chat/completions', chatBody({ max_tokens: 5 }))).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 429]);
    await t.gateway.idle();
    expect((await t.post('/v1/chat/completions', chatBody({ max_tokens: 5 }))).status).toBe(429);
    const balance = await t.get('/v1/balance');
    expect(balance.status).toBe(200);
    const usage = await t.get(`/v1/usage?from=${FROM}&to=${TO}`);
    expect(usage.status).toBe(200);
    // What usage sums is what was charged, to the micro.
    const charged = 10_000_000 - (await t.balance()).balance;
    expect(charged).toBeGreaterThan(0);
    const rows = (await usage.json()).data as { cost_micros: number; requests: number }[];
    expect(rows.reduce((sum, row) => sum + row.cost_micros, 0)).toBe(charged);
    expect(rows.reduce((sum, row) => sum + row.requests, 0)).toBe(7);
    // No in-flight slot taken, and none of the reads in the log as refused.
    expect(await t.inFlight()).toBe(0);
    expect(t.logs.filter((line) => line.path === '/v1/balance').every((line) => line.status === 200)).toBe(true);
  });
});

describe('GET /v1/usage', () => {
  it("sums the caller account's charges per period, key and model, with filters; never another account's", async () => {
    const t = await setup();
    const charge = async (accountId: string, keyId: string, model: string, micros: number) => {
      const hold = await t.store.hold(accountId, { micros, ttlMs: 60_000, keyId, model });
      if (!hold.ok) throw new Error('no hold');
      await t.store.settle(hold.value.holdId, { micros, promptTokens: 5, completionTokens: 1 });
    };
    const other = await t.store.createAccount({ plan: 'free' });
    await t.store.addCredits(other.id, 1_000);
    await charge(t.accountId, t.keyId, 'fast', 30);
    await charge(t.accountId, 'key_other', 'fast', 4);
    t.clock.advance(3_600_000);
    await charge(t.accountId, t.keyId, 'vision', 12);
    await charge(other.id, 'key_x', 'fast', 999);

    const day = await t.get(`/v1/usage?from=${FROM}&to=${TO}`);
    expect(day.status).toBe(200);
    expect(await day.json()).toEqual({
      object: 'list',
      group_by: 'day',
      from: '2027-01-15T00:00:00.000Z',
      to: '2027-01-16T00:00:00.000Z',
      data: [
        {
          object: 'usage',
          period_start: '2027-01-15T00:00:00.000Z',
          key_id: t.keyId,
          model: 'fast',
          requests: 1,
          prompt_tokens: 5,
          completion_tokens: 1,
          cost_micros: 30,
        },
        {
          object: 'usage',
          period_start: '2027-01-15T00:00:00.000Z',
          key_id: t.keyId,
          model: 'vision',
          requests: 1,
          prompt_tokens: 5,
          completion_tokens: 1,
          cost_micros: 12,
        },
        {
          object: 'usage',
          period_start: '2027-01-15T00:00:00.000Z',
          key_id: 'key_other',
          model: 'fast',
          requests: 1,
          prompt_tokens: 5,
          completion_tokens: 1,
          cost_micros: 4,
        },
      ].sort((a, b) => (a.key_id < b.key_id ? -1 : a.key_id > b.key_id ? 1 : a.model < b.model ? -1 : 1)),
    });
    const hour = await (await t.get(`/v1/usage?from=${FROM}&to=${TO}&group_by=hour&key_id=${t.keyId}`)).json();
    expect(hour.data.map((row: { period_start: string; model: string }) => [row.period_start, row.model])).toEqual([
      ['2027-01-15T08:00:00.000Z', 'fast'],
      ['2027-01-15T09:00:00.000Z', 'vision'],
    ]);
    const model = await (await t.get(`/v1/usage?from=${FROM}&to=${TO}&model=fast`)).json();
    expect(model.data.map((row: { cost_micros: number }) => row.cost_micros).sort()).toEqual([30, 4].sort());
  });

  it('refuses a bad query with 400 invalid_parameter (param null, the message names the field)', async () => {
    const t = await setup();
    for (const [query, field] of [
      ['', 'from'],
      [`from=${FROM}`, 'to'],
      [`from=${TO}&to=${FROM}`, 'to'],
      [`from=${FROM}&to=${TO}&group_by=month`, 'group_by'],
      [`from=${FROM}&to=${TO}&account_id=acc_x`, 'account_id'],
      [`from=nope&to=${TO}`, 'from'],
      // Before 1970: nothing was charged then, and a store would refuse the time (a 503 before).
      ['from=1969-12-31&to=1970-01-01', 'from'],
      ['from=0000-01-01&to=0000-01-02', 'from'],
      // A control character is in no key id or model (PostgreSQL refuses a NUL: a 503 before).
      [`from=${FROM}&to=${TO}&key_id=%00`, 'key_id'],
      [`from=${FROM}&to=${TO}&model=a%00b`, 'model'],
    ]) {
      const reply = await t.get(`/v1/usage?${query}`);
      expect(reply.status).toBe(400);
      const body = await reply.json();
      expect(body).toEqual({
        error: { message: expect.stringContaining(field as string), type: 'invalid_request_error', param: null, code: 'invalid_parameter' },
      });
    }
  });
});
