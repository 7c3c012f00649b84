import type { ChatMessage } from '@tollgate/core';
import { validateGeminiRequest } from '@tollgate/testing';
import { describe, expect, it } from 'vitest';
import type { ProviderChatRequest } from '../provider';
import { convertToGeminiRequest, SKIP_THOUGHT_SIGNATURE } from './convert-to-gemini-request';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const tool = {
  type: 'function' as const,
  function: { name: 'lookup', description: 'Look up', parameters: { type: 'object', properties: { q: { type: 'string' } }, additionalProperties: false } },
};
const request = (messages: ChatMessage[], extra: Partial<ProviderChatRequest> = {}): ProviderChatRequest => ({
  model: 'm',
  messages,
  stream: false,
  max_completion_tokens: 500,
  ...extra,
});

function convert(input: ProviderChatRequest, upstream = 'gemini-2.5-flash') {
  const result = convertToGeminiRequest(input, upstream);
  if (!result.ok) throw new Error(result.message);
  // Every translation must also pass the fake's copy of the API's validation.
  const valid = validateGeminiRequest(result.request, upstream);
  expect(valid.ok ? 'valid' : valid.message).toBe('valid');
  return result.request;
}

const toolLoop: ChatMessage[] = [
  { role: 'user', content: 'Look up a and b' },
  {
    role: 'assistant',
    content: 'On it.',
    tool_calls: [
      { id: 'call_a', type: 'function', function: { name: 'lookup', arguments: '{"q":"a"}' } },
      { id: 'call_b', type: 'function', function: { name: 'lookup', arguments: '{"q":"b"}' } },
    ],
  },
  { role: 'tool', tool_call_id: 'call_a', content: '{"found":true}' },
  { role: 'tool', tool_call_id: 'call_b', content: 'not found' },
];

describe('convertToGeminiRequest', () => {
  it('moves system and developer text to systemInstruction and sets maxOutputTokens', () => {
    const body = convert(
      request([
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello' },
        { role: 'developer', content: 'Use English.' },
        { role: 'user', content: 'Again' },
      ]),
    );
    expect(body).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'Hi' }] },
        { role: 'model', parts: [{ text: 'Hello' }] },
        { role: 'user', parts: [{ text: 'Again' }] },
      ],
      systemInstruction: { parts: [{ text: 'Be brief.' }, { text: 'Use English.' }] },
      generationConfig: { maxOutputTokens: 500 },
    });
  });

  it('sends inline images and files as inlineData', () => {
    const body = convert(
      request([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare' },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0xLjQK', filename: 'a.pdf' } },
          ],
        },
      ]),
    );
    expect(body.contents[0]!.parts).toEqual([
      { text: 'Compare' },
      { inlineData: { mimeType: 'image/png', data: PNG } },
      { inlineData: { mimeType: 'application/pdf', data: 'JVBERi0xLjQK' } },
    ]);
    expect(convertToGeminiRequest(request([{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA' } }] }]), 'g').ok).toBe(false);
  });

  it('sends function calls and responses named after the call they answer, merged per turn', () => {
    const body = convert(request(toolLoop, { tools: [tool] }));
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Look up a and b' }] },
      {
        role: 'model',
        parts: [{ text: 'On it.' }, { functionCall: { name: 'lookup', args: { q: 'a' } } }, { functionCall: { name: 'lookup', args: { q: 'b' } } }],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'lookup', response: { found: true } } },
          { functionResponse: { name: 'lookup', response: { result: 'not found' } } },
        ],
      },
    ]);
    expect(body.tools).toEqual([{ functionDeclarations: [{ name: 'lookup', description: 'Look up', parametersJsonSchema: tool.function.parameters }] }]);
  });

  it('signs the first replayed call of a turn for Gemini 3 with the documented placeholder', () => {
    const body = convert(request(toolLoop, { tools: [tool] }), 'gemini-3-pro-preview');
    expect(body.contents[1]!.parts.map((part) => part.thoughtSignature)).toEqual([undefined, SKIP_THOUGHT_SIGNATURE, undefined]);
    // Without it the (fake's copy of the) API refuses the history.
    const unsigned = convert(request(toolLoop, { tools: [tool] }), 'gemini-2.5-flash');
    expect(validateGeminiRequest(unsigned, 'gemini-3-pro-preview')).toMatchObject({ ok: false });
  });

  it('refuses a tool result that answers no earlier call', () => {
    expect(
      convertToGeminiRequest(
        request([
          { role: 'user', content: 'x' },
          { role: 'tool', tool_call_id: 'nope', content: 'r' },
        ]),
        'g',
      ),
    ).toMatchObject({ ok: false });
  });

  it('maps tool_choice to functionCallingConfig; parallel_tool_calls has no equivalent', () => {
    const base = [{ role: 'user' as const, content: 'x' }];
    const config = (extra: Partial<ProviderChatRequest>) => convert(request(base, { tools: [tool], ...extra })).toolConfig;
    expect(config({})).toBeUndefined();
    expect(config({ tool_choice: 'auto' })).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    expect(config({ tool_choice: 'none' })).toEqual({ functionCallingConfig: { mode: 'NONE' } });
    expect(config({ tool_choice: 'required', parallel_tool_calls: false })).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    expect(config({ tool_choice: { type: 'function', function: { name: 'lookup' } } })).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['lookup'] },
    });
  });

  it('maps reasoning_effort to a thinking budget (2.5) or a thinking level (3)', () => {
    const base = [{ role: 'user' as const, content: 'x' }];
    const thinking = (effort: ProviderChatRequest['reasoning_effort'], upstream: string) =>
      convert(request(base, effort ? { reasoning_effort: effort } : {}), upstream).generationConfig?.thinkingConfig;
    expect(thinking(undefined, 'gemini-2.5-flash')).toBeUndefined();
    expect(thinking('none', 'gemini-2.5-flash')).toEqual({ thinkingBudget: 0 });
    expect(thinking('minimal', 'gemini-2.5-flash')).toEqual({ thinkingBudget: 512 });
    expect(thinking('low', 'gemini-2.5-flash')).toEqual({ thinkingBudget: 1024 });
    expect(thinking('medium', 'gemini-2.5-flash')).toEqual({ thinkingBudget: 8192 });
    expect(thinking('high', 'gemini-2.5-flash')).toEqual({ thinkingBudget: 24576 });
    expect(thinking('xhigh', 'gemini-2.5-flash')).toEqual({ thinkingBudget: 24576 });
    expect(thinking('none', 'gemini-2.5-pro')).toEqual({ thinkingBudget: 128 });
    expect(thinking('xhigh', 'gemini-2.5-pro')).toEqual({ thinkingBudget: 32768 });
    expect(thinking('minimal', 'gemini-3-pro-preview')).toEqual({ thinkingLevel: 'low' });
    expect(thinking('medium', 'gemini-3-pro-preview')).toEqual({ thinkingLevel: 'high' });
  });
});
