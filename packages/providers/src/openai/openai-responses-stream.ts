import { createSseParser, type SseEvent } from '@tollgate/sse';
import { abortReason } from '../http/post-json';
import { ProviderError } from '../provider';
import { mapOpenAIError } from './map-openai-error';
import type { UpstreamCall } from './post-openai';

/** One event of an upstream Responses stream: its type and its JSON object. */
export interface ResponsesWireEvent {
  /** The event's `type` (the same as its `event:` line). */
  type: string;
  /** The event's JSON object, as the upstream sent it. */
  data: Record<string, unknown>;
}

/** The events that end a Responses stream. */
const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The events of an upstream that speaks the Responses API natively, for pass-through: each parsed
 * once, ending with the upstream's `response.completed`, `response.incomplete` or
 * `response.failed`. An `error` event maps like an error body; a body that ends before a terminal
 * event, drops, or holds an event that is not a JSON object with a string `type` errors with
 * `upstream_error` (accepted). Pull-based; cancelling aborts the upstream fetch.
 */
export function openaiResponsesStream(call: UpstreamCall, signal: AbortSignal | undefined): ReadableStream<ResponsesWireEvent> {
  const body = call.response.body;
  if (!body) throw new ProviderError('upstream_error', { accepted: true, status: call.response.status });
  const reader = body.getReader();
  const events: SseEvent[] = [];
  const parser = createSseParser((event) => events.push(event));
  let next = 0;
  let bodyDone = false;
  let over = false;
  const end = async (abort: boolean) => {
    if (over) return;
    over = true;
    call.unlink();
    if (abort) call.abort();
    await reader.cancel().catch(() => undefined);
  };
  const broken = () => new ProviderError('upstream_error', { accepted: true, status: 200 });

  async function nextEvent(): Promise<SseEvent | undefined> {
    while (next === events.length) {
      events.length = 0;
      next = 0;
      if (bodyDone) return undefined;
      const read = await reader.read();
      if (read.done) {
        bodyDone = true;
        parser.end();
      } else parser.push(read.value);
    }
    return events[next++];
  }

  return new ReadableStream<ResponsesWireEvent>(
    {
      async pull(controller) {
        for (;;) {
          let event: SseEvent | undefined;
          try {
            event = await nextEvent();
          } catch {
            await end(true);
            return controller.error(signal?.aborted ? abortReason(signal) : broken());
          }
          if (event === undefined) {
            await end(false);
            return controller.error(broken());
          }
          if (event.data.trim() === '') continue;
          let parsed: unknown;
          try {
            parsed = JSON.parse(event.data);
          } catch {
            parsed = undefined;
          }
          if (!isObject(parsed) || typeof parsed.type !== 'string') {
            await end(true);
            return controller.error(broken());
          }
          if (parsed.type === 'error') {
            await end(true);
            return controller.error(mapOpenAIError(undefined, { error: parsed }));
          }
          controller.enqueue({ type: parsed.type, data: parsed });
          if (TERMINAL.has(parsed.type)) {
            await end(false);
            return controller.close();
          }
          return;
        }
      },
      async cancel() {
        await end(true);
      },
    },
    { highWaterMark: 0 },
  );
}
