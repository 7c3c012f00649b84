import { describe, expect, it } from 'vitest';
import { createFakeUpstream, type FakeExchange } from './fake-upstream';
import { fakeBrave } from './search/index';

const echo = (request: Request, { fault, text, requests, stream }: FakeExchange) =>
  new Response(stream([`${request.method} ${text} #${requests.length}`], { fault, malformed: '{' }), { headers: { 'x-fault': fault?.kind ?? 'none' } });

describe('createFakeUpstream', () => {
  it('records each request (method, url, lower-cased headers, JSON body) before the route answers', async () => {
    const upstream = createFakeUpstream({}, echo);
    const response = await upstream.fetch('http://fake/v1/x', { method: 'POST', headers: { 'X-Key': 'k' }, body: '{"a":1}' });
    expect(await response.text()).toBe('POST {"a":1} #1');
    await upstream.fetch('http://fake/v1/y?q=1');
    expect(upstream.requests).toEqual([
      { method: 'POST', url: 'http://fake/v1/x', headers: { 'x-key': 'k', 'content-type': 'text/plain;charset=UTF-8' }, body: { a: 1 } },
      { method: 'GET', url: 'http://fake/v1/y?q=1', headers: {}, body: undefined },
    ]);
  });

  it('leaves the request body readable for the route', async () => {
    const upstream = createFakeUpstream({}, async (request) => new Response(await request.text()));
    const response = await upstream.handle(new Request('http://fake/', { method: 'POST', body: 'q=a&format=json' }));
    expect(await response.text()).toBe('q=a&format=json');
    expect(upstream.requests[0]!.body).toBeUndefined();
  });

  it('rejects a refused request like undici, without recording it, and hands other faults to the route in order', async () => {
    const upstream = createFakeUpstream({ faults: [{ kind: 'refuse' }, { kind: 'status', status: 503 }] }, echo);
    const refused = await upstream.fetch('http://fake:8080/').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TypeError);
    expect((refused as TypeError).message).toBe('fetch failed');
    expect(((refused as TypeError).cause as { code: string }).code).toBe('ECONNREFUSED');
    expect(upstream.requests).toHaveLength(0);
    expect((await upstream.fetch('http://fake/')).headers.get('x-fault')).toBe('status');
    expect((await upstream.fetch('http://fake/')).headers.get('x-fault')).toBe('none');
    upstream.setFaults(() => ({ kind: 'truncate', afterChunks: 0 }));
    const truncated = await upstream.fetch('http://fake/');
    expect(await truncated.text()).toBe('');
  });

  it('counts bodies open until they end or are cancelled', async () => {
    const upstream = createFakeUpstream({}, echo);
    const read = await upstream.fetch('http://fake/');
    const cancelled = await upstream.fetch('http://fake/');
    expect(upstream.open).toBe(2);
    expect(await read.text()).toBe('GET  #1');
    expect(upstream.open).toBe(1);
    await cancelled.body!.cancel();
    expect(upstream.open).toBe(0);
  });

  it('waits latencyMs on the injected sleep before the route runs', async () => {
    const waits: number[] = [];
    const upstream = createFakeUpstream({ latencyMs: 250, sleep: async (ms) => void waits.push(ms) }, echo);
    expect(await (await upstream.fetch('http://fake/')).text()).toBe('GET  #1');
    expect(waits).toEqual([250]);
  });

  it('rejects fetch with the abort reason as soon as the signal aborts, even while the route is still working', async () => {
    // A sleep that ignores the signal: only the fetch wrapper can make the abort visible.
    let release = () => {};
    const upstream = createFakeUpstream({ latencyMs: 1, sleep: () => new Promise<void>((resolve) => (release = resolve)) }, echo);
    const controller = new AbortController();
    const pending = upstream.fetch('http://fake/', { signal: controller.signal });
    await Promise.resolve();
    controller.abort(new Error('client gave up'));
    await expect(pending).rejects.toThrow('client gave up');
    release();
  });

  it('hang: records the request, never answers, and lets go when the caller aborts', async () => {
    const upstream = createFakeUpstream({ faults: [{ kind: 'hang' }] }, echo);
    const controller = new AbortController();
    let answered = false;
    const pending = upstream.fetch('http://fake/', { method: 'POST', body: '{"a":1}', signal: controller.signal }).finally(() => (answered = true));
    await expect.poll(() => upstream.hanging).toBe(1);
    expect(upstream.requests.map((request) => request.body)).toEqual([{ a: 1 }]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(answered).toBe(false);
    controller.abort(new Error('deadline'));
    await expect(pending).rejects.toThrow('deadline');
    expect(upstream.hanging).toBe(0);
    expect((await upstream.fetch('http://fake/')).status).toBe(200);
  });

  it('serves the search fakes too: fakeBrave rejects an aborted in-flight fetch with the reason', async () => {
    let release = () => {};
    const upstream = fakeBrave({ latencyMs: 1, sleep: () => new Promise<void>((resolve) => (release = resolve)) });
    const controller = new AbortController();
    const pending = upstream.fetch('https://api.search.brave.com/res/v1/web/search?q=x', {
      signal: controller.signal,
      headers: { 'x-subscription-token': 'brave-test-key' },
    });
    await Promise.resolve();
    controller.abort(new Error('search abandoned'));
    await expect(pending).rejects.toThrow('search abandoned');
    release();
  });
});
