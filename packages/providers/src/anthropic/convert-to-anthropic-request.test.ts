import type { ChatMessage } from '@tollgate/core';
import { validateAnthropicRequest } from '@tollgate/testing';
import { describe, expect, it } from 'vitest';
import type { ProviderChatRequest } from '../provider';
import { convertToAnthropicRequest } from './convert-to-anthropic-request';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const tool = { type: 'function' as const, function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } } };
const request = (messages: ChatMessage[], extra: Partial<ProviderChatRequest> = {}): ProviderChatRequest => ({
  model: 'm',
  messages,
  stream: false,
  max_completion_tokens: 8000,
  ...extra,
});

function convert(input: ProviderChatRequest) {
  const result = convertToAnthropicRequest(input, 'claude-sonnet-4-5');
  if (!result.ok) throw new Error(result.message);
  // Every translation must also pass the fake's copy of the API's validation.
  const valid = validateAnthropicRequest(result.request);
  expect(valid.ok ? 'valid' : valid.message).toBe('valid');
  return result.request;
}

describe('convertToAnthropicRequest', () => {
  it('moves system and developer text to `system` and sets model and max_tokens', () => {
    const body = convert(
      request([
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
        { role: 'developer', content: [{ type: 'text', text: 'Use English.' }] },
      ]),
    );
    expect(body).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 8000,
      system: [
        { type: 'text', text: 'Be brief.' },
        { type: 'text', text: 'Use English.' },
      ],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
    });
  });

  it('converts inline images, PDFs and text files', () => {
    const body = convert(
      request([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}`, detail: 'high' } },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0xLjQK', filename: 'a.pdf' } },
            { type: 'file', file: { file_data: `data:text/plain;base64,${btoa('plain words')}` } },
          ],
        },
      ]),
    );
    expect(body.messages[0]!.content).toEqual([
      { type: 'text', text: 'Compare' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' }, title: 'a.pdf' },
      { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'plain words' } },
    ]);
  });

  it('refuses parts the API cannot take', () => {
    const audio = convertToAnthropicRequest(request([{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] }]), 'c');
    const bmp = convertToAnthropicRequest(request([{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/bmp;base64,Qk0=' } }] }]), 'c');
    const systemImage = convertToAnthropicRequest(
      request([{ role: 'system', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }] }]),
      'c',
    );
    expect([audio.ok, bmp.ok, systemImage.ok]).toEqual([false, false, false]);
  });

  it('turns tool calls into tool_use and merges consecutive tool results into one user turn', () => {
    const body = convert(
      request(
        [
          { role: 'user', content: 'Look up a and b' },
          {
            role: 'assistant',
            content: 'Looking.',
            tool_calls: [
              { id: 'call_a', type: 'function', function: { name: 'lookup', arguments: '{"q":"a"}' } },
              { id: 'functions.lookup:1', type: 'function', function: { name: 'lookup', arguments: '' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_a', content: 'A' },
          {
            role: 'tool',
            tool_call_id: 'functions.lookup:1',
            content: [
              { type: 'text', text: 'B1' },
              { type: 'text', text: 'B2' },
            ],
          },
          { role: 'user', content: 'Thanks' },
        ],
        { tools: [tool] },
      ),
    );
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Look up a and b' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Looking.' },
          { type: 'tool_use', id: 'call_a', name: 'lookup', input: { q: 'a' } },
          // Ids from other providers are made safe for Anthropic's pattern, on both sides.
          { type: 'tool_use', id: 'functions_lookup_1', name: 'lookup', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_a', content: 'A' },
          {
            type: 'tool_result',
            tool_use_id: 'functions_lookup_1',
            content: [
              { type: 'text', text: 'B1' },
              { type: 'text', text: 'B2' },
            ],
          },
          { type: 'text', text: 'Thanks' },
        ],
      },
    ]);
  });

  it('merges consecutive turns of one role and drops empty ones', () => {
    const body = convert(
      request([
        { role: 'user', content: 'one' },
        { role: 'user', content: 'two' },
        { role: 'assistant', content: '' },
        { role: 'user', content: 'three' },
      ]),
    );
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two' },
          { type: 'text', text: 'three' },
        ],
      },
    ]);
  });

  it('refuses tool arguments that are not a JSON object', () => {
    const result = convertToAnthropicRequest(
      request([
        { role: 'user', content: 'x' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'lookup', arguments: '{"q":' } }] },
      ]),
      'c',
    );
    expect(result.ok).toBe(false);
  });

  it('maps tools, tool_choice and parallel_tool_calls', () => {
    const base = [{ role: 'user' as const, content: 'x' }];
    expect(convert(request(base, { tools: [tool] })).tools).toEqual([{ name: 'lookup', input_schema: tool.function.parameters }]);
    expect(convert(request(base, { tools: [tool] })).tool_choice).toBeUndefined();
    expect(convert(request(base, { tools: [tool], tool_choice: 'auto' })).tool_choice).toEqual({ type: 'auto' });
    expect(convert(request(base, { tools: [tool], tool_choice: 'required' })).tool_choice).toEqual({ type: 'any' });
    expect(convert(request(base, { tools: [tool], tool_choice: 'none' })).tool_choice).toEqual({ type: 'none' });
    expect(
      convert(request(base, { tools: [tool], tool_choice: { type: 'function', function: { name: 'lookup' } }, parallel_tool_calls: false })).tool_choice,
    ).toEqual({ type: 'tool', name: 'lookup', disable_parallel_tool_use: true });
    expect(convert(request(base, { tools: [tool], parallel_tool_calls: false })).tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    expect(convert(request(base, { tool_choice: 'required' })).tool_choice).toBeUndefined();
    const bare = convert(request(base, { tools: [{ type: 'function', function: { name: 'now' } }] }));
    expect(bare.tools).toEqual([{ name: 'now', input_schema: { type: 'object', properties: {} } }]);
  });

  it('maps reasoning_effort to a thinking budget below max_tokens', () => {
    const base = [{ role: 'user' as const, content: 'x' }];
    const thinking = (extra: Partial<ProviderChatRequest>) => convert(request(base, extra)).thinking;
    expect(thinking({})).toBeUndefined();
    expect(thinking({ reasoning_effort: 'none' })).toBeUndefined();
    expect(thinking({ reasoning_effort: 'minimal' })).toEqual({ type: 'enabled', budget_tokens: 1024 });
    expect(thinking({ reasoning_effort: 'low' })).toEqual({ type: 'enabled', budget_tokens: 1024 });
    expect(thinking({ reasoning_effort: 'medium' })).toEqual({ type: 'enabled', budget_tokens: 4096 });
    expect(thinking({ reasoning_effort: 'high', max_completion_tokens: 32000 })).toEqual({ type: 'enabled', budget_tokens: 16384 });
    expect(thinking({ reasoning_effort: 'xhigh', max_completion_tokens: 64000 })).toEqual({ type: 'enabled', budget_tokens: 32768 });
    // Lowered to fit under max_tokens; below Anthropic's minimum, left off.
    expect(thinking({ reasoning_effort: 'high', max_completion_tokens: 5000 })).toEqual({ type: 'enabled', budget_tokens: 4999 });
    expect(thinking({ reasoning_effort: 'high', max_completion_tokens: 1024 })).toBeUndefined();
    // Forced tool use and an open tool loop cannot carry thinking.
    expect(thinking({ reasoning_effort: 'high', tools: [tool], tool_choice: 'required' })).toBeUndefined();
    const loop = request(
      [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'r' },
      ],
      { tools: [tool], reasoning_effort: 'high' },
    );
    expect(convert(loop).thinking).toBeUndefined();
  });
});
