import type { ChatCompletionChunk } from '@tollgate/core';
import { createSseDecoder } from '@tollgate/sse';
import { geminiFixtures } from '@tollgate/testing';
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../provider';
import { createGeminiStream } from './gemini-stream';

/** Feeds a transcript in 5-byte pieces (CRLF pairs split too) through decoder and translator. */
async function translate(transcript: string): Promise<{ chunks: ChatCompletionChunk[]; error?: unknown }> {
  const bytes = new TextEncoder().encode(transcript);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (let at = 0; at < bytes.length; at += 5) controller.enqueue(bytes.slice(at, at + 5));
      controller.close();
    },
  });
  const chunks: ChatCompletionChunk[] = [];
  try {
    for await (const chunk of body.pipeThrough(createSseDecoder()).pipeThrough(createGeminiStream()) as unknown as AsyncIterable<ChatCompletionChunk>)
      chunks.push(chunk);
  } catch (error) {
    return { chunks, error };
  }
  return { chunks };
}

const deltas = (chunks: ChatCompletionChunk[]) => chunks.filter((chunk) => chunk.choices.length > 0).map((chunk) => chunk.choices[0]!.delta);

describe('createGeminiStream', () => {
  it('translates a text stream; thoughts count as reasoning inside the completion', async () => {
    const { chunks, error } = await translate(geminiFixtures.textStream);
    expect(error).toBeUndefined();
    expect(deltas(chunks)).toEqual([{ role: 'assistant', content: '' }, { content: 'Hello! How' }, { content: ' can I help you today?' }, {}]);
    expect(chunks.map((chunk) => chunk.choices[0]?.finish_reason ?? null)).toEqual([null, null, null, 'stop', null]);
    expect(chunks[chunks.length - 1]).toMatchObject({
      choices: [],
      usage: {
        prompt_tokens: 9,
        completion_tokens: 349,
        total_tokens: 358,
        prompt_tokens_details: { cached_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 341 },
      },
    });
  });

  it('turns parallel function calls into tool-call deltas with minted ids and finish tool_calls', async () => {
    const { chunks } = await translate(geminiFixtures.functionCallStream);
    const calls = deltas(chunks).flatMap((delta) => delta.tool_calls ?? []);
    expect(calls.map((call) => [call.index, call.function?.name, JSON.parse(call.function?.arguments ?? '')])).toEqual([
      [0, 'get_weather', { city: 'Paris' }],
      [1, 'get_weather', { city: 'Tokyo', unit: 'celsius' }],
    ]);
    expect(calls.every((call) => /^call_[A-Za-z0-9]{24}$/.test(call.id ?? ''))).toBe(true);
    expect(calls[0]!.id).not.toBe(calls[1]!.id);
    expect(chunks.find((chunk) => chunk.choices[0]?.finish_reason)!.choices[0]!.finish_reason).toBe('tool_calls');
  });

  it('errors with content_filter before any chunk when the prompt is blocked', async () => {
    const { chunks, error } = await translate(geminiFixtures.blockedPromptStream);
    expect(chunks).toEqual([]);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({ code: 'content_filter', accepted: true });
  });

  it('ends with finish_reason content_filter when a safety stop follows some text', async () => {
    const { chunks, error } = await translate(geminiFixtures.safetyStream);
    expect(error).toBeUndefined();
    expect(
      deltas(chunks)
        .map((delta) => delta.content ?? '')
        .join(''),
    ).toBe('Here is how');
    expect(chunks.find((chunk) => chunk.choices[0]?.finish_reason)!.choices[0]!.finish_reason).toBe('content_filter');
  });

  it('errors with content_filter when a safety stop comes before any text', async () => {
    const onlyStop = geminiFixtures.safetyStream.slice(geminiFixtures.safetyStream.indexOf('\r\n\r\n') + 4);
    const { chunks, error } = await translate(onlyStop);
    expect(chunks).toEqual([]);
    expect(error).toMatchObject({ code: 'content_filter' });
  });

  it('maps an error event to its code, as accepted', async () => {
    const { chunks, error } = await translate(geminiFixtures.errorStream);
    expect(
      deltas(chunks)
        .map((delta) => delta.content ?? '')
        .join(''),
    ).toBe('Once upon');
    expect(error).toMatchObject({ code: 'upstream_unavailable', accepted: true });
  });

  it('errors with upstream_error when the stream ends without a finish reason', async () => {
    const cut = geminiFixtures.textStream.slice(0, geminiFixtures.textStream.lastIndexOf('data: '));
    const { chunks, error } = await translate(cut);
    expect(chunks.some((chunk) => chunk.usage)).toBe(false);
    expect(error).toMatchObject({ code: 'upstream_error', accepted: true });
  });
});
