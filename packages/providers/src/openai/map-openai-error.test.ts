import { describe, expect, it } from 'vitest';
import { mapFetchFailure, mapOpenAIError, readRetryAfter } from './map-openai-error';

describe('mapOpenAIError', () => {
  it('reads compatible servers\' context errors by their sentence, and top-level fields', () => {
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

describe('mapFetchFailure', () => {
  it('tells a connection never made from one that failed later', () => {
    const refused = new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }) });
    const dns = new TypeError('fetch failed', { cause: Object.assign(new Error('getaddrinfo ENOTFOUND x'), { code: 'ENOTFOUND' }) });
    const reset = new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) });
    expect([mapFetchFailure(refused).code, mapFetchFailure(refused).accepted]).toEqual(['upstream_unavailable', false]);
    expect(mapFetchFailure(dns).code).toBe('upstream_unavailable');
    expect([mapFetchFailure(reset).code, mapFetchFailure(reset).accepted]).toEqual(['upstream_error', true]);
  });
});

describe('readRetryAfter', () => {
  it('reads seconds, milliseconds and HTTP dates, rounded up to at least 1', () => {
    expect(readRetryAfter(new Headers({ 'retry-after': '2.5' }))).toBe(3);
    expect(readRetryAfter(new Headers({ 'retry-after-ms': '150', 'retry-after': '9' }))).toBe(1);
    expect(readRetryAfter(new Headers({ 'retry-after': 'Thu, 01 Jan 1970 00:00:10 GMT' }), () => 4_000)).toBe(6);
    expect(readRetryAfter(new Headers({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(readRetryAfter(new Headers())).toBeUndefined();
  });
});
