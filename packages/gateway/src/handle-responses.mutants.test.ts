/**
 * Responses money rules that no other test pinned: a native whole response without usage pays the
 * estimate of everything it delivered (output text and function-call arguments, whatever else the
 * output list holds); one the upstream failed still pays what it delivered (only a failed one that
 * delivered nothing is free), and a completed one with no output pays its prompt; an upstream failure is the spec's error with nothing charged; a streamed
 * request over a chat upstream always asks it for usage; a zero-retention model is never sent to a
 * provider that does not confirm it.
 */
import { chatCostMicros, estimateCompletionTokens } from '@tollgate/billing';
import type { ChatProvider, ResponsesPassThrough } from '@tollgate/providers';
import { describe, expect, it } from 'vitest';
import { CHAT_PRICE, readEvents, setup, testModels } from '../test/test-harness';

const START = 10_000_000;
const CHAT_MODELS = testModels().filter((model) => model.type === 'chat');

/** A native Responses upstream whose whole response is `body`. */
function native(body: () => Record<string, unknown>): ChatProvider & ResponsesPassThrough {
  const unused = async (): Promise<never> => {
    throw new Error('not used by these tests');
  };
  return { kind: 'scripted', zeroDataRetention: false, chat: unused, chatStream: unused, responses: async () => body(), responsesStream: unused };
}

function response(status: string, output: unknown[]): Record<string, unknown> {
  return { id: 'resp_upstream', object: 'response', created_at: 1, status, model: 'upstream', output };
}

const MESSAGE = { type: 'message', role: 'assistant', content: [null, { type: 'output_text', text: 'Hello world!' }, { type: 'refusal' }] };
const CALL = { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{"q":"tollgate"}' };

async function charges(t: Awaited<ReturnType<typeof setup>>) {
  return (await t.store.entries(t.accountId)).filter((entry) => entry.kind === 'charge').map((entry) => ({ micros: entry.micros, meta: entry.meta }));
}

/** The one charge: its completion tokens and outcome, and that it is the price of its token counts. */
async function onlyCharge(t: Awaited<ReturnType<typeof setup>>): Promise<{ completion: unknown; outcome: unknown }> {
  const [charge, ...rest] = await charges(t);
  expect(rest).toEqual([]);
  if (!charge?.meta) throw new Error('one charge with its meta');
  const { prompt_tokens, completion_tokens, outcome } = charge.meta;
  if (typeof prompt_tokens !== 'number' || typeof completion_tokens !== 'number') throw new Error('token counts on the entry');
  expect(prompt_tokens).toBeGreaterThan(0);
  expect(charge.micros).toBe(-chatCostMicros(CHAT_PRICE, { prompt_tokens, completion_tokens }));
  return { completion: completion_tokens, outcome };
}

describe('POST /v1/responses charges', () => {
  it('a native response without usage pays the estimate of its text and function-call arguments, skipping what is no item', async () => {
    const t = await setup({ models: CHAT_MODELS, providers: { local: native(() => response('completed', [null, 'junk', MESSAGE, CALL])) } });
    const reply = await t.post('/v1/responses', { model: 'fast', input: 'Hello there' });
    expect(reply.status).toBe(200);
    expect(await onlyCharge(t)).toEqual({ completion: estimateCompletionTokens('Hello world!{"q":"tollgate"}'), outcome: 'no_usage' });
  });

  it('a native response the upstream failed after delivering text pays that text; a completed one with no output pays its prompt', async () => {
    const partial = await setup({ models: CHAT_MODELS, providers: { local: native(() => response('failed', [MESSAGE])) } });
    expect((await partial.post('/v1/responses', { model: 'fast', input: 'Hello there' })).status).toBe(200);
    expect(await onlyCharge(partial)).toEqual({ completion: estimateCompletionTokens('Hello world!'), outcome: 'no_usage' });
    const empty = await setup({ models: CHAT_MODELS, providers: { local: native(() => response('completed', [])) } });
    expect((await empty.post('/v1/responses', { model: 'fast', input: 'Hello there' })).status).toBe(200);
    expect(await onlyCharge(empty)).toEqual({ completion: 0, outcome: 'no_usage' });
  });

  it('an upstream that fails a whole request is the spec’s error, with the hold released and nothing charged', async () => {
    const t = await setup({ fakeOptions: { faults: [{ kind: 'status', status: 500 }] } });
    const reply = await t.post('/v1/responses', { model: 'fast', input: 'Hello there' });
    expect(reply.status).toBe(502);
    expect(((await reply.json()) as { error: { code: string } }).error.code).toBe('upstream_error');
    expect(await charges(t)).toEqual([]);
    expect(await t.balance()).toEqual({ balance: START, held: 0, available: START });
  });

  it('a streamed request over a chat upstream asks it for usage', async () => {
    const t = await setup();
    await readEvents(await t.post('/v1/responses', { model: 'fast', input: 'Hello there', stream: true }));
    expect(t.fake.requests.map((request) => request.body.stream_options)).toEqual([{ include_usage: true }]);
  });

  it('a response over a chat upstream that reported usage is charged it ("done"), created at the gateway’s clock in seconds', async () => {
    const t = await setup();
    const reply = await t.post('/v1/responses', { model: 'fast', input: 'Hello there' });
    expect(reply.status).toBe(200);
    const body = (await reply.json()) as { created_at: number; usage: { input_tokens: number; output_tokens: number; total_tokens: number } };
    expect(body.created_at).toBe(Math.floor(t.clock.now() / 1000));
    expect(body.usage.total_tokens).toBe(body.usage.input_tokens + body.usage.output_tokens);
    expect((await charges(t)).map((charge) => charge.meta?.outcome)).toEqual(['done']);
  });

  it('a zero-retention model is refused on a provider that does not confirm it, before any prompt is sent', async () => {
    const models = CHAT_MODELS.map((model) => ({ ...model, retention: 'zdr' }));
    const t = await setup({ models });
    const reply = await t.post('/v1/responses', { model: 'fast', input: 'Hello there' });
    expect(reply.status).toBe(502);
    expect(((await reply.json()) as { error: { code: string } }).error.code).toBe('upstream_retention');
    expect(t.fake.requests).toEqual([]);
    expect(await charges(t)).toEqual([]);
  });
});
