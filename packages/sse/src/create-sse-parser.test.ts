import { describe, expect, it } from 'vitest';
import { createSseParser, DEFAULT_MAX_EVENT_LENGTH, SseEventTooLongError } from './create-sse-parser';
import type { SseEvent } from './sse-event';

/** The events of `chunks` fed one push each. */
function parse(chunks: Uint8Array[]): SseEvent[] {
  const events: SseEvent[] = [];
  const parser = createSseParser((event) => events.push(event));
  for (const chunk of chunks) parser.push(chunk);
  parser.end();
  return events;
}

/** A deterministic pseudo-random generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const encoder = new TextEncoder();
// Valid characters of every length, and bytes a streaming decoder replaces: a stray continuation,
// a sequence cut short, an overlong lead, a surrogate, 0xff.
const PIECES = ['data: ', 'a', '\n', '\r\n', '\n\n', 'é', '日', '🌍', ':c\n', 'event: e\n'].map((text) => encoder.encode(text));
const INVALID = [[0x80], [0xe2, 0x82], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xff], [0xf0, 0x9f, 0x8c]].map((bytes) => Uint8Array.from(bytes));

describe('createSseParser', () => {
  it('bounds a line that never ends and an event whose data lines never meet a blank line', () => {
    const events: SseEvent[] = [];
    // A line of exactly the bound across chunks passes; one character more throws.
    const exact = createSseParser((event) => events.push(event), { maxEventLength: 16 });
    exact.push(encoder.encode('data: 0123'));
    exact.push(encoder.encode('456789\n\n'));
    expect(events).toEqual([{ data: '0123456789' }]);
    const endless = createSseParser(() => undefined, { maxEventLength: 16 });
    endless.push(encoder.encode('data: 0123'));
    expect(() => endless.push(encoder.encode('4567890'))).toThrow(SseEventTooLongError);
    // Data lines: 8 + 1 + 7 = 16 characters pass, one more throws.
    const joined = createSseParser((event) => events.push(event), { maxEventLength: 16 });
    joined.push(encoder.encode('data: 01234567\ndata: 0123456\n\n'));
    expect(events.at(-1)).toEqual({ data: '01234567\n0123456' });
    expect(() => joined.push(encoder.encode('data: 01234567\ndata: 01234567\n'))).toThrow(new SseEventTooLongError(16));
    // Complete events of any number stay under the bound: it is per line and per event.
    const many = createSseParser(() => undefined, { maxEventLength: 16 });
    for (let index = 0; index < 100; index++) many.push(encoder.encode('data: 0123456789\n\n'));
    expect(DEFAULT_MAX_EVENT_LENGTH).toBe(64 * 1024 * 1024);
  });

  it('decodes UTF-8 split anywhere, invalid bytes and a leading BOM as one streaming decoder does', () => {
    const next = random(17);
    for (let round = 0; round < 300; round++) {
      const parts: number[] = round % 3 === 0 ? [0xef, 0xbb, 0xbf] : [];
      for (let count = 0; count < 40; count++) {
        const pool = next() < 0.15 ? INVALID : PIECES;
        parts.push(...(pool[Math.floor(next() * pool.length)] ?? []));
      }
      const bytes = Uint8Array.from(parts);
      // The reference: the text a streaming decoder makes of the whole input, as valid UTF-8.
      const expected = parse([encoder.encode(new TextDecoder().decode(bytes))]);
      const chunks: Uint8Array[] = [];
      for (let start = 0; start < bytes.length; ) {
        const end = Math.min(bytes.length, start + Math.floor(next() * 6));
        chunks.push(bytes.slice(start, end));
        start = end;
      }
      expect(parse(chunks)).toEqual(expected);
      expect(parse([bytes])).toEqual(expected);
    }
  });

  it('keeps a BOM that is not at the start of the input', () => {
    expect(parse([encoder.encode('data: a'), Uint8Array.from([0xef, 0xbb]), Uint8Array.from([0xbf]), encoder.encode('\n\n')])).toEqual([{ data: 'a\ufeff' }]);
    expect(parse([Uint8Array.from([0xef]), Uint8Array.from([0xbb, 0xbf]), encoder.encode('data: b\n\n')])).toEqual([{ data: 'b' }]);
  });

  it('reads a field by its whole name only, and a colon of a later line is not the line’s own', () => {
    const text =
      'dat: no\ndatas: no\ndata\nevent\nid\n\n' + // names that begin or extend the known ones are unknown fields; a bare name has an empty value
      'eventx: no\nevent:e\ni: no\nids: no\nid:7\nretry: 10\ndata:x\n\n' +
      'data\r\nevent: later:colon\r\n\r\n';
    const expected: SseEvent[] = [
      { data: '', event: '', id: '' },
      { data: 'x', event: 'e', id: '7' },
      { data: '', event: 'later:colon' },
    ];
    expect(parse([encoder.encode(text)])).toEqual(expected);
    // The same, a character at a time.
    expect(parse([...text].map((character) => encoder.encode(character)))).toEqual(expected);
  });

  it('stays linear on a chunk of many lines without a colon', () => {
    const cpuMs = () => {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1_000;
    };
    // 1,500,000 lines of one field name each, in one chunk: a colon searched past each line's end
    // would read on to the chunk's end for every line, some 2 × 10^12 characters.
    const chunk = encoder.encode(`${'x\n'.repeat(1_500_000)}data: last\n\n`);
    const started = cpuMs();
    expect(parse([chunk])).toEqual([{ data: 'last' }]);
    expect(cpuMs() - started).toBeLessThan(2000);
  });
});
