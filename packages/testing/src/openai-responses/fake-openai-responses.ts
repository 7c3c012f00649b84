import { type ChatMessage, randomBase62 } from '@tollgate/core';
import { createObfuscator } from '@tollgate/sse';
import { createFakeUpstream, type FakeExchange, type FakeUpstream } from '../fake-upstream';
import type { FakeOpenAIOptions } from '../openai/fake-openai';
import { openaiErrorBody, openaiErrorResponse } from '../openai/openai-error';
import { type FakeChatRequest, generate } from '../openai/openai-reply';
import { parseJsonBody } from '../parse-json-body';
import { responseBody, responseEvents } from './responses-wire';

/** Options of {@link fakeOpenAIResponses}: those of the chat fake that apply to responses. */
export type FakeOpenAIResponsesOptions = Pick<
  FakeOpenAIOptions,
  'reply' | 'toolCalls' | 'apiKey' | 'cachedTokens' | 'thinking' | 'now' | 'faults' | 'latencyMs' | 'sleep'
>;

const DEFAULT_REPLY = 'Hello! This is the fake Responses upstream speaking.';

/** Every request parameter of OpenAI's `POST /v1/responses`; anything else is `unknown_parameter`. */
const PARAMETERS = new Set([
  'background',
  'conversation',
  'include',
  'input',
  'instructions',
  'max_output_tokens',
  'max_tool_calls',
  'metadata',
  'model',
  'parallel_tool_calls',
  'previous_response_id',
  'prompt',
  'prompt_cache_key',
  'prompt_cache_retention',
  'reasoning',
  'safety_identifier',
  'service_tier',
  'store',
  'stream',
  'stream_options',
  'temperature',
  'text',
  'tool_choice',
  'tools',
  'top_logprobs',
  'top_p',
  'truncation',
  'user',
]);

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : Array.isArray(content)
      ? content.map((part) => (isObject(part) && typeof part.text === 'string' ? part.text : '')).join(' ')
      : '';

/** The request as the chat fake's generator reads it: messages, tools, output limit, reasoning. */
function asChat(body: Json): FakeChatRequest {
  const messages: ChatMessage[] = [];
  if (typeof body.instructions === 'string') messages.push({ role: 'system', content: body.instructions });
  const input: unknown[] = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : Array.isArray(body.input) ? body.input : [];
  for (const item of input) {
    if (!isObject(item)) continue;
    if (item.type === 'function_call') {
      const call = { id: String(item.call_id), type: 'function' as const, function: { name: String(item.name), arguments: String(item.arguments) } };
      messages.push({ role: 'assistant', content: null, tool_calls: [call] });
    } else if (item.type === 'function_call_output') messages.push({ role: 'tool', content: text(item.output), tool_call_id: String(item.call_id) });
    else if (item.role === 'assistant') messages.push({ role: 'assistant', content: text(item.content) });
    else messages.push({ role: 'user', content: text(item.content) });
  }
  const chat: FakeChatRequest = { model: String(body.model), messages };
  if (Array.isArray(body.tools)) chat.tools = body.tools.map((tool) => ({ type: 'function', function: { name: isObject(tool) ? String(tool.name) : '' } }));
  if (body.tool_choice === 'none') chat.tool_choice = 'none';
  if (typeof body.max_output_tokens === 'number') chat.max_completion_tokens = body.max_output_tokens;
  const effort = isObject(body.reasoning) ? body.reasoning.effort : undefined;
  if (effort === 'minimal' || effort === 'low' || effort === 'medium' || effort === 'high') chat.reasoning_effort = effort;
  return chat;
}

/**
 * A wire-accurate fake of OpenAI's Responses API (`POST /v1/responses`), whole and streamed: the
 * response object with OpenAI's extra fields, the typed event sequence with sequence numbers and
 * obfuscation, function calls, usage with cached and reasoning tokens, OpenAI's 400 for unknown
 * parameters, and the shared faults. Tokens are words, as in the chat fake.
 *
 * @example
 * const upstream = fakeOpenAIResponses({ reply: 'Hi there' });
 * const provider = openaiCompatible({ baseURL: 'http://fake/v1', apiKey: 'k', fetch: upstream.fetch, responsesApi: true });
 */
export function fakeOpenAIResponses(options: FakeOpenAIResponsesOptions = {}): FakeUpstream {
  const now = options.now ?? Date.now;
  const obfuscation = createObfuscator();

  function route(request: Request, exchange: FakeExchange): Response {
    const url = new URL(request.url);
    if (options.apiKey !== undefined && request.headers.get('authorization') !== `Bearer ${options.apiKey}`) return openaiErrorResponse(401);
    const fault = exchange.fault;
    if (fault?.kind === 'status')
      return openaiErrorResponse(fault.status, { code: fault.code, message: fault.message, retryAfter: fault.retryAfter, body: fault.body });
    if (!url.pathname.endsWith('/responses') || request.method !== 'POST') {
      return openaiErrorResponse(404, { code: null, message: `Invalid URL (${request.method} ${url.pathname})` });
    }
    const body = parseJsonBody(exchange.text);
    if (!isObject(body)) return openaiErrorResponse(400, { code: null, message: 'We could not parse the JSON body of your request.' });
    const unknown = Object.keys(body).find((field) => !PARAMETERS.has(field));
    if (unknown !== undefined) return openaiErrorResponse(400, { code: 'unknown_parameter', param: unknown, message: `Unknown parameter: '${unknown}'.` });
    if (typeof body.model !== 'string')
      return openaiErrorResponse(400, { code: 'missing_required_parameter', param: 'model', message: "Missing required parameter: 'model'." });
    if (typeof body.input !== 'string' && !Array.isArray(body.input)) {
      return openaiErrorResponse(400, { code: 'missing_required_parameter', param: 'input', message: "Missing required parameter: 'input'." });
    }
    const chat = asChat(body);
    const replyText = typeof options.reply === 'function' ? options.reply(chat) : (options.reply ?? DEFAULT_REPLY);
    const toolCalls = typeof options.toolCalls === 'function' ? options.toolCalls(chat) : options.toolCalls;
    const generation = generate(chat, replyText, toolCalls, () => `call_${randomBase62(24)}`, {
      cachedTokens: options.cachedTokens,
      thinking: options.thinking,
    });
    const count = Math.max(1, generation.toolCalls.length);
    const prefix = generation.toolCalls.length > 0 ? 'fc' : 'msg';
    const meta = {
      id: `resp_${randomBase62(48)}`,
      createdAt: Math.floor(now() / 1000),
      model: body.model,
      request: body,
      itemIds: Array.from({ length: count }, () => `${prefix}_${randomBase62(48)}`),
    };
    const headers = { 'x-request-id': `req_${randomBase62(24)}`, 'openai-processing-ms': '1' };
    const streamOptions = isObject(body.stream_options) ? body.stream_options : {};
    const stream = body.stream === true;
    const status = generation.finishReason === 'length' ? 'incomplete' : 'completed';
    const events = stream
      ? responseEvents(generation, meta, streamOptions.include_obfuscation === false ? undefined : obfuscation)
      : [JSON.stringify(responseBody(generation, meta, status))];
    const replyBody = exchange.stream(events, {
      fault,
      malformed: stream ? 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":\n\n' : '{"id":"resp_broken","output":[',
      // OpenAI's shape: `type` is the event's ("error", not the error body's "server_error"), and it
      // carries on the stream's numbering (the events before it are numbered 0 to afterChunks - 1).
      errorEvent: (f) => {
        const { code, message, param } = JSON.parse(openaiErrorBody(f.status ?? 500, { code: f.code, message: f.message })).error;
        return `event: error\ndata: ${JSON.stringify({ type: 'error', sequence_number: f.afterChunks, code, message, param })}\n\n`;
      },
    });
    return new Response(replyBody, { status: 200, headers: { 'content-type': stream ? 'text/event-stream; charset=utf-8' : 'application/json', ...headers } });
  }

  return createFakeUpstream(options, route);
}
