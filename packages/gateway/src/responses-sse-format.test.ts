import type { ChatCompletionChunk, ResponseEcho, Usage } from '@tollgate/core';
import { describe, expect, it } from 'vitest';
import { responsesSseFormat } from './responses-sse-format';

const echo: ResponseEcho = {
  instructions: null,
  max_output_tokens: null,
  model: 'fast',
  parallel_tool_calls: true,
  reasoning: { effort: null, summary: null },
  temperature: null,
  text: { format: { type: 'text' } },
  tool_choice: 'auto',
  tools: [],
  top_p: null,
  user: null,
  metadata: {},
};
const meta = { id: 'resp_1', createdAt: 1, echo, maxOutputTokens: 10 };
const chunk = (content: string, usage?: ChatCompletionChunk['usage']): ChatCompletionChunk => ({
  id: 'c',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'up',
  choices: content === '' ? [] : [{ index: 0, delta: { content }, finish_reason: null }],
  ...(usage ? { usage } : {}),
});
const decoder = new TextDecoder();
const events = (bytes: Uint8Array | undefined) =>
  decoder
    .decode(bytes)
    .split('\n\n')
    .filter(Boolean)
    .map((block) => JSON.parse(block.split('\n')[1]?.slice('data: '.length) ?? 'null'));
const estimate = (reported: Usage | undefined, delivered: string): Usage =>
  reported ?? { prompt_tokens: 3, completion_tokens: delivered.length, total_tokens: 3 + delivered.length };

describe('responsesSseFormat', () => {
  it('a chat stream: created and in_progress with the first chunk, completed with the billed usage', () => {
    const format = responsesSseFormat({ meta, obfuscate: () => 'pad', billed: estimate });
    expect(events(format.item(chunk('Hi'))).map((event) => event.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
    ]);
    expect(format.item(chunk('', { prompt_tokens: 4, completion_tokens: 1, total_tokens: 5 }))).toBeUndefined();
    expect(format.usage).toEqual({ prompt_tokens: 4, completion_tokens: 1, total_tokens: 5 });
    const last = events(format.done()).at(-1);
    expect(last).toMatchObject({ type: 'response.completed', sequence_number: 8, response: { usage: { input_tokens: 4, output_tokens: 1 } } });
    expect(format.delivered).toBe('Hi');
  });

  it('a failure after the first event: response.failed with the catalogue error and the estimate it is charged', () => {
    const format = responsesSseFormat({ meta, billed: estimate });
    format.item(chunk('Hello'));
    expect(events(format.errorEvent?.('upstream_error'))).toEqual([
      expect.objectContaining({
        type: 'response.failed',
        response: expect.objectContaining({
          status: 'failed',
          error: { code: 'upstream_error', message: 'The model provider failed or did not answer.' },
          usage: expect.objectContaining({ input_tokens: 3, output_tokens: 5 }),
        }),
      }),
    ]);
  });

  it('a native upstream: its events pass with model rewritten; its terminal usage is read; nothing added at the end', () => {
    const format = responsesSseFormat({ meta, billed: () => undefined });
    const created = { type: 'response.created', sequence_number: 0, response: { id: 'resp_up', model: 'gpt-4.1-2025-04-14', status: 'in_progress' } };
    expect(events(format.item({ type: 'response.created', data: created }))).toEqual([{ ...created, response: { ...created.response, model: 'fast' } }]);
    format.item({ type: 'response.output_text.delta', data: { type: 'response.output_text.delta', sequence_number: 1, delta: 'Yo', obfuscation: 'x' } });
    const completed = {
      type: 'response.completed',
      sequence_number: 2,
      response: { id: 'resp_up', model: 'gpt-4.1', usage: { input_tokens: 6, output_tokens: 1, input_tokens_details: { cached_tokens: 2 } } },
    };
    expect(events(format.item({ type: 'response.completed', data: completed }))[0].response.model).toBe('fast');
    expect(format.usage).toEqual({ prompt_tokens: 6, completion_tokens: 1, total_tokens: 7, prompt_tokens_details: { cached_tokens: 2 } });
    expect(format.delivered).toBe('Yo');
    expect(format.done()).toBeUndefined();
  });

  it("a native upstream's own response.failed: no usage and nothing delivered is charged nothing; after text, the estimate", () => {
    const failed = { type: 'response.failed', sequence_number: 1, response: { id: 'resp_up', status: 'failed', usage: null } };
    const empty = responsesSseFormat({ meta, billed: () => undefined });
    empty.item({ type: 'response.created', data: { type: 'response.created', sequence_number: 0, response: { id: 'resp_up', status: 'in_progress' } } });
    empty.item({ type: 'response.failed', data: structuredClone(failed) });
    expect(empty.usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
    const partial = responsesSseFormat({ meta, billed: () => undefined });
    partial.item({ type: 'response.output_text.delta', data: { type: 'response.output_text.delta', sequence_number: 0, delta: 'Half' } });
    partial.item({ type: 'response.failed', data: structuredClone(failed) });
    expect([partial.usage, partial.delivered]).toEqual([undefined, 'Half']);
  });

  it('a native upstream cut short: a response.failed on its numbering, from its last response snapshot', () => {
    const format = responsesSseFormat({ meta, billed: () => ({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 }) });
    format.item({
      type: 'response.created',
      data: { type: 'response.created', sequence_number: 0, response: { id: 'resp_up', model: 'x', status: 'in_progress' } },
    });
    format.item({ type: 'response.output_text.delta', data: { type: 'response.output_text.delta', sequence_number: 5, delta: 'a' } });
    expect(events(format.errorEvent?.('upstream_error'))).toEqual([
      {
        type: 'response.failed',
        sequence_number: 6,
        response: expect.objectContaining({
          id: 'resp_up',
          model: 'fast',
          status: 'failed',
          error: expect.objectContaining({ code: 'upstream_error' }),
          usage: expect.objectContaining({ input_tokens: 1, output_tokens: 2 }),
        }),
      },
    ]);
  });
});
