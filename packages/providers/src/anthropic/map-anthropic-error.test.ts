import { describe, expect, it } from 'vitest';
import { mapAnthropicError, mapAnthropicStreamError } from './map-anthropic-error';

const body = (type: string, message = 'x') => ({ type: 'error', error: { type, message } });

describe('mapAnthropicError', () => {
  const cases: [number, string, string, string, boolean][] = [
    [400, 'invalid_request_error', 'prompt is too long: 210034 tokens > 200000 maximum', 'context_length_exceeded', true],
    [
      400,
      'invalid_request_error',
      'input length and `max_tokens` exceed context limit: 198000 + 8192 > 200000, decrease input length or `max_tokens` and try again',
      'context_length_exceeded',
      true,
    ],
    [400, 'invalid_request_error', 'Output blocked by content filtering policy', 'content_filter', true],
    [400, 'invalid_request_error', 'max_tokens: Field required', 'invalid_request', true],
    [401, 'authentication_error', 'invalid x-api-key', 'upstream_error', true],
    [402, 'billing_error', 'There is an issue with your billing or payment information.', 'upstream_error', false],
    [403, 'permission_error', 'no access', 'upstream_error', true],
    [404, 'not_found_error', 'model: claude-x', 'upstream_error', true],
    [413, 'request_too_large', 'Request exceeds the maximum allowed number of bytes.', 'request_too_large', true],
    [429, 'rate_limit_error', 'rate limited', 'upstream_busy', false],
    [500, 'api_error', 'Internal server error', 'upstream_error', true],
    [503, 'api_error', 'Service temporarily down', 'upstream_unavailable', false],
    [504, 'timeout_error', 'timeout', 'upstream_error', true],
    [529, 'overloaded_error', 'Overloaded', 'upstream_busy', false],
  ];
  for (const [status, type, message, code, accepted] of cases) {
    it(`maps ${status} ${type} to ${code}`, () => {
      const error = mapAnthropicError(status, body(type, message));
      expect(error.code).toBe(code);
      expect(error.accepted).toBe(accepted);
      expect(error.status).toBe(status);
      expect(error.message).not.toContain(message);
    });
  }

  it('maps our account out of credit or past a spend limit to upstream_error, not accepted (the next route may serve), whatever the status', () => {
    const exhausted: [number, unknown][] = [
      [
        400,
        body(
          'invalid_request_error',
          'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.',
        ),
      ],
      [400, body('invalid_request_error', 'You have reached your specified API usage limits. You will regain access on 2026-12-01 at 00:00 UTC.')],
      [400, body('invalid_request_error', 'You have reached your specified workspace API usage limits. You will regain access on 2026-12-01 at 00:00 UTC.')],
      [429, { type: 'error', error: { type: 'rate_limit_error', message: 'spend limit', details: { error_code: 'enforced_spend_limit_reached' } } }],
    ];
    for (const [status, reply] of exhausted) {
      const error = mapAnthropicError(status, reply, new Headers({ 'retry-after': '30' }));
      expect([error.code, error.accepted, error.status, error.retryAfter]).toEqual(['upstream_error', false, status, 30]);
    }
    // A rate limit's own wording, and a 429 without details, stay a passing overload.
    expect(
      mapAnthropicError(429, body('rate_limit_error', 'This request would exceed the rate limit for your organization of 50 requests per minute.')).code,
    ).toBe('upstream_busy');
  });

  it('maps a body that is not JSON by status alone', () => {
    expect(mapAnthropicError(502, undefined).code).toBe('upstream_error');
    expect(mapAnthropicError(400, '<html>').code).toBe('invalid_request');
  });

  it('carries Retry-After over in whole seconds', () => {
    expect(mapAnthropicError(429, body('rate_limit_error'), new Headers({ 'retry-after': '17' })).retryAfter).toBe(17);
    expect(mapAnthropicError(529, body('overloaded_error'), new Headers({ 'retry-after': '0.2' })).retryAfter).toBe(1);
    expect(mapAnthropicError(529, body('overloaded_error')).retryAfter).toBeUndefined();
  });

  it('maps error events inside a 200 stream as accepted', () => {
    expect(mapAnthropicStreamError(body('overloaded_error', 'Overloaded'))).toMatchObject({ code: 'upstream_busy', accepted: true });
    expect(mapAnthropicStreamError(body('api_error'))).toMatchObject({ code: 'upstream_error', accepted: true });
  });
});
