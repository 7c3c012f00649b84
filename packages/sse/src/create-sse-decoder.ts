import type { SseEvent } from './sse-event';
import { createSseParser, type SseParserOptions } from './create-sse-parser';

/**
 * A TransformStream from the bytes of a `text/event-stream` body to its events. Chunks may be split
 * anywhere; CRLF, CR and LF all end lines; comments are skipped; an event without data lines is not
 * dispatched; a last event without its closing blank line is dispatched when the input ends. A line
 * or an event's data longer than `options.maxEventLength` errors the stream (`SseEventTooLongError`).
 *
 * @example
 * for await (const event of response.body!.pipeThrough(createSseDecoder())) console.log(event.data);
 */
export function createSseDecoder(options: SseParserOptions = {}): TransformStream<Uint8Array, SseEvent> {
  let parser: ReturnType<typeof createSseParser>;
  return new TransformStream<Uint8Array, SseEvent>({
    start(controller) {
      parser = createSseParser((event) => controller.enqueue(event), options);
    },
    transform(chunk) {
      parser.push(chunk);
    },
    flush() {
      parser.end();
    },
  });
}
