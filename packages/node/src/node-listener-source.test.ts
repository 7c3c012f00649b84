import { connect, type Socket } from 'node:net';
import { BODY_SOURCE, type BodySource, type ByteSink } from '@tollgate/core';
import { afterEach, describe, expect, it } from 'vitest';
import type { FetchHandler, NodeListenerErrorPhase, NodeListenerOptions } from './node-listener';
import { parse, serveListener, sleep, until } from '../test/wire';

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

/** Serves `fetch` through createNodeListener on a loopback port, counting the socket writes of each connection. */
const serve = (fetch: FetchHandler, options?: NodeListenerOptions) => serveListener(fetch, cleanups, options);

/** A raw connection: send bytes, collect what comes back (as latin1 text, or only counted). */
function rawClient(port: number, keepText = true): Promise<{ socket: Socket; text: () => string; bytes: () => number; closed: Promise<void> }> {
  return new Promise((resolve) => {
    let text = '';
    let bytes = 0;
    const socket = connect(port, '127.0.0.1', () => resolve({ socket, text: () => text, bytes: () => bytes, closed }));
    const closed = new Promise<void>((done) => socket.on('close', () => done()));
    socket.on('data', (data: Buffer) => {
      bytes += data.byteLength;
      if (keepText) text += data.toString('latin1');
      else text = (text + data.toString('latin1')).slice(-16); // the tail only: the chunked terminator
    });
    socket.on('error', () => {});
    cleanups.push(() => socket.destroy());
  });
}

const encoder = new TextEncoder();
const bytes = (text: string) => encoder.encode(text);

/** A hand-written BodySource that records what it was asked: the sink it was started with, each resume, each cancel's reason. */
interface Recorder {
  source: BodySource;
  sink: ByteSink | undefined;
  starts: number;
  resumes: number;
  cancels: unknown[];
}

function recording(start: (sink: ByteSink) => void, resume: (sink: ByteSink) => void = () => {}): Recorder {
  const recorder: Recorder = {
    sink: undefined,
    starts: 0,
    resumes: 0,
    cancels: [],
    source: {
      start(sink) {
        recorder.starts++;
        recorder.sink = sink;
        start(sink);
      },
      resume() {
        recorder.resumes++;
        resume(recorder.sink!);
      },
      cancel(reason) {
        recorder.cancels.push(reason);
      },
    },
  };
  return recorder;
}

/** A body stream that offers `source` under BODY_SOURCE, counting the offers and its own pulls (none while a source is taken). */
interface Offer {
  stream: ReadableStream<Uint8Array>;
  offers: number;
  pulls: number;
}

function offering(source: BodySource | undefined, underlying: UnderlyingDefaultSource<Uint8Array> = {}): Offer {
  const offer: Offer = { stream: undefined as unknown as ReadableStream<Uint8Array>, offers: 0, pulls: 0 };
  offer.stream = new ReadableStream<Uint8Array>(
    {
      ...underlying,
      pull(controller) {
        offer.pulls++;
        return underlying.pull?.(controller);
      },
    },
    { highWaterMark: 0 },
  );
  Object.defineProperty(offer.stream, BODY_SOURCE, {
    value: () => {
      offer.offers++;
      return source;
    },
  });
  return offer;
}

const GET_AND_CLOSE = 'GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n';

describe('createNodeListener: a body that writes itself (BODY_SOURCE)', () => {
  it("the source's bytes reach the client; the stream is taken once and never read", async () => {
    const recorder = recording((sink) => {
      expect(sink.write(bytes('data: one\n\n'))).toBe(true);
      setTimeout(() => {
        expect(sink.write(bytes('data: two\n\n'))).toBe(true);
        sink.end();
      }, 20);
    });
    const offer = offering(recorder.source);
    const { url } = await serve(() => new Response(offer.stream, { status: 201, headers: { 'content-type': 'text/event-stream', 'x-a': '1' } }));
    const response = await fetch(url);
    expect(response.status).toBe(201);
    expect(response.headers.get('x-a')).toBe('1');
    expect(await response.text()).toBe('data: one\n\ndata: two\n\n');
    expect(offer.offers).toBe(1);
    expect(offer.pulls).toBe(0);
    expect(offer.stream.locked).toBe(false);
    expect(recorder.starts).toBe(1);
    expect(recorder.resumes).toBe(0);
    // A body that ended is not cancelled.
    expect(recorder.cancels).toEqual([]);
  });

  it('a source that writes two chunks and ends in the same tick: one socket write, with a Content-Length and the whole body', async () => {
    const recorder = recording((sink) => {
      sink.write(bytes('ab'));
      sink.write(bytes('cde'));
      sink.end();
    });
    const served = await serve(() => new Response(offering(recorder.source).stream, { headers: { 'content-type': 'text/plain' } }));
    const client = await rawClient(served.port);
    client.socket.write(GET_AND_CLOSE);
    await client.closed;
    const reply = parse(client.text());
    expect(reply.status).toBe(200);
    expect(reply.headers['content-length']).toBe('5');
    expect(reply.headers['transfer-encoding']).toBeUndefined();
    expect(reply.body).toBe('abcde');
    expect(served.writes).toEqual([1]);
    // Once ended, the sink takes nothing more.
    expect(recorder.sink!.write(bytes('late'))).toBe(false);
  });

  it('a source that writes, then ends later: a chunked reply whose first chunk went out with the head, in one socket write', async () => {
    let finish: (() => void) | undefined;
    const recorder = recording((sink) => {
      sink.write(bytes('data: first\n\n'));
      finish = () => {
        sink.write(bytes('data: last\n\n'));
        sink.end();
      };
    });
    const served = await serve(() => new Response(offering(recorder.source).stream, { headers: { 'content-type': 'text/event-stream' } }));
    const client = await rawClient(served.port);
    client.socket.write(GET_AND_CLOSE);
    await until(() => client.text().includes('data: first'));
    await sleep(30);
    expect(served.writes).toEqual([1]); // the head and the first chunk together
    const head = parse(client.text());
    expect(head.status).toBe(200);
    expect(head.headers['transfer-encoding']).toBe('chunked');
    expect(head.headers['content-length']).toBeUndefined();
    finish?.();
    await client.closed;
    const reply = parse(client.text());
    expect(reply.body).toBe('d\r\ndata: first\n\n\r\nc\r\ndata: last\n\n\r\n0\r\n\r\n');
    expect(recorder.cancels).toEqual([]);
  });

  it('a source that writes nothing at once: its head goes out alone after a short moment, and the bytes follow', async () => {
    let push: ((text: string) => void) | undefined;
    const recorder = recording((sink) => {
      push = (text) => sink.write(bytes(text));
    });
    const { port } = await serve(() => new Response(offering(recorder.source).stream, { headers: { 'x-stream': 'yes' } }));
    const client = await rawClient(port);
    client.socket.write(GET_AND_CLOSE);
    await until(() => client.text().includes('\r\n\r\n'), 1_000);
    expect(parse(client.text()).headers['x-stream']).toBe('yes');
    expect(parse(client.text()).body).toBe('');
    push?.('late');
    await until(() => client.text().endsWith('4\r\nlate\r\n'));
    recorder.sink!.end();
    await client.closed;
    expect(client.text().endsWith('4\r\nlate\r\n0\r\n\r\n')).toBe(true);
  });

  it('back-pressure: a client that stops reading makes write answer false; resume comes only when the client reads again', async () => {
    const chunk = new Uint8Array(256 * 1024).fill(120);
    const total = 160; // 40 MiB
    let written = 0;
    let ended = false;
    const answers: boolean[] = [];
    const pump = (sink: ByteSink) => {
      while (written < total) {
        written++;
        const answer = sink.write(chunk);
        answers.push(answer);
        if (!answer) return;
      }
      ended = true;
      sink.end();
    };
    const recorder = recording(pump, pump);
    const { port } = await serve(() => new Response(offering(recorder.source).stream));
    const client = await rawClient(port, false);
    client.socket.pause();
    client.socket.write(GET_AND_CLOSE);
    await until(() => written > 0);
    await sleep(500);
    const stalled = { written, resumes: recorder.resumes, answers: answers.length };
    await sleep(300);
    // Stalled: nothing written and no resume while the client takes nothing.
    expect({ written, resumes: recorder.resumes, answers: answers.length }).toEqual(stalled);
    expect(answers.at(-1)).toBe(false);
    expect(answers.filter((answer) => !answer)).toHaveLength(stalled.resumes + 1);
    expect(ended).toBe(false);
    // The socket's buffers on both ends (a few MiB on loopback) and the response's own.
    expect(stalled.written * chunk.byteLength).toBeLessThan(32 * 1024 * 1024);
    client.socket.resume();
    await until(() => recorder.resumes > stalled.resumes);
    await client.closed;
    expect(ended).toBe(true);
    expect(written).toBe(total);
    expect(client.bytes()).toBeGreaterThan(total * chunk.byteLength);
    expect(client.text().endsWith('\r\n0\r\n\r\n')).toBe(true);
    expect(recorder.cancels).toEqual([]);
  });

  it('a client that goes away mid-body: cancel is called once with an AbortError; writes after it answer false and nothing throws', async () => {
    const errors: unknown[] = [];
    const recorder = recording((sink) => {
      sink.write(bytes('data: 1\n\n'));
    });
    const { port } = await serve(() => new Response(offering(recorder.source).stream, { headers: { 'content-type': 'text/event-stream' } }), {
      onError: (error) => void errors.push(error),
    });
    const client = await rawClient(port);
    client.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
    await until(() => client.text().includes('data: 1'));
    expect(recorder.cancels).toEqual([]);
    client.socket.destroy();
    await until(() => recorder.cancels.length > 0);
    await sleep(30);
    expect(recorder.cancels).toHaveLength(1);
    expect(recorder.cancels[0]).toBeInstanceOf(DOMException);
    expect((recorder.cancels[0] as DOMException).name).toBe('AbortError');
    const sink = recorder.sink!;
    expect(sink.write(bytes('data: 2\n\n'))).toBe(false);
    expect(() => sink.end()).not.toThrow();
    expect(() => sink.error(new Error('late'))).not.toThrow();
    expect(recorder.cancels).toHaveLength(1);
    expect(recorder.resumes).toBe(0);
    // The client going away is no failure of the response.
    expect(errors).toEqual([]);
  });

  it('a client that goes away while the source waits for resume: cancel is called once with an AbortError', async () => {
    const chunk = new Uint8Array(256 * 1024).fill(120);
    let paused = false;
    const pump = (sink: ByteSink) => {
      paused = false;
      while (sink.write(chunk));
      paused = true;
    };
    const recorder = recording(pump, pump);
    const { port } = await serve(() => new Response(offering(recorder.source).stream));
    const client = await rawClient(port, false);
    client.socket.pause();
    client.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
    await until(() => paused);
    await sleep(300);
    expect(paused).toBe(true);
    expect(recorder.cancels).toEqual([]);
    client.socket.destroy();
    await until(() => recorder.cancels.length > 0);
    await sleep(30);
    expect(recorder.cancels).toHaveLength(1);
    expect((recorder.cancels[0] as DOMException).name).toBe('AbortError');
    expect(recorder.sink!.write(chunk)).toBe(false);
  });

  it('stallTimeoutMs: a client that takes nothing for that long has its connection closed and the source cancelled', async () => {
    const chunk = new Uint8Array(256 * 1024).fill(120);
    const pump = (sink: ByteSink) => {
      while (sink.write(chunk));
    };
    const recorder = recording(pump, pump);
    const { port } = await serve(() => new Response(offering(recorder.source).stream), { stallTimeoutMs: 300 });
    const client = await rawClient(port, false);
    client.socket.pause();
    client.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
    await until(() => recorder.cancels.length > 0);
    expect(recorder.cancels).toHaveLength(1);
    expect((recorder.cancels[0] as DOMException).name).toBe('AbortError');
    // What the socket buffered is still there to read; then the connection ends, with no chunked terminator.
    client.socket.resume();
    await client.closed;
    expect(client.text().endsWith('\r\n0\r\n\r\n')).toBe(false);
  });

  // A source may write once more after `write` answered false (the gateway's metered stream sends its
  // keepalive comment while paused, packages/gateway/src/metered-stream.ts): each such write arms
  // one more wait for 'drain' with its own stall timer (`awaitDrain` in
  // packages/node/src/node-listener.ts), and 'drain' clears only the last one. The first is left
  // running and cuts the connection of a client that is reading again.
  it('stallTimeoutMs: a write while waiting for resume does not leave a stall timer that cuts a client reading again', async () => {
    const chunk = new Uint8Array(256 * 1024).fill(120);
    /** The test let the client read again: from then on the source writes small chunks for a while, then ends. */
    let reading = false;
    let slow = false;
    let ended = false;
    const pump = (sink: ByteSink) => {
      if (!reading) {
        while (sink.write(chunk));
        return;
      }
      if (slow) return;
      slow = true;
      let count = 0;
      const timer = setInterval(() => {
        sink.write(bytes('data: more\n\n'));
        if (++count < 40) return;
        clearInterval(timer);
        ended = true;
        sink.end();
      }, 50);
      cleanups.push(() => clearInterval(timer));
    };
    const recorder = recording(pump, pump);
    const { port } = await serve(() => new Response(offering(recorder.source).stream), { stallTimeoutMs: 1_500 });
    const client = await rawClient(port, false);
    client.socket.pause();
    client.socket.write(GET_AND_CLOSE);
    // Stalled: the socket is full and no resume came for a while.
    await until(() => recorder.starts === 1);
    let resumes = -1;
    await until(() => {
      const still = recorder.resumes === resumes;
      resumes = recorder.resumes;
      return still;
    });
    await sleep(250);
    expect(recorder.resumes).toBe(resumes);
    // A keepalive while paused: answered false, the socket is still full.
    expect(recorder.sink!.write(bytes(': keepalive\n\n'))).toBe(false);
    await sleep(100);
    reading = true;
    client.socket.resume();
    await client.closed;
    expect(ended).toBe(true);
    expect(recorder.cancels).toEqual([]);
    expect(client.text().endsWith('\r\n0\r\n\r\n')).toBe(true);
  });

  it('error() before anything was sent is a 500 told to onError with phase response, and the source is cancelled with its reason', async () => {
    const errors: [unknown, NodeListenerErrorPhase][] = [];
    const reasons = { '/at-once': new Error('at once'), '/held': new Error('held') };
    const recorders: Recorder[] = [];
    const { url } = await serve(
      (request) => {
        const path = new URL(request.url).pathname as keyof typeof reasons;
        const recorder = recording((sink) => {
          // '/held': a chunk held for the head, which never goes out.
          if (path === '/held') expect(sink.write(bytes('secret part'))).toBe(true);
          sink.error(reasons[path]);
        });
        recorders.push(recorder);
        return new Response(offering(recorder.source).stream, { headers: { 'x-a': '1' } });
      },
      { onError: (error, phase) => void errors.push([error, phase]) },
    );
    for (const path of ['/at-once', '/held'] as const) {
      const response = await fetch(`${url}${path}`);
      expect(response.status).toBe(500);
      expect(response.headers.get('x-a')).toBeNull();
      expect(response.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(await response.text()).toBe('Internal Server Error');
    }
    expect(errors).toEqual([
      [reasons['/at-once'], 'response'],
      [reasons['/held'], 'response'],
    ]);
    expect(recorders.map((recorder) => recorder.cancels)).toEqual([[reasons['/at-once']], [reasons['/held']]]);
    // The response is over: the sink takes nothing more.
    expect(recorders[0]!.sink!.write(bytes('x'))).toBe(false);
  });

  it('error() after bytes went out cuts the connection: the client has those bytes and no end of the body', async () => {
    const errors: [unknown, NodeListenerErrorPhase][] = [];
    const recorders: Recorder[] = [];
    const reasons: Error[] = [];
    const { port, url } = await serve(
      () => {
        const reason = new Error(`later ${reasons.length}`);
        reasons.push(reason);
        const recorder = recording((sink) => {
          sink.write(bytes('data: 1\n\n'));
          setTimeout(() => sink.error(reason), 30);
        });
        recorders.push(recorder);
        return new Response(offering(recorder.source).stream, { headers: { 'content-type': 'text/event-stream' } });
      },
      { onError: (error, phase) => void errors.push([error, phase]) },
    );
    const client = await rawClient(port);
    client.socket.write('GET / HTTP/1.1\r\nHost: h\r\n\r\n');
    await client.closed;
    const reply = parse(client.text());
    expect(reply.status).toBe(200);
    expect(reply.body).toBe('9\r\ndata: 1\n\n\r\n'); // no chunked terminator: the reply was cut
    expect(errors).toEqual([[reasons[0], 'response']]);
    // Cancelled once, with the failure: not again when the cut connection closes.
    expect(recorders[0]!.cancels).toEqual([reasons[0]]);
    // A fetch client sees the body fail after its first bytes.
    const again = await fetch(url);
    expect(again.status).toBe(200);
    const reader = again.body!.getReader();
    const first = await reader.read();
    expect(Buffer.from(first.value!).toString()).toBe('data: 1\n\n');
    await expect(reader.read()).rejects.toThrow('terminated');
    expect(errors).toEqual([
      [reasons[0], 'response'],
      [reasons[1], 'response'],
    ]);
  });

  it('a head node:http refuses is a 500 told to onError; the source is cancelled and its held bytes never go out', async () => {
    const errors: [unknown, NodeListenerErrorPhase][] = [];
    const recorder = recording((sink) => {
      expect(sink.write(bytes('secret part'))).toBe(true);
    });
    const { url } = await serve(() => new Response(offering(recorder.source).stream, { headers: { 'x-request-id': 'req_1', 'x-bad': 'a\u0001b' } }), {
      onError: (error, phase) => void errors.push([error, phase]),
    });
    const response = await fetch(url);
    expect(response.status).toBe(500);
    expect(response.headers.get('x-request-id')).toBeNull();
    expect(await response.text()).toBe('Internal Server Error');
    expect(errors).toHaveLength(1);
    expect(errors[0]![1]).toBe('response');
    expect((errors[0]![0] as NodeJS.ErrnoException).code).toBe('ERR_INVALID_CHAR');
    expect(recorder.cancels).toEqual([errors[0]![0]]);
    expect(recorder.sink!.write(bytes('more'))).toBe(false);
  });

  it('a body whose BODY_SOURCE method answers undefined (the stream was read already) is read through its stream', async () => {
    const offer = offering(undefined, {
      start(controller) {
        controller.enqueue(bytes('from '));
        controller.enqueue(bytes('the stream'));
        controller.close();
      },
    });
    const { url } = await serve(() => new Response(offer.stream));
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('from the stream');
    expect(offer.offers).toBe(1);
    expect(offer.stream.locked).toBe(true);
  });
});
