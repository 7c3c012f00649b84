import { describe, expect, it } from 'vitest';
import { ProviderError } from '../provider';
import { mapFetchFailure } from './map-fetch-failure';
import { abortReason, postJson } from './post-json';

const mapError = (status: number, _body: unknown, headers: Headers) => {
  const retryAfter = headers.get('retry-after');
  return new ProviderError(status === 429 ? 'upstream_busy' : 'invalid_request', {
    status,
    accepted: status !== 429,
    ...(retryAfter ? { retryAfter: Number(retryAfter) } : {}),
  });
};

describe('postJson', () => {
  it('posts the JSON body with the target headers and returns a 2xx response', async () => {
    const seen: { url: string; init: RequestInit }[] = [];
    const fetch = (async (url: string, init: RequestInit) => {
      seen.push({ url, init });
      return new Response('{"ok":true}', { status: 200 });
    }) as unknown as typeof globalThis.fetch;
    const response = await postJson({ url: 'http://up/x', headers: { 'x-k': 'v' }, fetch }, { a: 1 }, undefined, mapError);
    expect(await response.json()).toEqual({ ok: true });
    expect(seen).toHaveLength(1);
    expect([seen[0]!.url, seen[0]!.init.method, seen[0]!.init.body, seen[0]!.init.headers]).toEqual(['http://up/x', 'POST', '{"a":1}', { 'x-k': 'v' }]);
  });

  it('hands a refusal to the mapper with its parsed body (JSON or text) and headers', async () => {
    const bodies: unknown[] = [];
    const mapper = (status: number, body: unknown, headers: Headers) => {
      bodies.push(body);
      return mapError(status, body, headers);
    };
    const json = (async () => new Response('{"error":{"type":"x"}}', { status: 429, headers: { 'retry-after': '7' } })) as unknown as typeof globalThis.fetch;
    const error = await postJson({ url: 'http://up', headers: {}, fetch: json }, {}, undefined, mapper).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    expect([(error as ProviderError).code, (error as ProviderError).accepted, (error as ProviderError).retryAfter]).toEqual(['upstream_busy', false, 7]);
    const text = (async () => new Response('Bad Gateway', { status: 400 })) as unknown as typeof globalThis.fetch;
    await postJson({ url: 'http://up', headers: {}, fetch: text }, {}, undefined, mapper).catch(() => undefined);
    expect(bodies).toEqual([{ error: { type: 'x' } }, 'Bad Gateway']);
  });

  it('reads at most 64 KiB of an error body', async () => {
    let seen: unknown;
    const huge = 'x'.repeat(200 * 1024);
    const fetch = (async () => new Response(huge, { status: 400 })) as unknown as typeof globalThis.fetch;
    await postJson({ url: 'http://up', headers: {}, fetch }, {}, undefined, (status, body, headers) => {
      seen = body;
      return mapError(status, body, headers);
    }).catch(() => undefined);
    expect(typeof seen).toBe('string');
    expect((seen as string).length).toBeGreaterThanOrEqual(64 * 1024);
    expect((seen as string).length).toBeLessThan(200 * 1024);
  });

  it('maps a connection never made as unavailable and not accepted', async () => {
    const refused = (async () => {
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }) });
    }) as unknown as typeof globalThis.fetch;
    const error = (await postJson({ url: 'http://up', headers: {}, fetch: refused }, {}, undefined, mapError).catch(
      (caught: unknown) => caught,
    )) as ProviderError;
    expect([error.code, error.accepted]).toEqual(['upstream_unavailable', false]);
  });

  it("rethrows the caller's abort as it is and never calls fetch on an aborted signal", async () => {
    let calls = 0;
    const fetch = (async () => {
      calls++;
      return new Response('{}');
    }) as unknown as typeof globalThis.fetch;
    const controller = new AbortController();
    const reason = new DOMException('gone', 'AbortError');
    controller.abort(reason);
    await expect(postJson({ url: 'http://up', headers: {}, fetch }, {}, controller.signal, mapError)).rejects.toBe(reason);
    expect(calls).toBe(0);
  });
});

describe('abortReason', () => {
  it('turns a deadline into an accepted upstream_error and keeps any other reason', () => {
    const timeout = new AbortController();
    timeout.abort(new DOMException('late', 'TimeoutError'));
    expect([(abortReason(timeout.signal) as ProviderError).code, (abortReason(timeout.signal) as ProviderError).accepted]).toEqual(['upstream_error', true]);
    const left = new AbortController();
    left.abort('client left');
    expect(abortReason(left.signal)).toBe('client left');
  });
});

describe('mapFetchFailure', () => {
  it('tells a connection never made from one that failed later', () => {
    const refused = new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }) });
    const dns = new TypeError('fetch failed', { cause: Object.assign(new Error('getaddrinfo ENOTFOUND x'), { code: 'ENOTFOUND' }) });
    const reset = new TypeError('fetch failed', { cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }) });
    expect([mapFetchFailure(refused).code, mapFetchFailure(refused).accepted]).toEqual(['upstream_unavailable', false]);
    expect([mapFetchFailure(dns).code, mapFetchFailure(dns).accepted]).toEqual(['upstream_unavailable', false]);
    expect([mapFetchFailure(reset).code, mapFetchFailure(reset).accepted]).toEqual(['upstream_error', true]);
  });
});
