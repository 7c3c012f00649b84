import type { ChatCompletion, ResponseEcho } from '@tollgate/core';
import { describe, expect, it } from 'vitest';
import { chatCompletionToResponse } from './chat-completion-to-response';
import { toResponseUsage } from './to-response-usage';

const echo: ResponseEcho = {
  instructions: 'Be brief.',
  max_output_tokens: 50,
  model: 'fast',
  parallel_tool_calls: false,
  reasoning: { effort: 'low', summary: null },
  temperature: 0.2,
  text: { format: { type: 'text' } },
  tool_choice: 'required',
  tools: [{ type: 'function', name: 'weather', description: null, parameters: { type: 'object' }, strict: null }],
  top_p: null,
  user: 'u1',
  metadata: { team: 'a' },
};
const meta = () => {
  let n = 0;
  return { id: 'resp_1', createdAt: 1_700_000_000, echo, maxOutputTokens: 50, itemId: (prefix: 'msg' | 'fc') => `${prefix}_${++n}` };
};

const completion = (
  message: ChatCompletion['choices'][number]['message'],
  finish: ChatCompletion['choices'][number]['finish_reason'] = 'stop',
): ChatCompletion => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'up',
  choices: [{ index: 0, message, finish_reason: finish }],
  usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 },
});
const usage = { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 };

describe('chatCompletionToResponse', () => {
  it('text: one message item with one output_text part, the request echoed, usage in the Responses form', () => {
    expect(chatCompletionToResponse(completion({ role: 'assistant', content: 'Hello', refusal: null }), usage, meta())).toEqual({
      id: 'resp_1',
      object: 'response',
      created_at: 1_700_000_000,
      status: 'completed',
      error: null,
      incomplete_details: null,
      instructions: 'Be brief.',
      max_output_tokens: 50,
      model: 'fast',
      output: [
        {
          type: 'message',
          id: 'msg_1',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Hello', annotations: [], logprobs: [] }],
        },
      ],
      parallel_tool_calls: false,
      previous_response_id: null,
      reasoning: { effort: 'low', summary: null },
      store: false,
      temperature: 0.2,
      text: { format: { type: 'text' } },
      tool_choice: 'required',
      tools: [{ type: 'function', name: 'weather', description: null, parameters: { type: 'object' }, strict: null }],
      top_p: null,
      truncation: 'disabled',
      usage: {
        input_tokens: 9,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 4,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 13,
      },
      user: 'u1',
      metadata: { team: 'a' },
    });
  });

  it('tool calls: function_call items whose call_id is the chat id; no empty message', () => {
    const response = chatCompletionToResponse(
      completion(
        {
          role: 'assistant',
          content: null,
          refusal: null,
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
            { id: 'call_b', type: 'function', function: { name: 'time', arguments: '{}' } },
          ],
        },
        'tool_calls',
      ),
      usage,
      meta(),
    );
    expect(response.output).toEqual([
      { type: 'function_call', id: 'fc_1', call_id: 'call_a', name: 'weather', arguments: '{"city":"Oslo"}', status: 'completed' },
      { type: 'function_call', id: 'fc_2', call_id: 'call_b', name: 'time', arguments: '{}', status: 'completed' },
    ]);
  });

  it('a length finish is incomplete; a refusal is the text; no usage is null', () => {
    const cut = chatCompletionToResponse(completion({ role: 'assistant', content: 'Lo', refusal: null }, 'length'), usage, meta());
    expect(cut).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output: [{ status: 'incomplete' }] });
    const filtered = chatCompletionToResponse(completion({ role: 'assistant', content: null, refusal: 'No.' }, 'content_filter'), undefined, meta());
    expect(filtered).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'content_filter' }, usage: null });
    expect(filtered.output).toEqual([
      { type: 'message', id: 'msg_1', status: 'incomplete', role: 'assistant', content: [{ type: 'output_text', text: 'No.', annotations: [], logprobs: [] }] },
    ]);
  });
});

describe('toResponseUsage', () => {
  it('maps cached and reasoning tokens; total is recomputed', () => {
    expect(
      toResponseUsage({
        prompt_tokens: 10,
        completion_tokens: 5,
        total_tokens: 99,
        prompt_tokens_details: { cached_tokens: 6 },
        completion_tokens_details: { reasoning_tokens: 2 },
      }),
    ).toEqual({
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 6 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 2 },
      total_tokens: 15,
    });
  });
});
