import { type ChatCompletion, ok, type Usage } from '@tollgate/core';
import {
  batchesOfReader,
  type ChatProvider,
  chatCompletionToResponse,
  type ProviderChatRequest,
  type ResponseMeta,
  type ResponsesPassThrough,
  responseId,
  type UpstreamResponsesRequest,
} from '@tollgate/providers';
import { type ParsedResponsesRequest, parseResponsesRequest } from '@tollgate/validator';
import { admitMetered, type MeteredEndpoint } from './admit-metered';
import { callUpstream } from './call-upstream';
import { failed } from './failed';
import { billedUsage } from './billed-usage';
import { chatBatches, chatCharge, chatEndpoint, completionText, fitOutputToHold, type PreparedChat, streamMetered } from './handle-chat';
import type { ChatModel } from './model-catalogue';
import { FAILED_UNDELIVERED, nativeResponsesUsage } from './native-responses-events';
import { readUsage } from './read-usage';
import { type ResponsesUpstreamItem, responsesSseFormat } from './responses-sse-format';
import type { HandlerReply, MeteredContext, Runtime } from './runtime';

/** A Responses request ready for its upstream: the chat request, and what the response echoes. */
interface PreparedResponses extends PreparedChat {
  responses: ParsedResponsesRequest;
}

const TEE_REFUSED =
  'model is a tee model: its replies come unchanged from the attested server, so it is served on /v1/chat/completions only, never rewritten into a response object.';

/** A chat provider whose upstream also speaks the Responses API (`openaiCompatible({ responsesApi: true })`). */
const isNative = (provider: ChatProvider): provider is ChatProvider & ResponsesPassThrough => 'responses' in provider && 'responsesStream' in provider;

/**
 * Chat's admission with the Responses body: the request is parsed into the chat request every
 * provider takes (`packages/validator/src/parse-responses-request.ts`), then chat's own steps
 * decide, so characters, media, part types, `message_too_long` and the hold are chat's, unchanged.
 */
function responsesEndpoint(runtime: Runtime): MeteredEndpoint<ParsedResponsesRequest, ChatModel, PreparedResponses> {
  const chat = chatEndpoint(runtime);
  return {
    parse: parseResponsesRequest,
    model: (parsed) => chat.model(parsed.chat),
    resolve: (parsed, model, principal) => {
      // A tee model's reply is the attested server's, byte for byte; a translated one would not be.
      if (model.tee) return { ok: false, error: { code: 'invalid_parameter', message: TEE_REFUSED } };
      const prepared = chat.resolve(parsed.chat, model, principal);
      return prepared.ok ? ok({ ...prepared.value, responses: parsed }) : prepared;
    },
    hold: chat.hold,
  };
}

/**
 * `POST /v1/responses`: OpenAI's Responses API over the chat models, metered like chat (one
 * admission step, one metered stream). A chat upstream's reply is translated into the response
 * object or its events; an upstream that speaks the Responses API natively is passed through with
 * only `model` rewritten. docs/http-api.md ("POST /v1/responses") has the decisions.
 */
export async function handleResponses(runtime: Runtime, context: MeteredContext): Promise<HandlerReply> {
  const admitted = await admitMetered(runtime, context, responsesEndpoint(runtime));
  if (!admitted.ok) return admitted.error;
  const { model, prepared, hold, started } = admitted.value;
  const { request, responses, prompt } = prepared;
  const extra = fitOutputToHold(model, prepared, hold);
  context.log.stream = request.stream;
  const charge = chatCharge(context, model, request, hold, prepared.promptBound, prompt);
  const meta: ResponseMeta = {
    id: responseId(),
    createdAt: Math.floor(runtime.now() / 1000),
    echo: responses.echo,
    maxOutputTokens: request.max_completion_tokens,
  };
  // The usage a reply shows: the provider's when well formed, else the estimate chatCharge bills,
  // with the charge, priced once for the reply and the settle alike (docs/http-api.md, Billing).
  const billed = (reported: Usage | undefined, delivered: string): Usage => billedUsage(prompt, reported, delivered, charge.quote(reported, delivered));
  // The upstream calls live in a scope of their own: the closures made here (kept by a stream for
  // its life) name no request, so the stream keeps no prompt (docs/architecture.md).
  const calls = upstreamCalls(request, responses);

  if (request.stream) {
    const format = responsesSseFormat({
      meta,
      ...(responses.obfuscation ? { obfuscate: runtime.obfuscate } : {}),
      // A stream that failed before delivering anything is not charged (chat's rule): it shows no usage.
      billed: (reported, delivered, failedStream) => (failedStream && !reported && delivered === '' ? undefined : billed(reported, delivered)),
      // A native upstream's terminal event shows the charge in its usage too.
      cost: charge.quote,
    });
    return streamMetered<ResponsesUpstreamItem>(runtime, context, admitted.value, {
      open: calls.open,
      format,
      charge,
      extra,
    });
  }

  // No client signal: a non-streamed call runs to its end (within its deadline) and is settled
  // exactly, client or not, as chat's.
  const result = await callUpstream(runtime, model.routes, { zdr: model.zdr }, calls.whole, { deadlineMs: runtime.wholeCallMs });
  if (!result.ok) return failed(runtime, context, hold, started, result.error);
  context.log.provider = result.route.name;
  const reply = result.value;
  if ('native' in reply) {
    const body = reply.native;
    const text = nativeText(body);
    const reported = nativeResponsesUsage(body.usage) ?? (body.status === 'failed' && text === '' ? FAILED_UNDELIVERED : undefined);
    const micros = charge.quote(reported, text);
    await charge(reported, text, reported ? 'done' : 'no_usage');
    body.model = model.id;
    // The upstream's usage passes through; the charge is added to it, as on a translated response.
    if (isObject(body.usage)) body.usage.cost_micros = micros;
    return runtime.replies.json(JSON.stringify(body), started, extra);
  }
  const completion = reply.chat;
  const reported = readUsage(completion.usage);
  const text = completionText(completion);
  const usage = billed(reported, text); // priced before the settle, which charges the same figure
  await charge(completion.usage, text, reported ? 'done' : 'no_usage');
  return runtime.replies.json(JSON.stringify(chatCompletionToResponse(completion, usage, meta)), started, extra);
}

/**
 * A Responses request's upstream calls on one route: the stream's opening and the whole call, each
 * to a native Responses upstream (the client's body, `model` aside) or as chat. Made in a scope of
 * their own, so only the opening (or the whole call) keeps the request.
 */
function upstreamCalls(request: ProviderChatRequest, responses: ParsedResponsesRequest) {
  // OpenAI takes stream_options only with stream: true.
  const { stream_options: streamOptions, ...checked } = responses.body;
  const native = (): UpstreamResponsesRequest => ({
    ...checked,
    ...(request.stream && streamOptions != null ? { stream_options: streamOptions } : {}),
    max_output_tokens: request.max_completion_tokens,
  });
  return {
    open: async (provider: ChatProvider, upstream: string, signal: AbortSignal) =>
      isNative(provider)
        ? batchesOfReader<ResponsesUpstreamItem>((await provider.responsesStream(native(), { upstream, signal })).getReader())
        : chatBatches(provider, { ...request, stream_options: { include_usage: true } }, { upstream, signal }),
    whole: async (provider: ChatProvider, upstream: string, signal: AbortSignal): Promise<{ chat: ChatCompletion } | { native: Record<string, unknown> }> =>
      isNative(provider) ? { native: await provider.responses(native(), { upstream, signal }) } : { chat: await provider.chat(request, { upstream, signal }) },
  };
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The output text and function-call arguments of a native response object. */
function nativeText(response: Record<string, unknown>): string {
  let text = '';
  for (const item of Array.isArray(response.output) ? response.output : []) {
    if (typeof item !== 'object' || item === null) continue;
    if (typeof item.arguments === 'string') text += item.arguments;
    for (const part of Array.isArray(item.content) ? item.content : []) if (typeof part?.text === 'string') text += part.text;
  }
  return text;
}
