import { randomBase62 } from '@tollgate/core';
import { createObfuscator } from '@tollgate/sse';
import { fakeImagesHandler } from '../images/index';
import type { Fault } from '../fault';
import { createFakeUpstream, type FakeExchange, type FakeUpstream, type FakeUpstreamOptions } from '../fake-upstream';
import { parseJsonBody } from '../parse-json-body';
import { openaiErrorBody, openaiErrorResponse } from './openai-error';
import { countPromptTokens, generate, type FakeChatRequest, type FakeToolCall } from './openai-reply';
import { completionBody, streamEvents } from './openai-wire';

/** Options of {@link fakeOpenAI}. */
export interface FakeOpenAIOptions extends FakeUpstreamOptions {
  /** The reply text, or a function of the request; default a fixed sentence of 8 words. */
  reply?: string | ((request: FakeChatRequest) => string);
  /** Tool calls returned when the request offers tools (and tool_choice is not `none`). */
  toolCalls?: FakeToolCall[] | ((request: FakeChatRequest) => FakeToolCall[] | undefined);
  /** When set, requests with another bearer key get 401 `invalid_api_key`. */
  apiKey?: string;
  /** Model names of `/v1/models`; when set, other models get 404 `model_not_found`. */
  models?: string[];
  /** Prompt tokens reported as read from the upstream's cache (capped at the prompt). */
  cachedTokens?: number;
  /** Hidden reasoning of requests with a `reasoning_effort`: its words count as reasoning tokens. */
  thinking?: string;
  /** Prompt tokens above this get 400 `context_length_exceeded`. */
  contextTokens?: number;
  /** Clock in milliseconds for `created`; default `Date.now`. */
  now?: () => number;
}

const DEFAULT_REPLY = 'Hello! This is the fake upstream speaking.';
const DEFAULT_MODELS = ['gpt-4o-mini', 'gpt-4o'];

/**
 * A wire-accurate fake of OpenAI's chat completions API: replies, SSE streams with usage, tool
 * calls, OpenAI's error bodies, and injected faults. Tokens are words, so usage is predictable.
 *
 * @example
 * const upstream = fakeOpenAI({ reply: 'Hi there', faults: [{ kind: 'cut', afterChunks: 2 }] });
 * const provider = openaiCompatible({ baseURL: 'http://fake/v1', apiKey: 'k', fetch: upstream.fetch });
 */
export function fakeOpenAI(options: FakeOpenAIOptions = {}): FakeUpstream {
  const now = options.now ?? Date.now;
  const obfuscation = createObfuscator();

  async function route(request: Request, exchange: FakeExchange): Promise<Response> {
    const { fault, text } = exchange;
    const url = new URL(request.url);
    const isImages = url.pathname.endsWith('/images/generations');
    if (options.apiKey !== undefined) {
      const auth = request.headers.get('authorization');
      if (!auth)
        return openaiErrorResponse(401, {
          code: null,
          message:
            "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
        });
      if (auth !== `Bearer ${options.apiKey}`) return openaiErrorResponse(401);
    }
    if (fault?.kind === 'status') return statusFault(fault);

    if (url.pathname.endsWith('/models') && request.method === 'GET') return models();
    if (url.pathname.endsWith('/chat/completions') && request.method === 'POST') return chat(text, fault, exchange.stream);
    if (isImages && request.method === 'POST') return fakeImagesHandler(request, { now });
    return openaiErrorResponse(404, { code: null, message: `Invalid URL (${request.method} ${url.pathname})` });
  }

  function statusFault(fault: Extract<Fault, { kind: 'status' }>): Response {
    const { status, code, message, retryAfter, body } = fault;
    return openaiErrorResponse(status, { code, message, retryAfter, body });
  }

  function models(): Response {
    const data = (options.models ?? DEFAULT_MODELS).map((id) => ({ id, object: 'model', created: 1686935002, owned_by: 'openai' }));
    return Response.json({ object: 'list', data });
  }

  function chat(text: string, fault: Fault | undefined, openBody: FakeExchange['stream']): Response {
    const body = parseJsonBody(text) as FakeChatRequest | undefined;
    if (body === undefined || typeof body !== 'object' || body === null || Array.isArray(body)) {
      return openaiErrorResponse(400, {
        code: null,
        message:
          "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)",
      });
    }
    if (typeof body.model !== 'string') return openaiErrorResponse(400, { code: null, message: 'you must provide a model parameter' });
    if (!Array.isArray(body.messages))
      return openaiErrorResponse(400, { code: 'missing_required_parameter', param: 'messages', message: "Missing required parameter: 'messages'." });
    if (options.models && !options.models.includes(body.model)) {
      return openaiErrorResponse(404, { code: 'model_not_found', message: `The model \`${body.model}\` does not exist or you do not have access to it.` });
    }
    if (options.contextTokens !== undefined && countPromptTokens(body) > options.contextTokens) {
      return openaiErrorResponse(400, {
        code: 'context_length_exceeded',
        message: `This model's maximum context length is ${options.contextTokens} tokens. However, your messages resulted in ${countPromptTokens(body)} tokens. Please reduce the length of the messages.`,
      });
    }
    const replyText = typeof options.reply === 'function' ? options.reply(body) : (options.reply ?? DEFAULT_REPLY);
    const toolCalls = typeof options.toolCalls === 'function' ? options.toolCalls(body) : options.toolCalls;
    const generation = generate(body, replyText, toolCalls, () => `call_${randomBase62(24)}`, {
      cachedTokens: options.cachedTokens,
      thinking: options.thinking,
    });
    const meta = { id: `chatcmpl-${randomBase62(29)}`, created: Math.floor(now() / 1000), model: body.model };
    const headers = { 'x-request-id': `req_${randomBase62(24)}`, 'openai-processing-ms': '1' };
    const streamOptions = (body.stream_options ?? {}) as { include_usage?: boolean; include_obfuscation?: boolean };
    const events =
      body.stream === true
        ? streamEvents(generation, meta, {
            includeUsage: streamOptions.include_usage === true,
            obfuscation: streamOptions.include_obfuscation === false ? undefined : obfuscation,
          })
        : [completionBody(generation, meta)];
    const stream = openBody(events, {
      fault,
      malformed:
        body.stream === true ? 'data: {"id":"chatcmpl-broken","object":"chat.completion.chunk","choices":[{\n\n' : '{"id":"chatcmpl-broken","choices":[',
      errorEvent: (f) => `data: ${openaiErrorBody(f.status ?? 500, { code: f.code, message: f.message })}\n\n`,
    });
    const contentType = body.stream === true ? 'text/event-stream; charset=utf-8' : 'application/json';
    return new Response(stream, { status: 200, headers: { 'content-type': contentType, ...headers } });
  }

  return createFakeUpstream(options, route);
}
