import type { SseEvent } from './sse-event';

/** A synchronous SSE parser: feed it bytes, it calls `onEvent` for every complete event. */
export interface SseParser {
  /**
   * Feeds the next bytes; a chunk may end anywhere, even inside a UTF-8 sequence or a CRLF. Throws
   * {@link SseEventTooLongError} when a line or an event's data grows past `maxEventLength`.
   */
  push(bytes: Uint8Array): void;
  /** Ends the input: a last line without its newline counts, and the pending event is dispatched. */
  end(): void;
}

/** Options of {@link createSseParser} and `createSseDecoder`. */
export interface SseParserOptions {
  /**
   * The most characters (UTF-16 code units) a line still waiting for its end, or an event's data,
   * may hold: past it `push` throws {@link SseEventTooLongError}, so a stream that never ends a
   * line or an event costs bounded memory. Default {@link DEFAULT_MAX_EVENT_LENGTH}.
   */
  maxEventLength?: number;
}

/** 64 Mi characters: far above any real event (a Responses `response.completed` with its images), and a bound. */
export const DEFAULT_MAX_EVENT_LENGTH = 64 * 1024 * 1024;

/** What {@link SseParser.push} throws for a line or an event's data longer than its bound. */
export class SseEventTooLongError extends RangeError {
  constructor(readonly maxEventLength: number) {
    super(`SSE line or event data longer than ${maxEventLength} characters`);
    this.name = 'SseEventTooLongError';
  }
}

// One decoder for every parser, used without `stream: true`: a whole-chunk decode takes the
// runtime's fast path (a streaming decode is several times slower on Node 20), and the few bytes
// of a character split between chunks are carried over by hand. The BOM is stripped by the parser,
// only at the start of its input, as a streaming decoder does.
const UTF8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** How many bytes at the end of `bytes` begin a UTF-8 sequence that the next chunk completes (0 to 3). */
function splitTail(bytes: Uint8Array): number {
  const length = bytes.length;
  for (let back = 1; back <= 3 && back <= length; back++) {
    const byte = bytes[length - back] ?? 0;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: the sequence began further back
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return needed > back ? back : 0;
  }
  return 0;
}

/**
 * Parses the WHATWG `text/event-stream` format. The building block of {@link createSseDecoder},
 * also usable where a stream must be read on the side without a second TransformStream.
 *
 * @example
 * const parser = createSseParser((event) => console.log(event.data));
 * parser.push(new TextEncoder().encode('data: hi\n\n'));
 */
export function createSseParser(onEvent: (event: SseEvent) => void, options: SseParserOptions = {}): SseParser {
  const maxLength = options.maxEventLength ?? DEFAULT_MAX_EVENT_LENGTH;
  // The start of a character the last chunk ended in the middle of.
  let carried: Uint8Array | undefined;
  // Whether text was decoded yet (a BOM is dropped only at the very start).
  let started = false;
  // Pieces of the line still waiting for its end; joined once, when the end arrives.
  let partial: string[] = [];
  // Their total length.
  let partialLength = 0;
  // A CR ended the previous chunk: an LF opening the next one belongs to the same line end.
  let pendingCR = false;
  // The event's data: its one line (most events have one), or its lines joined so far.
  let data: string | undefined;
  let event: string | undefined;
  let id: string | undefined;

  function dispatch(): void {
    if (data !== undefined) {
      const out: SseEvent = { data };
      if (event !== undefined) out.event = event;
      if (id !== undefined) out.id = id;
      onEvent(out);
    }
    data = undefined;
    event = undefined;
    id = undefined;
  }

  /** One line: `text` from `from` to `to` (a line of a chunk is read in place, no copy of it made first). */
  function line(text: string, from: number, to: number): void {
    if (from === to) {
      dispatch();
      return;
    }
    if (text.charCodeAt(from) === 58 /* : */) return;
    // The colon searched for within the line only: an indexOf would read on past a line without
    // one, to the chunk's end, for every such line (quadratic on a chunk of many).
    let colon = from;
    while (colon < to && text.charCodeAt(colon) !== 58 /* : */) colon++;
    const fieldEnd = colon;
    let valueStart = colon === to ? to : colon + 1;
    if (valueStart < to && text.charCodeAt(valueStart) === 32 /* space */) valueStart++;
    // The field's name compared in place: no string made for it.
    const length = fieldEnd - from;
    if (length === 4 && text.startsWith('data', from)) {
      const value = text.slice(valueStart, to);
      data = data === undefined ? value : `${data}\n${value}`;
      if (data.length > maxLength) throw new SseEventTooLongError(maxLength);
    } else if (length === 5 && text.startsWith('event', from)) event = text.slice(valueStart, to);
    else if (length === 2 && text.startsWith('id', from)) {
      const value = text.slice(valueStart, to);
      if (!value.includes('\0')) id = value;
    }
    // `retry` and unknown fields are ignored, as the standard says.
  }

  /**
   * Splits a chunk into lines at CR, LF or CRLF. `indexOf` finds each line end with no match object
   * made per line (a regex's `exec` made one); where the next CR is, is kept until the scan passes
   * it, so a chunk without CR (OpenAI's) is searched for one once, and every chunk stays linear.
   */
  function text(chunk: string): void {
    let start = 0;
    if (pendingCR && chunk.charCodeAt(0) === 10) start = 1;
    pendingCR = false;
    let nextCR = chunk.indexOf('\r', start);
    let nextLF = chunk.indexOf('\n', start);
    for (;;) {
      if (nextCR !== -1 && nextCR < start) nextCR = chunk.indexOf('\r', start);
      if (nextLF !== -1 && nextLF < start) nextLF = chunk.indexOf('\n', start);
      const at = nextCR === -1 ? nextLF : nextLF === -1 ? nextCR : Math.min(nextCR, nextLF);
      if (at === -1) break;
      if (partial.length > 0) {
        partial.push(chunk.slice(start, at));
        const whole = partial.join('');
        partial = [];
        partialLength = 0;
        line(whole, 0, whole.length);
      } else {
        line(chunk, start, at);
      }
      start = at + 1;
      if (chunk.charCodeAt(at) === 13) {
        if (at + 1 === chunk.length) pendingCR = true;
        else if (chunk.charCodeAt(at + 1) === 10) start = at + 2;
      }
    }
    if (start < chunk.length) {
      partialLength += chunk.length - start;
      if (partialLength > maxLength) throw new SseEventTooLongError(maxLength);
      partial.push(chunk.slice(start));
    }
  }

  function decoded(chunk: string): void {
    if (chunk.length === 0) return;
    if (!started) {
      started = true;
      if (chunk.charCodeAt(0) === 0xfeff) {
        if (chunk.length > 1) text(chunk.slice(1));
        return;
      }
    }
    text(chunk);
  }

  return {
    push(bytes) {
      let input = bytes;
      if (carried) {
        input = new Uint8Array(carried.length + bytes.length);
        input.set(carried);
        input.set(bytes, carried.length);
        carried = undefined;
      }
      const tail = splitTail(input);
      if (tail > 0) carried = input.slice(input.length - tail);
      decoded(UTF8.decode(tail > 0 ? input.subarray(0, input.length - tail) : input));
    },
    end() {
      if (carried) decoded(UTF8.decode(carried));
      carried = undefined;
      if (partial.length > 0) {
        const whole = partial.join('');
        partial = [];
        partialLength = 0;
        line(whole, 0, whole.length);
      }
      dispatch();
    },
  };
}
