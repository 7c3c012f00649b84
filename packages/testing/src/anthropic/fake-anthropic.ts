import type { Fault } from '../fault';
import { createFakeUpstream, type FakeExchange, type FakeUpstream, type FakeUpstreamOptions } from '../fake-upstream';
import type { FakeToolCall } from '../openai/openai-reply';
import { anthropicErrorFor, anthropicErrorResponse } from './anthropic-error-response';
import { anthropicMessage, anthropicStreamEvents, event } from './anthropic-transcript';
import { countFakeJsonTokens } from '../count-fake-tokens';
import { parseJsonBody } from '../parse-json-body';
import { planAnthropicReply } from './plan-anthropic-reply';
import { validateAnthropicRequest, type AnthropicWireRequest } from './validate-anthropic-request';

/** Options of {@link fakeAnthropic}. */
export interface FakeAnthropicOptions extends FakeUpstreamOptions {
  /** The reply text, or a function of the request; default a fixed sentence of 8 words. */
  reply?: string | ((request: AnthropicWireRequest) => string);
  /** Tool calls made when the request offers tools (tool turns carry text only when `reply` is set). */
  toolCalls?: FakeToolCall[] | ((request: AnthropicWireRequest) => FakeToolCall[] | undefined);
  /** The thinking text of requests that enable thinking. */
  thinking?: string;
  /** Forces the stop reason, e.g. `refusal`. */
  stopReason?: string;
  /** Prompt tokens reported as cache reads (`cache_read_input_tokens`), at most the prompt. */
  cacheReadTokens?: number;
  /** Prompt tokens reported as cache writes (`cache_creation_input_tokens`). */
  cacheCreationTokens?: number;
  /** Prompt tokens above this get 400 `prompt is too long`; default 200,000. */
  contextTokens?: number;
  /** Bodies above this many bytes get 413 `request_too_large`; default 32 MiB. */
  maxBodyBytes?: number;
  /** When set, requests with another `x-api-key` get 401 `authentication_error`. */
  apiKey?: string;
}

const DEFAULT_REPLY = 'Hello! This is the fake Claude speaking.';
const DEFAULT_THINKING = 'The user greets me, so I should greet them back briefly.';

/**
 * A wire-accurate fake of the Anthropic Messages API (`POST /v1/messages`): validation with the
 * API's own 400 messages, replies and SSE event sequences with usage (cache reads and writes),
 * tool_use blocks with streamed input_json_delta, thinking blocks, Anthropic's error bodies and
 * statuses (529 overloaded_error included), and the shared faults. Tokens are words.
 * @example
 * const upstream = fakeAnthropic({ reply: 'Hi there', faults: [{ kind: 'status', status: 529 }] });
 * const provider = anthropic({ baseURL: 'http://fake/v1', apiKey: 'k', fetch: upstream.fetch });
 */
export function fakeAnthropic(options: FakeAnthropicOptions = {}): FakeUpstream {
  function route(request: Request, { fault, text, stream }: FakeExchange): Response {
    if (!new URL(request.url).pathname.endsWith('/messages') || request.method !== 'POST') {
      return anthropicErrorResponse('not_found_error', 'Not Found');
    }
    const key = request.headers.get('x-api-key');
    if (!key) return anthropicErrorResponse('authentication_error', 'x-api-key header is required');
    if (options.apiKey !== undefined && key !== options.apiKey) return anthropicErrorResponse('authentication_error', 'invalid x-api-key');
    if (!request.headers.get('anthropic-version')) return anthropicErrorResponse('invalid_request_error', 'anthropic-version: header is required');
    if (fault?.kind === 'status') return statusFault(fault);
    if (new TextEncoder().encode(text).length > (options.maxBodyBytes ?? 32 * 1024 * 1024)) {
      return anthropicErrorResponse('request_too_large', 'Request exceeds the maximum allowed number of bytes.');
    }
    const body = parseJsonBody(text);
    if (body === undefined)
      return anthropicErrorResponse('invalid_request_error', 'There was an error parsing the body of your request. Please check that it is valid JSON.');
    const valid = validateAnthropicRequest(body);
    if (!valid.ok) return anthropicErrorResponse('invalid_request_error', valid.message);
    return reply(valid.request, fault, stream);
  }

  function statusFault(fault: Extract<Fault, { kind: 'status' }>): Response {
    const error = anthropicErrorFor(fault.status, fault.code, fault.message);
    const retryAfter = fault.retryAfter ?? (fault.status === 429 ? 1 : undefined);
    const response = anthropicErrorResponse(error.type, error.message, retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }, fault.status);
    return fault.body === undefined ? response : new Response(fault.body, { status: fault.status, headers: response.headers });
  }

  function reply(body: AnthropicWireRequest, fault: Fault | undefined, openBody: FakeExchange['stream']): Response {
    const promptTokens = countFakeJsonTokens([body.system, body.messages, body.tools], (node) => node.type === 'image' || node.type === 'document');
    const context = options.contextTokens ?? 200_000;
    if (promptTokens > context) return anthropicErrorResponse('invalid_request_error', `prompt is too long: ${promptTokens} tokens > ${context} maximum`);
    const plan = planAnthropicReply(body, {
      text: typeof options.reply === 'function' ? options.reply(body) : (options.reply ?? DEFAULT_REPLY),
      textWithTools: options.reply !== undefined,
      toolCalls: typeof options.toolCalls === 'function' ? options.toolCalls(body) : options.toolCalls,
      thinking: options.thinking ?? DEFAULT_THINKING,
      ...(options.stopReason !== undefined ? { stopReason: options.stopReason } : {}),
      promptTokens,
      cacheReadTokens: options.cacheReadTokens ?? 0,
      cacheCreationTokens: options.cacheCreationTokens ?? 0,
    });
    const streamed = body.stream === true;
    const stream = openBody(streamed ? anthropicStreamEvents(plan) : [JSON.stringify(anthropicMessage(plan))], {
      ...(fault ? { fault } : {}),
      malformed: streamed
        ? 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_del\n\n'
        : '{"id":"msg_broken","type":"message","content":[',
      errorEvent: (f) => {
        const error = anthropicErrorFor(f.status ?? 529, f.code ?? (f.status ? undefined : 'overloaded_error'), f.message);
        return event('error', { type: 'error', error });
      },
    });
    const headers = { 'content-type': streamed ? 'text/event-stream; charset=utf-8' : 'application/json', 'request-id': `req_011C${plan.id.slice(6, 28)}` };
    return new Response(stream, { status: 200, headers });
  }

  return createFakeUpstream(options, route);
}
