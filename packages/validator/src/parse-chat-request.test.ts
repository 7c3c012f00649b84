import type { ChatModelConfig } from '@tollgate/core';
import { describe, expect, it } from 'vitest';
import { parseChatRequest } from './parse-chat-request';
import { resolveChatRequest } from './resolve-chat-request';

const user = (content: unknown) => ({ role: 'user', content });
const body = (extra: Record<string, unknown> = {}) => ({ model: 'fast', messages: [user('Hi')], ...extra });
const codeOf = (input: Record<string, unknown>) => {
  const result = parseChatRequest(input);
  return result.ok ? 'ok' : result.error.code;
};
const model: ChatModelConfig = { id: 'fast', type: 'chat', max_output_tokens: 1000, input_modalities: ['text', 'image'] };

function resolve(input: Record<string, unknown>, config: ChatModelConfig = model) {
  const parsed = parseChatRequest(input);
  if (!parsed.ok) throw new Error(`${parsed.error.code}: ${parsed.error.message}`);
  return resolveChatRequest(parsed.value, config);
}

describe('parseChatRequest, first phase', () => {
  it('normalises: unlisted fields dropped, per role only the kept fields, name dropped', () => {
    const result = parseChatRequest({
      model: 'fast',
      temperature: 0.2,
      n: 3,
      user: 'u',
      seed: 1,
      messages: [
        { role: 'system', content: 'Be brief.', name: 'boss', tool_calls: 'ignored' },
        { role: 'developer', content: [{ type: 'text', text: 'Dev', cache_control: {} }] },
        { role: 'user', content: 'Hi', tool_call_id: 'x' },
        { role: 'assistant', content: null, name: 'a', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' }, extra: 1 }] },
        { role: 'tool', content: 'result', tool_call_id: 'c1', name: 'f' },
        { role: 'assistant' },
      ],
      stream: true,
      stream_options: { include_usage: true, other: 1 },
      reasoning_effort: 'xhigh',
      tools: [{ type: 'function', function: { name: 'f', description: 'd', parameters: { type: 'object' }, strict: true } }],
      tool_choice: { type: 'function', function: { name: 'f' } },
      parallel_tool_calls: false,
      max_tokens: 50,
    });
    expect(result).toEqual({
      ok: true,
      value: {
        model: 'fast',
        requestedOutput: 50,
        partUses: [],
        request: {
          model: 'fast',
          messages: [
            { role: 'system', content: 'Be brief.' },
            { role: 'developer', content: [{ type: 'text', text: 'Dev' }] },
            { role: 'user', content: 'Hi' },
            { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
            { role: 'tool', content: 'result', tool_call_id: 'c1' },
            { role: 'assistant', content: null },
          ],
          stream: true,
          stream_options: { include_usage: true },
          reasoning_effort: 'xhigh',
          tools: [{ type: 'function', function: { name: 'f', description: 'd', parameters: { type: 'object' } } }],
          tool_choice: { type: 'function', function: { name: 'f' } },
          parallel_tool_calls: false,
        },
      },
    });
  });

  it('treats null on optional fields as unset', () => {
    const result = parseChatRequest(
      body({ stream: null, tools: null, tool_choice: null, max_tokens: null, max_completion_tokens: null, reasoning_effort: null }),
    );
    expect(result).toEqual({
      ok: true,
      value: { model: 'fast', partUses: [], request: { model: 'fast', messages: [{ role: 'user', content: 'Hi' }], stream: false } },
    });
  });

  it('gives invalid_request_body for a wrong JSON type or a missing model', () => {
    expect(parseChatRequest({ messages: [user('Hi')] })).toEqual({ ok: false, error: { code: 'invalid_request_body', message: 'model is required.' } });
    expect(codeOf(body({ model: '' }))).toBe('invalid_request_body');
    expect(codeOf(body({ model: 5 }))).toBe('invalid_request_body');
    expect(codeOf({ model: 'fast' })).toBe('invalid_request_body');
    expect(codeOf(body({ messages: {} }))).toBe('invalid_request_body');
    expect(codeOf(body({ stream: 'yes' }))).toBe('invalid_request_body');
    expect(codeOf(body({ max_tokens: '5' }))).toBe('invalid_request_body');
    expect(codeOf(body({ reasoning_effort: 3 }))).toBe('invalid_request_body');
    expect(codeOf(body({ tools: [{ type: 'function', function: { name: 1 } }] }))).toBe('invalid_request_body');
    expect(codeOf(body({ tools: [{ type: 'function', function: { name: 'f', parameters: [] } }] }))).toBe('invalid_request_body');
    expect(codeOf(body({ tool_choice: 3 }))).toBe('invalid_request_body');
    expect(codeOf(body({ messages: ['hi'] }))).toBe('invalid_request_body');
    expect(codeOf(body({ messages: [{ content: 'x' }] }))).toBe('invalid_request_body');
    expect(codeOf(body({ messages: [user(5)] }))).toBe('invalid_request_body');
    expect(codeOf(body({ messages: [user([{ type: 'text', text: 5 }])] }))).toBe('invalid_request_body');
    expect(codeOf(body({ messages: [user([{ type: 'image_url', image_url: 'data:x' }])] }))).toBe('invalid_request_body');
    expect(parseChatRequest(body({ messages: [user([{ text: 'x' }])] }))).toEqual({
      ok: false,
      error: { code: 'invalid_request_body', message: 'messages[0].content[0].type is required.' },
    });
  });

  it('orders the first-phase codes: body, too_many_messages, invalid_output_limit, invalid_parameter', () => {
    const many = Array.from({ length: 4097 }, () => user('x'));
    expect(codeOf(body({ messages: Array.from({ length: 4096 }, () => user('x')) }))).toBe('ok');
    expect(parseChatRequest(body({ messages: many }))).toEqual({
      ok: false,
      error: { code: 'too_many_messages', message: 'messages holds more than 4096 entries.' },
    });
    expect(codeOf(body({ messages: many, stream: 1 }))).toBe('invalid_request_body');
    expect(codeOf(body({ messages: many, max_tokens: 0 }))).toBe('too_many_messages');
    expect(codeOf(body({ max_tokens: 0, reasoning_effort: 'huge' }))).toBe('invalid_output_limit');
    expect(parseChatRequest(body({ reasoning_effort: 'huge' }))).toEqual({
      ok: false,
      error: { code: 'invalid_parameter', message: 'reasoning_effort must be one of none, minimal, low, medium, high, xhigh.' },
    });
  });

  it('gives invalid_output_limit for an output limit that is not a positive integer', () => {
    for (const value of [0, -1, 1.5, Number.POSITIVE_INFINITY]) {
      expect(codeOf(body({ max_tokens: value }))).toBe('invalid_output_limit');
      expect(codeOf(body({ max_completion_tokens: value }))).toBe('invalid_output_limit');
    }
    expect(parseChatRequest(body({ max_completion_tokens: 0 }))).toEqual({
      ok: false,
      error: { code: 'invalid_output_limit', message: 'max_completion_tokens must be a positive integer or null.' },
    });
  });

  it('gives invalid_parameter naming the field for refused values', () => {
    expect(parseChatRequest(body({ messages: [{ role: 'function', content: 'x' }] }))).toEqual({
      ok: false,
      error: { code: 'invalid_parameter', message: 'messages[0].role must be one of system, developer, user, assistant, tool.' },
    });
    expect(parseChatRequest(body({ messages: [] }))).toEqual({
      ok: false,
      error: { code: 'invalid_parameter', message: 'messages must hold at least one message.' },
    });
    expect(parseChatRequest(body({ tool_choice: 'any' }))).toEqual({
      ok: false,
      error: { code: 'invalid_parameter', message: 'tool_choice must be one of auto, none, required.' },
    });
    expect(codeOf(body({ tool_choice: { type: 'tool', function: { name: 'f' } } }))).toBe('invalid_parameter');
    expect(parseChatRequest(body({ messages: [user([{ type: 'image_url', image_url: { url: 'data:,', detail: 'max' } }])] }))).toEqual({
      ok: false,
      error: { code: 'invalid_parameter', message: 'messages[0].content[0].image_url.detail must be one of auto, low, high.' },
    });
  });

  it('takes max_completion_tokens over max_tokens', () => {
    const result = parseChatRequest(body({ max_tokens: 10, max_completion_tokens: 20 }));
    expect(result.ok && result.value.requestedOutput).toBe(20);
  });
});

describe('resolveChatRequest, second phase', () => {
  it('decides the output limit: requested, lowered to max_output_tokens, else the default', () => {
    expect(resolve(body({ max_tokens: 300 }))).toMatchObject({ ok: true, value: { max_completion_tokens: 300 } });
    expect(resolve(body({ max_tokens: 5000 }))).toMatchObject({ ok: true, value: { max_completion_tokens: 1000 } });
    expect(resolve(body())).toMatchObject({ ok: true, value: { max_completion_tokens: 1000 } });
    expect(resolve(body(), { ...model, default_output_tokens: 256 })).toMatchObject({ ok: true, value: { max_completion_tokens: 256 } });
  });

  it('gives remote_media for a linked URL whatever the part type and the model, before invalid_request', () => {
    const textOnly: ChatModelConfig = { id: 'text', type: 'chat', max_output_tokens: 10 };
    for (const type of ['image_url', 'video_url', 'audio_url', 'file_url']) {
      expect(resolve(body({ messages: [user([{ type, [type]: { url: 'https://example.com/a' } }])] }), textOnly)).toEqual({
        ok: false,
        error: { code: 'remote_media', message: `messages[0].content[0].${type} links a URL; media must be inline data: URLs.` },
      });
    }
    const both = body({
      messages: [
        user([
          { type: 'file', file: { file_id: 'f' } },
          { type: 'image_url', image_url: { url: 'http://x/' } },
        ]),
      ],
    });
    expect(resolve(both)).toMatchObject({ ok: false, error: { code: 'remote_media' } });
  });

  it('gives invalid_request for a part type the model does not read', () => {
    const textOnly: ChatModelConfig = { id: 'text', type: 'chat', max_output_tokens: 10 };
    const image = body({
      messages: [
        user([
          { type: 'text', text: 'a' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,AA==' } },
        ]),
      ],
    });
    expect(resolve(image, textOnly)).toEqual({
      ok: false,
      error: { code: 'invalid_request', message: 'messages[0].content[1] is a image_url part, which the model text does not read.' },
    });
    expect(resolve(image)).toMatchObject({ ok: true });
    const video = body({ messages: [user([{ type: 'video_url', video_url: { url: 'data:video/mp4;base64,AA==' } }])] });
    expect(resolve(video)).toMatchObject({ ok: false, error: { code: 'invalid_request' } });
    expect(resolve(video, { ...model, input_modalities: ['text', 'video'] })).toMatchObject({
      ok: true,
      value: { messages: [{ role: 'user', content: [{ type: 'video_url', video_url: { url: 'data:video/mp4;base64,AA==' } }] }] },
    });
    expect(resolve(video, { ...model, part_types: ['video_url'] })).toMatchObject({ ok: true });
    expect(resolve(image, { ...model, part_types: ['video_url'] })).toMatchObject({ ok: false, error: { code: 'invalid_request' } });
  });

  it('takes a file part with only file_data and filename', () => {
    const fileModel: ChatModelConfig = { ...model, input_modalities: ['text', 'file'] };
    const file = (fields: Record<string, unknown>) => body({ messages: [user([{ type: 'file', file: fields }])] });
    expect(resolve(file({ file_data: 'data:application/pdf;base64,AA==', filename: 'a.pdf' }), fileModel)).toMatchObject({
      ok: true,
      value: { messages: [{ content: [{ type: 'file', file: { file_data: 'data:application/pdf;base64,AA==', filename: 'a.pdf' } }] }] },
    });
    expect(resolve(file({ file_data: 'data:,', file_id: 'x' }), fileModel)).toEqual({
      ok: false,
      error: { code: 'invalid_request', message: 'messages[0].content[0].file may carry only file_data and filename, not file_id.' },
    });
    expect(resolve(file({ filename: 'a.pdf' }), fileModel)).toMatchObject({ ok: false, error: { code: 'invalid_request' } });
    expect(resolve(file({ file_data: 'data:,' }), model)).toMatchObject({ ok: false, error: { code: 'invalid_request' } });
  });

  it('gives invalid_request for a tool that is not a function and a malformed tool call', () => {
    expect(resolve(body({ tools: [{ type: 'web_search' }] }))).toEqual({
      ok: false,
      error: { code: 'invalid_request', message: 'tools[0] is a web_search tool; only function tools are taken.' },
    });
    const call = { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: {} } }] };
    expect(resolve(body({ messages: [user('x'), call] }))).toMatchObject({ ok: false, error: { code: 'invalid_request' } });
  });
});
