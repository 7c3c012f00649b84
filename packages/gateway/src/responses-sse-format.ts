import { type ChatCompletionChunk, errorRecord, type ResponseStreamEvent, type Usage } from '@tollgate/core';
import { createResponseEvents, encodeResponseEvent, type ResponseMeta, type ResponsesWireEvent } from '@tollgate/providers';
import { SSE_KEEPALIVE } from '@tollgate/sse';
import type { StreamFormat } from './metered-stream';
import { nativeResponsesEvents } from './native-responses-events';
import { readUsage } from './read-usage';

/** What a Responses stream is made from: a chat upstream's chunks, or a native upstream's events. */
export type ResponsesUpstreamItem = ChatCompletionChunk | ResponsesWireEvent;

/** Options of {@link responsesSseFormat}. */
export interface ResponsesSseFormatOptions {
  /** The response id, time, echoed request and output limit. */
  meta: ResponseMeta;
  /** Padding for the delta events' `obfuscation` field; absent when the client turned it off. */
  obfuscate?: () => string;
  /**
   * The usage the request is billed for, shown in the last event: the provider's when it reported
   * one, else the estimate of what was delivered; undefined when a failed stream is not charged.
   */
  billed(reported: Usage | undefined, delivered: string, failed: boolean): Usage | undefined;
  /**
   * What the request is charged, added as `cost_micros` to the usage of a native upstream's
   * terminal event (a chat upstream's events get it from `billed`); the settle must charge the same.
   */
  cost?: (reported: Usage | undefined, delivered: string) => number;
}

/** The Responses SSE rewrite of an upstream stream, and what it delivered (for settlement). */
export interface ResponsesSseFormat extends StreamFormat<ResponsesUpstreamItem> {
  /** Usage as the upstream reported it, when it did (well-formed only). */
  readonly usage: Usage | undefined;
  /** Text and tool-call arguments the client was sent (for the early-stop charge). */
  readonly delivered: string;
}

const encoder = new TextEncoder();
const KEEPALIVE = encoder.encode(SSE_KEEPALIVE);

const isNative = (item: ResponsesUpstreamItem): item is ResponsesWireEvent => 'data' in item;

/**
 * The client's Responses events (`event:` + `data:` lines). From a chat upstream they are made by
 * `packages/providers/src/responses/create-response-events.ts`: `response.created` and
 * `response.in_progress` with the first chunk, then the item events, `response.completed` with the
 * billed usage when the upstream ends, or `response.failed` with the error when it fails after the
 * first event. A native upstream's events pass through with only `model` rewritten
 * (`native-responses-events.ts`). There is no `[DONE]`: OpenAI sends none on this API.
 */
export function responsesSseFormat(options: ResponsesSseFormatOptions): ResponsesSseFormat {
  const events = createResponseEvents(options.meta);
  const native = nativeResponsesEvents(options.meta.echo.model, options.cost);
  let usage: Usage | undefined;
  let started = false;
  let passThrough = false;
  const encode = (list: ResponseStreamEvent[]): Uint8Array => {
    const head = started ? [] : events.start();
    started = true;
    let text = '';
    for (const event of [...head, ...list]) text += encodeResponseEvent(event, options.obfuscate?.());
    return encoder.encode(text);
  };
  const delivered = () => (passThrough ? native.delivered : events.delivered);
  // `usage` and `delivered` are fields, not getters (see chatSseFormat, chat-sse-format.ts), brought
  // up to date after every item, which is what changes them.
  const out: { -readonly [K in keyof ResponsesSseFormat]: ResponsesSseFormat[K] } = {
    keepalive: KEEPALIVE,
    usage: undefined,
    delivered: '',
    item(item) {
      try {
        if (isNative(item)) {
          passThrough = true;
          started = true;
          return encoder.encode(native.item(item));
        }
        // The chunk's events first: a chunk they refuse (it throws) was not delivered, nor its usage.
        const list = events.chunk(item);
        if (item.usage) usage = readUsage(item.usage) ?? usage;
        if (list.length === 0 && started) return undefined;
        return encode(list);
      } finally {
        out.usage = passThrough ? native.usage : usage;
        out.delivered = delivered();
      }
    },
    // A native upstream's own terminal event ended its stream: nothing to add.
    done: () => (passThrough ? undefined : encode(events.finish(options.billed(usage, events.delivered, false)))),
    errorEvent(code) {
      const error = { code, message: errorRecord(code).error.message };
      const billed = options.billed(passThrough ? native.usage : usage, delivered(), true);
      if (passThrough) return encoder.encode(native.fail(error, billed));
      return encode(events.fail(error, billed));
    },
  };
  return out;
}
