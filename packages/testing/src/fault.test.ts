import { describe, expect, it } from 'vitest';
import { connectionRefused, createFaultQueue, sleep } from './fault';
import { faultStream } from './fault-stream';

const decoder = new TextDecoder();

async function readAll(stream: ReadableStream<Uint8Array>): Promise<string[]> {
  const out: string[] = [];
  const reader = stream.getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) out.push(decoder.decode(read.value));
  return out;
}

describe('createFaultQueue', () => {
  it('hands out a list one per request, then nothing; set() replaces it', () => {
    const queue = createFaultQueue([{ kind: 'refuse' }, { kind: 'cut', afterChunks: 1 }]);
    expect(queue.next()).toEqual({ kind: 'refuse' });
    expect(queue.next()).toEqual({ kind: 'cut', afterChunks: 1 });
    expect(queue.next()).toBeUndefined();
    let calls = 0;
    queue.set(() => (++calls % 2 === 0 ? { kind: 'refuse' } : undefined));
    expect([queue.next(), queue.next(), queue.next()]).toEqual([undefined, { kind: 'refuse' }, undefined]);
    queue.set([{ kind: 'truncate', afterChunks: 0 }]);
    expect([queue.next(), queue.next()]).toEqual([{ kind: 'truncate', afterChunks: 0 }, undefined]);
  });
});

describe('connectionRefused', () => {
  it("looks like undici's connect failure", () => {
    const error = connectionRefused('http://127.0.0.1:9/v1');
    expect(error.message).toBe('fetch failed');
    expect(error.cause).toMatchObject({ code: 'ECONNREFUSED', port: 9, message: 'connect ECONNREFUSED 127.0.0.1:9' });
  });
});

describe('faultStream', () => {
  it('sends every event, then closes once', async () => {
    let closed = 0;
    expect(await readAll(faultStream(['a', 'b'], { malformed: 'x', onClose: () => closed++ }))).toEqual(['a', 'b']);
    expect(closed).toBe(1);
  });

  it('sends only what the reader pulls (backpressure)', async () => {
    const stream = faultStream(['a', 'b', 'c'], { malformed: 'x' });
    const reader = stream.getReader();
    expect(decoder.decode((await reader.read()).value)).toBe('a');
    expect(stream.locked).toBe(true);
    await reader.cancel();
  });

  it('replaces event N when malformed, and cuts with TypeError terminated', async () => {
    expect(await readAll(faultStream(['a', 'b', 'c'], { malformed: 'x', fault: { kind: 'malformed', afterChunks: 1 } }))).toEqual(['a', 'x', 'c']);
    let closed = 0;
    const error = await readAll(faultStream(['a', 'b'], { malformed: 'x', fault: { kind: 'cut', afterChunks: 0 }, onClose: () => closed++ })).catch(
      (e: unknown) => e,
    );
    expect((error as TypeError).message).toBe('terminated');
    expect(closed).toBe(1);
  });

  it('sends the error event and ends', async () => {
    const stream = faultStream(['a', 'b'], {
      malformed: 'x',
      fault: { kind: 'error-event', afterChunks: 1, code: 'boom' },
      errorEvent: (fault) => `err:${fault.code}`,
    });
    expect(await readAll(stream)).toEqual(['a', 'err:boom']);
  });

  it('floods spaces after event N, 1 MiB a read, until the reader cancels', async () => {
    let closed = 0;
    const reader = faultStream(['a', 'b'], { malformed: 'x', fault: { kind: 'flood', afterChunks: 1 }, onClose: () => closed++ }).getReader();
    expect(decoder.decode((await reader.read()).value)).toBe('a');
    for (let read = 0; read < 3; read++) {
      const { value } = await reader.read();
      expect(value?.byteLength).toBe(1 << 20);
      expect(value?.every((byte) => byte === 0x20)).toBe(true);
    }
    expect(closed).toBe(0);
    await reader.cancel();
    expect(closed).toBe(1);
  });

  it('drip on real timers ends when the stream is cancelled', async () => {
    let closed = 0;
    const stream = faultStream(['a'], { malformed: 'x', fault: { kind: 'drip', delayMs: 60_000 }, onClose: () => closed++ });
    const reader = stream.getReader();
    const read = reader.read();
    await reader.cancel();
    expect(await read).toEqual({ done: true, value: undefined });
    expect(closed).toBe(1);
  });
});

describe('sleep', () => {
  it('rejects with the abort reason', async () => {
    const controller = new AbortController();
    const waiting = sleep(60_000, controller.signal);
    controller.abort(new Error('gone'));
    await expect(waiting).rejects.toThrow('gone');
    await expect(sleep(1)).resolves.toBeUndefined();
  });
});
