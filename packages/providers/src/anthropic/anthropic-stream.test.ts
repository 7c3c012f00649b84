import type { ChatCompletionChunk } from '@tollgate/core';
import { createSseDecoder } from '@tollgate/sse';
import { anthropicFixtures } from '@tollgate/testing';
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../provider';
import { createAnthropicStream } from './anthropic-stream';

/** Feeds a transcript in 7-byte pieces (events split anywhere) through decoder and translator. */
async function translate(transcript: string): Promise<{ chunks: ChatCompletionChunk[]; error?: unknown }> {
  const bytes = new TextEncoder().encode(transcript);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let at = 0; at < bytes.length; at += 7) controller.enqueue(bytes.slice(at, at + 7));
      controller.close();
    },
  });
  const chunks: ChatCompletionChunk[] = [];
  try {
    for await (const chunk of body.pipeThrough(createSseDecoder()).pipeThrough(createAnthropicStream()) as unknown as AsyncIterable<ChatCompletionChunk>)
      chunks.push(chunk);
  } catch (error) {
    return { chunks, error };
  }
  return { chunks };
}

const deltas = (chunks: ChatCompletionChunk[]) => chunks.filter((chunk) => chunk.choices.length > 0).map((chunk) => chunk.choices[0]!.delta);

describe('createAnthropicStream', () => {
  it('translates a text stream: role, text deltas, finish, usage with cache reads in the prompt', async () => {
    const { chunks, error } = await translate(anthropicFixtures.textStream);
    expect(error).toBeUndefined();
    expect(deltas(chunks)).toEqual([{ role: 'assistant', content: '' }, { content: 'Hello' }, { content: '! How can I' }, { content: ' help you today?' }, {}]);
    expect(chunks.map((chunk) => chunk.choices[0]?.finish_reason ?? null)).toEqual([null, null, null, null, 'stop', null]);
    expect(chunks[chunks.length - 1]).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 1045, completion_tokens: 12, total_tokens: 1057, prompt_tokens_details: { cached_tokens: 1024 } },
    });
    expect(chunks[0]!.id).toBe('msg_01XFDUDYJgAACzvnptvVoYEL');
  });

  it('translates parallel tool_use blocks into indexed tool-call deltas', async () => {
    const { chunks } = await translate(anthropicFixtures.toolUseStream);
    const calls = deltas(chunks).flatMap((delta) => delta.tool_calls ?? []);
    expect(calls[0]).toEqual({ index: 0, id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', type: 'function', function: { name: 'get_weather', arguments: '' } });
    const args = [0, 1].map((index) =>
      calls
        .filter((call) => call.index === index)
        .map((call) => call.function?.arguments ?? '')
        .join(''),
    );
    expect(args.map((text) => JSON.parse(text))).toEqual([{ city: 'San Francisco' }, { city: 'Tokyo', unit: 'celsius' }]);
    expect(
      deltas(chunks)
        .map((delta) => delta.content ?? '')
        .join(''),
    ).toBe("Okay, let's check the weather for both cities:");
    expect(chunks.find((chunk) => chunk.choices[0]?.finish_reason)!.choices[0]!.finish_reason).toBe('tool_calls');
    expect(chunks[chunks.length - 1]!.usage).toMatchObject({ prompt_tokens: 472, completion_tokens: 89, total_tokens: 561 });
  });

  it('gives a tool call without input "{}" as its arguments, as the whole reply does (the API streams one empty partial_json); keeps the stop reason through a later message_delta', async () => {
    const events = [
      ['message_start', { type: 'message_start', message: { id: 'msg_1', model: 'claude', usage: { input_tokens: 10, output_tokens: 1 } } }],
      ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'now', input: {} } }],
      ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '' } }],
      ['content_block_stop', { type: 'content_block_stop', index: 0 }],
      ['content_block_start', { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_2', name: 'weather', input: {} } }],
      ['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"city":' } }],
      ['content_block_delta', { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '"Oslo"}' } }],
      ['content_block_stop', { type: 'content_block_stop', index: 1 }],
      ['message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 20 } }],
      // "One or more" message_delta: a later one without a stop_reason keeps it.
      ['message_delta', { type: 'message_delta', delta: { stop_reason: null, stop_sequence: null }, usage: { output_tokens: 21 } }],
      ['message_stop', { type: 'message_stop' }],
    ] as const;
    const { chunks, error } = await translate(events.map(([name, data]) => `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`).join(''));
    expect(error).toBeUndefined();
    const calls = deltas(chunks).flatMap((delta) => delta.tool_calls ?? []);
    const args = [0, 1].map((index) =>
      calls
        .filter((call) => call.index === index)
        .map((call) => call.function?.arguments ?? '')
        .join(''),
    );
    expect(args).toEqual(['{}', '{"city":"Oslo"}']);
    expect(chunks.find((chunk) => chunk.choices[0]?.finish_reason)?.choices[0]?.finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)?.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 21 });
  });

  it('leaves thinking out of the content but counts it in the completion tokens', async () => {
    const { chunks } = await translate(anthropicFixtures.thinkingStream);
    expect(
      deltas(chunks)
        .map((delta) => delta.content ?? '')
        .join(''),
    ).toBe('27 * 453 = 12,231');
    expect(chunks[chunks.length - 1]!.usage).toMatchObject({ prompt_tokens: 36, completion_tokens: 58 });
  });

  it('errors with upstream_busy on an overloaded_error event, after what was delivered', async () => {
    const { chunks, error } = await translate(anthropicFixtures.overloadedStream);
    expect(deltas(chunks)).toEqual([{ role: 'assistant', content: '' }, { content: 'Sure' }]);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ code: 'upstream_busy', accepted: true });
  });

  it('errors with upstream_error when the stream ends before message_stop', async () => {
    const cut = anthropicFixtures.textStream.slice(0, anthropicFixtures.textStream.indexOf('event: message_delta'));
    const { chunks, error } = await translate(cut);
    expect(
      deltas(chunks)
        .map((delta) => delta.content ?? '')
        .join(''),
    ).toBe('Hello! How can I help you today?');
    expect(chunks.some((chunk) => chunk.usage)).toBe(false);
    expect(error).toMatchObject({ code: 'upstream_error', accepted: true });
  });

  it('maps stop_reason refusal to finish_reason content_filter', async () => {
    const refused = anthropicFixtures.textStream.replace('"stop_reason":"end_turn"', '"stop_reason":"refusal"');
    const { chunks } = await translate(refused);
    expect(chunks.find((chunk) => chunk.choices[0]?.finish_reason)!.choices[0]!.finish_reason).toBe('content_filter');
  });
});
