import { validateAnthropicRequest } from '@tollgate/testing';
import { describe, expect, it } from 'vitest';
import type { ProviderChatRequest } from '../provider';
import { convertToAnthropicRequest } from './convert-to-anthropic-request';

const request = (extra: Partial<ProviderChatRequest> = {}): ProviderChatRequest => ({
  model: 'm',
  messages: [{ role: 'user', content: 'Hi' }],
  stream: false,
  max_completion_tokens: 8_000,
  ...extra,
});

describe('anthropicSampling, through convertToAnthropicRequest', () => {
  it('sends temperature (at most 1) and top_p, and the fake API takes them', () => {
    const result = convertToAnthropicRequest(request({ temperature: 1.5, top_p: 0.9 }), 'claude-sonnet-4-5');
    if (!result.ok) throw new Error(result.message);
    expect(result.request).toMatchObject({ temperature: 1, top_p: 0.9 });
    const valid = validateAnthropicRequest(result.request);
    expect(valid.ok ? 'valid' : valid.message).toBe('valid');
    const plain = convertToAnthropicRequest(request(), 'claude-sonnet-4-5');
    expect(plain.ok && Object.keys(plain.request)).toEqual(['model', 'max_tokens', 'messages']);
  });

  it('with thinking on, sends neither (the API refuses them with thinking)', () => {
    const result = convertToAnthropicRequest(request({ temperature: 0.2, top_p: 0.5, reasoning_effort: 'low' }), 'claude-sonnet-4-5');
    expect(result.ok && result.request).toMatchObject({ thinking: { type: 'enabled' } });
    expect(result.ok && 'temperature' in result.request).toBe(false);
    expect(result.ok && 'top_p' in result.request).toBe(false);
  });

  it('refuses a structured output before sending', () => {
    expect(convertToAnthropicRequest(request({ response_format: { type: 'json_object' } }), 'claude-sonnet-4-5')).toEqual({
      ok: false,
      message: 'structured output (json_object) is not supported by Anthropic models',
    });
  });
});
