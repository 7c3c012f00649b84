/**
 * An upstream reply's body read through `bodyReader` of @tollgate/core: the reply's own reader
 * (`UpstreamResponse[BODY_READER]`, node's Buffers straight off the IncomingMessage), over a real
 * loopback upstream and the Node adapter's upstream fetch.
 */
import { getEventListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { BODY_READER, type BodyReader, type BodyReadResult, bodyReader } from '@tollgate/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createUpstreamFetch } from './upstream-fetch';
import { UpstreamResponse } from './upstream-response';
import { listenOnLoopback } from '../test/listen';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

/** A loopback upstream whose replies the test writes: each handler call's response, and when its socket closed. */
async function serve(handler: (request: IncomingMessage, response: ServerResponse) => void = (_request, response) => response.writeHead(200)) {
  const replies: { response: ServerResponse; socketClosed: Promise<void> }[] = [];
  let connections = 0;
  const server: Server = createServer((request, response) => {
    replies.push({ response, socketClosed: new Promise((resolve) => request.socket.once('close', () => resolve())) });
    handler(request, response);
  });
  server.on('connection', () => connections++);
  const port = await listenOnLoopback(server, cleanups);
  const created = createUpstreamFetch();
  cleanups.push(() => created.close());
  return {
    replies,
    connections: () => connections,
    fetch: (init?: RequestInit) => created.fetch(`http://127.0.0.1:${port}/`, init),
  };
}

/** The next chunk as text; fails the test at the body's end. */
async function text(reader: BodyReader): Promise<string> {
  const read = await reader.read();
  if (read.done) return expect.unreachable('the body ended');
  return Buffer.from(read.value).toString('utf8');
}

/** What the reply offers under BODY_READER (a member `Response`'s type does not name). */
function ownReader(response: Response): BodyReader | undefined {
  return (response as unknown as { [BODY_READER](): BodyReader | undefined })[BODY_READER]();
}

/** The next read taken with `readNow` alone, waiting with `whenReadable` while it answers null; rejects with what `readNow` throws. */
async function readSoon(reader: BodyReader): Promise<BodyReadResult> {
  for (;;) {
    const read = reader.readNow!();
    if (read !== null) return read;
    await new Promise<void>((resolve) => reader.whenReadable!(resolve));
  }
}

/** The chunk of `read` as text; fails the test at the body's end. */
function chunkText(read: BodyReadResult | null): string {
  if (read === null) return expect.unreachable('nothing to read now');
  if (read.done) return expect.unreachable('the body ended');
  return Buffer.from(read.value).toString('utf8');
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The rejection of `promise` (fails the test when it resolves). */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    (value) => expect.unreachable(`resolved with ${JSON.stringify(value)}`),
    (error: unknown) => error,
  );
}

describe('bodyReader over an UpstreamResponse', () => {
  it('reads the chunks the upstream sent, in order, as node Buffers off the reply (no web stream)', async () => {
    const upstream = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: one\n\n');
    });
    const controller = new AbortController();
    const response = await upstream.fetch({ signal: controller.signal });
    expect(response).toBeInstanceOf(UpstreamResponse);
    const reader = bodyReader(response)!;
    expect(reader).not.toBeInstanceOf(ReadableStreamDefaultReader);
    const first = await reader.read();
    // The reply's own Buffer: a body stream would have given a copy in a plain Uint8Array.
    expect(Buffer.isBuffer(first.value)).toBe(true);
    expect(Buffer.from(first.value!).toString()).toBe('data: one\n\n');
    const reply = upstream.replies[0]!.response;
    reply.write('data: two\n\n');
    expect(await text(reader)).toBe('data: two\n\n');
    reply.write('data: thrée\n\n');
    expect(await text(reader)).toBe('data: thrée\n\n');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    reply.end();
    expect(await reader.read()).toEqual({ done: true, value: undefined });
    expect(await reader.read()).toEqual({ done: true, value: undefined });
    // The body is over: the call no longer listens to the signal.
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('the body is used once the reader is taken; a second bodyReader falls back to `body`, an empty used stream that reads the end at once', async () => {
    const upstream = await serve((_request, response) => {
      response.writeHead(200);
      response.write('first');
    });
    const response = await upstream.fetch();
    expect(response.bodyUsed).toBe(false);
    const reader = bodyReader(response)!;
    expect(response.bodyUsed).toBe(true);
    expect(ownReader(response)).toBeUndefined();
    expect(await text(reader)).toBe('first');
    // The second reader is the `body` stream's: not the reply's bytes, which stay with the first reader.
    const second = bodyReader(response)!;
    expect(second).toBeInstanceOf(ReadableStreamDefaultReader);
    expect(await second.read()).toEqual({ done: true, value: undefined });
    upstream.replies[0]!.response.end('rest');
    expect(await text(reader)).toBe('rest');
    expect((await reader.read()).done).toBe(true);
    await expect(response.text()).rejects.toThrow('Body is unusable');
  });

  it('once `body` was asked for (or the body read), the reply offers no reader of its own: bodyReader reads `body`', async () => {
    const upstream = await serve((_request, response) => response.writeHead(200).end('whole'));
    const streamed = await upstream.fetch();
    const body = streamed.body!;
    expect(ownReader(streamed)).toBeUndefined();
    expect(streamed.bodyUsed).toBe(false);
    const reader = bodyReader(streamed)!;
    expect(reader).toBeInstanceOf(ReadableStreamDefaultReader);
    expect(body.locked).toBe(true);
    expect(await text(reader)).toBe('whole');
    const read = await upstream.fetch();
    expect(await read.text()).toBe('whole');
    expect(ownReader(read)).toBeUndefined();
  });

  it('a body cut by the upstream mid-way rejects the read with TypeError terminated, and every later read too', async () => {
    const upstream = await serve((_request, response) => {
      response.writeHead(200, { 'content-length': '100' });
      response.write('only part');
    });
    const reader = bodyReader(await upstream.fetch())!;
    expect(await text(reader)).toBe('only part');
    const reading = reader.read();
    upstream.replies[0]!.response.socket!.destroy();
    const error = await rejection(reading);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe('terminated');
    expect(await rejection(reader.read())).toBe(error);
  });

  it('an abort of the request signal mid-body rejects the waiting read with the signal reason and closes the connection', async () => {
    const upstream = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: first\n\n');
    });
    const controller = new AbortController();
    const reader = bodyReader(await upstream.fetch({ signal: controller.signal }))!;
    expect(await text(reader)).toBe('data: first\n\n');
    const reading = reader.read();
    const reason = new Error('client left');
    controller.abort(reason);
    expect(await rejection(reading)).toBe(reason);
    expect(await rejection(reader.read())).toBe(reason);
    await upstream.replies[0]!.socketClosed;
  });

  it('cancel of a partly read body destroys the connection; every read after it answers the end', async () => {
    const upstream = await serve((_request, response) => {
      response.writeHead(200);
      response.write('partial');
    });
    const reader = bodyReader(await upstream.fetch())!;
    expect(await text(reader)).toBe('partial');
    await reader.cancel();
    await upstream.replies[0]!.socketClosed;
    expect(await reader.read()).toEqual({ done: true, value: undefined });
    // A read already waiting when the body is cancelled answers the end too.
    const waiting = await serve((_request, response) => {
      response.writeHead(200);
      response.write('partial');
    });
    const second = bodyReader(await waiting.fetch())!;
    expect(await text(second)).toBe('partial');
    const reading = second.read();
    await second.cancel();
    expect(await reading).toEqual({ done: true, value: undefined });
    await waiting.replies[0]!.socketClosed;
  });

  it('cancel of a body whose bytes all arrived keeps the connection for the next call', async () => {
    const upstream = await serve((_request, response) => response.end('data: [DONE]\n\n'));
    for (let index = 0; index < 3; index++) {
      const reader = bodyReader(await upstream.fetch({ method: 'POST', body: '{}' }))!;
      expect(await text(reader)).toBe('data: [DONE]\n\n');
      await reader.cancel();
      // The socket goes back to the pool when the reply's end is emitted, a tick later.
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    expect(upstream.connections()).toBe(1);
  });

  it('readNow answers null until bytes arrive, whenReadable wakes once when they do, then readNow answers them and at last the end', async () => {
    const upstream = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.flushHeaders();
    });
    const controller = new AbortController();
    const reader = bodyReader(await upstream.fetch({ signal: controller.signal }))!;
    expect(reader.readNow!()).toBeNull();
    let wakes = 0;
    const woken = new Promise<void>((resolve) =>
      reader.whenReadable!(() => {
        wakes++;
        resolve();
      }),
    );
    await sleep(30);
    expect(wakes).toBe(0);
    const reply = upstream.replies[0]!.response;
    reply.write('data: one\n\n');
    await woken;
    const first = reader.readNow!();
    expect(first?.done).toBe(false);
    // The reply's own Buffer, as `read` gives.
    expect(Buffer.isBuffer(first?.value)).toBe(true);
    expect(chunkText(first)).toBe('data: one\n\n');
    expect(reader.readNow!()).toBeNull();
    // Once woken, the waiter is gone: more bytes wake nobody until whenReadable is called again.
    reply.write('data: two\n\n');
    await sleep(30);
    expect(wakes).toBe(1);
    expect(chunkText(reader.readNow!())).toBe('data: two\n\n');
    expect(reader.readNow!()).toBeNull();
    reply.end('data: last\n\n');
    expect(chunkText(await readSoon(reader))).toBe('data: last\n\n');
    expect(await readSoon(reader)).toEqual({ done: true, value: undefined });
    expect(reader.readNow!()).toEqual({ done: true, value: undefined });
    // The body is over: the call no longer listens to the signal.
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('read and readNow take turns on the same chunks, in order', async () => {
    const upstream = await serve((_request, response) => {
      response.writeHead(200);
      response.write('one');
    });
    const reader = bodyReader(await upstream.fetch())!;
    expect(chunkText(await readSoon(reader))).toBe('one');
    const reply = upstream.replies[0]!.response;
    reply.write('two');
    expect(await text(reader)).toBe('two');
    reply.end('three');
    expect(chunkText(await readSoon(reader))).toBe('three');
    expect(await reader.read()).toEqual({ done: true, value: undefined });
    expect(reader.readNow!()).toEqual({ done: true, value: undefined });
  });

  it('after cancel readNow answers the end, even with bytes buffered, and a waiting whenReadable wakes', async () => {
    const upstream = await serve((_request, response) => {
      response.writeHead(200);
      response.write('partial');
    });
    const reader = bodyReader(await upstream.fetch())!;
    expect(chunkText(await readSoon(reader))).toBe('partial');
    expect(reader.readNow!()).toBeNull();
    let wakes = 0;
    reader.whenReadable!(() => wakes++);
    await reader.cancel();
    expect(wakes).toBe(1);
    expect(reader.readNow!()).toEqual({ done: true, value: undefined });
    await upstream.replies[0]!.socketClosed;
    expect(reader.readNow!()).toEqual({ done: true, value: undefined });
    // Bytes that arrived but were not taken are not handed out after the cancel.
    const buffered = await serve((_request, response) => {
      response.writeHead(200);
      response.flushHeaders();
    });
    const second = bodyReader(await buffered.fetch())!;
    expect(second.readNow!()).toBeNull();
    const arrived = new Promise<void>((resolve) => second.whenReadable!(resolve));
    buffered.replies[0]!.response.write('unread');
    await arrived;
    await second.cancel();
    expect(second.readNow!()).toEqual({ done: true, value: undefined });
    await buffered.replies[0]!.socketClosed;
  });

  it('a body cut mid-way wakes the waiter, and readNow throws TypeError terminated, every time', async () => {
    const upstream = await serve((_request, response) => {
      response.writeHead(200, { 'content-length': '100' });
      response.write('only part');
    });
    const reader = bodyReader(await upstream.fetch())!;
    expect(chunkText(await readSoon(reader))).toBe('only part');
    expect(reader.readNow!()).toBeNull();
    const woken = new Promise<void>((resolve) => reader.whenReadable!(resolve));
    upstream.replies[0]!.response.socket!.destroy();
    await woken;
    let error: unknown;
    try {
      reader.readNow!();
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe('terminated');
    expect(() => reader.readNow!()).toThrow(error as Error);
    expect(await rejection(reader.read())).toBe(error);
  });

  it('an abort of the request signal mid-body wakes the waiter, and readNow throws the signal reason', async () => {
    const upstream = await serve((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: first\n\n');
    });
    const controller = new AbortController();
    const reader = bodyReader(await upstream.fetch({ signal: controller.signal }))!;
    expect(chunkText(await readSoon(reader))).toBe('data: first\n\n');
    expect(reader.readNow!()).toBeNull();
    let wakes = 0;
    reader.whenReadable!(() => wakes++);
    const reason = new Error('client left');
    controller.abort(reason);
    expect(wakes).toBe(1);
    expect(() => reader.readNow!()).toThrow(reason);
    await upstream.replies[0]!.socketClosed;
  });
});
