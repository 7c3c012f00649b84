/**
 * Failover through `gateway.fetch` (docs/architecture.md, Routing and providers): a model's routes are tried in order only when
 * the upstream provably did not accept the request; exact statuses, codes, headers and balances.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ModelConfig } from '@tollgate/core';
import { anthropic, gemini, openaiCompatible, type Provider } from '@tollgate/providers';
import { fakeAnthropic, fakeGemini, fakeOpenAI, type Fault } from '@tollgate/testing';
import { chatBody, CHAT_PRICE, readEvents, setup, type TestGateway } from '../test/test-harness';
import { expectBooksBalanced } from '../test/test-leaks';

/** Every upstream credential of this file: none may reach a client, in a body or a header. */
const SECRETS = { a: 'sk-route-A-SECRET-1111', b: 'sk-route-B-SECRET-2222', claude: 'sk-ant-SECRET-3333', gem: 'AIza-gemini-SECRET-4444' };
const START = 10_000_000;

const PAIR: ModelConfig = {
  id: 'pair',
  type: 'chat',
  label: 'Pair',
  owned_by: 'example',
  max_output_tokens: 1_000,
  default_output_tokens: 500,
  price: CHAT_PRICE,
  routes: [
    { provider: 'a', upstream: 'gpt-a' },
    { provider: 'b', upstream: 'gpt-b' },
  ],
};
const MIXED: ModelConfig = {
  id: 'mixed',
  type: 'chat',
  owned_by: 'example',
  max_output_tokens: 1_000,
  default_output_tokens: 500,
  price: CHAT_PRICE,
  routes: [
    { provider: 'claude', upstream: 'claude-sonnet-4-5' },
    { provider: 'gem', upstream: 'gemini-2.5-flash' },
  ],
};

interface Routed extends TestGateway {
  a: ReturnType<typeof fakeOpenAI>;
  b: ReturnType<typeof fakeOpenAI>;
  claude: ReturnType<typeof fakeAnthropic>;
  gem: ReturnType<typeof fakeGemini>;
  chat(extra?: Record<string, unknown>): Promise<Response>;
}

const opened: TestGateway[] = [];
afterEach(async () => {
  for (const t of opened.splice(0)) {
    await t.gateway.idle();
    // Nothing stays held, and the ledger invariant holds: balance = sum of entries.
    await expectBooksBalanced(t);
  }
});

/** Four fakes behind four providers; route A and B answer different texts so the served route shows. */
async function routed(faults: { a?: Fault[]; b?: Fault[]; claude?: Fault[]; gem?: Fault[] } = {}, fetchA?: typeof fetch): Promise<Routed> {
  const a = fakeOpenAI({ reply: 'Served by A', faults: faults.a ?? [] });
  const b = fakeOpenAI({ reply: 'Served by B', faults: faults.b ?? [] });
  const claude = fakeAnthropic({ reply: 'Served by Claude', faults: faults.claude ?? [] });
  const gem = fakeGemini({ reply: 'Served by Gemini', faults: faults.gem ?? [] });
  const providers: Record<string, Provider> = {
    a: openaiCompatible({ baseURL: 'http://a.test/v1', apiKey: SECRETS.a, fetch: fetchA ?? a.fetch }),
    b: openaiCompatible({ baseURL: 'http://b.test/v1', apiKey: SECRETS.b, fetch: b.fetch }),
    claude: anthropic({ baseURL: 'http://claude.test/v1', apiKey: SECRETS.claude, fetch: claude.fetch }),
    gem: gemini({ baseURL: 'http://gem.test/v1beta', apiKey: SECRETS.gem, fetch: gem.fetch }),
  };
  const t = await setup({ providers, models: [PAIR, MIXED], credits: START });
  opened.push(t);
  return { ...t, a, b, claude, gem, chat: (extra = {}) => t.post('/v1/chat/completions', chatBody({ model: 'pair', ...extra })) };
}

/** Reads the body and asserts that no upstream credential is in it or in any header. */
async function text(response: Response): Promise<string> {
  const body = await response.text();
  const headers = [...response.headers].map(([name, value]) => `${name}: ${value}`).join('\n');
  for (const secret of Object.values(SECRETS)) {
    expect(body).not.toContain(secret);
    expect(headers).not.toContain(secret);
  }
  return body;
}

/** Asserts an error reply after the request started: status, exact body, request id, no secrets. */
async function expectStartedError(response: Response, status: number, code: string, type = 'upstream_error') {
  expect(response.status).toBe(status);
  expect(response.headers.get('x-request-id')).toMatch(/^req_/);
  expect(response.headers.get('x-funding')).toBe('credits');
  expect(response.headers.get('content-type')).toBe('application/json');
  const body = JSON.parse(await text(response));
  expect(body).toEqual({ error: { message: expect.any(String), type, param: null, code } });
  // The upstream's own words never reach the client.
  expect(body.error.message).not.toMatch(/Internal server error|Rate limit reached|fake/i);
}

async function chargeEntries(t: TestGateway) {
  return (await t.store.entries(t.accountId)).filter((entry) => entry.kind === 'charge');
}

async function expectNothingCharged(t: TestGateway) {
  await t.gateway.idle();
  expect(await chargeEntries(t)).toEqual([]);
  expect(await t.balance()).toEqual({ balance: START, held: 0, available: START });
}

/** Route B's charge for a one-message "Hello there" prompt: 2 prompt tokens x 1 + 3 completion tokens ("Served by B") x 2. */
const B_COST = 2 + 3 * 2;

async function expectChargedOnce(t: TestGateway, micros: number, requestId: string | null) {
  await t.gateway.idle();
  const charges = await chargeEntries(t);
  expect(charges.map((entry) => [entry.micros, entry.requestId])).toEqual([[-micros, requestId]]);
  expect(await t.balance()).toEqual({ balance: START - micros, held: 0, available: START - micros });
}

describe('failover before the upstream accepted the request', () => {
  const refusals: [string, Fault][] = [
    ['refuses the connection', { kind: 'refuse' }],
    ['answers 429', { kind: 'status', status: 429, retryAfter: 7 }],
    ['answers 503', { kind: 'status', status: 503 }],
  ];
  for (const [what, fault] of refusals) {
    it(`serves from route B, charged once, when route A ${what}`, async () => {
      const t = await routed({ a: [fault] });
      const response = await t.chat();
      expect(response.status).toBe(200);
      expect(response.headers.get('retry-after')).toBeNull();
      const body = JSON.parse(await text(response));
      expect(body.choices[0].message.content).toBe('Served by B');
      expect(body.model).toBe('pair');
      expect(body.usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 3 });
      // A refused connection never reached the fake; a 429/503 was answered without work.
      expect(t.a.requests).toHaveLength(fault.kind === 'refuse' ? 0 : 1);
      expect(t.b.requests).toHaveLength(1);
      expect(t.b.requests[0]!.body.model).toBe('gpt-b');
      expect(t.b.requests[0]!.headers.authorization).toBe(`Bearer ${SECRETS.b}`);
      expect(t.logs.at(-1)).toMatchObject({ status: 200, provider: 'b', costMicros: B_COST });
      await expectChargedOnce(t, B_COST, response.headers.get('x-request-id'));
    });
  }

  it('serves a stream from route B when route A answers 503 before the stream started', async () => {
    const t = await routed({ a: [{ kind: 'status', status: 503 }] });
    const response = await t.chat({ stream: true });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const { data } = await readEvents(response);
    expect(data.at(-1)).toBe('[DONE]');
    const content = data
      .slice(0, -1)
      .map((event) => JSON.parse(event).choices[0]?.delta?.content ?? '')
      .join('');
    expect(content).toBe('Served by B');
    expect(t.a.requests).toHaveLength(1);
    expect(t.b.requests).toHaveLength(1);
    await expectChargedOnce(t, B_COST, response.headers.get('x-request-id'));
  });

  it('fails over from an overloaded Anthropic route (529) to a Gemini route, whole and streamed', async () => {
    const t = await routed({
      claude: [
        { kind: 'status', status: 529 },
        { kind: 'status', status: 529 },
      ],
    });
    const whole = await t.post('/v1/chat/completions', chatBody({ model: 'mixed' }));
    expect(whole.status).toBe(200);
    const body = JSON.parse(await text(whole));
    expect(body.choices[0].message.content).toBe('Served by Gemini');
    expect(body.model).toBe('mixed');
    const streamed = await t.post('/v1/chat/completions', chatBody({ model: 'mixed', stream: true }));
    expect(streamed.status).toBe(200);
    const { data } = await readEvents(streamed);
    expect(data.at(-1)).toBe('[DONE]');
    expect(
      data
        .slice(0, -1)
        .map((event) => JSON.parse(event).choices[0]?.delta?.content ?? '')
        .join(''),
    ).toBe('Served by Gemini');
    expect(t.claude.requests).toHaveLength(2);
    expect(t.gem.requests).toHaveLength(2);
    expect(t.gem.requests[0]!.url).toContain('/models/gemini-2.5-flash:generateContent');
    expect(t.gem.requests[1]!.url).toContain('/models/gemini-2.5-flash:streamGenerateContent');
    // Each request is charged once, at the usage Gemini reported.
    await t.gateway.idle();
    const cost = 2 * (body.usage.prompt_tokens * 1 + body.usage.completion_tokens * 2);
    expect((await chargeEntries(t)).map((entry) => entry.micros)).toEqual([-cost / 2, -cost / 2]);
    expect((await t.balance()).balance).toBe(START - cost);
  });

  it('serves from the first route of a mixed model when it is healthy (Anthropic), never calling the second', async () => {
    const t = await routed();
    const response = await t.post('/v1/chat/completions', chatBody({ model: 'mixed', stream: true }));
    const { data } = await readEvents(response);
    expect(
      data
        .slice(0, -1)
        .map((event) => JSON.parse(event).choices[0]?.delta?.content ?? '')
        .join(''),
    ).toBe('Served by Claude');
    expect(t.claude.requests[0]!.headers['x-api-key']).toBe(SECRETS.claude);
    expect(t.gem.requests).toHaveLength(0);
  });
});

describe('no failover once the upstream may have accepted the request', () => {
  it('answers 502 upstream_error when route A answers 500, without trying route B, hold released', async () => {
    const t = await routed({ a: [{ kind: 'status', status: 500 }] });
    await expectStartedError(await t.chat(), 502, 'upstream_error');
    expect(t.a.requests).toHaveLength(1);
    expect(t.b.requests).toHaveLength(0);
    await expectNothingCharged(t);
  });

  it('answers 400 invalid_request when route A refuses the request with 400, without trying route B', async () => {
    const t = await routed({ a: [{ kind: 'status', status: 400, message: 'Invalid value for temperature' }] });
    await expectStartedError(await t.chat(), 400, 'invalid_request', 'invalid_request_error');
    expect(t.b.requests).toHaveLength(0);
    await expectNothingCharged(t);
  });

  it('answers 502 upstream_error when route A times out (it may have reached the model), without trying route B', async () => {
    // What undici rejects with when the upstream sends no headers in time.
    const timeout = async () => {
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('Headers Timeout Error'), { code: 'UND_ERR_HEADERS_TIMEOUT' }) });
    };
    const t = await routed({}, timeout as unknown as typeof fetch);
    await expectStartedError(await t.chat(), 502, 'upstream_error');
    await expectStartedError(await t.chat({ stream: true }), 502, 'upstream_error');
    expect(t.b.requests).toHaveLength(0);
    await expectNothingCharged(t);
  });

  it('answers a streamed request 502 (no stream) when route A answers 500 before the stream started', async () => {
    const t = await routed({ a: [{ kind: 'status', status: 500 }] });
    await expectStartedError(await t.chat({ stream: true }), 502, 'upstream_error');
    expect(t.b.requests).toHaveLength(0);
    await expectNothingCharged(t);
  });

  it('never retries a stream that failed after its first event: error event, no [DONE], route B untouched', async () => {
    const t = await routed({ a: [{ kind: 'cut', afterChunks: 2 }] });
    const response = await t.chat({ stream: true });
    expect(response.status).toBe(200);
    const { data } = await readEvents(response);
    expect(data).not.toContain('[DONE]');
    expect(JSON.parse(data.at(-1)!)).toEqual({ error: { message: expect.any(String), type: 'upstream_error', param: null, code: 'upstream_error' } });
    const delivered = data
      .slice(0, -1)
      .map((event) => JSON.parse(event).choices[0]?.delta?.content ?? '')
      .join('');
    expect(delivered.length).toBeGreaterThan(0);
    expect('Served by A'.startsWith(delivered)).toBe(true);
    expect(t.a.requests).toHaveLength(1);
    expect(t.b.requests).toHaveLength(0);
    expect(t.a.open).toBe(0);
    // Charged once, for what was delivered (the Billing tests pin the exact figures).
    await t.gateway.idle();
    expect(await chargeEntries(t)).toHaveLength(1);
    expect((await t.balance()).held).toBe(0);
  });

  it('never retries a stream whose upstream sent an error event after it started', async () => {
    const t = await routed({ a: [{ kind: 'error-event', afterChunks: 1, status: 503, message: 'overloaded' }] });
    const response = await t.chat({ stream: true });
    expect(response.status).toBe(200);
    const { data } = await readEvents(response);
    expect(data).not.toContain('[DONE]');
    expect(JSON.parse(data.at(-1)!).error.code).toBe('upstream_error');
    expect(t.b.requests).toHaveLength(0);
  });
});

describe('every route refused', () => {
  it("answers the last route's 503 upstream_busy with the Retry-After that upstream sent", async () => {
    const t = await routed({ a: [{ kind: 'status', status: 429, retryAfter: 7 }], b: [{ kind: 'status', status: 429, retryAfter: 3 }] });
    const response = await t.chat();
    expect(response.headers.get('retry-after')).toBe('3');
    await expectStartedError(response, 503, 'upstream_busy');
    expect(t.a.requests).toHaveLength(1);
    expect(t.b.requests).toHaveLength(1);
    await expectNothingCharged(t);
  });

  it("answers 503 upstream_busy with the last (Gemini) route's Retry-After when a streamed mixed model finds both busy", async () => {
    const t = await routed({ claude: [{ kind: 'status', status: 529 }], gem: [{ kind: 'status', status: 429, retryAfter: 9 }] });
    const response = await t.post('/v1/chat/completions', chatBody({ model: 'mixed', stream: true }));
    expect(response.headers.get('retry-after')).toBe('9');
    await expectStartedError(response, 503, 'upstream_busy');
    await expectNothingCharged(t);
  });

  it('answers 502 upstream_unavailable when the last route refuses the connection', async () => {
    const t = await routed({ a: [{ kind: 'status', status: 429, retryAfter: 7 }], b: [{ kind: 'refuse' }] });
    const response = await t.chat({ stream: true });
    expect(response.headers.get('retry-after')).toBeNull();
    await expectStartedError(response, 502, 'upstream_unavailable');
    expect(t.b.requests).toHaveLength(0);
    await expectNothingCharged(t);
  });
});

describe('routing stays private', () => {
  it('lists routed models without routes, providers or upstream names', async () => {
    const t = await routed();
    const response = await t.get('/v1/models');
    expect(response.status).toBe(200);
    const body = await text(response);
    const models = JSON.parse(body).data as Record<string, unknown>[];
    expect(models.map((model) => model.id)).toEqual(['pair', 'mixed']);
    for (const model of models)
      expect(Object.keys(model).sort()).toEqual(['created', 'id', 'label', 'max_output_tokens', 'object', 'owned_by', 'plan', 'price', 'tier', 'type']);
    expect(models.map((model) => model.owned_by)).toEqual(['example', 'example']);
    for (const hidden of ['routes', 'provider', 'upstream', 'gpt-a', 'gpt-b', 'claude-sonnet', 'gemini-2.5', 'default_output_tokens'])
      expect(body).not.toContain(hidden);
  });
});
