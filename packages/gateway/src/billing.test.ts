/**
 * The spec's billing rules (Billing 1-8; decisions in docs/architecture.md, Billing) through `gateway.fetch`, with exact
 * micro-dollar amounts read from the store. Numbers in comments show where each figure comes from.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ModelConfig } from '@tollgate/core';
import { openaiCompatible } from '@tollgate/providers';
import { fakeOpenAI } from '@tollgate/testing';
import { chatBody, readEvents, setup, testModels, UPSTREAM_KEY, type SetupOptions, type TestGateway } from '../test/test-harness';
import { charges, expectLedgerAddsUp } from '../test/test-leaks';
import { stepReader } from '../test/test-sse';

/**
 * A model with prices that do not divide evenly: 1.5 micros a prompt token, 2.5 a completion
 * token, no minimum hold. Its hold rounds each part up; its charge rounds the sum up once.
 */
const ODD: ModelConfig = {
  id: 'odd',
  type: 'chat',
  provider: 'local',
  upstream: 'gpt-4o-mini',
  context_tokens: 100_000,
  max_output_tokens: 1_000,
  price: { prompt_micros_per_mtok: 1_500_000, completion_micros_per_mtok: 2_500_000, min_hold_micros: 0 },
};
/** A model that costs nothing: it still needs a balance that is not negative (Billing 6). */
const GRATIS: ModelConfig = {
  id: 'gratis',
  type: 'chat',
  provider: 'local',
  upstream: 'gpt-4o-mini',
  max_output_tokens: 100,
  price: { prompt_micros_per_mtok: 0, completion_micros_per_mtok: 0, min_hold_micros: 0 },
};
const MODELS = [...testModels(), ODD, GRATIS];

/** Ten one-word tokens for the fake: pieces `one`, ` two`, ... ` ten` (48 characters). */
const TEN = 'one two three four five six seven eight nine ten';
/** The prompt of the early-stop tests: 26 ASCII bytes, 5 words. */
const COUNT_PROMPT = 'Count slowly to ten please';

const opened: TestGateway[] = [];
async function open(options: SetupOptions = {}): Promise<TestGateway> {
  const t = await setup({ models: MODELS, ...options });
  opened.push(t);
  return t;
}

// The ledger invariant, after every test: the balance is the sum of the account's entries.
afterEach(async () => {
  for (const t of opened.splice(0)) await expectLedgerAddsUp(t);
});

function expectRefusedBeforeStart(response: Response) {
  expect(response.headers.get('x-request-id')).toBeNull();
  expect(response.headers.get('x-funding')).toBeNull();
  expect(response.headers.get('x-service-version')).toBe('tollgate/test');
}

describe('Billing 1: the hold is the prompt bound plus the output limit', () => {
  it('holds exactly that while a stream is open and unread, then settles the reported usage', async () => {
    const t = await open();
    // "Hello there": 11 bytes + 8 per message = 19 prompt tokens at 1; default output 500 at 2.
    const response = await t.post('/v1/chat/completions', chatBody({ stream: true }));
    expect(response.status).toBe(200);
    expect(await t.balance()).toEqual({ balance: 10_000_000, held: 19 + 1_000, available: 10_000_000 - 1_019 });
    await readEvents(response);
    await t.gateway.idle();
    // The fake reports 2 prompt tokens and 7 completion tokens: 2 x 1 + 7 x 2.
    expect(await t.balance()).toEqual({ balance: 10_000_000 - 16, held: 0, available: 10_000_000 - 16 });
  });

  it('rounds each part of the hold up and holds less for a lower output limit', async () => {
    const t = await open();
    const response = await t.post('/v1/chat/completions', chatBody({ model: 'odd', stream: true, max_completion_tokens: 100 }));
    expect(response.status).toBe(200);
    // ceil(19 x 1.5) = 29 for the prompt, ceil(100 x 2.5) = 250 for the output.
    expect((await t.balance()).held).toBe(279);
    expect(t.fake.requests[0]!.body.max_completion_tokens).toBe(100);
    await readEvents(response);
    await t.gateway.idle();
    // ceil(2 x 1.5 + 7 x 2.5) = ceil(20.5) = 21.
    expect(await t.balance()).toEqual({ balance: 10_000_000 - 21, held: 0, available: 10_000_000 - 21 });
  });

  it('applies min_hold_micros to the hold but charges only the cost', async () => {
    const t = await open({ fakeOptions: { reply: 'Hi' } });
    const response = await t.post('/v1/chat/completions', chatBody({ stream: true, max_completion_tokens: 1 }));
    // 19 + 1 x 2 = 21, below the model's minimum hold of 50.
    expect((await t.balance()).held).toBe(50);
    await readEvents(response);
    await t.gateway.idle();
    // 2 prompt tokens x 1 + 1 completion token x 2 = 4.
    expect(await t.balance()).toEqual({ balance: 10_000_000 - 4, held: 0, available: 10_000_000 - 4 });
  });

  it('answers 402 insufficient_balance, before the request starts, when not even one output token fits', async () => {
    // The odd model: prompt 29 + one output token ceil(2.5) = 3 is the least a request holds.
    const t = await open({ credits: 31 });
    const response = await t.post('/v1/chat/completions', chatBody({ model: 'odd' }));
    expect(response.status).toBe(402);
    expectRefusedBeforeStart(response);
    expect(await response.json()).toEqual({
      error: { message: expect.any(String), type: 'insufficient_balance', param: null, code: 'insufficient_balance' },
    });
    expect(t.fake.requests).toHaveLength(0);
    expect(await t.balance()).toEqual({ balance: 31, held: 0, available: 31 });
    expect(await charges(t)).toEqual([]);

    await t.store.addCredits(t.accountId, 1);
    const fits = await t.post('/v1/chat/completions', chatBody({ model: 'odd' }));
    expect(fits.status).toBe(200);
    expect(fits.headers.get('x-output-limited')).toBe('balance');
    expect(t.fake.requests[0]!.body.max_completion_tokens).toBe(1);
    // The fake stops at the limit: 2 prompt + 1 completion token, ceil(3 + 2.5) = 6.
    expect(await t.balance()).toEqual({ balance: 26, held: 0, available: 26 });
  });

  it('counts min_hold_micros as the least a request holds: 49 refuses, 50 serves', async () => {
    const t = await open({ credits: 49 });
    const refused = await t.post('/v1/chat/completions', chatBody());
    expect(refused.status).toBe(402);
    expectRefusedBeforeStart(refused);
    await t.store.addCredits(t.accountId, 1);
    const served = await t.post('/v1/chat/completions', chatBody());
    expect(served.status).toBe(200);
    // (50 - 19) / 2 = 15.5: 15 output tokens fit.
    expect(t.fake.requests[0]!.body.max_completion_tokens).toBe(15);
    expect(served.headers.get('x-output-limited')).toBe('balance');
  });

  it('refuses an account without credits', async () => {
    const t = await open({ credits: 0 });
    const response = await t.post('/v1/chat/completions', chatBody({ stream: true }));
    expect(response.status).toBe(402);
    expectRefusedBeforeStart(response);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('insufficient_balance');
  });
});

describe('Billing 2: the account pays for the tokens the upstream reports', () => {
  it('charges ceil((prompt x p + completion x c) / 1e6) once, with the request id and the usage on the entry', async () => {
    const t = await open();
    const response = await t.post('/v1/chat/completions', chatBody({ model: 'odd' }));
    expect(response.status).toBe(200);
    const completion = (await response.json()) as { usage: { prompt_tokens: number; completion_tokens: number } };
    expect(completion.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 7 });
    expect(await t.balance()).toEqual({ balance: 10_000_000 - 21, held: 0, available: 10_000_000 - 21 });
    const [charge, ...more] = await charges(t);
    expect(more).toEqual([]);
    expect(charge).toMatchObject({
      accountId: t.accountId,
      micros: -21,
      kind: 'charge',
      requestId: response.headers.get('x-request-id'),
      meta: { model: 'odd', prompt_tokens: 2, completion_tokens: 7, outcome: 'done' },
    });
  });

  it('asks a stream for usage upstream, hides the usage chunk the client did not ask for, and charges it', async () => {
    const t = await open();
    const response = await t.post('/v1/chat/completions', chatBody({ model: 'odd', stream: true }));
    expect(t.fake.requests[0]!.body.stream_options).toEqual({ include_usage: true });
    const { data } = await readEvents(response);
    expect(data.at(-1)).toBe('[DONE]');
    expect(data.some((event) => event.includes('"usage"'))).toBe(false);
    await t.gateway.idle();
    expect(await t.balance()).toEqual({ balance: 10_000_000 - 21, held: 0, available: 10_000_000 - 21 });
  });

  it('charges the same for a stream whose client asked for usage, and shows that usage', async () => {
    const t = await open();
    const response = await t.post('/v1/chat/completions', chatBody({ model: 'odd', stream: true, stream_options: { include_usage: true } }));
    const { data } = await readEvents(response);
    const usage = JSON.parse(data.at(-2)!) as { choices: unknown[]; usage: Record<string, number> };
    expect(usage.choices).toEqual([]);
    expect(usage.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 7, total_tokens: 9 });
    await t.gateway.idle();
    expect((await charges(t)).map((entry) => entry.micros)).toEqual([-21]);
  });
});

describe('Billing 3: a stream that stops early pays for what it delivered', () => {
  // Estimates (no usage reported): prompt ceil(26 / 4) = 7 + 4 per message = 11 tokens; the
  // delivered "one two three" is 13 characters, ceil(13 / 4) = 4 completion tokens.
  // ceil(11 x 1.5 + 4 x 2.5) = ceil(26.5) = 27.
  const EARLY_COST = 27;

  it('charges the estimate of the delivered text when the client cancels after three chunks', async () => {
    const t = await open({ fakeOptions: { reply: TEN } });
    const response = await t.post('/v1/chat/completions', { model: 'odd', stream: true, messages: [{ role: 'user', content: COUNT_PROMPT }] });
    const events = stepReader(response);
    const [role, ...content] = await events.take(4);
    expect(JSON.parse(role!).choices[0].delta).toMatchObject({ role: 'assistant' });
    expect(content.map((event) => JSON.parse(event).choices[0].delta.content).join('')).toBe('one two three');
    await events.cancel();
    await t.gateway.idle();
    expect(await t.balance()).toEqual({ balance: 10_000_000 - EARLY_COST, held: 0, available: 10_000_000 - EARLY_COST });
    const [charge] = await charges(t);
    expect(charge!.meta).toMatchObject({ prompt_tokens: 11, completion_tokens: 4, outcome: 'client_gone' });
    expect(t.fake.open).toBe(0);
  });

  it('charges the same when the upstream connection drops after three content chunks', async () => {
    const t = await open({ fakeOptions: { reply: TEN, faults: [{ kind: 'cut', afterChunks: 4 }] } });
    const response = await t.post('/v1/chat/completions', { model: 'odd', stream: true, messages: [{ role: 'user', content: COUNT_PROMPT }] });
    expect(response.status).toBe(200);
    const { data } = await readEvents(response);
    expect(data).toHaveLength(5);
    expect(data).not.toContain('[DONE]');
    expect(JSON.parse(data[4]!)).toEqual({ error: { message: expect.any(String), type: 'upstream_error', param: null, code: 'upstream_error' } });
    await t.gateway.idle();
    expect(await t.balance()).toEqual({ balance: 10_000_000 - EARLY_COST, held: 0, available: 10_000_000 - EARLY_COST });
    expect((await charges(t))[0]!.meta).toMatchObject({ prompt_tokens: 11, completion_tokens: 4, outcome: 'upstream_failed' });
  });

  it('uses the reported usage when it arrived before the stream broke', async () => {
    // Events: role, 10 words, finish, usage, [DONE]: the cut after 13 loses only [DONE].
    const t = await open({ fakeOptions: { reply: TEN, faults: [{ kind: 'cut', afterChunks: 13 }] } });
    const response = await t.post('/v1/chat/completions', { model: 'odd', stream: true, messages: [{ role: 'user', content: COUNT_PROMPT }] });
    const { data } = await readEvents(response);
    expect(data).not.toContain('[DONE]');
    await t.gateway.idle();
    // Usage as reported: it came after all the content, so it counts what was delivered.
    // ceil(5 x 1.5 + 10 x 2.5) = ceil(32.5) = 33.
    expect(await t.balance()).toEqual({ balance: 10_000_000 - 33, held: 0, available: 10_000_000 - 33 });
    expect((await charges(t))[0]!.meta).toMatchObject({ prompt_tokens: 5, completion_tokens: 10, outcome: 'upstream_failed' });
  });
});

describe('Billing 4: a retried request is charged again', () => {
  it('charges two identical POSTs twice, under two request ids', async () => {
    const t = await open();
    const first = await t.post('/v1/chat/completions', chatBody());
    const second = await t.post('/v1/chat/completions', chatBody());
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(first.headers.get('x-request-id')).not.toBe(second.headers.get('x-request-id'));
    const entries = await charges(t);
    expect(entries.map((entry) => entry.micros)).toEqual([-16, -16]);
    expect(entries.map((entry) => entry.requestId)).toEqual([first.headers.get('x-request-id'), second.headers.get('x-request-id')]);
    expect(await t.balance()).toEqual({ balance: 10_000_000 - 32, held: 0, available: 10_000_000 - 32 });
  });
});

describe('Billing 5: a lower output limit that fits the balance', () => {
  it('sends the lowered max_completion_tokens upstream and says X-Output-Limited: balance', async () => {
    const t = await open({ credits: 219 });
    const response = await t.post('/v1/chat/completions', chatBody());
    expect(response.status).toBe(200);
    // All 219 is held: 219 - 19 for the prompt leaves 200, 100 output tokens at 2.
    expect(t.fake.requests[0]!.body.max_completion_tokens).toBe(100);
    expect(response.headers.get('x-output-limited')).toBe('balance');
    await response.json();
    expect(await t.balance()).toEqual({ balance: 219 - 16, held: 0, available: 219 - 16 });
  });

  it('rounds the lowered limit down so its hold fits exactly', async () => {
    const t = await open({ credits: 100 });
    const response = await t.post('/v1/chat/completions', chatBody({ model: 'odd', stream: true }));
    // 100 - ceil(19 x 1.5) = 71 left; 71 / 2.5 = 28.4: 28 tokens (ceil(28 x 2.5) = 70 <= 71).
    expect(t.fake.requests[0]!.body.max_completion_tokens).toBe(28);
    expect(response.headers.get('x-output-limited')).toBe('balance');
    expect((await t.balance()).held).toBe(100);
    await readEvents(response);
    await t.gateway.idle();
    expect(await t.balance()).toEqual({ balance: 100 - 21, held: 0, available: 100 - 21 });
  });

  it('sends no header when the balance covers the limit, or when only the model maximum lowered it', async () => {
    const t = await open({ credits: 1_019 });
    const exact = await t.post('/v1/chat/completions', chatBody());
    expect(exact.status).toBe(200);
    expect(exact.headers.get('x-output-limited')).toBeNull();
    expect(t.fake.requests[0]!.body.max_completion_tokens).toBe(500);
    await t.store.addCredits(t.accountId, 1_000_000);
    const capped = await t.post('/v1/chat/completions', chatBody({ max_tokens: 50_000 }));
    expect(capped.status).toBe(200);
    expect(capped.headers.get('x-output-limited')).toBeNull();
    expect(t.fake.requests[1]!.body.max_completion_tokens).toBe(1_000);
  });
});

describe('Billing 6 and 8: a negative balance refuses every metered request, and the model list stays free', () => {
  it('bills an upstream that reports more than the limit at the limit (never past the hold); a balance made negative refuses until topped up', async () => {
    // An upstream that ignores the output limit: the fake answers its whole 300-word reply.
    const upstream = fakeOpenAI({ reply: Array.from({ length: 300 }, (_, i) => `w${i}`).join(' ') });
    const ignoringLimit: typeof fetch = async (input, init) => {
      const body = JSON.parse(String(init!.body)) as Record<string, unknown>;
      delete body.max_completion_tokens;
      return upstream.fetch(input, { ...init, body: JSON.stringify(body) });
    };
    const provider = openaiCompatible({ baseURL: 'http://upstream.test/v1', apiKey: UPSTREAM_KEY, fetch: ignoringLimit });
    const t = await open({ credits: 219, providers: { local: provider } });
    const first = await t.post('/v1/chat/completions', chatBody());
    expect(first.status).toBe(200);
    expect(first.headers.get('x-output-limited')).toBe('balance');
    // Held 219: the prompt bound (11 bytes + 8 = 19) and the lowered limit of (219 - 19) / 2 = 100
    // tokens. Reported: 2 prompt + 300 completion tokens (602, past the hold); billed at the limit:
    // 2 + 100 x 2 = 202, and the 200 tokens past it are logged.
    expect(await t.balance()).toEqual({ balance: 17, held: 0, available: 17 });
    expect((await charges(t))[0]?.meta).toMatchObject({
      prompt_tokens: 2,
      completion_tokens: 100,
      usage_over_limit: { prompt_tokens: 0, completion_tokens: 200 },
    });
    expect(t.logs.at(-1)).toMatchObject({ costMicros: 202, completionTokens: 100, usageOverLimit: { promptTokens: 0, completionTokens: 200 } });

    // A balance can still go negative by other means (a store settle past a hold, an operator's
    // correction): then every metered request is refused (Billing 6).
    const hold = await t.store.hold(t.accountId, { micros: 17, ttlMs: 60_000 });
    if (!hold.ok) throw new Error('hold refused');
    await t.store.settle(hold.value.holdId, { micros: 400 });
    expect(await t.balance()).toEqual({ balance: -383, held: 0, available: -383 });
    for (const body of [chatBody(), chatBody({ stream: true }), chatBody({ model: 'gratis' }), { model: 'painter', prompt: 'a lighthouse' }]) {
      const path = 'prompt' in body ? '/v1/images/generations' : '/v1/chat/completions';
      const refused = await t.post(path, body);
      expect(refused.status).toBe(402);
      expectRefusedBeforeStart(refused);
      expect(((await refused.json()) as { error: { code: string; type: string } }).error).toMatchObject({
        code: 'insufficient_balance',
        type: 'insufficient_balance',
      });
    }
    expect(upstream.requests).toHaveLength(1);

    const models = await t.get('/v1/models');
    expect(models.status).toBe(200);
    // Back to zero: a free model serves again (nothing to hold), a priced one still needs credit.
    await t.store.addCredits(t.accountId, 383);
    expect((await t.post('/v1/chat/completions', chatBody({ model: 'gratis' }))).status).toBe(200);
    expect((await t.post('/v1/chat/completions', chatBody())).status).toBe(402);
    expect((await t.balance()).balance).toBe(0);
  });
});

describe('upstream failures and clients that leave', () => {
  it('releases the hold and charges nothing when the upstream fails before answering', async () => {
    const t = await open({ fakeOptions: { faults: [{ kind: 'status', status: 500 }, { kind: 'refuse' }, { kind: 'status', status: 429, retryAfter: 7 }] } });
    const failed = await t.post('/v1/chat/completions', chatBody());
    expect(failed.status).toBe(502);
    expect(((await failed.json()) as { error: { code: string } }).error.code).toBe('upstream_error');
    // The request had started: its error carries the request id and the funding.
    expect(failed.headers.get('x-request-id')).toMatch(/^req_/);
    expect(failed.headers.get('x-funding')).toBe('credits');
    const refused = await t.post('/v1/chat/completions', chatBody({ stream: true }));
    expect(refused.status).toBe(502);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('upstream_unavailable');
    const busy = await t.post('/v1/chat/completions', chatBody({ stream: true }));
    expect(busy.status).toBe(503);
    expect(busy.headers.get('retry-after')).toBe('7');
    expect(await t.balance()).toEqual({ balance: 10_000_000, held: 0, available: 10_000_000 });
    expect(await charges(t)).toEqual([]);
  });

  it('refuses a whole reply past 64 MiB as upstream_error (the rest let go) and charges nothing', async () => {
    // The completion's JSON, then spaces for as long as it is read: valid JSON that never ends.
    const t = await open({ fakeOptions: { faults: [{ kind: 'flood', afterChunks: 1 }] } });
    const failed = await t.post('/v1/chat/completions', chatBody());
    expect(failed.status).toBe(502);
    expect(((await failed.json()) as { error: { code: string } }).error.code).toBe('upstream_error');
    await t.gateway.idle();
    expect(t.fake.open).toBe(0);
    expect(await t.balance()).toEqual({ balance: 10_000_000, held: 0, available: 10_000_000 });
    expect(await charges(t)).toEqual([]);
  });

  it('charges nothing for a stream whose upstream broke before any content was delivered', async () => {
    // Cut before the first event: no 200 was sent yet, so the client gets the error's own status.
    // Cut after the role chunk (which carries no content): the 200 stream ends with an error event.
    const t = await open({
      fakeOptions: {
        faults: [
          { kind: 'cut', afterChunks: 0 },
          { kind: 'cut', afterChunks: 1 },
        ],
      },
    });
    const before = await t.post('/v1/chat/completions', chatBody({ stream: true }));
    expect(before.status).toBe(502);
    expect(before.headers.get('x-request-id')).toMatch(/^req_/);
    expect((await before.json()).error.code).toBe('upstream_error');
    const after = await t.post('/v1/chat/completions', chatBody({ stream: true }));
    expect(after.status).toBe(200);
    const { data } = await readEvents(after);
    expect(JSON.parse(data.at(-1)!).error.code).toBe('upstream_error');
    await t.gateway.idle();
    expect(await t.balance()).toEqual({ balance: 10_000_000, held: 0, available: 10_000_000 });
    expect(await charges(t)).toEqual([]);
  });

  it('finishes and settles exactly a non-streamed call whose client left', async () => {
    let answer!: () => void;
    const gate = new Promise<void>((resolve) => (answer = resolve));
    const t = await open({ fakeOptions: { latencyMs: 1, sleep: () => gate } });
    const client = new AbortController();
    const pending = t.gateway.fetch(
      new Request('http://gateway.test/v1/chat/completions', {
        method: 'POST',
        headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(chatBody({ model: 'odd' })),
        signal: client.signal,
      }),
    );
    await expect.poll(() => t.fake.requests.length, { timeout: 5_000 }).toBe(1);
    expect((await t.balance()).held).toBe(29 + 2_500);
    client.abort();
    answer();
    const response = await pending;
    expect(response.status).toBe(200);
    expect(await t.balance()).toEqual({ balance: 10_000_000 - 21, held: 0, available: 10_000_000 - 21 });
    expect((await charges(t))[0]!.meta).toMatchObject({ prompt_tokens: 2, completion_tokens: 7, outcome: 'done' });
  });
});

describe('X-Funding', () => {
  it('is credits on every 200 of a keyed metered request', async () => {
    const t = await open();
    const plain = await t.post('/v1/chat/completions', chatBody());
    const streamed = await t.post('/v1/chat/completions', chatBody({ stream: true }));
    const limited = await (async () => {
      const poor = await open({ credits: 219 });
      return poor.post('/v1/chat/completions', chatBody());
    })();
    for (const response of [plain, streamed, limited]) {
      expect(response.status).toBe(200);
      expect(response.headers.get('x-funding')).toBe('credits');
      expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    }
    await readEvents(streamed);
    await t.gateway.idle();
  });
});
