import { describe, expect, it } from 'vitest';
import { openaiCompatible } from '@tollgate/providers';
import { chatBody, readEvents, setup } from '../test/test-harness';

/** A provider over a fixed upstream reply. */
function upstreamSays(body: string, contentType = 'application/json') {
  return openaiCompatible({ baseURL: 'http://odd.test/v1', apiKey: 'k', fetch: async () => new Response(body, { headers: { 'content-type': contentType } }) });
}

const sse = (...events: unknown[]) => `${events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join('')}data: [DONE]\n\n`;

describe('upstream replies of odd shapes', () => {
  it('a stream chunk without delta: the client gets a valid chunk, the stream ends, slot and hold come back', async () => {
    const t = await setup({
      providers: {
        local: upstreamSays(
          sse(
            { id: 'u', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'hello' }, finish_reason: null }] },
            { id: 'u', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, finish_reason: 'stop' }] },
          ),
          'text/event-stream',
        ),
      },
    });
    const response = await t.post('/v1/chat/completions', chatBody({ stream: true }));
    expect(response.status).toBe(200);
    const { data } = await readEvents(response);
    expect(JSON.parse(data[1]!).choices[0]).toEqual({ index: 0, finish_reason: 'stop', delta: {} });
    expect(data.at(-1)).toBe('[DONE]');
    await t.gateway.idle();
    expect(t.gateway.active).toBe(0);
    const balance = await t.balance();
    expect(balance.held).toBe(0);
    expect(balance.balance).toBeLessThan(10_000_000);
  });

  it('a whole reply with malformed usage: 200, charged the estimate, nothing left held', async () => {
    for (const usage of [{}, { prompt_tokens: -5_000_000, completion_tokens: 1, total_tokens: 1 }, { prompt_tokens: 1e15, completion_tokens: 1 }]) {
      const t = await setup({
        providers: {
          local: upstreamSays(
            JSON.stringify({
              id: 'u',
              object: 'chat.completion',
              created: 1,
              model: 'm',
              usage,
              choices: [{ index: 0, message: { role: 'assistant', content: 'Hi there' }, finish_reason: 'stop' }],
            }),
          ),
        },
      });
      const response = await t.post('/v1/chat/completions', chatBody());
      expect(response.status, JSON.stringify(usage)).toBe(200);
      await t.gateway.idle();
      const balance = await t.balance();
      expect(balance.held).toBe(0);
      const spent = 10_000_000 - balance.balance;
      expect(spent).toBeGreaterThan(0); // the estimate, never a credit and never nothing
      expect(spent).toBeLessThan(1_000);
      expect(t.logs[0]!.outcome).toBe('no_usage');
    }
  });

  it('a whole reply whose choice has no message: still answered and charged, no 503', async () => {
    const t = await setup({
      providers: {
        local: upstreamSays(
          JSON.stringify({
            id: 'u',
            object: 'chat.completion',
            created: 1,
            model: 'm',
            usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
            choices: [{ index: 0, finish_reason: 'stop' }],
          }),
        ),
      },
    });
    const response = await t.post('/v1/chat/completions', chatBody());
    expect(response.status).toBe(200);
    expect((await t.balance()).balance).toBe(10_000_000 - (5 * 1 + 3 * 2));
  });

  it('a stream whose very first event is an error: the error status, not a 200', async () => {
    const t = await setup({
      providers: {
        local: upstreamSays(
          `data: ${JSON.stringify({ error: { message: 'too long', type: 'invalid_request_error', param: null, code: 'context_length_exceeded' } })}\n\n`,
          'text/event-stream',
        ),
      },
    });
    const response = await t.post('/v1/chat/completions', chatBody({ stream: true }));
    expect(response.status).toBe(400);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    expect((await response.json()).error.code).toBe('context_length_exceeded');
    expect(await t.balance()).toEqual({ balance: 10_000_000, held: 0, available: 10_000_000 });
  });
});
