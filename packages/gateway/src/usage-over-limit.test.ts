/**
 * Usage beyond the limits the gateway sent upstream is billed at those limits (handle-chat.ts,
 * chatCharge; docs/architecture.md, Billing): an upstream that ignores `max_completion_tokens`, or
 * reports a prompt larger than the hold's prompt bound, is never charged past the hold. The excess
 * is on the request log (`usageOverLimit`) and the entry's meta. Every chat path settles through
 * the one cost function: whole replies, the SSE rewrite, and the tee pass-through.
 */
import type { ModelConfig } from '@tollgate/core';
import { openaiCompatible } from '@tollgate/providers';
import { describe, expect, it } from 'vitest';
import { CHAT_PRICE, chatBody, readEvents, setup, testModels, UPSTREAM_KEY } from '../test/test-harness';
import { charges, expectBooksBalanced, settled } from '../test/test-leaks';

/** What the lying upstream reports, whatever it was asked: far past any limit of these requests. */
const REPORTED = { prompt_tokens: 50_000, completion_tokens: 5_000, total_tokens: 55_000 };
/** 'Hello there': 11 bytes + 8 for the message. */
const PROMPT_BOUND = 19;
const OUTPUT_LIMIT = 256;
/** The hold: 19 x 1 + 256 x 2 = 531 micro-dollars; also the most the request may be charged. */
const HOLD = PROMPT_BOUND * 1 + OUTPUT_LIMIT * 2;
const OVER = { promptTokens: REPORTED.prompt_tokens - PROMPT_BOUND, completionTokens: REPORTED.completion_tokens - OUTPUT_LIMIT };

/** An OpenAI-compatible upstream that answers "Hi" and reports {@link REPORTED}, streamed or not. */
const lyingFetch: typeof fetch = async (_input, init) => {
  const request = JSON.parse(String(init?.body)) as { stream?: boolean; model: string };
  const base = { id: 'chatcmpl-1', created: 1_800_000_000, model: request.model };
  if (!request.stream) {
    const completion = {
      ...base,
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }],
      usage: REPORTED,
    };
    return new Response(JSON.stringify(completion), { headers: { 'content-type': 'application/json' } });
  }
  const chunk = (rest: Record<string, unknown>) => `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', ...rest })}\n\n`;
  const events = [
    chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'Hi' }, finish_reason: null }] }),
    chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
    chunk({ choices: [], usage: REPORTED }),
    'data: [DONE]\n\n',
  ];
  return new Response(events.join(''), { headers: { 'content-type': 'text/event-stream' } });
};

const VAULT: ModelConfig = {
  id: 'vault',
  type: 'chat',
  tier: 'tee',
  provider: 'enclave',
  upstream: 'gpt-4o-mini',
  context_tokens: 100_000,
  max_output_tokens: 1_000,
  price: CHAT_PRICE,
};

async function lying() {
  const local = openaiCompatible({ baseURL: 'http://upstream.test/v1', apiKey: UPSTREAM_KEY, fetch: lyingFetch });
  const enclave = openaiCompatible({ baseURL: 'http://enclave.test/v1', apiKey: UPSTREAM_KEY, fetch: lyingFetch, attest: async () => undefined });
  return setup({ providers: { local, enclave }, models: [...testModels(), VAULT] });
}

describe('usage reported beyond the limits sent upstream', () => {
  for (const [name, body] of [
    ['a whole reply', chatBody({ max_completion_tokens: OUTPUT_LIMIT })],
    ['a stream (SSE rewrite)', chatBody({ max_completion_tokens: OUTPUT_LIMIT, stream: true })],
    ['a tee stream (pass-through)', chatBody({ model: 'vault', max_completion_tokens: OUTPUT_LIMIT, stream: true })],
    ['a tee whole reply (pass-through)', chatBody({ model: 'vault', max_completion_tokens: OUTPUT_LIMIT })],
  ] as const) {
    it(`${name}: billed at the limits, never past the hold, the excess logged`, async () => {
      const t = await lying();
      const response = await t.post('/v1/chat/completions', body);
      expect(response.status).toBe(200);
      if (body.stream) expect((await readEvents(response)).data.at(-1)).toBe('[DONE]');
      else await response.text();
      await settled(t);
      // Without the limits: 50,000 x 1 + 5,000 x 2 = 60,000 against a hold of 531.
      const [charge] = await charges(t);
      expect(charge?.micros).toBe(-HOLD);
      expect(charge?.meta).toMatchObject({
        prompt_tokens: PROMPT_BOUND,
        completion_tokens: OUTPUT_LIMIT,
        usage_over_limit: { prompt_tokens: OVER.promptTokens, completion_tokens: OVER.completionTokens },
      });
      expect(t.logs.at(-1)).toMatchObject({ costMicros: HOLD, promptTokens: PROMPT_BOUND, completionTokens: OUTPUT_LIMIT, usageOverLimit: OVER });
      expect(await t.balance()).toEqual({ balance: 10_000_000 - HOLD, held: 0, available: 10_000_000 - HOLD });
      await expectBooksBalanced(t);
    });
  }

  it('logs nothing over the limit when the usage is within it', async () => {
    const t = await setup();
    const response = await t.post('/v1/chat/completions', chatBody({ max_completion_tokens: OUTPUT_LIMIT }));
    expect(response.status).toBe(200);
    await settled(t);
    expect(t.logs.at(-1)?.usageOverLimit).toBeUndefined();
    expect((await charges(t))[0]?.meta).not.toHaveProperty('usage_over_limit');
  });
});
