import { type BodySource, type ByteSink, type LazyBody, leanReply } from '@tollgate/core';
import { afterEach, describe, expect, it } from 'vitest';
import { leanParts, leanResponse } from './lean-response';
import type { FetchHandler, NodeListenerOptions } from './node-listener';
import { serveListener, until } from '../test/wire';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

const serve = (fetch: FetchHandler, options?: NodeListenerOptions) => serveListener(fetch, cleanups, options);
const encoder = new TextEncoder();

/** A lazy body over a hand-written source (writes `chunks`, then ends) and a stream of the same text, counting what was asked of it. */
function handLazyBody(chunks: string[]) {
  const asked = { sources: 0, streams: 0, cancels: 0 };
  const source: BodySource = {
    start(sink: ByteSink) {
      for (const chunk of chunks) sink.write(encoder.encode(chunk));
      sink.end();
    },
    resume() {},
    cancel() {
      asked.cancels++;
    },
  };
  let taken = false;
  let stream: ReadableStream<Uint8Array> | undefined;
  const lazy: LazyBody = {
    source() {
      asked.sources++;
      if (taken || stream !== undefined) return undefined;
      taken = true;
      return source;
    },
    stream() {
      asked.streams++;
      stream ??= new ReadableStream<Uint8Array>({
        start(controller) {
          for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
          controller.close();
        },
      });
      return stream;
    },
  };
  return { lazy, asked };
}

describe('leanResponse', () => {
  it('passes for a Response: status and ok of its own, everything else from the real one made once from its parts', async () => {
    const response = leanResponse('{"ok":true}', 201, { 'content-type': 'application/json', 'x-request-id': 'req_1' });
    expect(response).toBeInstanceOf(Response);
    expect(response.status).toBe(201);
    expect(response.ok).toBe(true);
    expect(leanParts(response)).toEqual({ status: 201, headers: { 'content-type': 'application/json', 'x-request-id': 'req_1' }, body: '{"ok":true}' });
    expect(response.headers.get('x-request-id')).toBe('req_1');
    // Made real: the listener writes the real one from now on (its headers may change).
    expect(leanParts(response)).toBeUndefined();
    expect(await response.clone().json()).toEqual({ ok: true });
    expect(await response.text()).toBe('{"ok":true}');
    expect(response.bodyUsed).toBe(true);
    expect(leanResponse('', 404, {}).ok).toBe(false);
  });

  it('a lazy body: the real Response takes its stream', async () => {
    const { lazy, asked } = handLazyBody(['data: a\n\n', 'data: b\n\n']);
    const response = leanResponse(lazy, 200, { 'content-type': 'text/event-stream' });
    expect(asked.streams).toBe(0);
    expect(await response.text()).toBe('data: a\n\ndata: b\n\n');
    expect(asked.streams).toBe(1);
    expect(leanParts(response)).toBeUndefined();
  });

  it('a plain Response has no parts', () => {
    expect(leanParts(new Response('x'))).toBeUndefined();
  });
});

describe('createNodeListener and lean replies', () => {
  it('offers LEAN_REPLY on its requests; a string reply goes out with its head and a Content-Length in one socket write', async () => {
    let offered: unknown;
    const served = await serve((request) => {
      const lean = leanReply(request);
      offered = lean;
      if (lean === undefined) return new Response('no lean reply', { status: 500 });
      return lean('hello, lean', 201, { 'content-type': 'text/plain', 'x-extra': 'yes' });
    });
    const reply = await fetch(`${served.url}/`);
    expect(typeof offered).toBe('function');
    expect(reply.status).toBe(201);
    expect(reply.headers.get('content-type')).toBe('text/plain');
    expect(reply.headers.get('x-extra')).toBe('yes');
    expect(reply.headers.get('content-length')).toBe('11');
    expect(await reply.text()).toBe('hello, lean');
    expect(served.writes).toEqual([1]);
    expect(leanReply(new Request('http://localhost/'))).toBeUndefined();
  });

  it('a lazy body is written from its source, its stream never made', async () => {
    const { lazy, asked } = handLazyBody(['data: one\n\n', 'data: two\n\n']);
    const served = await serve((request) =>
      (leanReply(request) as NonNullable<ReturnType<typeof leanReply>>)(lazy, 200, { 'content-type': 'text/event-stream' }),
    );
    const reply = await fetch(`${served.url}/`);
    expect(reply.status).toBe(200);
    expect(await reply.text()).toBe('data: one\n\ndata: two\n\n');
    expect(asked).toEqual({ sources: 1, streams: 0, cancels: 0 });
  });

  it('a lazy body that ends at once, with a header node:http refuses, is answered 500 Internal Server Error', async () => {
    const { lazy } = handLazyBody(['data: one\n\n']);
    const phases: string[] = [];
    const served = await serve((request) => (leanReply(request) as NonNullable<ReturnType<typeof leanReply>>)(lazy, 200, { 'x-bad': 'a\u0001b' }), {
      onError: (_error, phase) => void phases.push(phase),
    });
    const reply = await fetch(`${served.url}/`);
    expect([reply.status, reply.statusText, await reply.text(), reply.headers.get('x-bad')]).toEqual([
      500,
      'Internal Server Error',
      'Internal Server Error',
      null,
    ]);
    expect(phases).toEqual(['response']);
  });

  it('a lazy body that offers no source is read through its stream', async () => {
    const { lazy, asked } = handLazyBody(['data: one\n\n', 'data: two\n\n']);
    lazy.stream();
    const served = await serve((request) =>
      (leanReply(request) as NonNullable<ReturnType<typeof leanReply>>)(lazy, 200, { 'content-type': 'text/event-stream' }),
    );
    const reply = await fetch(`${served.url}/`);
    expect(await reply.text()).toBe('data: one\n\ndata: two\n\n');
    expect(asked.sources).toBe(1);
    expect(asked.cancels).toBe(0);
  });

  it('a lean reply whose headers the handler changed goes out as the real Response it became, with the change', async () => {
    const served = await serve((request) => {
      const response = (leanReply(request) as NonNullable<ReturnType<typeof leanReply>>)('changed', 200, { 'content-type': 'text/plain' });
      response.headers.set('x-added', 'later');
      return response;
    });
    const reply = await fetch(`${served.url}/`);
    expect(reply.headers.get('x-added')).toBe('later');
    expect(reply.headers.get('content-type')).toBe('text/plain');
    expect(await reply.text()).toBe('changed');
  });

  it('a client gone before the reply: the lazy body’s source is cancelled, its stream never made', async () => {
    const { lazy, asked } = handLazyBody(['data: never\n\n']);
    let answer: (response: Response) => void = () => {};
    let asking: Request | undefined;
    const served = await serve((request) => {
      asking = request;
      return new Promise<Response>((resolve) => (answer = resolve));
    });
    const client = new AbortController();
    const reply = fetch(`${served.url}/`, { signal: client.signal }).catch(() => undefined);
    await until(() => asking !== undefined);
    client.abort();
    await reply;
    await until(() => (asking as Request).signal.aborted);
    answer((leanReply(asking as Request) as NonNullable<ReturnType<typeof leanReply>>)(lazy, 200, { 'content-type': 'text/event-stream' }));
    await until(() => asked.cancels === 1);
    expect(asked).toEqual({ sources: 1, streams: 0, cancels: 1 });
  });
});
