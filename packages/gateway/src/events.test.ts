/**
 * Events for the operator's own systems (events.ts, docs/events.md): balance.low and
 * balance.negative after a charged request, key.budget_reached on a key budget's refusal, and
 * key.revoked from the admin actions (so from the admin API and the CLI alike).
 */
import { memoryStore } from '@tollgate/billing';
import { describe, expect, it, vi } from 'vitest';
import { createAdminActions } from './admin-actions';
import { createAdminApi } from './admin-api';
import type { GatewayEvent } from './events';
import { chatBody, readEvents, setup } from '../test/test-harness';

/** Lets the balance reads the gateway made after the replies run, and their hooks. */
const afterReplies = () => new Promise<void>((resolve) => setTimeout(resolve, 20));

/** What one chat request costs with the test models and fake upstream. */
async function chatCost(): Promise<number> {
  const t = await setup();
  const body = (await (await t.post('/v1/chat/completions', chatBody())).json()) as { usage: { cost_micros: number } };
  expect(body.usage.cost_micros).toBeGreaterThan(1);
  return body.usage.cost_micros;
}

describe('balance.low and balance.negative', () => {
  it('balance.low fires once, for the request whose charge crossed the threshold, not for later ones below it', async () => {
    const cost = await chatCost();
    const credits = 100 * cost;
    // Above after one request (credits - cost), below after the second (credits - 2 * cost).
    const threshold = credits - 2 * cost + 1;
    const events: GatewayEvent[] = [];
    const t = await setup({ credits, lowBalanceMicros: threshold, onEvent: (event) => events.push(event) });

    expect((await t.post('/v1/chat/completions', chatBody())).status).toBe(200);
    await afterReplies();
    expect(events).toEqual([]); // still above

    // The crossing one is a stream: the event comes after it ended and settled.
    const streamed = await t.post('/v1/chat/completions', chatBody({ stream: true }));
    await readEvents(streamed);
    await afterReplies();
    expect(events).toHaveLength(1);
    const crossing = t.logs.at(-1);
    expect(events[0]).toEqual({
      id: `evt_balance_low_${crossing?.requestId}`,
      type: 'balance.low',
      created_at: new Date(t.clock.now()).toISOString(),
      account_id: t.accountId,
      balance_micros: credits - 2 * cost,
      threshold_micros: threshold,
      request_id: crossing?.requestId,
      charged_micros: cost,
    });
    expect((await t.balance()).balance).toBe(credits - 2 * cost);

    // Later requests below the threshold (still above zero) report nothing more.
    for (let i = 0; i < 3; i++) expect((await t.post('/v1/chat/completions', chatBody())).status).toBe(200);
    await afterReplies();
    expect(events).toHaveLength(1);

    // Credits added back above it (credits - 5 cost + 5 cost), then the charge that crosses again: a new event, a new id.
    await t.store.addCredits(t.accountId, 5 * cost);
    await t.post('/v1/chat/completions', chatBody());
    await afterReplies();
    expect(events).toHaveLength(1); // credits - cost: above
    await t.post('/v1/chat/completions', chatBody());
    await afterReplies();
    expect(events).toHaveLength(2);
    expect(events[1]).toMatchObject({ type: 'balance.low', request_id: t.logs.at(-1)?.requestId, balance_micros: credits - 2 * cost });
    expect(events[1]?.id).not.toBe(events[0]?.id);
  });

  it('a balance left exactly at the threshold is not below it', async () => {
    const cost = await chatCost();
    const credits = 100 * cost;
    const events: GatewayEvent[] = [];
    const t = await setup({ credits, lowBalanceMicros: credits - cost, onEvent: (event) => events.push(event) });
    await t.post('/v1/chat/completions', chatBody());
    await afterReplies();
    expect((await t.balance()).balance).toBe(credits - cost);
    expect(events).toEqual([]);
    await t.post('/v1/chat/completions', chatBody());
    await afterReplies();
    expect(events.map((event) => event.type)).toEqual(['balance.low']);
  });

  /**
   * A gateway whose next charge takes the balance below zero: the gateway never charges past its
   * hold, so this plays what makes a balance negative in production (a charge written by someone
   * else while the request was held, as a settle after its hold expired): just before the
   * request's own settle, another charge leaves `cost / 2` on the account.
   */
  async function overdrawn(options: { lowBalanceMicros?: number } = {}) {
    const cost = await chatCost();
    const store = memoryStore();
    const events: GatewayEvent[] = [];
    const t = await setup({ store, credits: 100 * cost, ...options, onEvent: (event) => events.push(event) });
    const settle = store.settle.bind(store);
    const spy = vi.spyOn(store, 'settle').mockImplementation(async (holdId, input) => {
      spy.mockRestore();
      const other = await store.hold(t.accountId, { micros: 1, ttlMs: 60_000 });
      if (!other.ok) throw new Error('hold refused');
      await settle(other.value.holdId, { micros: 100 * cost - Math.floor(cost / 2) });
      return settle(holdId, input);
    });
    return { t, cost, events, balanceAfter: Math.floor(cost / 2) - cost };
  }

  it('balance.negative fires once, when a charge takes the balance below zero', async () => {
    const { t, cost, events, balanceAfter } = await overdrawn();
    expect((await t.post('/v1/chat/completions', chatBody())).status).toBe(200);
    await afterReplies();
    expect((await t.balance()).balance).toBe(balanceAfter);
    expect(events).toEqual([
      {
        id: `evt_balance_negative_${t.logs.at(-1)?.requestId}`,
        type: 'balance.negative',
        created_at: new Date(t.clock.now()).toISOString(),
        account_id: t.accountId,
        balance_micros: balanceAfter,
        request_id: t.logs.at(-1)?.requestId,
        charged_micros: cost,
      },
    ]);
    // Below zero, a hold is refused: nothing more is charged, nothing more reported.
    expect((await t.post('/v1/chat/completions', chatBody())).status).toBe(402);
    await afterReplies();
    expect(events).toHaveLength(1);
  });

  it('one charge that crosses the threshold and zero reports both', async () => {
    const cost = await chatCost();
    const { t, events } = await overdrawn({ lowBalanceMicros: Math.max(1, Math.floor(cost / 4)) });
    await (await t.post('/v1/chat/completions', chatBody())).text();
    await afterReplies();
    expect(events.map((event) => event.type)).toEqual(['balance.low', 'balance.negative']);
    expect(new Set(events.map((event) => event.id)).size).toBe(2);
  });

  it('a hook that throws, or rejects, does not affect the request', async () => {
    const cost = await chatCost();
    const credits = 100 * cost;
    let calls = 0;
    const t = await setup({
      credits,
      lowBalanceMicros: credits, // the first charge crosses it
      onEvent: () => {
        calls++;
        throw new Error('hook failed');
      },
    });
    const reply = await t.post('/v1/chat/completions', chatBody());
    expect(reply.status).toBe(200);
    expect(((await reply.json()) as { usage: { cost_micros: number } }).usage.cost_micros).toBe(cost);
    await afterReplies();
    expect(calls).toBe(1);
    expect(t.logs.at(-1)).toMatchObject({ status: 200, costMicros: cost });
    expect(t.gateway.active).toBe(0);

    const rejecting = await setup({ credits, lowBalanceMicros: credits, onEvent: async () => Promise.reject(new Error('async hook failed')) });
    const again = await rejecting.post('/v1/chat/completions', chatBody({ stream: true }));
    expect(again.status).toBe(200);
    await readEvents(again);
    await afterReplies(); // an unhandled rejection here would fail the run
    expect(rejecting.logs.at(-1)).toMatchObject({ status: 200, outcome: 'done' });
  });

  it('reads no balance without a hook, nor for a request that charged nothing', async () => {
    const store = memoryStore();
    const getBalance = vi.spyOn(store, 'getBalance');
    const t = await setup({ store, lowBalanceMicros: 5_000_000 });
    getBalance.mockClear();
    for (let i = 0; i < 3; i++) expect((await t.post('/v1/chat/completions', chatBody())).status).toBe(200);
    await afterReplies();
    expect(getBalance).not.toHaveBeenCalled();

    const hooked = memoryStore();
    const hookedReads = vi.spyOn(hooked, 'getBalance');
    const h = await setup({ store: hooked, onEvent: () => {} });
    hookedReads.mockClear();
    expect((await h.post('/v1/chat/completions', { model: 'nope', messages: [] })).status).toBe(400); // refused: no charge
    await afterReplies();
    expect(hookedReads).not.toHaveBeenCalled();
    expect((await h.post('/v1/chat/completions', chatBody())).status).toBe(200);
    await afterReplies();
    expect(hookedReads).toHaveBeenCalledTimes(1);
  });

  it("an app user's included use charges nothing and reports nothing; its credits use does", async () => {
    const store = memoryStore();
    const reads = vi.spyOn(store, 'getBalance');
    const events: GatewayEvent[] = [];
    const target = { accountId: '' };
    const t = await setup({
      store,
      lowBalanceMicros: 10_000_000, // the test account's credits: any charge crosses it
      onEvent: (event) => events.push(event),
      authenticate: async (token) =>
        token === 'app-included' || token === 'app-credits'
          ? { accountId: target.accountId, funding: token === 'app-included' ? 'included' : 'credits' }
          : undefined,
    });
    target.accountId = t.accountId;
    reads.mockClear();
    const included = await t.post('/v1/chat/completions', chatBody(), { authorization: 'Bearer app-included' });
    expect(included.status).toBe(200);
    await included.text();
    await afterReplies();
    expect(t.logs.at(-1)?.costMicros).toBeGreaterThan(0); // the price the plan covered
    expect(reads).not.toHaveBeenCalled();
    expect(events).toEqual([]);
    await (await t.post('/v1/chat/completions', chatBody(), { authorization: 'Bearer app-credits' })).text();
    await afterReplies();
    expect(events.map((event) => event.type)).toEqual(['balance.low']);
  });

  it('the balance is read after the reply is returned, not before', async () => {
    const store = memoryStore();
    let readBeforeReply = false;
    let replied = false;
    const getBalance = store.getBalance.bind(store);
    vi.spyOn(store, 'getBalance').mockImplementation(async (accountId) => {
      if (!replied) readBeforeReply = true;
      return getBalance(accountId);
    });
    const t = await setup({ store, onEvent: () => {} });
    const reply = await t.post('/v1/chat/completions', chatBody());
    replied = true;
    expect(reply.status).toBe(200);
    await afterReplies();
    expect(readBeforeReply).toBe(false);
    expect(store.getBalance).toHaveBeenCalled();
  });

  it('lowBalanceMicros must be a positive whole number', async () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) await expect(setup({ lowBalanceMicros: bad })).rejects.toThrow(/lowBalanceMicros/);
  });
});

describe('key.budget_reached', () => {
  it('fires on a key budget refusal (402), once per key until a hold of it passes again', async () => {
    const store = memoryStore();
    const events: GatewayEvent[] = [];
    const t = await setup({ store, onEvent: (event) => events.push(event) });
    // Room for one request, not two.
    await store.setKeyBudget(t.keyId, { micros: 60, period: 'day' });
    expect((await t.post('/v1/chat/completions', chatBody())).status).toBe(200);
    const refused = await t.post('/v1/chat/completions', chatBody());
    expect(refused.status).toBe(402);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('insufficient_balance');
    await afterReplies();
    expect(events).toEqual([
      {
        id: expect.stringMatching(/^evt_key_budget_reached_req_[A-Za-z0-9]{24}$/),
        type: 'key.budget_reached',
        created_at: new Date(t.clock.now()).toISOString(),
        key_id: t.keyId,
        account_id: t.accountId,
        budget_micros: 60,
        budget_period: 'day',
        request_id: expect.stringMatching(/^req_/),
      },
    ]);
    // The refused request has no charge; its id is the event's source all the same.
    expect(events[0]?.id).toBe(`evt_key_budget_reached_${(events[0] as { request_id: string }).request_id}`);

    // Refused again: the same occurrence, not reported again.
    expect((await t.post('/v1/chat/completions', chatBody())).status).toBe(402);
    await afterReplies();
    expect(events).toHaveLength(1);
    // The refusal's reply has no X-Request-Id (it never started); its log line has the event's id.
    expect(refused.headers.get('x-request-id')).toBeNull();
    expect(t.logs.map((line) => line.requestId)).toContain((events[0] as { request_id: string }).request_id);

    // The budget raised (a hold passes), then reached again: reported again, with a new id.
    await store.setKeyBudget(t.keyId, { micros: 1_000_000, period: 'month' });
    expect((await t.post('/v1/chat/completions', chatBody())).status).toBe(200);
    await store.setKeyBudget(t.keyId, { micros: 1, period: 'total' });
    expect((await t.post('/v1/chat/completions', chatBody())).status).toBe(402);
    await afterReplies();
    expect(events).toHaveLength(2);
    expect(events[1]).toMatchObject({ type: 'key.budget_reached', budget_micros: 1, budget_period: 'total' });
    expect(events[1]?.id).not.toBe(events[0]?.id);
  });

  it('a free call of the key passing (a page fetch at price 0) is no room in the budget: no second event', async () => {
    const store = memoryStore();
    const events: GatewayEvent[] = [];
    const pageFetcher = {
      fetch: async () => ({
        ok: true as const,
        page: {
          object: 'page' as const,
          url: 'https://example.com/',
          final_url: 'https://example.com/',
          status: 200,
          title: null,
          content_type: 'text/plain',
          content: 'hi',
          truncated: false,
        },
      }),
    };
    const t = await setup({ store, pageFetcher, onEvent: (event) => events.push(event) });
    await store.setKeyBudget(t.keyId, { micros: 1, period: 'month' });
    for (let round = 0; round < 3; round++) {
      expect((await t.post('/v1/chat/completions', chatBody())).status).toBe(402);
      expect((await t.post('/v1/fetch', { url: 'https://example.com/' })).status).toBe(200);
    }
    await afterReplies();
    expect(events.map((event) => event.type)).toEqual(['key.budget_reached']);
  });

  it('without a hook a budget refusal reads nothing more', async () => {
    const store = memoryStore();
    const t = await setup({ store });
    await store.setKeyBudget(t.keyId, { micros: 1, period: 'day' });
    const getKey = vi.spyOn(store, 'getKey');
    expect((await t.post('/v1/chat/completions', chatBody())).status).toBe(402);
    await afterReplies();
    expect(getKey).not.toHaveBeenCalled();
  });

  it('an account balance refusal is not a budget event', async () => {
    const events: GatewayEvent[] = [];
    const t = await setup({ credits: 0, onEvent: (event) => events.push(event) });
    expect((await t.post('/v1/chat/completions', chatBody())).status).toBe(402);
    await afterReplies();
    expect(events).toEqual([]);
  });
});

describe('key.revoked', () => {
  it('the admin actions emit it once, when a live key is revoked, not on a repeat', async () => {
    const store = memoryStore();
    const events: GatewayEvent[] = [];
    const actions = createAdminActions(store, { onEvent: (event) => events.push(event) });
    const account = await store.createAccount({ plan: 'free' });
    const created = await store.createKey(account.id, 'laptop');
    const revoked = await actions.revokeKey(created.id);
    if (!revoked.ok) throw new Error('revoke refused');
    expect(events).toEqual([
      {
        id: `evt_key_revoked_${created.id}`,
        type: 'key.revoked',
        created_at: new Date(revoked.value.revokedAt ?? 0).toISOString(),
        key_id: created.id,
        account_id: account.id,
      },
    ]);
    expect((await actions.revokeKey(created.id)).ok).toBe(true);
    expect(events).toHaveLength(1);
    expect(await actions.revokeKey('key_unknown')).toMatchObject({ ok: false, error: { code: 'not_found' } });
    expect(events).toHaveLength(1);
  });

  it('through the admin API; a hook that throws does not change the reply', async () => {
    const store = memoryStore();
    const events: GatewayEvent[] = [];
    const admin = createAdminApi({
      store,
      token: 'admin-token-0123456789-abcdef',
      onEvent: (event) => {
        events.push(event);
        throw new Error('hook failed');
      },
    });
    const account = await store.createAccount({ plan: 'free' });
    const created = await store.createKey(account.id, 'laptop');
    const revoke = () =>
      admin.fetch(
        new Request(`http://admin.test/admin/v1/keys/${created.id}/revoke`, {
          method: 'POST',
          headers: { authorization: 'Bearer admin-token-0123456789-abcdef' },
        }),
      );
    const first = await revoke();
    expect(first.status).toBe(200);
    expect(((await first.json()) as { revoked_at: string | null }).revoked_at).not.toBeNull();
    expect((await revoke()).status).toBe(200);
    expect(events.map((event) => [event.type, event.id])).toEqual([['key.revoked', `evt_key_revoked_${created.id}`]]);
  });

  it('without a hook, revoking reads nothing more', async () => {
    const store = memoryStore();
    const getKey = vi.spyOn(store, 'getKey');
    const account = await store.createAccount({ plan: 'free' });
    const created = await store.createKey(account.id, 'laptop');
    getKey.mockClear();
    await createAdminActions(store).revokeKey(created.id);
    expect(getKey).toHaveBeenCalledTimes(2); // the existence check and the key as it now is
  });
});
