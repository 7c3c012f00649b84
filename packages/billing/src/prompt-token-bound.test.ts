import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ChatRequest, ModelConfig } from '@tollgate/core';
import { estimatePromptTokens } from './estimate-prompt-tokens';
import { promptTokenBound } from './prompt-token-bound';

const model: ModelConfig = { id: 'fast', type: 'chat' };
const request = (messages: ChatRequest['messages'], extra: Partial<ChatRequest> = {}): ChatRequest => ({ model: 'fast', messages, stream: false, ...extra });
const IMAGE = { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } } as const;

describe('promptTokenBound', () => {
  it('counts UTF-8 bytes of text plus 8 per message', () => {
    expect(promptTokenBound(request([{ role: 'user', content: 'hello' }]), model)).toBe(5 + 8);
    expect(
      promptTokenBound(
        request([
          { role: 'system', content: 'héllo' },
          { role: 'user', content: null },
        ]),
        model,
      ),
    ).toBe(6 + 8 + 8);
    expect(
      promptTokenBound(
        request([
          {
            role: 'user',
            content: [
              { type: 'text', text: '你好' },
              { type: 'text', text: 'ab' },
            ],
          },
        ]),
        model,
      ),
    ).toBe(6 + 2 + 8);
  });

  it('bounds each image part by the model setting, default 2,048', () => {
    const messages: ChatRequest['messages'] = [{ role: 'user', content: [{ type: 'text', text: 'look' }, IMAGE, IMAGE] }];
    expect(promptTokenBound(request(messages), model)).toBe(4 + 2 * 2_048 + 8);
    expect(promptTokenBound(request(messages), { ...model, image_token_bound: 100 })).toBe(4 + 200 + 8);
  });

  it('counts tool definitions as JSON, tool calls and tool results', () => {
    const tools: ChatRequest['tools'] = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }];
    const messages: ChatRequest['messages'] = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }] },
      { role: 'tool', content: 'sunny', tool_call_id: 'call_1' },
    ];
    const json = JSON.stringify(tools).length;
    expect(promptTokenBound(request(messages, { tools }), model)).toBe(2 + 8 + (6 + 11 + 15) + 8 + (5 + 6) + 8 + json);
    expect(promptTokenBound(request(messages, { tools, tool_choice: 'auto' }), model)).toBe(2 + 8 + 32 + 8 + 11 + 8 + json);
  });

  it('counts the strings of other parts such as files', () => {
    const file = { type: 'file', file: { file_data: 'data:application/pdf;base64,QUJD', filename: 'a.pdf' } };
    expect(promptTokenBound(request([{ role: 'user', content: [file] }]), model)).toBe(4 + 4 + 4 + 9 + 32 + 8 + 5 + 8);
  });

  it('is capped at context_tokens', () => {
    const long = request([{ role: 'user', content: 'x'.repeat(10_000) }]);
    expect(promptTokenBound(long, { ...model, context_tokens: 4_096 })).toBe(4_096);
    expect(promptTokenBound(long, { ...model, context_tokens: 20_000 })).toBe(10_008);
  });
});

describe('estimatePromptTokens', () => {
  it('counts text by the completion rule, 4 per message, images at their bound', () => {
    const messages: ChatRequest['messages'] = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: '你好 there' }, IMAGE] },
    ];
    expect(estimatePromptTokens(request(messages), model)).toBe(3 + 4 + (2 + 2) + 2_048 + 4);
    expect(estimatePromptTokens(request(messages), { ...model, image_token_bound: 10 })).toBe(3 + 4 + 4 + 10 + 4);
    expect(estimatePromptTokens(request([{ role: 'user', content: 'x'.repeat(400) }]), { ...model, context_tokens: 50 })).toBe(50);
  });

  it('never exceeds the bound', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary', maxLength: 40 }), { maxLength: 6 }), (texts) => {
        const r = request(texts.map((content) => ({ role: 'user' as const, content })));
        return estimatePromptTokens(r, model) <= promptTokenBound(r, model);
      }),
      { numRuns: 300 },
    );
  });
});
