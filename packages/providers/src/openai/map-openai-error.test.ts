import { describe, expect, it } from 'vitest';
import { mapOpenAIError } from './map-openai-error';

describe('mapOpenAIError', () => {
  it("reads compatible servers' context errors by their sentence, and top-level fields", () => {
    const vllm = { object: 'error', message: "This model's maximum context length is 4096 tokens.", type: 'BadRequestError', param: null, code: 400 };
    expect(mapOpenAIError(400, vllm).code).toBe('context_length_exceeded');
    expect(mapOpenAIError(400, { object: 'error', message: 'bad', code: 'content_filter' }).code).toBe('content_filter');
    expect(mapOpenAIError(400, 'plain text').code).toBe('invalid_request');
  });

  it('maps stream error events (no status) as accepted', () => {
    expect([mapOpenAIError(undefined, { error: { code: 'content_filter' } }).code, mapOpenAIError(undefined, {}).accepted]).toEqual(['content_filter', true]);
    expect(mapOpenAIError(undefined, { error: { code: 'rate_limit_exceeded' } }).code).toBe('upstream_error');
  });

  it('carries the status for logs and only the code in the message', () => {
    const error = mapOpenAIError(500, { error: { message: 'secret' } });
    expect([error.status, error.message]).toEqual([500, 'upstream failed: upstream_error (status 500)']);
  });
});
