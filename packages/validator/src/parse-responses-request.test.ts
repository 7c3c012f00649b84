import type { ModelConfig } from '@tollgate/core';
import { describe, expect, it } from 'vitest';
import { parseResponsesRequest } from './parse-responses-request';
import { resolveChatRequest } from './resolve-chat-request';

const body = (extra: Record<string, unknown> = {}) => ({ model: 'fast', input: 'Hi', ...extra });
const refusal = (input: Record<string, unknown>) => {
  const result = parseResponsesRequest(input);
  return result.ok ? 'ok' : `${result.error.code}: ${result.error.message}`;
};
const model: ModelConfig = { id: 'fast', type: 'chat', max_output_tokens: 1000, input_modalities: ['text', 'image'] };
const PNG = 'data:image/png;base64,iVBORw0KGgo=';

function parsed(input: Record<string, unknown>) {
  const result = parseResponsesRequest(input);
  if (!result.ok) throw new Error(`${result.error.code}: ${result.error.message}`);
  return result.value;
}

describe('parseResponsesRequest: the chat request it maps to', () => {
  it('a string input is one user message; instructions come first as the system message', () => {
    const value = parsed(body({ instructions: 'Be brief.', max_output_tokens: 50, stream: true }));
    expect(value.chat).toEqual({
      model: 'fast',
      requestedOutput: 50,
      partUses: [],
      request: {
        model: 'fast',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hi' },
        ],
        stream: true,
        stream_options: { include_usage: true },
      },
    });
    expect(value.obfuscation).toBe(true);
    expect(value.body).toEqual({ model: 'fast', input: 'Hi', instructions: 'Be brief.', max_output_tokens: 50, stream: true });
  });

  it('items: messages with parts, function calls joined to their assistant turn, outputs as tool messages', () => {
    const value = parsed(
      body({
        input: [
          { role: 'developer', content: 'Dev' },
          {
            type: 'message',
            role: 'user',
            content: [
              { type: 'input_text', text: 'Look' },
              { type: 'input_image', image_url: PNG, detail: 'low' },
            ],
          },
          { type: 'message', role: 'assistant', id: 'msg_1', status: 'completed', content: [{ type: 'output_text', text: 'Calling', annotations: [] }] },
          { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'f', arguments: '{"a":1}', status: 'completed' },
          { type: 'function_call', call_id: 'call_2', name: 'g', arguments: '{}' },
          { type: 'function_call_output', call_id: 'call_1', output: '{"ok":true}' },
          { type: 'function_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: 'done' }] },
          { type: 'function_call', call_id: 'call_3', name: 'f', arguments: '{}' },
        ],
        tools: [
          { type: 'function', name: 'f', description: 'd', parameters: { type: 'object' }, strict: true },
          { type: 'function', name: 'g' },
        ],
        tool_choice: { type: 'function', name: 'f' },
        parallel_tool_calls: false,
        reasoning: { effort: 'low' },
      }),
    );
    expect(value.chat.request).toEqual({
      model: 'fast',
      stream: false,
      messages: [
        { role: 'developer', content: 'Dev' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look' },
            { type: 'image_url', image_url: { url: PNG, detail: 'low' } },
          ],
        },
        {
          role: 'assistant',
          content: [{ type: 'text', text: 'Calling' }],
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } },
            { id: 'call_2', type: 'function', function: { name: 'g', arguments: '{}' } },
          ],
        },
        { role: 'tool', content: '{"ok":true}', tool_call_id: 'call_1' },
        { role: 'tool', content: [{ type: 'text', text: 'done' }], tool_call_id: 'call_2' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_3', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      ],
      tools: [
        { type: 'function', function: { name: 'f', description: 'd', parameters: { type: 'object' } } },
        { type: 'function', function: { name: 'g' } },
      ],
      tool_choice: { type: 'function', function: { name: 'f' } },
      parallel_tool_calls: false,
      reasoning_effort: 'low',
    });
    expect(value.chat.partUses).toEqual([{ type: 'image_url', at: 'input[1].content[1]' }]);
    expect(value.echo.tools).toEqual([
      { type: 'function', name: 'f', description: 'd', parameters: { type: 'object' }, strict: true },
      { type: 'function', name: 'g', description: null, parameters: null, strict: null },
    ]);
    expect(value.echo.tool_choice).toEqual({ type: 'function', name: 'f' });
    expect(value.echo.reasoning).toEqual({ effort: 'low', summary: null });
  });

  it('echoes what the response object repeats, with OpenAI defaults', () => {
    expect(parsed(body()).echo).toEqual({
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
    });
    const echo = parsed(
      body({
        temperature: 0.5,
        top_p: 0.9,
        user: 'u1',
        metadata: { team: 'a' },
        text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } },
        store: false,
        stream_options: { include_obfuscation: false },
      }),
    );
    expect(echo.echo).toMatchObject({
      temperature: 0.5,
      top_p: 0.9,
      user: 'u1',
      metadata: { team: 'a' },
      text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true } },
    });
    expect(echo.obfuscation).toBe(false);
    expect(echo.chat.request).toMatchObject({
      temperature: 0.5,
      top_p: 0.9,
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true } },
    });
    expect(parsed(body({ text: { format: { type: 'json_object' } } })).chat.request.response_format).toEqual({ type: 'json_object' });
    expect(parsed(body({ text: { format: { type: 'text' } } })).chat.request).not.toHaveProperty('response_format');
  });

  it('accepts what the SDKs send: an empty text object, null fields, identifiers', () => {
    expect(
      refusal(
        body({
          text: {},
          tools: [],
          include: [],
          truncation: 'disabled',
          background: false,
          service_tier: 'auto',
          prompt_cache_key: 'k',
          safety_identifier: 's',
          previous_response_id: null,
        }),
      ),
    ).toBe('ok');
  });

  it('remote images and unreadable parts are decided in the second phase, as chat', () => {
    const remote = parsed(body({ input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://example.com/a.png' }] }] }));
    expect(resolveChatRequest(remote.chat, model)).toEqual({
      ok: false,
      error: { code: 'remote_media', message: 'input[0].content[0].image_url links a URL; media must be inline data: URLs.' },
    });
    const image = parsed(body({ input: [{ role: 'user', content: [{ type: 'input_image', image_url: PNG }] }] }));
    expect(resolveChatRequest(image.chat, { ...model, input_modalities: ['text'] })).toEqual({
      ok: false,
      error: { code: 'invalid_request', message: 'input[0].content[0] is a image_url part, which the model fast does not read.' },
    });
    const resolved = resolveChatRequest(parsed(body({ max_output_tokens: 5000 })).chat, model);
    expect(resolved.ok && resolved.value.max_completion_tokens).toBe(1000);
  });
});

describe('parseResponsesRequest: refusals', () => {
  it('wrong JSON types and a missing model or input are invalid_request_body', () => {
    expect(refusal({ input: 'Hi' })).toBe('invalid_request_body: model is required.');
    expect(refusal({ model: 'fast' })).toMatch(/^invalid_request_body: input/);
    expect(refusal(body({ input: 5 }))).toMatch(/^invalid_request_body: input/);
    expect(refusal(body({ input: [{ role: 'user' }] }))).toMatch(/^invalid_request_body: input\[0\]\.content/);
    expect(refusal(body({ stream: 'yes' }))).toMatch(/^invalid_request_body: stream/);
  });

  it('precedence: too_many_messages, then invalid_output_limit, then invalid_parameter', () => {
    const many = Array.from({ length: 4097 }, () => ({ role: 'user', content: 'x' }));
    expect(refusal(body({ input: many, max_output_tokens: 0, background: true }))).toBe('too_many_messages: input holds more than 4096 entries.');
    expect(refusal(body({ max_output_tokens: 0, background: true }))).toBe('invalid_output_limit: max_output_tokens must be a positive integer or null.');
    expect(refusal(body({ max_output_tokens: 1.5 }))).toBe('invalid_output_limit: max_output_tokens must be a positive integer or null.');
  });

  it('every feature not served is invalid_parameter naming its field, never dropped', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ previous_response_id: 'resp_1' }, 'previous_response_id is not supported: Tollgate stores no responses'],
      [{ conversation: 'conv_1' }, 'conversation is not supported'],
      [{ store: true }, 'store must be false'],
      [{ background: true }, 'background is not supported'],
      [{ tools: [{ type: 'web_search_preview' }] }, 'tools[0].type is not supported: only function tools'],
      [{ tools: [{ type: 'file_search', vector_store_ids: [] }] }, 'tools[0].type is not supported'],
      [{ input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'f' }] }] }, 'input[0].content[0].type is not supported: file inputs'],
      [{ input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'f' }] }] }, 'input[0].content[0].file_id is not supported'],
      [{ input: [{ type: 'item_reference', id: 'msg_1' }] }, 'input[0].type is not supported: Tollgate stores no responses'],
      [{ input: [{ type: 'reasoning', id: 'rs_1', summary: [] }] }, 'input[0].type is not an input item type taken here'],
      [{ include: ['reasoning.encrypted_content'] }, 'include is not supported'],
      [{ reasoning: { summary: 'auto' } }, 'reasoning.summary is not supported'],
      [{ reasoning: { effort: 'huge' } }, 'reasoning.effort must be one of none, minimal, low, medium, high, xhigh'],
      [{ text: { verbosity: 'low' } }, 'text.verbosity is not supported'],
      [{ text: { format: { type: 'grammar' } } }, 'text.format.type must be one of text, json_object, json_schema'],
      [{ truncation: 'auto' }, 'truncation must be "disabled"'],
      [{ prompt: { id: 'pmpt_1' } }, 'prompt is not supported'],
      [{ temperature: 3 }, 'temperature must be from 0 to 2'],
      [{ tool_choice: { type: 'web_search_preview' } }, 'tool_choice.type is not supported: only auto, none, required or a function tool'],
      [{ metadata: { a: 'x'.repeat(513) } }, 'metadata.a values must be at most 512 characters'],
      [{ logprobs: true }, 'logprobs is not a field of this endpoint'],
    ];
    for (const [extra, message] of cases) expect(refusal(body(extra))).toContain(`invalid_parameter: ${message}`);
  });
});
