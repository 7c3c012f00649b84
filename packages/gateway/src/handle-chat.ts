import { GatewayError, HEADER, completionId, planAllows, requestId as newRequestId, type ChatCompletion, type ChatPrice, withinDeadline } from '@tollgate/core';
import { chatCostMicros, chatHoldMicros, estimateCompletionTokens, estimatePromptTokens, outputLimitForHold, promptTokenBound } from '@tollgate/billing';
import { firstSystemText, lastUserTextBytes, parseChatRequest, resolveChatRequest } from '@tollgate/validator';
import type { ProviderChatRequest } from '@tollgate/providers';
import { callRoutes } from './call-routes';
import { createChatStream, type StreamSummary } from './chat-stream';
import { readUsage } from './read-usage';
import { holdCredits } from './credit-hold';
import { failed } from './failed';
import { teeChat } from './tee-chat';
import type { StartedHeaders } from './reply';
import type { MeteredContext, Runtime } from './runtime';

const MESSAGE_TOO_LONG_BYTES = 8_000;

/** `POST /v1/chat/completions`, after admission: validation, hold, upstream, settlement. */
export async function handleChat(runtime: Runtime, context: MeteredContext): Promise<Response> {
  const { replies } = runtime;
  const parsed = parseChatRequest(context.body);
  if (!parsed.ok) return replies.error(GatewayError.from(parsed.error));
  const model = runtime.catalogue.find('chat', parsed.value.model);
  if (!model) return replies.error('model_not_found');
  const config = model.config;
  context.log.model = config.id;
  const { principal } = context;
  if (!planAllows(principal.account.plan, config.plan ?? 'free')) return replies.error('model_requires_plan');

  const systemText = firstSystemText(parsed.value.request);
  const character = systemText !== undefined && runtime.isCharacter(systemText);
  if (character && !principal.app) return replies.error('characters_app_only');

  const resolved = resolveChatRequest(parsed.value, config);
  if (!resolved.ok) return replies.error(GatewayError.from(resolved.error));
  const request = resolved.value as ProviderChatRequest;
  if (character && lastUserTextBytes(request) > MESSAGE_TOO_LONG_BYTES) return replies.error('message_too_long');

  // Hold the most the request could cost; lower the output limit to fit the balance if needed.
  const price = config.price as ChatPrice;
  const promptBound = promptTokenBound(request, config);
  const wanted = request.max_completion_tokens;
  const requestId = newRequestId();
  const full = chatHoldMicros(price, promptBound, wanted);
  const held = await holdCredits(runtime.store, principal, {
    micros: full,
    minimum: chatHoldMicros(price, promptBound, 1),
    ttlMs: runtime.holdTtlMs,
    onSettleError: runtime.options.onSettleError,
    timers: runtime.timers,
    requestId,
  });
  if (!held.ok) return replies.error(GatewayError.from(held.error));
  const hold = held.value;
  const extra: Record<string, string> = {};
  if (hold.micros < full) {
    request.max_completion_tokens = outputLimitForHold(price, promptBound, hold.micros, wanted);
    extra[HEADER.outputLimited] = 'balance';
  }
  const started: StartedHeaders = { requestId, funding: principal.funding };
  context.log.requestId = requestId;
  context.log.stream = request.stream;
  const wantsUsage = request.stream_options?.include_usage === true;
  const upstreamRequest: ProviderChatRequest = request.stream ? { ...request, stream_options: { include_usage: true } } : request;

  const charge = (reported: unknown, deliveredText: string, outcome: string) => {
    // Only well-formed usage is money; anything else is charged by the documented estimate.
    const usage = readUsage(reported);
    const promptTokens = usage?.prompt_tokens ?? estimatePromptTokens(request, config);
    // The provider's usage counts what it sent, and it comes after the content: when it arrived,
    // everything it counts was delivered. Without it, count the text the client was sent.
    const completionTokens = usage ? usage.completion_tokens : estimateCompletionTokens(deliveredText);
    let cost: number;
    try {
      cost = chatCostMicros(price, { prompt_tokens: promptTokens, completion_tokens: completionTokens });
    } catch {
      cost = hold.micros; // past the safe-integer range: the most the request was held for
    }
    Object.assign(context.log, { promptTokens, completionTokens, costMicros: cost, outcome });
    return hold.settle(cost, { model: config.id, prompt_tokens: promptTokens, completion_tokens: completionTokens, outcome });
  };

  if (config.tier === 'tee') return teeChat(runtime, context, model, upstreamRequest, hold, started, extra, charge);

  if (!request.stream) {
    // No client signal: a non-streamed call runs to its end and is settled exactly, client or not.
    const result = await callRoutes(model, runtime.attestations, (provider, upstream) => provider.chat!(upstreamRequest, { upstream }));
    if (!result.ok) return failed(runtime, context, hold, started, result.error);
    context.log.provider = result.route.name;
    const completion: ChatCompletion = result.value;
    await charge(completion.usage, completionText(completion), readUsage(completion.usage) ? 'done' : 'no_usage');
    completion.id = completionId();
    completion.model = config.id;
    return replies.json(JSON.stringify(completion), started, extra);
  }

  const abort = new AbortController();
  const result = await callRoutes(model, runtime.attestations, async (provider, upstream) => {
    const stream = await provider.chatStream!(upstreamRequest, { upstream, signal: abort.signal });
    // Wait for the first event before answering 200, so a provider that fails at once gets its
    // own status (and the next route, where allowed); but no longer than a keepalive interval,
    // after which a thinking model's stream starts with keepalive comments.
    const reader = stream.getReader();
    const read = reader.read();
    read.catch(() => {}); // observed later by the stream; never an unhandled rejection
    await withinDeadline(read, runtime.keepaliveMs, { timers: runtime.timers }); // a failure here rejects: mapped by callRoutes
    return { stream, pending: { reader, read } };
  });
  if (!result.ok) {
    abort.abort();
    return failed(runtime, context, hold, started, result.error);
  }
  context.log.provider = result.route.name;
  const endSlot = context.keepSlot();
  const body = createChatStream({
    upstream: result.value.stream,
    pending: result.value.pending,
    id: completionId(),
    model: config.id,
    includeUsage: wantsUsage,
    obfuscate: runtime.obfuscate,
    keepaliveMs: runtime.keepaliveMs,
    idleTimeoutMs: runtime.idleTimeoutMs,
    timers: runtime.timers,
    now: runtime.now,
    // A client that asked for usage gets it even from an upstream that reports none: the estimate it pays.
    usageFallback: (text) => {
      const prompt = estimatePromptTokens(request, config);
      const completion = estimateCompletionTokens(text);
      return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
    },
    onEnd: (summary: StreamSummary) => {
      // A stream that ended on its own has nothing left to stop; abort() builds a DOMException with
      // a stack trace, which on every streamed request is measurable.
      if (summary.outcome !== 'done') abort.abort();
      if (summary.code) context.log.code = summary.code;
      // An upstream that broke before delivering anything is a failed call, as a 502 would be: no charge.
      const nothing = summary.outcome === 'upstream_failed' && !summary.usage && summary.deliveredText === '';
      let close: Promise<unknown>;
      try {
        close = nothing ? hold.release().then(() => void (context.log.costMicros = 0)) : charge(summary.usage, summary.deliveredText, summary.outcome);
      } catch (error) {
        // Never free service in silence: release, and tell the operator what to charge by hand.
        close = hold.release();
        runtime.options.onSettleError?.({ requestId, accountId: principal.account.id, micros: hold.micros, error });
      }
      endSlot(close);
    },
  });
  return new Response(body, { status: 200, headers: replies.headers(started, 'text/event-stream; charset=utf-8', { 'cache-control': 'no-cache', ...extra }) });
}

function completionText(completion: ChatCompletion): string {
  let text = '';
  for (const choice of Array.isArray(completion.choices) ? completion.choices : []) {
    const message = choice?.message;
    if (typeof message?.content === 'string') text += message.content;
    for (const call of Array.isArray(message?.tool_calls) ? message.tool_calls : []) {
      if (typeof call?.function?.arguments === 'string') text += call.function.arguments;
    }
  }
  return text;
}
