import { describe, expect, it, vi } from 'vitest';
import type { Timers } from '@tollgate/core';
import { readBody } from './read-body';

/** Timers a test fires by hand. */
function manualTimers() {
  const pending = new Map<number, { fn: () => void; ms: number }>();
  let next = 0;
  const timers: Timers = {
    setTimeout: (fn, ms) => {
      pending.set(++next, { fn, ms });
      return next;
    },
    clearTimeout: (handle) => void pending.delete(handle as number),
  };
  const fire = () => {
    for (const timer of [...pending.values()]) timer.fn();
  };
  return { timers, pending, fire };
}

function streamed(chunks: Uint8Array[], { close = true } = {}) {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      if (close) controller.close();
    },
  });
}

const post = (body: BodyInit | null, headers: Record<string, string> = {}) =>
  new Request('http://127.0.0.1/v1/chat/completions', { method: 'POST', body, headers, duplex: 'half' } as RequestInit);

describe('readBody', () => {
  it('reads a body of any Content-Type as bytes', async () => {
    const result = await readBody(post('{"a":1}', { 'content-type': 'text/plain' }));
    expect(result).toEqual({ ok: true, value: new TextEncoder().encode('{"a":1}') });
  });

  it('joins the chunks of a streamed body', async () => {
    const result = await readBody(post(streamed([new Uint8Array([1, 2]), new Uint8Array([3])])));
    expect(result).toEqual({ ok: true, value: new Uint8Array([1, 2, 3]) });
  });

  it('refuses a Content-Length over the cap before reading', async () => {
    const request = post(streamed([new Uint8Array(1)], { close: false }), { 'content-length': String(32 * 1024 * 1024 + 1) });
    const result = await readBody(request);
    expect(result).toEqual({ ok: false, error: { code: 'request_too_large', message: 'The request body is larger than 33554432 bytes.' } });
    expect(request.bodyUsed).toBe(false);
  });

  it('takes exactly the cap and refuses one byte more counted while reading', async () => {
    expect(await readBody(post(streamed([new Uint8Array(6), new Uint8Array(4)])), { maxBytes: 10 })).toMatchObject({ ok: true });
    const over = await readBody(post(streamed([new Uint8Array(6), new Uint8Array(5)])), { maxBytes: 10 });
    expect(over).toMatchObject({ ok: false, error: { code: 'request_too_large' } });
  });

  it('refuses a body still arriving at the deadline with request_timeout', async () => {
    const { timers, pending, fire } = manualTimers();
    let clock = 1_000;
    const reading = readBody(post(streamed([new Uint8Array([1])], { close: false })), {
      startedAt: 0,
      timeoutMs: 60_000,
      now: () => clock,
      timers,
    });
    // The deadline is armed once the read started: wait for it rather than a fixed time.
    await expect.poll(() => pending.size, { timeout: 5_000, interval: 1 }).toBe(1);
    expect([...pending.values()].map((timer) => timer.ms)).toEqual([59_000]);
    clock = 60_000;
    fire();
    expect(await reading).toEqual({ ok: false, error: { code: 'request_timeout', message: 'The request body did not arrive within the time allowed.' } });
    expect(pending.size).toBe(0);
  });

  it('refuses a body that completes after the deadline', async () => {
    const { timers } = manualTimers();
    let clock = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        clock = 61_000;
        controller.enqueue(new Uint8Array([1]));
        controller.close();
      },
    });
    const result = await readBody(post(body), { startedAt: 0, now: () => clock, timers });
    expect(result).toMatchObject({ ok: false, error: { code: 'request_timeout' } });
  });

  it('returns empty bytes for a request without a body', async () => {
    expect(await readBody(new Request('http://127.0.0.1/', { method: 'POST' }))).toEqual({ ok: true, value: new Uint8Array(0) });
  });
});

describe('readBody with a declared Content-Length', () => {
  it('reads the body whole with arrayBuffer(), not chunk by chunk', async () => {
    const request = post('{"a":1}', { 'content-length': '7' });
    const whole = vi.spyOn(request, 'arrayBuffer');
    const body = vi.spyOn(request, 'body', 'get');
    expect(await readBody(request)).toEqual({ ok: true, value: new TextEncoder().encode('{"a":1}') });
    expect(whole).toHaveBeenCalledTimes(1);
    expect(body).not.toHaveBeenCalled();
    expect(request.bodyUsed).toBe(true);
  });

  it('keeps the cap on the bytes got: a body longer than its Content-Length said (another runtime) is request_too_large', async () => {
    const request = post(streamed([new Uint8Array(6), new Uint8Array(5)]), { 'content-length': '4' });
    expect(await readBody(request, { maxBytes: 10 })).toMatchObject({ ok: false, error: { code: 'request_too_large' } });
    expect(await readBody(post(streamed([new Uint8Array(10)]), { 'content-length': '10' }), { maxBytes: 10 })).toMatchObject({ ok: true });
  });

  it('a body that fails while read is invalid_request_body; one already read is refused before reading', async () => {
    const failing = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.error(new Error('client gone'));
      },
    });
    expect(await readBody(post(failing, { 'content-length': '3' }))).toEqual({
      ok: false,
      error: { code: 'invalid_request_body', message: 'The request body could not be read to its end.' },
    });
    const used = post('abc', { 'content-length': '3' });
    await used.text();
    expect(await readBody(used)).toEqual({ ok: false, error: { code: 'invalid_request_body', message: 'The request body was already read.' } });
  });

  it('refuses a body still arriving at the deadline, or one that completes after it, with request_timeout', async () => {
    const { timers, pending, fire } = manualTimers();
    let clock = 1_000;
    const reading = readBody(post(streamed([new Uint8Array([1])], { close: false }), { 'content-length': '2' }), {
      startedAt: 0,
      now: () => clock,
      timers,
    });
    expect([...pending.values()].map((timer) => timer.ms)).toEqual([59_000]);
    clock = 60_000;
    fire();
    expect(await reading).toEqual({ ok: false, error: { code: 'request_timeout', message: 'The request body did not arrive within the time allowed.' } });
    expect(pending.size).toBe(0);

    let late = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        late = 61_000;
        controller.enqueue(new Uint8Array([1]));
        controller.close();
      },
    });
    const result = await readBody(post(body, { 'content-length': '1' }), { startedAt: 0, now: () => late, timers: manualTimers().timers });
    expect(result).toMatchObject({ ok: false, error: { code: 'request_timeout' } });
  });

  it('a declared length with no body is empty bytes', async () => {
    expect(await readBody(new Request('http://127.0.0.1/', { method: 'POST', headers: { 'content-length': '0' } }))).toEqual({
      ok: true,
      value: new Uint8Array(0),
    });
  });
});
