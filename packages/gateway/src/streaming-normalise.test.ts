import { describe, expect, it } from 'vitest';
import { chatBody, readEvents, setup } from '../test/test-harness';

describe('stream normalisation of compatible upstreams', () => {
  it('turns finish_reason "" into null and sends the estimated usage when the upstream reports none', async () => {
    // An upstream that sends finish_reason "" on content chunks and no usage chunk at all.
    const body = `${[
      {
        id: 'x',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        choices: [{ index: 0, delta: { role: 'assistant', content: 'Hi there' }, finish_reason: '' }],
      },
      { id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
    ]
      .map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`)
      .join('')}data: [DONE]\n\n`;
    const { openaiCompatible } = await import('@tollgate/providers');
    const provider = openaiCompatible({
      baseURL: 'http://compat.test/v1',
      apiKey: 'k',
      fetch: async () => new Response(body, { headers: { 'content-type': 'text/event-stream' } }),
    });
    const u = await setup({ providers: { local: provider } });
    const response = await u.post('/v1/chat/completions', chatBody({ stream: true, stream_options: { include_usage: true } }));
    const { data } = await readEvents(response);
    const chunks = data.filter((line) => line !== '[DONE]').map((line) => JSON.parse(line));
    expect(chunks[0].choices[0].finish_reason).toBeNull();
    expect(chunks[1].choices[0].finish_reason).toBe('stop');
    const usage = chunks[2];
    expect(usage.choices).toEqual([]);
    expect(usage.usage.completion_tokens).toBe(2); // "Hi there": ceil(8 / 4)
    expect(usage.usage.total_tokens).toBe(usage.usage.prompt_tokens + 2);
    expect(data.at(-1)).toBe('[DONE]');
    await u.gateway.idle();
    const balance = await u.balance();
    expect(balance.held).toBe(0);
    expect(10_000_000 - balance.balance).toBe(usage.usage.prompt_tokens * 1 + 2 * 2);
  });
});
