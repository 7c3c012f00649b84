import { describe, expect, it } from 'vitest';
import { mapGeminiError } from './map-gemini-error';

const body = (code: number, status: string, message: string, details?: Record<string, unknown>[]) => ({
  error: { code, message, status, ...(details ? { details } : {}) },
});

describe('mapGeminiError', () => {
  const cases: [number, string, string, string, boolean][] = [
    [400, 'INVALID_ARGUMENT', 'The input token count (1048590) exceeds the maximum number of tokens allowed (1048576).', 'context_length_exceeded', true],
    [400, 'INVALID_ARGUMENT', 'Request payload size exceeds the limit: 20971520 bytes.', 'request_too_large', true],
    [400, 'INVALID_ARGUMENT', 'Please use a valid role: user, model.', 'invalid_request', true],
    [400, 'FAILED_PRECONDITION', 'User location is not supported for the API use.', 'upstream_error', true],
    [403, 'PERMISSION_DENIED', 'The caller does not have permission', 'upstream_error', true],
    [404, 'NOT_FOUND', 'models/x is not found for API version v1beta', 'upstream_error', true],
    [413, 'INVALID_ARGUMENT', 'Too big', 'request_too_large', true],
    [429, 'RESOURCE_EXHAUSTED', 'You exceeded your current quota', 'upstream_busy', false],
    [500, 'INTERNAL', 'An internal error has occurred.', 'upstream_error', true],
    [503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.', 'upstream_unavailable', false],
    [504, 'DEADLINE_EXCEEDED', 'Deadline exceeded', 'upstream_error', true],
  ];
  for (const [status, rpc, message, code, accepted] of cases) {
    it(`maps ${status} ${rpc} (${message.slice(0, 30)}) to ${code}`, () => {
      const error = mapGeminiError(status, body(status, rpc, message));
      expect(error).toMatchObject({ code, accepted, status });
      expect(error.message).not.toContain(message);
    });
  }

  it('treats a bad API key (400 API_KEY_INVALID) as our configuration: upstream_error', () => {
    const details = [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' }];
    expect(mapGeminiError(400, body(400, 'INVALID_ARGUMENT', 'API key not valid. Please pass a valid API key.', details)).code).toBe('upstream_error');
  });

  it('takes Retry-After from RetryInfo.retryDelay, the header winning when both are there', () => {
    const details = [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '41.5s' }];
    expect(mapGeminiError(429, body(429, 'RESOURCE_EXHAUSTED', 'quota', details)).retryAfter).toBe(42);
    expect(mapGeminiError(429, body(429, 'RESOURCE_EXHAUSTED', 'quota', details), new Headers({ 'retry-after': '3' })).retryAfter).toBe(3);
    expect(mapGeminiError(429, body(429, 'RESOURCE_EXHAUSTED', 'quota')).retryAfter).toBeUndefined();
  });
});
