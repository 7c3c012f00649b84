import type { ErrorRecord } from '@tollgate/core';

/** The event that ends a chat completion stream. */
export const SSE_DONE = 'data: [DONE]\n\n';

/** The keepalive comment, sent after 25 s without an event; clients ignore comments. */
export const SSE_KEEPALIVE = ': keepalive\n\n';

/**
 * One `data:` event holding a JSON text. JSON from `JSON.stringify` holds no raw line breaks, so
 * a single data line is always enough.
 *
 * @example
 * controller.enqueue(encoder.encode(sseData(JSON.stringify(chunk))));
 */
export function sseData(json: string): string {
  return `data: ${json}\n\n`;
}

/** A comment line; line breaks in the text are replaced so it stays one comment. */
export function sseComment(text: string): string {
  return `: ${text.replace(/[\r\n]+/g, ' ')}\n\n`;
}

/** The error event of a stream that failed after it started: its data is the error record. */
export function sseError(record: ErrorRecord): string {
  return sseData(JSON.stringify(record));
}
