import { describe, expect, it } from 'vitest';
import { createSseDecoder } from './create-sse-decoder';
import type { SseEvent } from './sse-event';

/** This process's CPU time in ms: unlike wall time, it does not grow while other processes share the cores. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1_000;
}

const encoder = new TextEncoder();

async function decode(chunks: Uint8Array[]): Promise<SseEvent[]> {
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  const out: SseEvent[] = [];
  const reader = stream.pipeThrough(createSseDecoder()).getReader();
  for (let read = await reader.read(); !read.done; read = await reader.read()) out.push(read.value);
  return out;
}

const SAMPLE =
  ': opening comment\r\n' +
  'data: {"content":"héllo wörld 🌍"}\r\n\r\n' +
  'event: update\nid: 7\ndata:first\ndata: second\n\n' +
  'data: crlf one\r\ndata: crlf two\r\n\r\n' +
  'data: 日本語\r' +
  'data:  two spaces\r\r' +
  'event: empty\n\n' +
  'data\n\n' +
  'data: last without newline';

const EXPECTED: SseEvent[] = [
  { data: '{"content":"héllo wörld 🌍"}' },
  { data: 'first\nsecond', event: 'update', id: '7' },
  { data: 'crlf one\ncrlf two' },
  { data: '日本語\n two spaces' },
  { data: '' },
  { data: 'last without newline' },
];

describe('createSseDecoder', () => {
  it('decodes a whole stream', async () => {
    expect(await decode([encoder.encode(SAMPLE)])).toEqual(EXPECTED);
  });

  it('decodes the same events when split at every byte offset', async () => {
    const bytes = encoder.encode(SAMPLE);
    for (let at = 0; at <= bytes.length; at++) {
      const events = await decode([bytes.slice(0, at), bytes.slice(at)]);
      expect(events, `split at ${at}`).toEqual(EXPECTED);
    }
  });

  it('decodes the same events when split at every pair of offsets', async () => {
    const bytes = encoder.encode('data: é🌍\r\n\r\ndata: b\r\rdata: c\n\n');
    const expected = [{ data: 'é🌍' }, { data: 'b' }, { data: 'c' }];
    for (let a = 0; a <= bytes.length; a++) {
      for (let b = a; b <= bytes.length; b++) {
        const events = await decode([bytes.slice(0, a), bytes.slice(a, b), bytes.slice(b)]);
        expect(events, `split at ${a},${b}`).toEqual(expected);
      }
    }
  });

  it('decodes a stream fed one byte at a time', async () => {
    const bytes = encoder.encode(SAMPLE);
    const chunks = Array.from(bytes, (byte) => Uint8Array.of(byte));
    expect(await decode(chunks)).toEqual(EXPECTED);
  });

  it('treats a CR at a chunk end and an LF at the next chunk start as one line end', async () => {
    const events = await decode([encoder.encode('data: a\r'), encoder.encode('\ndata: b\r'), encoder.encode('\n\r\n')]);
    expect(events).toEqual([{ data: 'a\nb' }]);
  });

  it('skips comments and events without data lines, and does not carry id or event over', async () => {
    const events = await decode([encoder.encode(': keepalive\n\nid: 1\nevent: x\n\n:c\ndata: y\n\nretry: 5\nfoo: bar\ndata: z\n\n')]);
    expect(events).toEqual([{ data: 'y' }, { data: 'z' }]);
  });

  it('ignores an id holding NUL and keeps a colon inside the value', async () => {
    const events = await decode([encoder.encode('id: a\0b\ndata: x: y\n\n')]);
    expect(events).toEqual([{ data: 'x: y' }]);
  });

  it('dispatches nothing for an empty body and strips a leading BOM', async () => {
    expect(await decode([])).toEqual([]);
    expect(await decode([Uint8Array.of(0xef, 0xbb), Uint8Array.of(0xbf), encoder.encode('data: a\n\n')])).toEqual([{ data: 'a' }]);
  });

  it('stays linear on a long line split into many chunks', async () => {
    const piece = encoder.encode('x'.repeat(1024));
    const chunks = [encoder.encode('data: '), ...Array.from({ length: 4096 }, () => piece), encoder.encode('\n\n')];
    const started = cpuMs();
    const events = await decode(chunks);
    expect(events).toHaveLength(1);
    expect(events[0]!.data.length).toBe(4 * 1024 * 1024);
    // Quadratic concatenation of 4 MiB in 4,096 pieces takes far longer than this on any machine.
    expect(cpuMs() - started).toBeLessThan(2000);
  });
});
