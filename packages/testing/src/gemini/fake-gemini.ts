import { geminiImagePart } from '../images/index';
import type { Fault } from '../fault';
import { createFakeUpstream, type FakeExchange, type FakeUpstream, type FakeUpstreamOptions } from '../fake-upstream';
import type { FakeToolCall } from '../openai/openai-reply';
import { countFakeJsonTokens } from '../count-fake-tokens';
import { parseJsonBody } from '../parse-json-body';
import { geminiErrorBody, geminiErrorResponse } from './gemini-error-response';
import { geminiResponse, geminiStreamEvents, sse } from './gemini-transcript';
import { planGeminiReply } from './plan-gemini-reply';
import { validateGeminiRequest, type GeminiWireRequest } from './validate-gemini-request';

/** Options of {@link fakeGemini}. */
export interface FakeGeminiOptions extends FakeUpstreamOptions {
  /** The reply text, or a function of the request; default a fixed sentence of 8 words. */
  reply?: string | ((request: GeminiWireRequest) => string);
  /** Function calls made when the request declares functions (call turns carry text only when `reply` is set). */
  toolCalls?: FakeToolCall[] | ((request: GeminiWireRequest) => FakeToolCall[] | undefined);
  /** The thinking of requests that ask for it: its words are reported as `thoughtsTokenCount`. */
  thinking?: string;
  /** Forces the finish reason, e.g. `SAFETY`. */
  finishReason?: string;
  /** Blocks every prompt with this `promptFeedback.blockReason`, e.g. `SAFETY`. */
  blockReason?: string;
  /** Prompt tokens reported as `cachedContentTokenCount`, at most the prompt. */
  cachedTokens?: number;
  /** Prompt tokens above this get 400 INVALID_ARGUMENT (token count exceeds); default 1,048,576. */
  contextTokens?: number;
  /** Bodies above this many bytes get 413 (payload size exceeds); default 20 MiB. */
  maxBodyBytes?: number;
  /** When set, requests with another `x-goog-api-key` (or `?key=`) get 400 API_KEY_INVALID. */
  apiKey?: string;
}

const DEFAULT_REPLY = 'Hello! This is the fake Gemini speaking.';
const DEFAULT_THINKING = 'The user greets me, so I should greet them back briefly.';
const ROUTE = /\/models\/([^/:]+):(generateContent|streamGenerateContent)$/;

/**
 * A wire-accurate fake of the Gemini API (`models/{model}:generateContent` and
 * `:streamGenerateContent?alt=sse`): validation with Gemini's 400 messages, replies and SSE events
 * with usageMetadata (cached and thought tokens), function calls with thought signatures, prompt
 * blocks, IMAGE output, google.rpc error bodies (RetryInfo on 429), and the shared faults. A status
 * fault with code `content_filter` answers 200 with `promptFeedback.blockReason`, as Gemini does.
 * @example
 * const upstream = fakeGemini({ reply: 'Hi there', faults: [{ kind: 'status', status: 429, retryAfter: 7 }] });
 * const provider = gemini({ baseURL: 'http://fake/v1beta', apiKey: 'k', fetch: upstream.fetch });
 */
export function fakeGemini(options: FakeGeminiOptions = {}): FakeUpstream {
  async function route(request: Request, exchange: FakeExchange): Promise<Response> {
    const { fault, text } = exchange;
    const url = new URL(request.url);
    const matched = ROUTE.exec(url.pathname);
    if (!matched || request.method !== 'POST') return geminiErrorResponse(404, { message: `Method not found.` });
    const key = request.headers.get('x-goog-api-key') ?? url.searchParams.get('key');
    if (!key)
      return geminiErrorResponse(403, {
        message:
          "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
      });
    if (options.apiKey !== undefined && key !== options.apiKey) return geminiErrorResponse(400, { code: 'invalid_api_key' });
    const model = decodeURIComponent(matched[1] ?? '');
    const streamed = matched[2] === 'streamGenerateContent';
    const sseMode = url.searchParams.get('alt') === 'sse';
    if (fault?.kind === 'status' && fault.code !== 'content_filter') {
      const body =
        fault.body ??
        JSON.stringify(
          geminiErrorBody(fault.status, {
            ...(fault.code ? { code: fault.code } : {}),
            ...(fault.message ? { message: fault.message } : {}),
            ...(fault.retryAfter ? { retryAfter: fault.retryAfter } : {}),
          }),
        );
      return new Response(body, { status: fault.status, headers: { 'content-type': 'application/json; charset=UTF-8' } });
    }
    if (new TextEncoder().encode(text).length > (options.maxBodyBytes ?? 20 * 1024 * 1024)) return geminiErrorResponse(413);
    const body = parseJsonBody(text);
    if (body === undefined) return geminiErrorResponse(400, { message: 'Invalid JSON payload received. Unexpected token.' });
    const valid = validateGeminiRequest(body, model);
    if (!valid.ok) return geminiErrorResponse(400, { message: valid.message });
    const blocked = fault?.kind === 'status' ? 'SAFETY' : options.blockReason;
    return reply(exchange, valid.request, model, { streamed, sseMode, blocked, fault: fault?.kind === 'status' ? undefined : fault });
  }

  async function reply(
    exchange: FakeExchange,
    body: GeminiWireRequest,
    model: string,
    mode: { streamed: boolean; sseMode: boolean; blocked: string | undefined; fault: Fault | undefined },
  ): Promise<Response> {
    const promptTokens = countFakeJsonTokens([body.systemInstruction, body.contents, body.tools], (node) => node.inlineData !== undefined);
    const context = options.contextTokens ?? 1_048_576;
    if (promptTokens > context) {
      return geminiErrorResponse(400, { message: `The input token count (${promptTokens}) exceeds the maximum number of tokens allowed (${context}).` });
    }
    const plan = planGeminiReply(body, {
      model,
      text: typeof options.reply === 'function' ? options.reply(body) : (options.reply ?? DEFAULT_REPLY),
      textWithTools: options.reply !== undefined,
      toolCalls: typeof options.toolCalls === 'function' ? options.toolCalls(body) : options.toolCalls,
      thinking: options.thinking ?? DEFAULT_THINKING,
      ...(options.finishReason ? { finishReason: options.finishReason } : {}),
      ...(mode.blocked ? { blockReason: mode.blocked } : {}),
      images: body.generationConfig?.responseModalities?.includes('IMAGE') ? [await image(body, exchange.requests.length)] : [],
      promptTokens,
      cachedTokens: options.cachedTokens ?? 0,
    });
    if (plan.images.length > 0 && !body.generationConfig?.responseModalities?.includes('TEXT')) plan.text = '';
    const events = !mode.streamed
      ? [JSON.stringify(geminiResponse(plan), null, 2)]
      : mode.sseMode
        ? geminiStreamEvents(plan)
        : jsonArray(geminiStreamEvents(plan));
    const stream = exchange.stream(events, {
      ...(mode.fault ? { fault: mode.fault } : {}),
      malformed: mode.sseMode ? 'data: {"candidates": [{"content": {"parts": [{"text": "bro\r\n\r\n' : '{"candidates": [',
      errorEvent: (f) => sse(geminiErrorBody(f.status ?? 503, { ...(f.code ? { code: f.code } : {}), ...(f.message ? { message: f.message } : {}) })),
    });
    const contentType = mode.streamed && mode.sseMode ? 'text/event-stream' : 'application/json; charset=UTF-8';
    return new Response(stream, { status: 200, headers: { 'content-type': contentType, 'x-gemini-service-tier': 'standard' } });
  }

  return createFakeUpstream(options, route);
}

/** The image of an IMAGE reply: a real PNG of the asked aspect ratio and size, different per request. */
async function image(body: GeminiWireRequest, seed: number): Promise<{ mimeType: string; data: string }> {
  const [w, h] = (body.generationConfig?.imageConfig?.aspectRatio ?? '1:1').split(':').map(Number) as [number, number];
  const long = body.generationConfig?.imageConfig?.imageSize === '2K' ? 2048 : 1024;
  const [width, height] = w >= h ? [long, Math.round((long * h) / w / 8) * 8] : [Math.round((long * w) / h / 8) * 8, long];
  return (await geminiImagePart(width, height, seed)).inlineData;
}

/** A streamGenerateContent body without `alt=sse`: one JSON array, an element per event. */
function jsonArray(events: string[]): string[] {
  const items = events.map((item) => item.replace(/^data: /, '').trimEnd());
  return items.map((item, index) => `${index === 0 ? '[' : ''}${item}${index === items.length - 1 ? ']' : ',\n'}`);
}
