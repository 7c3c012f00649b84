import { validateGeminiRequest } from '@tollgate/testing';
import { describe, expect, it } from 'vitest';
import type { ProviderChatRequest } from '../provider';
import { convertToGeminiRequest } from './convert-to-gemini-request';

const request = (extra: Partial<ProviderChatRequest> = {}): ProviderChatRequest => ({
  model: 'm',
  messages: [{ role: 'user', content: 'Hi' }],
  stream: false,
  max_completion_tokens: 500,
  ...extra,
});

function config(extra: Partial<ProviderChatRequest>) {
  const result = convertToGeminiRequest(request(extra), 'gemini-2.5-flash');
  if (!result.ok) throw new Error(result.message);
  const valid = validateGeminiRequest(result.request, 'gemini-2.5-flash');
  expect(valid.ok ? 'valid' : valid.message).toBe('valid');
  return result.request.generationConfig;
}

describe('geminiGenerationOptions, through convertToGeminiRequest', () => {
  it('temperature and top_p as temperature and topP', () => {
    expect(config({ temperature: 0.3, top_p: 0.8 })).toEqual({ maxOutputTokens: 500, temperature: 0.3, topP: 0.8 });
    expect(config({})).toEqual({ maxOutputTokens: 500 });
  });

  it('a JSON schema output as responseMimeType and responseJsonSchema; JSON mode as the MIME type alone', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
    expect(config({ response_format: { type: 'json_schema', json_schema: { name: 'a', schema, strict: true } } })).toEqual({
      maxOutputTokens: 500,
      responseMimeType: 'application/json',
      responseJsonSchema: schema,
    });
    expect(config({ response_format: { type: 'json_object' } })).toEqual({ maxOutputTokens: 500, responseMimeType: 'application/json' });
  });
});
