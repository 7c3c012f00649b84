import { describe, expect, it } from 'vitest';
import {
  ERROR_CATALOGUE,
  GatewayError,
  PLAN_LIMITS,
  completionId,
  modelRoutes,
  mulDivCeil,
  mulDivFloor,
  planAllows,
  requestId,
  retryAfterSeconds,
  toModelRecord,
} from './index';

describe('error catalogue', () => {
  it('holds every code of the spec with its status and type', () => {
    const expected: Record<string, [number, string]> = {
      invalid_request_body: [400, 'invalid_request_error'],
      invalid_parameter: [400, 'invalid_request_error'],
      duplicate_json_key: [400, 'invalid_request_error'],
      too_many_messages: [400, 'invalid_request_error'],
      request_too_complex: [400, 'invalid_request_error'],
      invalid_output_limit: [400, 'invalid_request_error'],
      invalid_request: [400, 'invalid_request_error'],
      remote_media: [400, 'invalid_request_error'],
      message_too_long: [400, 'invalid_request_error'],
      context_length_exceeded: [400, 'invalid_request_error'],
      content_filter: [400, 'invalid_request_error'],
      invalid_api_key: [401, 'invalid_request_error'],
      invalid_token: [401, 'invalid_request_error'],
      insufficient_balance: [402, 'insufficient_balance'],
      account_disabled: [403, 'invalid_request_error'],
      account_deleted: [403, 'invalid_request_error'],
      account_under_18: [403, 'invalid_request_error'],
      model_requires_plan: [403, 'plan'],
      characters_app_only: [403, 'invalid_request_error'],
      model_not_found: [404, 'invalid_request_error'],
      request_timeout: [408, 'invalid_request_error'],
      request_too_large: [413, 'invalid_request_error'],
      rate_limit_exceeded: [429, 'requests'],
      concurrency_limit_exceeded: [429, 'requests'],
      upstream_error: [502, 'upstream_error'],
      upstream_unavailable: [502, 'upstream_error'],
      upstream_retention: [502, 'upstream_error'],
      service_unavailable: [503, 'server_error'],
      server_busy: [503, 'server_error'],
      upstream_busy: [503, 'upstream_error'],
      upstream_unattested: [503, 'upstream_error'],
    };
    expect(Object.keys(ERROR_CATALOGUE).sort()).toEqual(Object.keys(expected).sort());
    for (const [code, [status, type]] of Object.entries(expected)) {
      const entry = ERROR_CATALOGUE[code as keyof typeof ERROR_CATALOGUE];
      expect([entry.status, entry.type], code).toEqual([status, type]);
    }
  });

  it('renders the envelope with nothing else, and Retry-After on 429', async () => {
    const response = new GatewayError('concurrency_limit_exceeded').toResponse({ 'x-service-version': 't/1' });
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(response.headers.get('x-service-version')).toBe('t/1');
    expect(await response.json()).toEqual({
      error: { message: ERROR_CATALOGUE.concurrency_limit_exceeded.message, type: 'requests', param: null, code: 'concurrency_limit_exceeded' },
    });
    const busy = new GatewayError('upstream_busy', { retryAfter: 2.2 }).toResponse();
    expect(busy.headers.get('retry-after')).toBe('3');
    expect(new GatewayError('invalid_api_key').toResponse().headers.get('retry-after')).toBeNull();
  });

  it('rounds Retry-After up to whole seconds, at least 1', () => {
    expect(retryAfterSeconds(0)).toBe(1);
    expect(retryAfterSeconds(0.2)).toBe(1);
    expect(retryAfterSeconds(1.01)).toBe(2);
    expect(retryAfterSeconds(Number.NaN)).toBe(1);
  });
});

describe('ids', () => {
  it('makes chatcmpl- and request ids from base62', () => {
    const ids = new Set(Array.from({ length: 2000 }, completionId));
    expect(ids.size).toBe(2000);
    for (const id of ids) expect(id).toMatch(/^chatcmpl-[A-Za-z0-9]{29}$/);
    expect(requestId()).toMatch(/^req_[A-Za-z0-9]{24}$/);
  });
});

describe('plans', () => {
  it('has the spec table, burst = 1 + a tenth of requests a minute', () => {
    for (const limits of Object.values(PLAN_LIMITS)) expect(limits.burst).toBe(1 + limits.requestsPerMinute / 10);
    expect(PLAN_LIMITS.plus).toEqual({ requestsPerMinute: 120, burst: 13, inFlight: 4 });
    expect(planAllows('plus', 'free')).toBe(true);
    expect(planAllows('free', 'plus')).toBe(false);
    expect(planAllows('max', 'pro')).toBe(true);
  });
});

describe('money', () => {
  it('divides exactly, also past 2^53', () => {
    expect(mulDivCeil(1, 1, 1_000_000)).toBe(1);
    expect(mulDivCeil(0, 5, 1_000_000)).toBe(0);
    expect(mulDivCeil(1_000_000, 3, 1_000_000)).toBe(3);
    expect(mulDivFloor(999_999, 1, 1_000_000)).toBe(0);
    // 2^40 tokens x 2^20 micros/Mtok passes 2^53
    expect(mulDivCeil(2 ** 40, 2 ** 20 + 1, 1_000_000)).toBe(Number((2n ** 40n * (2n ** 20n + 1n) + 999_999n) / 1_000_000n));
    expect(mulDivFloor(2 ** 40, 2 ** 20 + 1, 1_000_000)).toBe(Number((2n ** 40n * (2n ** 20n + 1n)) / 1_000_000n));
  });
});

describe('model records', () => {
  it('keeps routing out of the public record', () => {
    const record = toModelRecord(
      { id: 'fast', type: 'chat', provider: 'local', upstream: 'gpt-4o-mini', max_output_tokens: 100, default_output_tokens: 50 },
      1700000000,
    );
    expect(record).toEqual({
      id: 'fast',
      object: 'model',
      created: 1700000000,
      owned_by: 'local',
      tier: 'anon',
      type: 'chat',
      label: 'fast',
      plan: 'free',
      max_output_tokens: 100,
    });
    expect(modelRoutes({ id: 'm', type: 'chat', provider: 'a', routes: [{ provider: 'b', upstream: 'x' }] })).toEqual([
      { provider: 'a', upstream: 'm' },
      { provider: 'b', upstream: 'x' },
    ]);
  });
});
