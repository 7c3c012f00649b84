import type { Usage } from '@tollgate/core';
import { type ResponsesWireEvent, toResponseUsage } from '@tollgate/providers';
import { readUsage } from './read-usage';

/** The events that end a Responses stream, and carry its usage. */
const TERMINAL = new Set(['response.completed', 'response.incomplete', 'response.failed']);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Usage of a native Responses reply in the chat form billing reads (only well-formed counts; see
 * `packages/gateway/src/read-usage.ts`), or undefined.
 */
export function nativeResponsesUsage(usage: unknown): Usage | undefined {
  if (!isObject(usage)) return undefined;
  const input = isObject(usage.input_tokens_details) ? usage.input_tokens_details : {};
  const output = isObject(usage.output_tokens_details) ? usage.output_tokens_details : {};
  return readUsage({
    prompt_tokens: usage.input_tokens,
    completion_tokens: usage.output_tokens,
    prompt_tokens_details: { cached_tokens: input.cached_tokens },
    completion_tokens_details: { reasoning_tokens: output.reasoning_tokens },
  });
}

/**
 * The usage of a native response that failed upstream (`status: "failed"`) without reporting any
 * and without delivering anything: nothing, as a chat call that failed before delivering is
 * charged nothing (docs/http-api.md, Billing).
 */
export const FAILED_UNDELIVERED: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };

/** The pass-through of a native Responses stream: what it delivered and the usage it reported. */
export interface NativeResponsesEvents {
  /** The bytes of one upstream event, with `model` rewritten to the client's id. */
  item(event: ResponsesWireEvent): string;
  /** The `response.failed` that ends a stream the upstream broke off (its own events carry on its numbering). */
  fail(error: { code: string; message: string }, usage: Usage | undefined): string;
  /** Usage of the terminal event, when one came (well-formed only). */
  readonly usage: Usage | undefined;
  /** Text and tool-call arguments passed on (for the early-stop charge). */
  readonly delivered: string;
}

/**
 * Passes a native upstream's Responses events on unchanged but for the response's `model` (the
 * client's id, not the route's upstream name), reading the text it delivered and the usage of its
 * terminal event on the way. With `cost`, the terminal event's usage also gets the charge as
 * `cost_micros` (priced from that usage and the text delivered until then).
 */
export function nativeResponsesEvents(model: string, cost?: (usage: Usage | undefined, delivered: string) => number): NativeResponsesEvents {
  let sequence = 0;
  let snapshot: Record<string, unknown> = {};
  // `usage` and `delivered` are fields, not getters: see chatSseFormat (chat-sse-format.ts).
  const out: { -readonly [K in keyof NativeResponsesEvents]: NativeResponsesEvents[K] } = {
    usage: undefined,
    delivered: '',
    item({ type, data }) {
      if (typeof data.sequence_number === 'number') sequence = data.sequence_number + 1;
      if ((type === 'response.output_text.delta' || type === 'response.function_call_arguments.delta') && typeof data.delta === 'string')
        out.delivered += data.delta;
      const response = data.response;
      if (isObject(response)) {
        response.model = model;
        snapshot = response;
        if (TERMINAL.has(type)) {
          const failedEmpty = type === 'response.failed' && out.delivered === '' ? FAILED_UNDELIVERED : undefined;
          out.usage = nativeResponsesUsage(response.usage) ?? out.usage ?? failedEmpty;
          if (cost && isObject(response.usage)) response.usage.cost_micros = cost(out.usage, out.delivered);
        }
      }
      return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
    },
    fail(error, billed) {
      const response = { ...snapshot, model, status: 'failed', error, usage: billed === undefined ? null : toResponseUsage(billed) };
      return `event: response.failed\ndata: ${JSON.stringify({ type: 'response.failed', sequence_number: sequence++, response })}\n\n`;
    },
  };
  return out;
}
