/**
 * Per-key spend limits through `gateway.fetch` (issue #19): a key's budget refuses its requests
 * with the spec's 402 `insufficient_balance` and a message naming the key budget, lowers a request's
 * output limit to what the budget leaves, and under 200 simultaneous requests the key is never
 * charged past it. The store's side (atomicity, periods, counters) is the Store contract's.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { LimiterStore } from '@tollgate/limiter';
import { KEY_BUDGET_MESSAGE } from './admit-metered';
import { chatBody, readEvents, setup, type SetupOptions, type TestGateway } from '../test/test-harness';
import { charges, expectBooksBalanced, settled } from '../test/test-leaks';

/** Admits every request: the plan's rate and in-flight limits would otherwise refuse most of 200 at once. */
const OPEN_LIMITER: LimiterStore = {
  rate: async () => ({ ok: true, value: undefined }),
  acquire: async () => ({ ok: true, value: undefined }),
  extend: async () => {},
  release: async () => {},
  inFlight: async () => 0,
};

const opened: TestGateway[] = [];
async function open(options: SetupOptions = {}): Promise<TestGateway> {
  const t = await setup(options);
  opened.push(t);
  return t;
}

afterEach(async () => {
  for (const t of opened.splice(0)) {
    await settled(t);
    await expectBooksBalanced(t);
  }
});

/** The key's charges, as the ledger has them, summed (positive micro-dollars). */
async function spentBy(t: TestGateway, keyId: string): Promise<number> {
  return (await charges(t)).filter((entry) => entry.keyId === keyId).reduce((sum, entry) => sum - entry.micros, 0);
}

const keyBudgetError = { message: KEY_BUDGET_MESSAGE, type: 'insufficient_balance', param: null, code: 'insufficient_balance' };

describe('key budgets', () => {
  it("refuses a key past its budget with 402 insufficient_balance naming the key budget, before the request starts; the account's other keys go on", async () => {
    const t = await open({ plan: 'pro' });
    // "Hello there" with max_completion_tokens 10: 19 prompt tokens x 1 + 10 x 2 = 39, held as the model's minimum of 50.
    await t.store.setKeyBudget(t.keyId, { micros: 120, period: 'day' });
    const body = chatBody({ max_completion_tokens: 10 });
    const served = await t.post('/v1/chat/completions', body);
    expect(served.status).toBe(200);
    await served.json();
    await t.gateway.idle();
    // The fake reports 2 prompt and 7 completion tokens: 16 charged, 104 of the budget left.
    expect(await spentBy(t, t.keyId)).toBe(16);
    const second = await t.post('/v1/chat/completions', body);
    expect(second.status).toBe(200);
    await second.json();
    await t.gateway.idle();
    expect((await t.store.getKey(t.keyId))?.budget).toMatchObject({ micros: 120, spent: 32 });

    // 88 left: the whole 500-token default needs 1,019, but 88 still fits the minimum of 50 (output lowered).
    const lowered = await t.post('/v1/chat/completions', chatBody());
    expect(lowered.status).toBe(200);
    // The header the spec has for a lowered output limit; it says `balance` whichever limit lowered it.
    expect(lowered.headers.get('x-output-limited')).toBe('balance');
    await lowered.json();
    // (88 - 19) / 2 = 34 output tokens fit what the budget left.
    expect(t.fake.requests.at(-1)?.body.max_completion_tokens).toBe(34);
    await t.gateway.idle();
    expect(await spentBy(t, t.keyId)).toBe(48);

    // Lowered to 97: 49 left, less than the minimum hold of 50.
    await t.store.setKeyBudget(t.keyId, { micros: 97, period: 'day' });
    const refused = await t.post('/v1/chat/completions', body);
    expect(refused.status).toBe(402);
    expect(refused.headers.get('x-request-id')).toBeNull();
    expect(await refused.json()).toEqual({ error: keyBudgetError });
    expect(KEY_BUDGET_MESSAGE).toMatch(/key's budget/);
    const streamed = await t.post('/v1/chat/completions', { ...body, stream: true });
    expect(streamed.status).toBe(402);
    expect(await streamed.json()).toEqual({ error: keyBudgetError });
    const image = await t.post('/v1/images/generations', { model: 'painter', prompt: 'a lighthouse' });
    expect(image.status).toBe(402);
    expect(await image.json()).toEqual({ error: keyBudgetError });
    expect(t.fake.requests).toHaveLength(3);
    expect(t.logs.at(-1)).toMatchObject({ status: 402 });

    const other = await t.store.createKey(t.accountId, 'other');
    const unlimited = await t.post('/v1/chat/completions', chatBody(), { authorization: `Bearer ${other.key}` });
    expect(unlimited.status).toBe(200);
    await unlimited.json();
    await t.gateway.idle();
    expect(await spentBy(t, t.keyId)).toBe(48);

    // Cleared: the balance is the only limit again.
    await t.store.setKeyBudget(t.keyId, null);
    const again = await t.post('/v1/chat/completions', body);
    expect(again.status).toBe(200);
    await again.json();
  });

  it('keeps the balance refusal as it was: the catalogue message, whatever budget the key has', async () => {
    const t = await open({ credits: 40 });
    await t.store.setKeyBudget(t.keyId, { micros: 1_000_000, period: 'month' });
    const refused = await t.post('/v1/chat/completions', chatBody());
    expect(refused.status).toBe(402);
    const body = (await refused.json()) as { error: { message: string; code: string } };
    expect(body.error.code).toBe('insufficient_balance');
    expect(body.error.message).toBe('The balance is below the amount this request must hold.');
  });

  it('serves the key again on the next UTC day', async () => {
    const t = await open();
    const DAY = 86_400_000;
    await t.store.setKeyBudget(t.keyId, { micros: 60, period: 'day' });
    const body = chatBody({ max_completion_tokens: 10 });
    expect((await t.post('/v1/chat/completions', body)).status).toBe(200);
    await t.gateway.idle();
    // 16 spent, 44 left: less than the minimum hold of 50.
    expect((await t.post('/v1/chat/completions', body)).status).toBe(402);
    t.clock.advance(DAY - (t.clock.now() % DAY) - 1);
    expect((await t.post('/v1/chat/completions', body)).status).toBe(402);
    t.clock.advance(1);
    const next = await t.post('/v1/chat/completions', body);
    expect(next.status).toBe(200);
    await next.json();
    await t.gateway.idle();
    expect((await t.store.getKey(t.keyId))?.budget).toEqual({ micros: 60, period: 'day', spent: 16, periodStart: t.clock.now() });
  });

  it('never charges a key past its budget under 200 simultaneous requests, streamed and whole', async () => {
    const t = await open({ limiter: OPEN_LIMITER });
    // Enough for a few requests: each holds at least 50, and is charged 16.
    const BUDGET = 300;
    await t.store.setKeyBudget(t.keyId, { micros: BUDGET, period: 'day' });
    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, index) => t.post('/v1/chat/completions', chatBody({ max_completion_tokens: 10, stream: index % 2 === 0 }))),
    );
    const statuses = responses.map((response) => response.status);
    const ok = statuses.filter((status) => status === 200).length;
    expect(ok).toBeGreaterThan(0);
    expect(ok + statuses.filter((status) => status === 402).length).toBe(200);
    await Promise.all(
      responses.map(async (response) => {
        if (response.status === 200) return response.headers.get('content-type')?.includes('event-stream') ? readEvents(response) : response.json();
        expect(await response.json()).toEqual({ error: keyBudgetError });
      }),
    );
    await t.gateway.idle();
    const spent = await spentBy(t, t.keyId);
    expect(spent).toBe(ok * 16);
    expect(spent).toBeLessThanOrEqual(BUDGET);
    expect((await t.store.getKey(t.keyId))?.budget?.spent).toBe(spent);

    // Waves of requests, each admitted against what the earlier ones were charged: still never past it.
    for (let wave = 0; wave < 8; wave++) {
      const more = await Promise.all(Array.from({ length: 40 }, () => t.post('/v1/chat/completions', chatBody({ max_completion_tokens: 10 }))));
      await Promise.all(more.map((response) => response.json()));
      await t.gateway.idle();
    }
    const total = await spentBy(t, t.keyId);
    expect(total).toBeLessThanOrEqual(BUDGET);
    // The budget is used up to within one minimum hold: 300 - 16 x 16 = 44 < 50.
    expect(total).toBe(16 * 16);
    expect((await t.store.getKey(t.keyId))?.budget?.spent).toBe(total);
  });
});
