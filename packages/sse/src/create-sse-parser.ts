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

/**
 * Parses the WHATWG `text/event-stream` format. The building block of {@link createSseDecoder},
 * also usable where a stream must be read on the side without a second TransformStream.
 *
 * @example
 * const parser = createSseParser((event) => console.log(event.data));
 * parser.push(new TextEncoder().encode('data: hi\n\n'));
 */
export function createSseParser(onEvent: (event: SseEvent) => void): SseParser {
  const decoder = new TextDecoder('utf-8');
  // Pieces of the line still waiting for its end; joined once, when the end arrives.
  let partial: string[] = [];
  // A CR ended the previous chunk: an LF opening the next one belongs to the same line end.
  let pendingCR = false;
  let data: string[] = [];
  let event: string | undefined;
  let id: string | undefined;

  function dispatch(): void {
    if (data.length > 0) {
      const out: SseEvent = { data: data.join('\n') };
      if (event !== undefined) out.event = event;
      if (id !== undefined) out.id = id;
      onEvent(out);
    }
    data = [];
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
    if (field === 'data') data.push(value);
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

  return {
    push(bytes) {
      const chunk = decoder.decode(bytes, { stream: true });
      if (chunk.length > 0) text(chunk);
    },
    end() {
      const rest = decoder.decode();
      if (rest.length > 0) text(rest);
      if (partial.length > 0) {
        const whole = partial.join('');
        partial = [];
        line(whole);
      }
      dispatch();
    },
  };
}
