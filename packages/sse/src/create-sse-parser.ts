import type { SseEvent } from './sse-event';

/** A synchronous SSE parser: feed it bytes, it calls `onEvent` for every complete event. */
export interface SseParser {
  /** Feeds the next bytes; a chunk may end anywhere, even inside a UTF-8 sequence or a CRLF. */
  push(bytes: Uint8Array): void;
  /** Ends the input: a last line without its newline counts, and the pending event is dispatched. */
  end(): void;
}

// Finds the next CR or LF; a regex with lastIndex scans each chunk once, so long lines stay linear.
const LINE_END = /[\r\n]/g;

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
export function createSseParser(onEvent: (event: SseEvent) => void): SseParser {
  // The start of a character the last chunk ended in the middle of.
  let carried: Uint8Array | undefined;
  // Whether text was decoded yet (a BOM is dropped only at the very start).
  let started = false;
  // Pieces of the line still waiting for its end; joined once, when the end arrives.
  let partial: string[] = [];
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

  function line(text: string): void {
    if (text.length === 0) {
      dispatch();
      return;
    }
    if (text.charCodeAt(0) === 58 /* : */) return;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.charCodeAt(0) === 32 /* space */) value = value.slice(1);
    if (field === 'data') data = data === undefined ? value : `${data}\n${value}`;
    else if (field === 'event') event = value;
    else if (field === 'id' && !value.includes('\0')) id = value;
    // `retry` and unknown fields are ignored, as the standard says.
  }

  function text(chunk: string): void {
    let start = 0;
    if (pendingCR && chunk.charCodeAt(0) === 10) start = 1;
    pendingCR = false;
    LINE_END.lastIndex = start;
    for (let match = LINE_END.exec(chunk); match !== null; match = LINE_END.exec(chunk)) {
      const at = match.index;
      const piece = chunk.slice(start, at);
      if (partial.length > 0) {
        partial.push(piece);
        const whole = partial.join('');
        partial = [];
        line(whole);
      } else {
        line(piece);
      }
      start = at + 1;
      if (chunk.charCodeAt(at) === 13) {
        if (at + 1 === chunk.length) pendingCR = true;
        else if (chunk.charCodeAt(at + 1) === 10) start = at + 2;
      }
      LINE_END.lastIndex = start;
    }
    if (start < chunk.length) partial.push(chunk.slice(start));
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
        line(whole);
      }
      dispatch();
    },
  };
}
