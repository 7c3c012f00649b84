import type {
  ChatCompletionChunk,
  FinishReason,
  ResponseFunctionCallItem,
  ResponseItemStatus,
  ResponseMessageItem,
  ResponseOutputItem,
  ResponseStreamEvent,
  Usage,
} from '@tollgate/core';
import { finishStatus, randomItemId, type ResponseMeta, responseObject } from './response-meta';
import { toResponseUsage } from './to-response-usage';

/** A distributive Omit, so each event keeps its own fields. */
type Unnumbered<E> = E extends unknown ? Omit<E, 'sequence_number'> : never;

/** The Responses event stream of one chat stream, built chunk by chunk. */
export interface ResponseEvents {
  /** `response.created` and `response.in_progress`: the stream's first two events. */
  start(): ResponseStreamEvent[];
  /** The events of one chat chunk (none for a usage-only chunk). */
  chunk(chunk: ChatCompletionChunk): ResponseStreamEvent[];
  /**
   * The end of a stream read to its end: the open item closed, then `response.completed` (or
   * `response.incomplete` after a `length` or `content_filter` finish) with `usage`, the usage the
   * request is billed for.
   */
  finish(usage: Usage | undefined): ResponseStreamEvent[];
  /** The end of a stream whose upstream failed: `response.failed` with the error and the usage billed. */
  fail(error: { code: string; message: string }, usage: Usage | undefined): ResponseStreamEvent[];
  /** The text and tool-call arguments sent so far (for the early-stop charge). */
  readonly delivered: string;
}

type Open = { kind: 'message'; index: number; item: ResponseMessageItem; text: string } | { kind: 'call'; index: number; item: ResponseFunctionCallItem };

/**
 * Translates a chat completion stream into the Responses API's event sequence, as OpenAI sends
 * it: `response.created`, `response.in_progress`; per output item `response.output_item.added`,
 * then for a message `response.content_part.added`, `response.output_text.delta`…,
 * `response.output_text.done`, `response.content_part.done`, or for a function call
 * `response.function_call_arguments.delta`…, `response.function_call_arguments.done`; then
 * `response.output_item.done`; last `response.completed`. A message is closed by the next item; the
 * function calls of a turn stay open together (their deltas may come interleaved) until text comes
 * or the stream ends. Every event carries `sequence_number`, from 0. Pure: no I/O, no
 * clock (the ids come from `meta`).
 *
 * @example
 * const events = createResponseEvents({ id: responseId(), createdAt, echo, maxOutputTokens });
 * send(events.start());
 * for await (const chunk of stream) send(events.chunk(chunk));
 * send(events.finish(usage));
 */
export function createResponseEvents(meta: ResponseMeta): ResponseEvents {
  const itemId = meta.itemId ?? randomItemId;
  const output: ResponseOutputItem[] = [];
  const calls = new Map<number, Open & { kind: 'call' }>();
  let sequence = 0;
  // One message open at a time, or the function calls of one turn: a chat stream may send the
  // deltas of several calls interleaved (call 1 starts before call 0's arguments are whole), so a
  // call stays open until text comes or the stream ends, never closed by the next call.
  let message: (Open & { kind: 'message' }) | undefined;
  const openCalls: (Open & { kind: 'call' })[] = [];
  let finishReason: FinishReason | null = null;

  const numbered = (events: Unnumbered<ResponseStreamEvent>[]): ResponseStreamEvent[] => events.map((event) => ({ ...event, sequence_number: sequence++ }));

  // Events hold copies: an item keeps changing after an event about it was made.
  const copy = (item: ResponseOutputItem): ResponseOutputItem =>
    item.type === 'message' ? { ...item, content: item.content.map((part) => ({ ...part })) } : { ...item };
  const snapshot = () => output.map(copy);

  /** The open message's text as its one part (its `content` is filled in when it closes, or when the response fails). */
  const textPart = (current: Open & { kind: 'message' }) => ({ type: 'output_text' as const, text: current.text, annotations: [], logprobs: [] });

  /** Closes whatever is open: the message, or the open calls in the order they came. */
  const close = (events: Unnumbered<ResponseStreamEvent>[], status: ResponseItemStatus) => {
    const current = message;
    if (current !== undefined) {
      message = undefined;
      current.item.status = status;
      const base = { item_id: current.item.id, output_index: current.index, content_index: 0 };
      const part = textPart(current);
      current.item.content = [part];
      events.push({ type: 'response.output_text.done', ...base, text: current.text, logprobs: [] });
      events.push({ type: 'response.content_part.done', ...base, part: { ...part } });
      events.push({ type: 'response.output_item.done', output_index: current.index, item: copy(current.item) });
    }
    for (const call of openCalls.splice(0)) {
      call.item.status = status;
      const { id, name } = call.item;
      events.push({ type: 'response.function_call_arguments.done', item_id: id, output_index: call.index, name, arguments: call.item.arguments });
      events.push({ type: 'response.output_item.done', output_index: call.index, item: copy(call.item) });
    }
  };

  const text = (events: Unnumbered<ResponseStreamEvent>[], delta: string) => {
    let current = message;
    if (current === undefined) {
      close(events, 'completed');
      const item: ResponseMessageItem = { type: 'message', id: itemId('msg'), status: 'in_progress', role: 'assistant', content: [] };
      current = { kind: 'message', index: output.length, item, text: '' };
      message = current;
      output.push(item);
      events.push({ type: 'response.output_item.added', output_index: current.index, item: copy(item) });
      const part = { type: 'output_text' as const, text: '', annotations: [], logprobs: [] };
      events.push({ type: 'response.content_part.added', item_id: item.id, output_index: current.index, content_index: 0, part });
    }
    current.text += delta;
    out.delivered += delta;
    events.push({ type: 'response.output_text.delta', item_id: current.item.id, output_index: current.index, content_index: 0, delta, logprobs: [] });
  };

  const call = (events: Unnumbered<ResponseStreamEvent>[], delta: NonNullable<ChatCompletionChunk['choices'][number]['delta']['tool_calls']>[number]) => {
    let current = calls.get(delta.index);
    if (current === undefined) {
      // A call closes the message before it, not the calls still open beside it.
      if (message !== undefined) close(events, 'completed');
      const id = itemId('fc');
      const item: ResponseFunctionCallItem = {
        type: 'function_call',
        id,
        // A chat upstream always names its calls; should one not, the call still needs an id to be answered by.
        call_id: delta.id ?? `call_${id.slice(3)}`,
        name: delta.function?.name ?? '',
        arguments: '',
        status: 'in_progress',
      };
      current = { kind: 'call', index: output.length, item };
      calls.set(delta.index, current);
      openCalls.push(current);
      output.push(item);
      events.push({ type: 'response.output_item.added', output_index: current.index, item: copy(item) });
    } else if (delta.function?.name && current.item.name === '') {
      current.item.name = delta.function.name;
    }
    const args = delta.function?.arguments;
    if (args) {
      current.item.arguments += args;
      out.delivered += args;
      events.push({ type: 'response.function_call_arguments.delta', item_id: current.item.id, output_index: current.index, delta: args });
    }
  };

  // `delivered` is a field, not a getter: an object literal's getter (a closure made per call) gets
  // an accessor V8 keeps in the old generation, and with it this scope past young-generation GCs.
  const out: { -readonly [K in keyof ResponseEvents]: ResponseEvents[K] } = {
    delivered: '',
    start() {
      const response = responseObject(meta, { status: 'in_progress' }, [], null);
      return numbered([
        { type: 'response.created', response },
        { type: 'response.in_progress', response: { ...response } },
      ]);
    },
    chunk(chunk) {
      const events: Unnumbered<ResponseStreamEvent>[] = [];
      // One choice: the Responses API has no `n`, and the gateway never asks for more.
      const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
      if (choice === undefined) return [];
      const delta = choice.delta ?? {};
      // Checked whole before anything is taken from it: a chunk that throws half-way would count as
      // delivered text its events never carried (and be paid for).
      const tools = delta.tool_calls ?? [];
      if (!Array.isArray(tools) || !tools.every(isToolCallDelta)) throw new TypeError('a chunk with malformed tool_calls');
      const piece = typeof delta.content === 'string' && delta.content !== '' ? delta.content : typeof delta.refusal === 'string' ? delta.refusal : '';
      if (piece !== '') text(events, piece);
      for (const tool of tools) call(events, tool);
      if (choice.finish_reason) finishReason = choice.finish_reason;
      return numbered(events);
    },
    finish(usage) {
      const events: Unnumbered<ResponseStreamEvent>[] = [];
      const ending = finishStatus(finishReason);
      close(events, ending.status === 'completed' ? 'completed' : 'incomplete');
      const response = responseObject(meta, ending, snapshot(), usage === undefined ? null : toResponseUsage(usage));
      events.push({ type: ending.status === 'completed' ? 'response.completed' : 'response.incomplete', response });
      return numbered(events);
    },
    fail(error, usage) {
      // What was sent so far, the open message's text included (its part is made when it closes).
      if (message !== undefined) message.item.content = [textPart(message)];
      const response = responseObject(meta, { status: 'failed', error }, snapshot(), usage === undefined ? null : toResponseUsage(usage));
      return numbered([{ type: 'response.failed', response }]);
    },
  };
  return out;
}

type ToolCallDelta = NonNullable<ChatCompletionChunk['choices'][number]['delta']['tool_calls']>[number];

/** A tool-call delta as {@link createResponseEvents} reads it: an index, and strings (or nothing) where it reads text. */
function isToolCallDelta(value: unknown): value is ToolCallDelta {
  if (typeof value !== 'object' || value === null) return false;
  const { index, id, function: fn } = value as { index?: unknown; id?: unknown; function?: unknown };
  if (!Number.isInteger(index) || !optionalString(id)) return false;
  if (fn === undefined || fn === null) return true;
  if (typeof fn !== 'object') return false;
  const { name, arguments: args } = fn as { name?: unknown; arguments?: unknown };
  return optionalString(name) && optionalString(args);
}

const optionalString = (value: unknown) => value === undefined || value === null || typeof value === 'string';
