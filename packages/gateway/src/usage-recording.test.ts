/**
 * What the gateway records on a charge for the usage API (issue #19): the request's key id and
 * public model id (through the hold) and the tokens it billed (through settle), so
 * `store.usage()` sums exactly what the replies said they cost.
 */
import type { AppPrincipal } from './gateway-options';
import { memoryStore } from '@tollgate/billing';
import { describe, expect, it } from 'vitest';
import { holdCredits } from './credit-hold';
import { chatBody, readEvents, setup } from '../test/test-harness';
import { manualClock, manualTimers } from '../test/test-timers';

type ChatUsage = { prompt_tokens: number; completion_tokens: number; cost_micros: number };

describe('charges record the key, the model and the billed tokens', () => {
  it('a keyed chat reply, whole or streamed: its key, its model, the usage it showed', async () => {
    const t = await setup();
    const whole = (await (await t.post('/v1/chat/completions', chatBody())).json()) as { usage: ChatUsage };
    const [charge] = await t.store.entries(t.accountId, { limit: 1 });
    expect(charge).toMatchObject({
      kind: 'charge',
      keyId: t.keyId,
      model: 'fast',
      promptTokens: whole.usage.prompt_tokens,
      completionTokens: whole.usage.completion_tokens,
      micros: -whole.usage.cost_micros,
    });
    expect(whole.usage.completion_tokens).toBeGreaterThan(0);

    const streamed = await readEvents(await t.post('/v1/chat/completions', chatBody({ stream: true, stream_options: { include_usage: true } })));
    const usage = streamed.data
      .filter((data) => data !== '[DONE]')
      .map((data) => JSON.parse(data) as { usage?: ChatUsage | null })
      .find((chunk) => chunk.usage)?.usage;
    if (!usage) throw new Error('no usage chunk');
    const [streamCharge] = await t.store.entries(t.accountId, { limit: 1 });
    expect(streamCharge).toMatchObject({
      keyId: t.keyId,
      model: 'fast',
      promptTokens: usage.prompt_tokens,
      completionTokens: usage.completion_tokens,
      micros: -usage.cost_micros,
    });

    // The usage API sums them to the micro.
    const rows = await t.store.usage({ accountId: t.accountId, from: 0, to: t.clock.now() + 1, groupBy: 'day' });
    expect(rows).toEqual([
      {
        period: expect.any(Number),
        keyId: t.keyId,
        model: 'fast',
        requests: 2,
        promptTokens: whole.usage.prompt_tokens + usage.prompt_tokens,
        completionTokens: whole.usage.completion_tokens + usage.completion_tokens,
        micros: whole.usage.cost_micros + usage.cost_micros,
      },
    ]);
  });

  it('a /v1/responses reply records the tokens it billed', async () => {
    const t = await setup();
    const response = (await (await t.post('/v1/responses', { model: 'fast', input: 'Count to ten' })).json()) as {
      usage: { input_tokens: number; output_tokens: number; cost_micros: number };
    };
    const [charge] = await t.store.entries(t.accountId, { limit: 1 });
    expect(charge).toMatchObject({
      keyId: t.keyId,
      model: 'fast',
      promptTokens: response.usage.input_tokens,
      completionTokens: response.usage.output_tokens,
      micros: -response.usage.cost_micros,
    });
  });

  it("a signed-in app user's charge has the model and no key", async () => {
    const target = { accountId: '' };
    const t = await setup({
      authenticate: async (token): Promise<AppPrincipal | undefined> =>
        token === 'app-user' ? { accountId: target.accountId, funding: 'credits' } : undefined,
    });
    target.accountId = t.accountId;
    const reply = await t.post('/v1/chat/completions', chatBody(), { authorization: 'Bearer app-user' });
    expect(reply.status).toBe(200);
    await reply.json();
    const [charge] = await t.store.entries(t.accountId, { limit: 1 });
    expect(charge).toMatchObject({ kind: 'charge', model: 'fast' });
    expect(charge?.keyId).toBeUndefined();
    expect(charge?.promptTokens).toBeGreaterThan(0);
  });

  it('a hold settled without tokens (images, search, fetch) records none', async () => {
    const clock = manualClock();
    const store = memoryStore({ now: clock.now });
    const account = await store.createAccount({ plan: 'free' });
    await store.addCredits(account.id, 1_000);
    const principal = { account, funding: 'credits' as const, keyId: 'key_images', app: false };
    const hold = await holdCredits(store, principal, {
      micros: 500,
      minimum: 500,
      ttlMs: 60_000,
      requestId: 'req_x',
      model: 'painter',
      timers: manualTimers(clock).timers,
    });
    if (!hold.ok) throw new Error('hold refused');
    await hold.value.settle(400, { model: 'painter', images: 1 });
    const [charge] = await store.entries(account.id, { limit: 1 });
    expect(charge).toEqual({
      id: expect.any(String),
      accountId: account.id,
      micros: -400,
      kind: 'charge',
      createdAt: clock.now(),
      holdId: expect.any(String),
      requestId: 'req_x',
      meta: { model: 'painter', images: 1 },
      keyId: 'key_images',
      model: 'painter',
    });
  });
});
