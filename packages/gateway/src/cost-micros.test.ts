/**
 * Cached prompt tokens and `usage.cost_micros` through `gateway.fetch` (docs/http-api.md, Billing;
 * docs/architecture.md, Billing): on every chat path the reply shows the charge, and it is the
 * ledger entry's amount and the request log's `costMicros`, to the micro; cached tokens reported by
 * each provider family are billed at the model's cached price.
 */
import type { ChatModelConfig, Funding } from '@tollgate/core';
import { anthropic, gemini, openaiCompatible, type Provider } from '@tollgate/providers';
import { fakeAnthropic, fakeGemini, fakeOpenAI, fakeOpenAIResponses } from '@tollgate/testing';
import OpenAI from 'openai';
import { listen } from '@tollgate/testing/server';
import { afterEach, describe, expect, it } from 'vitest';
import type { AppPrincipal } from './gateway-options';
import { chatBody, readEvents, type SetupOptions, setup, type TestGateway, UPSTREAM_KEY } from '../test/test-harness';
import { charges, expectLedgerAddsUp } from '../test/test-leaks';

/** 3 micros a prompt token, 1.25 a cached prompt token, 7 a completion token. */
const CACHED_PRICE = { prompt_micros_per_mtok: 3_000_000, cached_prompt_micros_per_mtok: 1_250_000, completion_micros_per_mtok: 7_000_000, min_hold_micros: 0 };
const model = (id: string, upstream: string, extra: Partial<ChatModelConfig> = {}): ChatModelConfig => ({
  id,
  type: 'chat',
  provider: 'local',
  upstream,
  context_tokens: 100_000,
  max_output_tokens: 1_000,
  default_output_tokens: 500,
  price: CACHED_PRICE,
  ...extra,
});
const { cached_prompt_micros_per_mtok: _, ...NO_CACHED_PRICE } = CACHED_PRICE;
const MODELS = [model('cached', 'gpt-4o-mini'), model('plain', 'gpt-4o-mini', { price: NO_CACHED_PRICE })];

/** Eight one-word prompt tokens for the fakes (which count words). */
const EIGHT = 'one two three four five six seven eight';
/** Ten one-word completion tokens. */
const TEN = 'one two three four five six seven eight nine ten';
const ask = (extra: Record<string, unknown> = {}) => chatBody({ model: 'cached', messages: [{ role: 'user', content: EIGHT }], ...extra });
/** 8 prompt tokens of which 3 cached, 10 completion tokens: (8 - 3) x 3 + 3 x 1.25 + 10 x 7 = 88.75, rounded up once. */
const CACHED_COST = 89;

/** The charge at CACHED_PRICE, computed independently in BigInt: one ceil over the sum. */
function priced(prompt: number, cached: number, completion: number): number {
  const total = BigInt(prompt - cached) * 3_000_000n + BigInt(cached) * 1_250_000n + BigInt(completion) * 7_000_000n;
  return Number((total + 999_999n) / 1_000_000n);
}

const opened: TestGateway[] = [];
async function open(options: SetupOptions = {}): Promise<TestGateway> {
  const t = await setup({ models: MODELS, fakeOptions: { reply: TEN, cachedTokens: 3 }, ...options });
  opened.push(t);
  return t;
}
afterEach(async () => {
  for (const t of opened.splice(0)) await expectLedgerAddsUp(t);
});

/** The one charge of the test: its amount is `shown`, and so is the log line's costMicros. */
async function expectChargedExactly(t: TestGateway, shown: unknown, meta: Record<string, unknown> = {}) {
  await t.gateway.idle();
  const entries = await charges(t);
  expect(entries).toHaveLength(1);
  expect(typeof shown).toBe('number');
  expect(-entries[0]!.micros).toBe(shown);
  expect(entries[0]!.meta).toMatchObject(meta);
  expect(t.logs.at(-1)?.costMicros).toBe(shown);
}

/** A provider over an upstream whose whole reply reports the given usage. */
function reporting(usage: Record<string, unknown>): Provider {
  const fetch = async () =>
    Response.json({
      id: 'chatcmpl-up',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content: TEN, refusal: null }, finish_reason: 'stop' }],
      usage,
    });
  return openaiCompatible({ baseURL: 'http://upstream.test/v1', apiKey: UPSTREAM_KEY, fetch });
}

describe('cost_micros on chat completions', () => {
  it('whole reply: usage keeps the cached count and carries the charge, which is the ledger entry and the log', async () => {
    const t = await open();
    const response = await t.post('/v1/chat/completions', ask());
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.usage).toMatchObject({ prompt_tokens: 8, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 3 }, cost_micros: CACHED_COST });
    await expectChargedExactly(t, body.usage.cost_micros, { prompt_tokens: 8, completion_tokens: 10, cached_tokens: 3 });
  });

  it('bills cached tokens at the prompt price when the model sets no cached price', async () => {
    const t = await open();
    const body = await (await t.post('/v1/chat/completions', ask({ model: 'plain' }))).json();
    // 8 x 3 + 10 x 7.
    expect(body.usage.cost_micros).toBe(94);
    await expectChargedExactly(t, 94);
  });

  it('stream with include_usage: the usage chunk carries the charge settled after it', async () => {
    const t = await open();
    const response = await t.post('/v1/chat/completions', ask({ stream: true, stream_options: { include_usage: true } }));
    const { data } = await readEvents(response);
    expect(data.at(-1)).toBe('[DONE]');
    const usage = JSON.parse(data.at(-2)!).usage;
    expect(usage).toEqual({
      prompt_tokens: 8,
      completion_tokens: 10,
      total_tokens: 18,
      prompt_tokens_details: { cached_tokens: 3 },
      completion_tokens_details: { reasoning_tokens: 0 },
      cost_micros: CACHED_COST,
    });
    await expectChargedExactly(t, usage.cost_micros, { cached_tokens: 3, outcome: 'done' });
  });

  it('stream without include_usage: no usage chunk, the same charge', async () => {
    const t = await open();
    const { data } = await readEvents(await t.post('/v1/chat/completions', ask({ stream: true })));
    expect(data.some((line) => line.includes('cost_micros'))).toBe(false);
    await expectChargedExactly(t, CACHED_COST);
  });

  it('an upstream that reports no usage: the reply shows the estimate it is billed, with the charge', async () => {
    const t = await open({ providers: { local: reporting({}) } });
    const body = await (await t.post('/v1/chat/completions', ask())).json();
    // The prompt and completion estimates (docs/architecture.md, Billing): the reply shows them, priced.
    expect(body.usage).toEqual({
      prompt_tokens: expect.any(Number),
      completion_tokens: expect.any(Number),
      total_tokens: body.usage.prompt_tokens + body.usage.completion_tokens,
      cost_micros: priced(body.usage.prompt_tokens, 0, body.usage.completion_tokens),
    });
    await expectChargedExactly(t, body.usage.cost_micros, { outcome: 'no_usage' });
  });

  it('ignores a cached count above the prompt: the whole prompt at the prompt price', async () => {
    const t = await open({ providers: { local: reporting({ prompt_tokens: 8, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 9 } }) } });
    const body = await (await t.post('/v1/chat/completions', ask())).json();
    expect(body.usage.cost_micros).toBe(8 * 3 + 10 * 7);
    await expectChargedExactly(t, 94);
    expect((await charges(t))[0]!.meta).not.toHaveProperty('cached_tokens');
  });

  it('usage past the output limit: the charge shown is the capped one the ledger has', async () => {
    const t = await open({ providers: { local: reporting({ prompt_tokens: 8, completion_tokens: 5_000, prompt_tokens_details: { cached_tokens: 3 } }) } });
    const body = await (await t.post('/v1/chat/completions', ask({ max_completion_tokens: 100 }))).json();
    // The completion is billed at the 100 tokens sent upstream: 15 + 3.75 + 700 = 718.75.
    expect(body.usage).toMatchObject({ completion_tokens: 5_000, cost_micros: 719 });
    await expectChargedExactly(t, 719, { completion_tokens: 100, usage_over_limit: { prompt_tokens: 0, completion_tokens: 4_900 } });
  });

  it('a prompt reported past the prompt bound of the hold: billed at the bound, of which at most all are cached', async () => {
    const t = await open({ providers: { local: reporting({ prompt_tokens: 100, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 90 } }) } });
    const body = await (await t.post('/v1/chat/completions', ask())).json();
    // The bound: 39 bytes of text + 8 for the message = 47 prompt tokens, all of them cached: 47 x 1.25 + 10 x 7 = 128.75.
    expect(body.usage.cost_micros).toBe(129);
    await expectChargedExactly(t, 129, { prompt_tokens: 47, cached_tokens: 47, usage_over_limit: { prompt_tokens: 53, completion_tokens: 0 } });
  });

  it('included funding: no entry; cost_micros and the log show the price the plan covered', async () => {
    const target = { accountId: '' };
    const t = await open({
      authenticate: async (token): Promise<AppPrincipal | undefined> =>
        token === 'app-included' ? { accountId: target.accountId, funding: 'included' satisfies Funding } : undefined,
    });
    target.accountId = t.accountId;
    const response = await t.post('/v1/chat/completions', ask(), { authorization: 'Bearer app-included' });
    expect(response.headers.get('x-funding')).toBe('included');
    const body = await response.json();
    expect(body.usage.cost_micros).toBe(CACHED_COST);
    await t.gateway.idle();
    expect(await charges(t)).toHaveLength(0);
    expect(t.logs.at(-1)).toMatchObject({ funding: 'included', costMicros: CACHED_COST });
  });
});

describe('the cached price at createGateway', () => {
  it('refuses a cached price above the prompt price: the hold would no longer be the most a request costs', async () => {
    const price = { ...CACHED_PRICE, cached_prompt_micros_per_mtok: 3_000_001 };
    await expect(open({ models: [model('cached', 'gpt-4o-mini', { price })] })).rejects.toThrow(
      'model "cached": price.cached_prompt_micros_per_mtok (3000001) must not exceed price.prompt_micros_per_mtok (3000000)',
    );
  });
});

describe('cached tokens of each provider family', () => {
  it('Anthropic: cache reads are the cached tokens, cache writes are billed at the prompt price', async () => {
    const fake = fakeAnthropic({ reply: TEN, cacheReadTokens: 3, cacheCreationTokens: 2 });
    const local = anthropic({ baseURL: 'http://anthropic.test/v1', apiKey: UPSTREAM_KEY, fetch: fake.fetch });
    for (const stream of [false, true]) {
      const t = await open({ providers: { local } });
      const response = await t.post('/v1/chat/completions', ask(stream ? { stream, stream_options: { include_usage: true } } : {}));
      const usage = stream ? JSON.parse((await readEvents(response)).data.at(-2)!).usage : (await response.json()).usage;
      expect(usage.prompt_tokens_details).toEqual({ cached_tokens: 3 });
      // The prompt counts input + cache reads + cache writes; only the reads are at the cached price.
      expect(usage.cost_micros).toBe(priced(usage.prompt_tokens, 3, usage.completion_tokens));
      expect(usage.cost_micros).toBeLessThan(priced(usage.prompt_tokens, 0, usage.completion_tokens));
      await expectChargedExactly(t, usage.cost_micros, { cached_tokens: 3 });
    }
  });

  it('Gemini: cachedContentTokenCount is the cached tokens', async () => {
    const fake = fakeGemini({ reply: TEN, cachedTokens: 3 });
    const local = gemini({ baseURL: 'http://gemini.test/v1beta', apiKey: UPSTREAM_KEY, fetch: fake.fetch });
    for (const stream of [false, true]) {
      const t = await open({ providers: { local } });
      const response = await t.post('/v1/chat/completions', ask(stream ? { stream, stream_options: { include_usage: true } } : {}));
      const usage = stream ? JSON.parse((await readEvents(response)).data.at(-2)!).usage : (await response.json()).usage;
      expect(usage.prompt_tokens_details).toEqual({ cached_tokens: 3 });
      expect(usage.cost_micros).toBe(priced(usage.prompt_tokens, 3, usage.completion_tokens));
      await expectChargedExactly(t, usage.cost_micros, { cached_tokens: 3 });
    }
  });
});

describe('tee pass-through', () => {
  it('bills cached tokens at the cached price; the attested bytes are not rewritten, so they carry no cost_micros', async () => {
    const enclave = fakeOpenAI({ reply: TEN, cachedTokens: 3 });
    const local = openaiCompatible({ baseURL: 'http://enclave.test/v1', apiKey: UPSTREAM_KEY, fetch: enclave.fetch, attest: async () => undefined });
    for (const stream of [false, true]) {
      const t = await open({ providers: { local }, models: [model('cached', 'gpt-4o-mini', { tier: 'tee' })] });
      const response = await t.post('/v1/chat/completions', ask({ stream }));
      const text = await response.text();
      expect(text).toContain('"cached_tokens":3');
      expect(text).not.toContain('cost_micros');
      await expectChargedExactly(t, CACHED_COST, { cached_tokens: 3 });
    }
  });
});

describe('cost_micros on POST /v1/responses', () => {
  const responsesEvents = async (response: Response) =>
    (await response.text())
      .split('\n\n')
      .filter((block) => block.startsWith('event: '))
      .map((block) => JSON.parse(block.split('\n')[1]!.slice('data: '.length)));

  it('chat translation, whole: the response usage carries the charge', async () => {
    const t = await open();
    const body = await (await t.post('/v1/responses', { model: 'cached', input: EIGHT })).json();
    expect(body.usage).toEqual({
      input_tokens: 8,
      input_tokens_details: { cached_tokens: 3 },
      output_tokens: 10,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 18,
      cost_micros: CACHED_COST,
    });
    await expectChargedExactly(t, body.usage.cost_micros, { cached_tokens: 3 });
  });

  it('chat translation, streamed: response.completed carries the charge settled after it', async () => {
    const t = await open();
    const list = await responsesEvents(await t.post('/v1/responses', { model: 'cached', input: EIGHT, stream: true }));
    const last = list.at(-1);
    expect(last.type).toBe('response.completed');
    expect(last.response.usage).toMatchObject({ input_tokens: 8, input_tokens_details: { cached_tokens: 3 }, cost_micros: CACHED_COST });
    await expectChargedExactly(t, last.response.usage.cost_micros);
  });

  it('a stream cut upstream: response.failed carries the charge of what was delivered', async () => {
    const t = await open({ fakeOptions: { reply: TEN, cachedTokens: 3, faults: [{ kind: 'cut', afterChunks: 4 }] } });
    const list = await responsesEvents(await t.post('/v1/responses', { model: 'cached', input: EIGHT, stream: true }));
    const last = list.at(-1);
    expect(last.type).toBe('response.failed');
    // No usage came: the prompt and the delivered text are estimated, with no cached tokens.
    const usage = last.response.usage;
    expect(usage.input_tokens_details).toEqual({ cached_tokens: 0 });
    expect(usage.cost_micros).toBe(priced(usage.input_tokens, 0, usage.output_tokens));
    await expectChargedExactly(t, usage.cost_micros, { outcome: 'upstream_failed' });
  });

  it('native pass-through, whole and streamed: the upstream usage gets the charge added', async () => {
    const upstream = fakeOpenAIResponses({ apiKey: UPSTREAM_KEY, reply: TEN, cachedTokens: 3 });
    const local = openaiCompatible({ baseURL: 'http://upstream.test/v1', apiKey: UPSTREAM_KEY, fetch: upstream.fetch, responsesApi: true });
    const whole = await open({ providers: { local } });
    const body = await (await whole.post('/v1/responses', { model: 'cached', input: EIGHT })).json();
    expect(body.usage).toMatchObject({ input_tokens: 8, input_tokens_details: { cached_tokens: 3 }, output_tokens: 10, cost_micros: CACHED_COST });
    await expectChargedExactly(whole, body.usage.cost_micros, { cached_tokens: 3 });

    const streamed = await open({ providers: { local } });
    const list = await responsesEvents(await streamed.post('/v1/responses', { model: 'cached', input: EIGHT, stream: true }));
    const last = list.at(-1);
    expect(last.type).toBe('response.completed');
    expect(last.response.usage).toMatchObject({ input_tokens: 8, cost_micros: CACHED_COST });
    await expectChargedExactly(streamed, last.response.usage.cost_micros, { cached_tokens: 3 });
  });
});

describe('the official openai client', () => {
  it('still parses a whole reply and a usage chunk that carry cost_micros (extra usage fields are kept)', async () => {
    const t = await open({ now: Date.now });
    const server = await listen((request) => t.gateway.fetch(request));
    try {
      const openai = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: t.key, maxRetries: 0, timeout: 10_000 });
      const messages = [{ role: 'user' as const, content: EIGHT }];
      const completion = await openai.chat.completions.create({ model: 'cached', messages });
      expect(completion.choices[0]?.message.content).toBe(TEN);
      expect(completion.usage).toMatchObject({
        prompt_tokens: 8,
        completion_tokens: 10,
        prompt_tokens_details: { cached_tokens: 3 },
        cost_micros: CACHED_COST,
      });

      const stream = await openai.chat.completions.create({ model: 'cached', messages, stream: true, stream_options: { include_usage: true } });
      let usage: OpenAI.CompletionUsage | null | undefined;
      let text = '';
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        if (chunk.usage) usage = chunk.usage;
      }
      expect(text).toBe(TEN);
      expect(usage).toMatchObject({ prompt_tokens: 8, cost_micros: CACHED_COST });
      await t.gateway.idle();
      expect((await charges(t)).map((entry) => -entry.micros)).toEqual([CACHED_COST, CACHED_COST]);
    } finally {
      await server.close();
    }
  });
});
