import { describe, expect, it } from 'vitest';
import { convertToOpenAIRequest } from './convert-to-openai-request';

describe('convertToOpenAIRequest', () => {
  it('passes the Responses-only fields on in the chat form: temperature, top_p, response_format', () => {
    const format = { type: 'json_schema' as const, json_schema: { name: 'a', schema: { type: 'object' }, strict: true } };
    const body = convertToOpenAIRequest(
      {
        model: 'fast',
        messages: [{ role: 'user', content: 'Hi' }],
        stream: true,
        max_completion_tokens: 10,
        temperature: 0.2,
        top_p: 0.7,
        response_format: format,
      },
      'gpt-4o-mini',
      true,
    );
    expect(body).toEqual({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Hi' }],
      max_completion_tokens: 10,
      temperature: 0.2,
      top_p: 0.7,
      response_format: format,
      stream: true,
      stream_options: { include_usage: true },
    });
  });
});
