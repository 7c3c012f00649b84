import { DEFAULT_MAX_EVENT_LENGTH } from '@tollgate/sse';
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../provider';
import { openaiRawReply } from './openai-raw-reply';
import type { UpstreamCall } from './post-openai';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** 1 MiB of spaces: what a flooding body sends every read. */
const FLOOD = new Uint8Array(1 << 20).fill(0x20);

/** An upstream call whose body sends `parts` one per read, then ends (or stays silent, fails, or floods for as long as it is read). */
function upstreamCall(parts: string[], after: 'end' | 'silent' | 'fail' | 'flood' = 'end', contentType = 'text/event-stream') {
  const state = { aborted: 0, unlinked: 0, cancelled: 0 };
  let pulls = 0;
  let index = 0;
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        pulls++;
        if (index < parts.length) return controller.enqueue(encoder.encode(parts[index++]!));
        if (after === 'flood') return controller.enqueue(FLOOD);
        if (after === 'end') return controller.close();
        if (after === 'fail') return controller.error(new TypeError('connection reset'));
        return new Promise<void>(() => undefined);
      },
      cancel() {
        state.cancelled++;
      },
    },
    { highWaterMark: 0 },
  );
  const call: UpstreamCall = {
    response: new Response(body, { headers: { 'content-type': contentType } }),
    abort: () => void state.aborted++,
    unlink: () => void state.unlinked++,
  };
  return { call, state, pulls: () => pulls };
}

const chunk = (delta: Record<string, unknown>) => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta }] })}\n\n`;

async function readText(body: ReadableStream<Uint8Array>): Promise<string> {
  return decoder.decode(await new Response(body).arrayBuffer());
}

describe('openaiRawReply: delivered text', () => {
  it('collects content and tool-call arguments of the events passed on, event by event', async () => {
    const args = chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"q":' } }] });
    const parts = [
      chunk({ role: 'assistant', content: 'Hé' }),
      `: keepalive\n\n${chunk({ content: 'llo' })}`,
      args,
      chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
      'data: [DONE]\n\n',
    ];
    const { call } = upstreamCall(parts);
    const reply = openaiRawReply(call, true, undefined);
    const reader = reply.body.getReader();
    expect(reply.delivered!()).toBe('');
    await reader.read();
    expect(reply.delivered!()).toBe('Hé');
    await reader.read();
    expect(reply.delivered!()).toBe('Héllo');
    await reader.read();
    await reader.read();
    expect(reply.delivered!()).toBe('Héllo{"q":1}');
    await reader.read();
    expect((await reader.read()).done).toBe(true);
    expect(reply.delivered!()).toBe('Héllo{"q":1}');
    expect(await reply.usage).toBeUndefined();
  });

  it('counts an event split across chunks once it is complete, and skips events that are not JSON', async () => {
    const event = chunk({ content: 'split here' });
    const { call } = upstreamCall([event.slice(0, 30), event.slice(30), 'data: not json\n\n', chunk({ content: '!' })]);
    const reply = openaiRawReply(call, true, undefined);
    const reader = reply.body.getReader();
    await reader.read();
    expect(reply.delivered!()).toBe('');
    await reader.read();
    expect(reply.delivered!()).toBe('split here');
    await reader.read();
    await reader.read();
    expect(reply.delivered!()).toBe('split here!');
  });

  it('on cancel after two 4,000-character events: aborts the upstream, keeps their text, resolves usage undefined', async () => {
    const a = 'a'.repeat(4_000);
    const b = 'b'.repeat(4_000);
    const { call, state } = upstreamCall([chunk({ content: a }), chunk({ content: b })], 'silent');
    const reply = openaiRawReply(call, true, undefined);
    const reader = reply.body.getReader();
    await reader.read();
    await reader.read();
    await reader.cancel();
    expect(await reply.usage).toBeUndefined();
    expect(reply.delivered!()).toBe(a + b);
    expect(state).toEqual({ aborted: 1, unlinked: 1, cancelled: 1 });
  });

  it('keeps the usage and text seen before an upstream failure', async () => {
    const usage = { prompt_tokens: 3, completion_tokens: 9, total_tokens: 12 };
    const { call, state } = upstreamCall([chunk({ content: 'partial' }), `data: ${JSON.stringify({ id: 'c', choices: [], usage })}\n\n`], 'fail');
    const reply = openaiRawReply(call, true, undefined);
    const reader = reply.body.getReader();
    await reader.read();
    await reader.read();
    const error = await reader.read().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).code).toBe('upstream_error');
    expect(await reply.usage).toEqual(usage);
    expect(reply.delivered!()).toBe('partial');
    expect(state.aborted).toBe(1);
  });

  it("reads a whole reply's message content and tool-call arguments at its end", async () => {
    const whole = JSON.stringify({
      id: 'x',
      object: 'chat.completion',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Sure. ',
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"city":"Zürich"}' } }],
          },
          finish_reason: 'tool_calls',
        },
      ],
    });
    const { call } = upstreamCall([whole.slice(0, 40), whole.slice(40)], 'end', 'application/json');
    const reply = openaiRawReply(call, false, undefined);
    const reader = reply.body.getReader();
    await reader.read();
    expect(reply.delivered!()).toBe('');
    await reader.read();
    expect((await reader.read()).done).toBe(true);
    expect(reply.delivered!()).toBe('Sure. {"city":"Zürich"}');
    expect(await reply.usage).toBeUndefined();
  });

  it('passes the bytes through unchanged', async () => {
    const parts = [chunk({ content: 'x' }), 'data: [DONE]\n\n'];
    const { call } = upstreamCall(parts);
    const reply = openaiRawReply(call, true, undefined);
    expect(await readText(reply.body)).toBe(parts.join(''));
    expect(reply.delivered!()).toBe('x');
  });
});

/** Reads a body to its end; what the read that failed threw (undefined when none did). */
async function readToFailure(body: ReadableStream<Uint8Array>): Promise<unknown> {
  const reader = body.getReader();
  try {
    for (let read = await reader.read(); !read.done; read = await reader.read());
  } catch (caught) {
    return caught;
  }
  return undefined;
}

describe('openaiRawReply: bounded', () => {
  it('a whole reply past 64 MiB, or a stream’s event that never ends, errors as upstream_error and lets the upstream go', async () => {
    const cases = [
      // Valid JSON all along (whitespace after the object): the bound, not the parse, stops it.
      { stream: false, call: upstreamCall(['{"choices":[]}'], 'flood', 'application/json') },
      { stream: true, call: upstreamCall([`${chunk({ content: 'Hi' })}data: `], 'flood') },
    ];
    for (const { stream, call } of cases) {
      const reply = openaiRawReply(call.call, stream, undefined);
      const error = await readToFailure(reply.body);
      expect(error).toBeInstanceOf(ProviderError);
      expect((error as ProviderError).code).toBe('upstream_error');
      expect(call.state).toMatchObject({ aborted: 1, cancelled: 1 });
      expect(call.pulls()).toBeLessThanOrEqual(66);
      expect(reply.delivered!()).toBe(stream ? 'Hi' : '');
      expect(await reply.usage).toBeUndefined();
    }
  });

  it('an event that passes the bound only when the body ends errors the same way, the call let go and usage resolved', async () => {
    // Under the bound while it arrives; its last line, flushed at the end of the body, takes it over.
    const call = upstreamCall([chunk({ content: 'Hi' }), `data: ${'a'.repeat(DEFAULT_MAX_EVENT_LENGTH - 10)}\n`, `data: ${'b'.repeat(20)}`]);
    const reply = openaiRawReply(call.call, true, undefined);
    const error = await readToFailure(reply.body);
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).code).toBe('upstream_error');
    expect(call.state).toMatchObject({ aborted: 1, unlinked: 1 });
    expect(reply.delivered!()).toBe('Hi');
    expect(await reply.usage).toBeUndefined();
  });
});
