/**
 * Tee pass-through, attestation and zero data retention through `gateway.fetch` (docs/architecture.md, Routing and providers):
 * exact bytes, statuses, codes, headers and balances.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ModelConfig, Timers } from '@tollgate/core';
import { memoryLimiter } from '@tollgate/limiter';
import { limiterKeys } from '@tollgate/limiter/store-kit';
import { openaiCompatible, type PassThroughChatProvider, type Provider } from '@tollgate/providers';
import { fakeOpenAI, type Fault } from '@tollgate/testing';
import type { GatewayOptions } from './gateway-options';
import { chatBody, CHAT_PRICE, setup, type TestGateway } from '../test/test-harness';

const SECRET = 'sk-enclave-SECRET-5555';
const START = 10_000_000;
const REPLY = 'Sealed reply from the enclave';
/** "Hello there" reported as 2 prompt tokens x 1, the 5-word reply as 5 completion tokens x 2. */
const REPLY_COST = 2 + 5 * 2;
/** A stream stopped before usage: the prompt estimate, ceil(11 / 4) + 4 per message = 7 tokens x 1, no completion tokens. */
const PROMPT_ESTIMATE_COST = 7;
/** What an early stop that delivered `text` costs without usage: the prompt estimate plus ceil(ASCII / 4) completion tokens x 2. */
const earlyStopCost = (text: string) => PROMPT_ESTIMATE_COST + Math.ceil(text.length / 4) * 2;

const base = { type: 'chat', max_output_tokens: 1_000, default_output_tokens: 500, price: CHAT_PRICE } as const;
const VAULT: ModelConfig = { ...base, id: 'vault', tier: 'tee', provider: 'enclave', upstream: 'gpt-4o-mini' };
const VAULT2: ModelConfig = {
  ...base,
  id: 'vault2',
  tier: 'tee',
  routes: [
    { provider: 'enclave', upstream: 'gpt-4o-mini' },
    { provider: 'enclave2', upstream: 'gpt-4o' },
  ],
};
const SECRETIVE: ModelConfig = { ...base, id: 'secretive', retention: 'zdr', provider: 'plain', upstream: 'gpt-4o-mini' };
const CAREFUL: ModelConfig = {
  ...base,
  id: 'careful',
  retention: 'zdr',
  routes: [
    { provider: 'plain', upstream: 'gpt-4o-mini' },
    { provider: 'zdr', upstream: 'gpt-4o' },
  ],
};

/** Wraps a fake's fetch so the test keeps the exact bytes each upstream reply sent. */
function recording(fetch: typeof globalThis.fetch) {
  const sent: Uint8Array[][] = [];
  const wrapped = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const response = await fetch(input, init);
    const chunks: Uint8Array[] = [];
    sent.push(chunks);
    const reader = response.body!.getReader();
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          try {
            const { done, value } = await reader.read();
            if (done) return controller.close();
            chunks.push(value);
            controller.enqueue(value);
          } catch (error) {
            controller.error(error);
          }
        },
        cancel: (reason) => reader.cancel(reason),
      },
      { highWaterMark: 0 },
    );
    return new Response(body, { status: response.status, headers: response.headers });
  }) as typeof globalThis.fetch;
  return { fetch: wrapped, bytes: (index: number) => concat(sent[index] ?? []) };
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(chunks.reduce((size, chunk) => size + chunk.byteLength, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

/**
 * An upstream that sends `parts` (one per read), then ends or stays silent until aborted; counts
 * requests and replies still open.
 */
function scriptedUpstream(parts: string[], then: 'end' | 'silent', contentType = 'text/event-stream') {
  const state = { requests: 0, open: 0 };
  const fetch = (async (_input: RequestInfo | URL, init?: RequestInit) => {
    state.requests++;
    state.open++;
    let index = 0;
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      state.open--;
    };
    init?.signal?.addEventListener('abort', close, { once: true });
    const body = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          if (index < parts.length) return controller.enqueue(new TextEncoder().encode(parts[index++]!));
          if (then === 'end') {
            close();
            return controller.close();
          }
          return new Promise<void>(() => undefined);
        },
        cancel: close,
      },
      { highWaterMark: 0 },
    );
    return new Response(body, { headers: { 'content-type': contentType } });
  }) as typeof globalThis.fetch;
  return { fetch, state };
}

const contentEvent = (content: string) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-enclave', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;

/** Timers that fire only when the test moves the clock; `now` is the gateway's and the store's clock. */
function manualTime(start = 1_800_000_000_000) {
  let time = start;
  let next = 0;
  const armed = new Map<number, { at: number; fn: () => void }>();
  const timers: Timers = {
    setTimeout: (fn, ms) => {
      armed.set(++next, { at: time + ms, fn });
      return next;
    },
    clearTimeout: (handle) => void armed.delete(handle as number),
  };
  const settle = async () => {
    for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
  };
  return {
    now: () => time,
    timers,
    get armed() {
      return armed.size;
    },
    /** Moves the clock by `ms`, firing what falls due in order, letting promises run after each. */
    async advance(ms: number) {
      await settle(); // what the test just started (a read, a request) runs on the current time
      const end = time + ms;
      for (;;) {
        let due: [number, { at: number; fn: () => void }] | undefined;
        for (const entry of armed) if (entry[1].at <= end && (!due || entry[1].at < due[1].at)) due = entry;
        if (!due) break;
        armed.delete(due[0]);
        time = Math.max(time, due[1].at);
        due[1].fn();
        await settle();
      }
      time = end;
      await settle();
    },
  };
}

interface TeeGateway extends TestGateway {
  enclave: ReturnType<typeof fakeOpenAI>;
  enclave2: ReturnType<typeof fakeOpenAI>;
  plain: ReturnType<typeof fakeOpenAI>;
  zdr: ReturnType<typeof fakeOpenAI>;
  sent: (index: number) => Uint8Array;
  attests: { enclave: number; enclave2: number };
  limiter: ReturnType<typeof memoryLimiter>;
  chat(extra?: Record<string, unknown>): Promise<Response>;
}

const opened: TestGateway[] = [];
afterEach(async () => {
  for (const t of opened.splice(0)) {
    await t.gateway.idle();
    const balance = await t.balance();
    expect(balance.held).toBe(0);
    const entries = await t.store.entries(t.accountId);
    expect(entries.reduce((sum, entry) => sum + entry.micros, 0)).toBe(balance.balance);
  }
});

/**
 * A gateway with an attested enclave (tee), a second enclave, a plain provider and a ZDR one.
 * `attest` decides each attestation of `enclave` (throw to fail it); `enclave2` always passes.
 */
async function tee(
  options: {
    faults?: Fault[];
    attest?: () => Promise<void>;
    attestationTtlMs?: number;
    /** The enclave's upstream, instead of the recorded fake. */
    enclaveFetch?: typeof globalThis.fetch;
    /** More gateway options (timers, clock, timeouts). */
    gateway?: Partial<GatewayOptions>;
  } = {},
): Promise<TeeGateway> {
  const enclave = fakeOpenAI({ reply: REPLY, faults: options.faults ?? [] });
  const enclave2 = fakeOpenAI({ reply: 'Second enclave' });
  const plain = fakeOpenAI({ reply: 'Plain provider' });
  const zdr = fakeOpenAI({ reply: 'Zero retention provider' });
  const recorder = recording(enclave.fetch);
  const attests = { enclave: 0, enclave2: 0 };
  const attest = options.attest ?? (async () => undefined);
  const providers: Record<string, Provider> = {
    enclave: openaiCompatible({
      baseURL: 'http://enclave.test/v1',
      apiKey: SECRET,
      fetch: options.enclaveFetch ?? recorder.fetch,
      attest: () => {
        attests.enclave++;
        return attest();
      },
    }),
    enclave2: openaiCompatible({ baseURL: 'http://enclave2.test/v1', apiKey: SECRET, fetch: enclave2.fetch, attest: async () => void attests.enclave2++ }),
    plain: openaiCompatible({ baseURL: 'http://plain.test/v1', apiKey: SECRET, fetch: plain.fetch }),
    zdr: openaiCompatible({ baseURL: 'http://zdr.test/v1', apiKey: SECRET, fetch: zdr.fetch, zeroDataRetention: true }),
  };
  const limiter = memoryLimiter();
  const t = await setup({
    providers,
    models: [VAULT, VAULT2, SECRETIVE, CAREFUL],
    credits: START,
    limiter,
    ...(options.attestationTtlMs ? { attestationTtlMs: options.attestationTtlMs } : {}),
    ...options.gateway,
  });
  opened.push(t);
  return {
    ...t,
    enclave,
    enclave2,
    plain,
    zdr,
    sent: recorder.bytes,
    attests,
    limiter,
    chat: (extra = {}) => t.post('/v1/chat/completions', chatBody({ model: 'vault', ...extra })),
  };
}

async function bytesOf(response: Response): Promise<Uint8Array> {
  return new Uint8Array(await response.arrayBuffer());
}

async function expectStartedError(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get('x-request-id')).toMatch(/^req_/);
  expect(response.headers.get('x-funding')).toBe('credits');
  const text = await response.text();
  expect(text).not.toContain(SECRET);
  expect(JSON.parse(text)).toEqual({ error: { message: expect.any(String), type: 'upstream_error', param: null, code } });
}

async function charges(t: TestGateway) {
  return (await t.store.entries(t.accountId)).filter((entry) => entry.kind === 'charge');
}

async function expectCharged(t: TestGateway, micros: number[]) {
  await t.gateway.idle();
  expect((await charges(t)).map((entry) => entry.micros).reverse()).toEqual(micros.map((value) => -value));
  const total = micros.reduce((sum, value) => sum + value, 0);
  expect(await t.balance()).toEqual({ balance: START - total, held: 0, available: START - total });
}

describe('tee: the attested reply passes through byte for byte', () => {
  it('returns the exact bytes of a whole reply (id and model not rewritten) and charges its usage', async () => {
    const t = await tee();
    const response = await t.chat();
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect(response.headers.get('x-service-version')).toBe('tollgate/test');
    const bytes = await bytesOf(response);
    expect(bytes).toEqual(t.sent(0));
    const body = JSON.parse(new TextDecoder().decode(bytes));
    expect(body.id).toMatch(/^chatcmpl-/);
    expect(body.model).toBe('gpt-4o-mini');
    expect(body.choices[0].message.content).toBe(REPLY);
    expect(t.enclave.requests[0]!.body.model).toBe('gpt-4o-mini');
    await expectCharged(t, [REPLY_COST]);
  });

  it('streams the exact bytes the attested server sent (no obfuscation added, no ids rewritten) and charges its usage', async () => {
    const t = await tee();
    const response = await t.chat({ stream: true });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    const bytes = await bytesOf(response);
    expect(bytes).toEqual(t.sent(0));
    const text = new TextDecoder().decode(bytes);
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    const chunks = text
      .split('\n\n')
      .filter((event) => event.startsWith('data: {'))
      .map((event) => JSON.parse(event.slice(6)));
    expect(new Set(chunks.map((chunk) => chunk.model))).toEqual(new Set(['gpt-4o-mini']));
    // The client did not ask for usage; the gateway forced it upstream for billing and, the bytes
    // being the attested server's, the usage chunk reaches the client anyway (documented exception).
    expect(chunks.at(-1).usage).toMatchObject({ prompt_tokens: 2, completion_tokens: 5 });
    expect(t.enclave.requests[0]!.body.stream_options).toEqual({ include_usage: true });
    expect(t.enclave.open).toBe(0);
    await expectCharged(t, [REPLY_COST]);
  });
});

describe('tee: attestation', () => {
  it('answers 503 upstream_unattested when attestation fails, sending nothing upstream, and does not cache the failure', async () => {
    let fail = true;
    const t = await tee({
      attest: async () => {
        if (fail) throw new Error('quote rejected');
      },
    });
    await expectStartedError(await t.chat(), 503, 'upstream_unattested');
    await expectStartedError(await t.chat({ stream: true }), 503, 'upstream_unattested');
    expect(t.attests.enclave).toBe(2);
    expect(t.enclave.requests).toHaveLength(0);
    await expectCharged(t, []);
    fail = false;
    const response = await t.chat();
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    expect(t.attests.enclave).toBe(3);
    expect(t.enclave.requests).toHaveLength(1);
    await expectCharged(t, [REPLY_COST]);
  });

  it('does not cache a failure of an attest hook that throws synchronously', async () => {
    let fail = true;
    const t = await tee({
      attest: (() => {
        if (fail) throw new Error('no quote');
        return Promise.resolve();
      }) as () => Promise<void>,
    });
    await expectStartedError(await t.chat(), 503, 'upstream_unattested');
    fail = false;
    const response = await t.chat();
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    expect(t.attests.enclave).toBe(2);
  });

  it('caches a successful attestation for attestationTtlMs (manual clock), then checks again', async () => {
    const t = await tee({ attestationTtlMs: 60_000 });
    for (let i = 0; i < 3; i++) await (await t.chat()).arrayBuffer();
    expect(t.attests.enclave).toBe(1);
    t.clock.advance(59_999);
    await (await t.chat({ stream: true })).arrayBuffer();
    expect(t.attests.enclave).toBe(1);
    t.clock.advance(1);
    await (await t.chat()).arrayBuffer();
    expect(t.attests.enclave).toBe(2);
    expect(t.enclave.requests).toHaveLength(5);
    await expectCharged(t, [REPLY_COST, REPLY_COST, REPLY_COST, REPLY_COST, REPLY_COST]);
  });

  it('shares one attestation among concurrent requests', async () => {
    let pass: (() => void) | undefined;
    const t = await tee({ attest: () => new Promise<void>((resolve) => (pass = resolve)) });
    const first = t.chat();
    const second = t.chat();
    // Until the first request reached the attestation (however busy the machine), then a little more.
    for (let i = 0; i < 10_000 && !pass; i++) await new Promise((resolve) => setImmediate(resolve));
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    pass!();
    const replies = await Promise.all([first, second]);
    expect(replies.map((response) => response.status)).toEqual([200, 200]);
    await Promise.all(replies.map((response) => response.arrayBuffer()));
    expect(t.attests.enclave).toBe(1);
  });

  it('fails over to the next attested route when the first fails attestation', async () => {
    const t = await tee({
      attest: async () => {
        throw new Error('bad quote');
      },
    });
    const response = await t.chat({ model: 'vault2' });
    expect(response.status).toBe(200);
    expect(JSON.parse(await response.text()).choices[0].message.content).toBe('Second enclave');
    expect(t.enclave.requests).toHaveLength(0);
    expect(t.attests).toEqual({ enclave: 1, enclave2: 1 });
  });

  it('fails a hung attest after attestationTimeoutMs with 503 upstream_unattested, and does not cache the failure', async () => {
    const time = manualTime();
    let hang = true;
    const t = await tee({
      attest: () => (hang ? new Promise<void>(() => undefined) : Promise.resolve()),
      gateway: { now: time.now, timers: time.timers, attestationTimeoutMs: 5_000 },
    });
    let response: Response | undefined;
    void t.chat().then((reply) => (response = reply));
    while (t.attests.enclave === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    await time.advance(4_999);
    expect(response).toBeUndefined();
    await time.advance(1);
    await expectStartedError(response!, 503, 'upstream_unattested');
    expect(t.enclave.requests).toHaveLength(0);
    hang = false;
    const next = await t.chat();
    expect(next.status).toBe(200);
    await next.arrayBuffer();
    expect(t.attests.enclave).toBe(2);
    await t.gateway.idle();
    expect(time.armed).toBe(0); // the timeout of the check that passed was cleared
    await expectCharged(t, [REPLY_COST]);
  });

  it('refuses at start a tee model whose provider has no attest', async () => {
    const providers = { plain: openaiCompatible({ baseURL: 'http://plain.test/v1', apiKey: SECRET, fetch: fakeOpenAI().fetch }) };
    await expect(setup({ providers, models: [{ ...VAULT, provider: 'plain' }] })).rejects.toThrow(/model vault: tee models need a provider with attest/);
  });
});

describe('tee: failures and early stops', () => {
  it('answers 502 upstream_error, hold released, when the upstream answers 500', async () => {
    const t = await tee({ faults: [{ kind: 'status', status: 500 }] });
    await expectStartedError(await t.chat(), 502, 'upstream_error');
    await expectCharged(t, []);
  });

  it('answers 502 upstream_error, hold released and nothing charged, when a whole reply is cut before its end', async () => {
    const t = await tee({ faults: [{ kind: 'cut', afterChunks: 0 }] });
    await expectStartedError(await t.chat(), 502, 'upstream_error');
    expect(t.enclave.open).toBe(0);
    await expectCharged(t, []);
  });

  it('on a client cancel mid-stream: aborts the upstream, frees the slot, settles at the prompt estimate', async () => {
    const t = await tee({ faults: [{ kind: 'stall', afterChunks: 2 }] });
    const inFlight = () => t.limiter.inFlight(limiterKeys.flight(t.accountId), t.clock.now());
    const response = await t.chat({ stream: true });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toMatch(/^data: \{"id":"chatcmpl-/);
    // The stream holds its in-flight slot and its credit hold while it is open.
    expect(await inFlight()).toBe(1);
    expect(t.enclave.open).toBe(1);
    expect((await t.balance()).held).toBeGreaterThan(0);
    expect(t.gateway.active).toBe(1);
    await reader.cancel();
    await t.gateway.idle();
    expect(t.gateway.active).toBe(0);
    expect(t.enclave.open).toBe(0);
    expect(await inFlight()).toBe(0);
    await expectCharged(t, [PROMPT_ESTIMATE_COST]);
    expect((await charges(t))[0]!.meta).toMatchObject({ prompt_tokens: 7, completion_tokens: 0, outcome: 'incomplete' });
  });

  it('on a client cancel after the usage chunk (before [DONE]): charges the reported usage', async () => {
    const t = await tee();
    // A healthy stream first, to learn where [DONE] is; then one that stalls just before it.
    const events = new TextDecoder()
      .decode(await bytesOf(await t.chat({ stream: true })))
      .split('\n\n')
      .filter(Boolean);
    expect(events.at(-1)).toBe('data: [DONE]');
    t.enclave.setFaults([{ kind: 'stall', afterChunks: events.length - 1 }]);
    const response = await t.chat({ stream: true });
    const reader = response.body!.getReader();
    let text = '';
    while (!text.includes('"usage":{')) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    await t.gateway.idle();
    expect(t.enclave.open).toBe(0);
    await expectCharged(t, [REPLY_COST, REPLY_COST]);
    expect((await charges(t))[0]!.meta).toMatchObject({ prompt_tokens: 2, completion_tokens: 5, outcome: 'done' });
  });

  it("settles a cancelled stream even when the provider's usage promise never resolves", async () => {
    const enclave = fakeOpenAI({ faults: [{ kind: 'stall', afterChunks: 2 }] });
    const inner = openaiCompatible({ baseURL: 'http://enclave.test/v1', apiKey: SECRET, fetch: enclave.fetch, attest: async () => undefined });
    const provider: PassThroughChatProvider = {
      ...inner,
      chatRaw: async (request, options) => ({ ...(await inner.chatRaw!(request, options)), usage: new Promise(() => undefined) }),
    };
    const t = await setup({ providers: { enclave: provider }, models: [VAULT], credits: START });
    opened.push(t);
    const response = await t.post('/v1/chat/completions', chatBody({ model: 'vault', stream: true }));
    const reader = response.body!.getReader();
    await reader.read();
    await reader.cancel();
    await t.gateway.idle();
    expect(t.gateway.active).toBe(0);
    expect(enclave.open).toBe(0);
    await expectCharged(t, [PROMPT_ESTIMATE_COST]);
  });

  it('when the upstream stream is cut mid-way: the client stream errors, the slot is freed, settled at the prompt estimate plus the text delivered', async () => {
    const t = await tee({ faults: [{ kind: 'cut', afterChunks: 2 }] });
    const response = await t.chat({ stream: true });
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
    await t.gateway.idle();
    expect(t.enclave.open).toBe(0);
    expect(await t.limiter.inFlight(limiterKeys.flight(t.accountId), t.clock.now())).toBe(0);
    // Two events got through: the role chunk and "Sealed" (ceil(6 / 4) = 2 tokens).
    await expectCharged(t, [earlyStopCost('Sealed')]);
    expect((await charges(t))[0]!.meta).toMatchObject({ prompt_tokens: 7, completion_tokens: 2, outcome: 'incomplete' });
    expect(t.logs.at(-1)).toMatchObject({ code: 'upstream_error', outcome: 'incomplete' });
  });

  it('a stream cancelled after two 4,000-character content events without usage is charged those tokens, at most the output limit sent', async () => {
    const a = 'a'.repeat(4_000);
    const b = 'b'.repeat(4_000);
    const upstream = scriptedUpstream([contentEvent(a), contentEvent(b)], 'silent');
    const t = await tee({ enclaveFetch: upstream.fetch });
    const response = await t.chat({ stream: true });
    const reader = response.body!.getReader();
    let text = '';
    for (let i = 0; i < 2; i++) text += new TextDecoder().decode((await reader.read()).value);
    expect(text).toBe(contentEvent(a) + contentEvent(b));
    await reader.cancel();
    await t.gateway.idle();
    expect(upstream.state.open).toBe(0);
    // 7 prompt tokens x 1 + 8,000 / 4 = 2,000 completion tokens x 2 would be 4,007 µ$: past the 500
    // tokens the request allowed, so billed at them (never above the hold): 7 + 500 x 2.
    await expectCharged(t, [1_007]);
    expect((await charges(t))[0]!.meta).toMatchObject({
      prompt_tokens: 7,
      completion_tokens: 500,
      outcome: 'incomplete',
      usage_over_limit: { prompt_tokens: 0, completion_tokens: 1_500 },
    });
    expect(t.logs.at(-1)?.usageOverLimit).toEqual({ promptTokens: 0, completionTokens: 1_500 });
  });

  it('a whole reply without usage is charged the prompt estimate plus its message text', async () => {
    const content = 'c'.repeat(400);
    const whole = JSON.stringify({
      id: 'chatcmpl-x',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    });
    const upstream = scriptedUpstream([whole.slice(0, 50), whole.slice(50)], 'end', 'application/json');
    const t = await tee({ enclaveFetch: upstream.fetch });
    const response = await t.chat();
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(whole);
    await expectCharged(t, [earlyStopCost(content)]);
    expect((await charges(t))[0]!.meta).toMatchObject({ prompt_tokens: 7, completion_tokens: 100, outcome: 'no_usage' });
  });
});

describe('tee: idle watchdog (manual timers)', () => {
  const IDLE = 60_000;

  it('ends a stream whose upstream is silent for streamIdleTimeoutMs without [DONE] or an added error event, aborting the upstream', async () => {
    const time = manualTime();
    const upstream = scriptedUpstream([contentEvent('Hello'), contentEvent(' there')], 'silent');
    const t = await tee({ enclaveFetch: upstream.fetch, gateway: { now: time.now, timers: time.timers, streamIdleTimeoutMs: IDLE } });
    const response = await t.chat({ stream: true });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    let text = '';
    for (let i = 0; i < 2; i++) {
      await time.advance(IDLE - 1); // a slow upstream is not a stalled one
      text += new TextDecoder().decode((await reader.read()).value);
    }
    expect(text).toBe(contentEvent('Hello') + contentEvent(' there'));
    let last: ReadableStreamReadResult<Uint8Array> | undefined;
    void reader.read().then((read) => (last = read));
    await time.advance(IDLE - 1);
    expect(last).toBeUndefined();
    expect(upstream.state.open).toBe(1);
    expect(await t.inFlight()).toBe(1);
    // One watchdog timer, re-armed lazily, never one per chunk (besides the slot's lease renewal and
    // the instance's one hold renewal timer).
    expect(time.armed).toBeLessThanOrEqual(3);
    await time.advance(1);
    expect(last).toEqual({ done: true, value: undefined });
    await t.gateway.idle();
    expect(upstream.state.open).toBe(0);
    expect(await t.inFlight()).toBe(0);
    expect(t.gateway.active).toBe(0);
    await expectCharged(t, [earlyStopCost('Hello there')]);
    expect(t.logs.at(-1)).toMatchObject({ status: 200, code: 'upstream_error', outcome: 'incomplete', completionTokens: 3 });
  });

  it('ends a stream whose client reads nothing for streamIdleTimeoutMs: upstream aborted, slot freed, delivered text paid', async () => {
    const time = manualTime();
    const upstream = scriptedUpstream([contentEvent('Hello'), contentEvent(' there')], 'silent');
    const t = await tee({ enclaveFetch: upstream.fetch, gateway: { now: time.now, timers: time.timers, streamIdleTimeoutMs: IDLE } });
    const response = await t.chat({ stream: true });
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe(contentEvent('Hello'));
    await time.advance(IDLE);
    await t.gateway.idle();
    expect(await reader.read()).toEqual({ done: true, value: undefined });
    expect(upstream.state.open).toBe(0);
    expect(await t.inFlight()).toBe(0);
    await expectCharged(t, [earlyStopCost('Hello')]);
    expect(t.logs.at(-1)!.code).toBeUndefined();
  });

  it('an upstream silent from the start: the body ends empty, the upstream is aborted, nothing is charged', async () => {
    const time = manualTime();
    const upstream = scriptedUpstream([], 'silent');
    const t = await tee({ enclaveFetch: upstream.fetch, gateway: { now: time.now, timers: time.timers, streamIdleTimeoutMs: IDLE } });
    const response = await t.chat({ stream: true });
    expect(response.status).toBe(200);
    const text = response.text();
    await time.advance(IDLE);
    expect(await text).toBe('');
    await t.gateway.idle();
    expect(upstream.state.open).toBe(0);
    await expectCharged(t, []);
    expect(t.logs.at(-1)).toMatchObject({ code: 'upstream_error', costMicros: 0 });
  });

  it('leaves a healthy stream alone and leaves no timer armed after it', async () => {
    const time = manualTime();
    const t = await tee({ gateway: { now: time.now, timers: time.timers, streamIdleTimeoutMs: IDLE } });
    const response = await t.chat({ stream: true });
    expect(new TextDecoder().decode(await bytesOf(response)).endsWith('data: [DONE]\n\n')).toBe(true);
    await t.gateway.idle();
    expect(time.armed).toBe(0);
    await expectCharged(t, [REPLY_COST]);
  });
});

describe('zero data retention', () => {
  it('answers 502 upstream_retention before any request reaches a provider that does not confirm ZDR', async () => {
    const t = await tee();
    await expectStartedError(await t.post('/v1/chat/completions', chatBody({ model: 'secretive' })), 502, 'upstream_retention');
    await expectStartedError(await t.post('/v1/chat/completions', chatBody({ model: 'secretive', stream: true })), 502, 'upstream_retention');
    expect(t.plain.requests).toHaveLength(0);
    await expectCharged(t, []);
  });

  it('serves from the ZDR route and never sends the prompt to the route without ZDR', async () => {
    const t = await tee();
    const whole = await t.post('/v1/chat/completions', chatBody({ model: 'careful' }));
    expect(whole.status).toBe(200);
    expect(JSON.parse(await whole.text()).choices[0].message.content).toBe('Zero retention provider');
    const streamed = await t.post('/v1/chat/completions', chatBody({ model: 'careful', stream: true }));
    expect(streamed.status).toBe(200);
    expect(await streamed.text()).toContain('"content":" provider"');
    expect(t.plain.requests).toHaveLength(0);
    expect(t.zdr.requests.map((request) => request.body.model)).toEqual(['gpt-4o', 'gpt-4o']);
    // "Hello there": 2 prompt tokens, "Zero retention provider": 3 completion tokens.
    await expectCharged(t, [2 + 3 * 2, 2 + 3 * 2]);
  });
});
