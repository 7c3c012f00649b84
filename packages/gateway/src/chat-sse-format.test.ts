/**
 * chatSseFormat's batch encoding (`items`): the same bytes as its `item` for each chunk joined,
 * and a batch with a chunk it throws on counts for nothing (the metered stream sends none of it):
 * neither its text nor its usage.
 */
import type { ChatCompletionChunk } from '@tollgate/core';
import { describe, expect, it } from 'vitest';
import { type ChatSseFormatOptions, chatSseFormat } from './chat-sse-format';

const OPTIONS: ChatSseFormatOptions = { id: 'chatcmpl-ours', model: 'fast', includeUsage: true, obfuscate: () => 'o'.repeat(16), now: () => 0 };

const chunk = (delta: ChatCompletionChunk['choices'][number]['delta'], finish: string | null = null): ChatCompletionChunk => ({
  id: 'up-1',
  object: 'chat.completion.chunk',
  created: 1_700_000_000,
  model: 'up-model',
  choices: [{ index: 0, delta, finish_reason: finish as ChatCompletionChunk['choices'][number]['finish_reason'] }],
});

/** A fresh batch each call (the format rewrites the chunks it is given): text, a tool call, a usage-only chunk, the finish. */
const batch = (): ChatCompletionChunk[] => [
  chunk({ role: 'assistant', content: '' }),
  chunk({ content: 'Hél' }),
  chunk({ content: 'lo' }, ''),
  chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":1}' } }] }),
  { ...chunk({}), choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } },
  chunk({}, 'stop'),
];

/** A chunk whose only choice is null: `event()` throws on it (`choice.delta` of null). */
const broken = (): ChatCompletionChunk => ({ ...chunk({ content: 'never' }), choices: [null] }) as unknown as ChatCompletionChunk;

const text = (bytes: Uint8Array | undefined) => (bytes === undefined ? undefined : new TextDecoder().decode(bytes));

describe('chatSseFormat.items', () => {
  it('encodes a batch as the bytes item() gives for each chunk, joined; what it delivered and the usage are the same', () => {
    const batched = chatSseFormat(OPTIONS);
    const single = chatSseFormat(OPTIONS);
    const bytes = batched.items!(batch());
    const parts = batch()
      .map((each) => single.item(each))
      .filter((part) => part !== undefined);
    expect(parts).toHaveLength(5);
    const joined = Buffer.concat(parts);
    expect(Buffer.from(bytes!)).toEqual(joined);
    expect(text(bytes)).toContain('"finish_reason":null');
    expect(batched.delivered).toBe('Héllo{"q":1}');
    expect(single.delivered).toBe(batched.delivered);
    expect(batched.usage).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
    expect(text(batched.done())).toBe(text(single.done()));
    // A batch of only a usage chunk has no bytes of its own.
    expect(batched.items!([{ ...chunk({}), choices: [], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }])).toBeUndefined();
  });

  it('a chunk that throws fails the whole batch: the error propagates and delivered is what it was before the batch', () => {
    const format = chatSseFormat(OPTIONS);
    expect(text(format.items!([chunk({ content: 'Kept' })]))).toContain('"content":"Kept"');
    expect(format.delivered).toBe('Kept');
    // The same throw that item() makes on that chunk.
    const thrown = (() => {
      try {
        chatSseFormat(OPTIONS).item(broken());
      } catch (error) {
        return error;
      }
    })();
    expect(thrown).toBeInstanceOf(TypeError);
    expect(() => format.items!([chunk({ content: ' lost' }), chunk({ content: ' too' }), broken(), chunk({ content: ' after' })])).toThrow(
      (thrown as Error).message,
    );
    expect(format.delivered).toBe('Kept');
    // The format goes on from there.
    expect(text(format.items!([chunk({ content: '!' })]))).toContain('"content":"!"');
    expect(format.delivered).toBe('Kept!');
  });

  it('a failed batch counts for nothing: neither its text nor the usage it carried', () => {
    const format = chatSseFormat(OPTIONS);
    const usage = { ...chunk({}), choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } };
    expect(() => format.items!([chunk({ content: 'Hi' }), usage, broken()])).toThrow(TypeError);
    expect(format.delivered).toBe('');
    // The usage counts content the client was not sent: the settle would charge it (handle-chat.ts).
    expect(format.usage).toBeUndefined();
  });
});

describe('chatSseFormat: what it counts and its last event', () => {
  it('counts tool-call arguments, and nothing for a call without a function or without arguments', () => {
    const format = chatSseFormat(OPTIONS);
    format.items!([
      chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function' } as never] }),
      chunk({ tool_calls: [{ index: 0, function: { name: 'lookup' } } as never] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"q":' } }] }),
      chunk({ content: 'and text' }),
    ]);
    expect(format.delivered).toBe('{"q":and text');
  });

  it('with include_usage, no usage from the upstream and no fallback: [DONE] alone', () => {
    const format = chatSseFormat(OPTIONS);
    format.items!([chunk({ content: 'Hi' })]);
    expect(text(format.done())).toBe('data: [DONE]\n\n');
  });

  it('a usage chunk before any chunk came takes its created from the clock', () => {
    const format = chatSseFormat({
      ...OPTIONS,
      now: () => 1_700_000_123_456,
      usageFallback: () => ({ prompt_tokens: 1, completion_tokens: 0, total_tokens: 1 }),
    });
    const usage = JSON.parse((text(format.done()) as string).split('\n\n')[0]!.slice(6));
    expect(usage).toMatchObject({ created: 1_700_000_123, choices: [], usage: { prompt_tokens: 1, completion_tokens: 0, total_tokens: 1 } });
  });
});
