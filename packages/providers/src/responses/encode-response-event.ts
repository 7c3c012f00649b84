import type { ResponseStreamEvent } from '@tollgate/core';

/**
 * One Responses stream event as OpenAI sends it: a typed `event:` line naming the event, then its
 * JSON on one `data:` line. `obfuscation` (random padding, as OpenAI adds to delta events unless
 * `stream_options.include_obfuscation` is false) goes on the delta events only.
 *
 * @example
 * controller.enqueue(encoder.encode(events.start().map((event) => encodeResponseEvent(event)).join('')));
 */
export function encodeResponseEvent(event: ResponseStreamEvent, obfuscation?: string): string {
  const padded = obfuscation !== undefined && (event.type === 'response.output_text.delta' || event.type === 'response.function_call_arguments.delta');
  return `event: ${event.type}\ndata: ${JSON.stringify(padded ? { ...event, obfuscation } : event)}\n\n`;
}
