import type { ChatCompletionChunk, ResponseEcho, ResponseStreamEvent } from '@tollgate/core';
import { describe, expect, it } from 'vitest';
import { createResponseEvents } from './create-response-events';
import { encodeResponseEvent } from './encode-response-event';

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

function meta() {
  let n = 0;
  return { id: 'resp_1', createdAt: 1_700_000_000, echo, maxOutputTokens: 100, itemId: (prefix: 'msg' | 'fc') => `${prefix}_${++n}` };
}

const chunk = (
  delta: ChatCompletionChunk['choices'][number]['delta'],
  finish: ChatCompletionChunk['choices'][number]['finish_reason'] = null,
): ChatCompletionChunk => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'up',
  choices: [{ index: 0, delta, finish_reason: finish }],
});
const usageChunk: ChatCompletionChunk = {
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'up',
  choices: [],
  usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10 },
};
const usage = {
  prompt_tokens: 7,
  completion_tokens: 3,
  total_tokens: 10,
  prompt_tokens_details: { cached_tokens: 4 },
  completion_tokens_details: { reasoning_tokens: 1 },
};

function run(chunks: ChatCompletionChunk[]): ResponseStreamEvent[] {
  const events = createResponseEvents(meta());
  return [...events.start(), ...chunks.flatMap((item) => events.chunk(item)), ...events.finish(usage)];
}

describe('createResponseEvents', () => {
  it('a text stream: the event sequence OpenAI sends, numbered from 0', () => {
    const events = run([chunk({ role: 'assistant', content: '' }), chunk({ content: 'Hel' }), chunk({ content: 'lo' }), chunk({}, 'stop'), usageChunk]);
    expect(events.map((event) => event.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((event) => event.sequence_number)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(events[0]).toMatchObject({
      response: { id: 'resp_1', object: 'response', created_at: 1_700_000_000, status: 'in_progress', output: [], usage: null, store: false },
    });
    expect(events[2]).toEqual({
      type: 'response.output_item.added',
      sequence_number: 2,
      output_index: 0,
      item: { type: 'message', id: 'msg_1', status: 'in_progress', role: 'assistant', content: [] },
    });
    expect(events[3]).toEqual({
      type: 'response.content_part.added',
      sequence_number: 3,
      item_id: 'msg_1',
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
    });
    expect(events[5]).toEqual({
      type: 'response.output_text.delta',
      sequence_number: 5,
      item_id: 'msg_1',
      output_index: 0,
      content_index: 0,
      delta: 'lo',
      logprobs: [],
    });
    expect(events[6]).toEqual({
      type: 'response.output_text.done',
      sequence_number: 6,
      item_id: 'msg_1',
      output_index: 0,
      content_index: 0,
      text: 'Hello',
      logprobs: [],
    });
    const message = {
      type: 'message',
      id: 'msg_1',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'Hello', annotations: [], logprobs: [] }],
    };
    expect(events[8]).toEqual({ type: 'response.output_item.done', sequence_number: 8, output_index: 0, item: message });
    expect(events[9]).toMatchObject({
      type: 'response.completed',
      response: {
        status: 'completed',
        incomplete_details: null,
        max_output_tokens: 100,
        output: [message],
        usage: {
          input_tokens: 7,
          input_tokens_details: { cached_tokens: 4 },
          output_tokens: 3,
          output_tokens_details: { reasoning_tokens: 1 },
          total_tokens: 10,
        },
      },
    });
  });

  it('text then two tool calls: the message closed when the first call opens, the calls together at the end', () => {
    const events = run([
      chunk({ role: 'assistant', content: 'Let me check.' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'weather', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"Oslo"}' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'time', arguments: '{}' } }] }),
      chunk({}, 'tool_calls'),
    ]);
    expect(events.map((event) => event.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events[8]).toEqual({
      type: 'response.output_item.added',
      sequence_number: 8,
      output_index: 1,
      item: { type: 'function_call', id: 'fc_2', call_id: 'call_a', name: 'weather', arguments: '', status: 'in_progress' },
    });
    expect(events[9]).toEqual({ type: 'response.function_call_arguments.delta', sequence_number: 9, item_id: 'fc_2', output_index: 1, delta: '{"city":' });
    expect(events[13]).toEqual({
      type: 'response.function_call_arguments.done',
      sequence_number: 13,
      item_id: 'fc_2',
      output_index: 1,
      name: 'weather',
      arguments: '{"city":"Oslo"}',
    });
    const last = events.at(-1);
    expect(last?.type === 'response.completed' && last.response.output).toEqual([
      {
        type: 'message',
        id: 'msg_1',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Let me check.', annotations: [], logprobs: [] }],
      },
      { type: 'function_call', id: 'fc_2', call_id: 'call_a', name: 'weather', arguments: '{"city":"Oslo"}', status: 'completed' },
      { type: 'function_call', id: 'fc_3', call_id: 'call_b', name: 'time', arguments: '{}', status: 'completed' },
    ]);
  });

  it('calls whose deltas come interleaved each get all their arguments before their done events', () => {
    const events = run([
      chunk({
        role: 'assistant',
        content: null,
        tool_calls: [
          { index: 0, id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":' } },
          { index: 1, id: 'call_b', type: 'function', function: { name: 'weather', arguments: '{"city":' } },
        ],
      }),
      chunk({
        tool_calls: [
          { index: 0, function: { arguments: '"Paris"}' } },
          { index: 1, function: { arguments: '"Rome"}' } },
        ],
      }),
      chunk({}, 'tool_calls'),
    ]);
    const done = events.flatMap((event) => (event.type === 'response.function_call_arguments.done' ? [[event.output_index, event.arguments]] : []));
    expect(done).toEqual([
      [0, '{"city":"Paris"}'],
      [1, '{"city":"Rome"}'],
    ]);
    // No delta of an item after its done.
    const closed = new Set<number>();
    for (const event of events) {
      if (event.type === 'response.output_item.done') closed.add(event.output_index);
      if (event.type === 'response.function_call_arguments.delta') expect(closed.has(event.output_index)).toBe(false);
    }
  });

  it('a length finish is response.incomplete with the open item incomplete', () => {
    const events = run([chunk({ content: 'Long' }), chunk({}, 'length')]);
    const last = events.at(-1);
    expect(last?.type).toBe('response.incomplete');
    expect(last?.type === 'response.incomplete' && last.response).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      output: [{ status: 'incomplete' }],
    });
  });

  it('counts what it delivered; a failure is response.failed with the error and the output so far', () => {
    const events = createResponseEvents(meta());
    events.start();
    events.chunk(chunk({ content: 'Part' }));
    events.chunk(chunk({ tool_calls: [{ index: 0, id: 'c', function: { name: 'f', arguments: '{"a"' } }] }));
    expect(events.delivered).toBe('Part{"a"');
    const [failed] = events.fail({ code: 'upstream_error', message: 'The upstream failed.' }, usage);
    expect(failed).toMatchObject({
      type: 'response.failed',
      sequence_number: 10,
      response: { status: 'failed', error: { code: 'upstream_error', message: 'The upstream failed.' }, usage: { input_tokens: 7, output_tokens: 3 } },
    });
    expect(failed?.type === 'response.failed' && failed.response.output.map((item) => item.status)).toEqual(['completed', 'in_progress']);
    // A message still open when the upstream failed carries the text it was sent.
    const open = createResponseEvents(meta());
    open.start();
    open.chunk(chunk({ content: 'one two' }));
    const [cut] = open.fail({ code: 'upstream_error', message: 'The upstream failed.' }, usage);
    expect(cut?.type === 'response.failed' && cut.response.output).toEqual([
      {
        type: 'message',
        id: 'msg_1',
        status: 'in_progress',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'one two', annotations: [], logprobs: [] }],
      },
    ]);
  });

  it('events are snapshots: a later delta does not change an event already made', () => {
    const events = createResponseEvents(meta());
    const [added] = events.chunk(chunk({ content: 'A' }));
    events.chunk(chunk({ content: 'B' }));
    events.finish(undefined);
    expect(added).toMatchObject({ item: { status: 'in_progress', content: [] } });
  });

  it('an empty stream still completes with an empty output', () => {
    const events = run([usageChunk]);
    expect(events.map((event) => event.type)).toEqual(['response.created', 'response.in_progress', 'response.completed']);
  });
});

describe('encodeResponseEvent', () => {
  it('a typed event line, then the JSON; obfuscation only on deltas', () => {
    const delta: ResponseStreamEvent = {
      type: 'response.output_text.delta',
      sequence_number: 4,
      item_id: 'msg_1',
      output_index: 0,
      content_index: 0,
      delta: 'Hi',
      logprobs: [],
    };
    expect(encodeResponseEvent(delta, 'pad')).toBe(
      'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":4,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hi","logprobs":[],"obfuscation":"pad"}\n\n',
    );
    const added: ResponseStreamEvent = {
      type: 'response.output_item.added',
      sequence_number: 2,
      output_index: 0,
      item: { type: 'message', id: 'msg_1', status: 'in_progress', role: 'assistant', content: [] },
    };
    expect(encodeResponseEvent(added, 'pad')).not.toContain('obfuscation');
  });
});
