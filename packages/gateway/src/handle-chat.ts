import { type ChatCompletion, type ChatCompletionChunk, completionId, GatewayError, HEADER, leanReply, withinDeadline } from '@tollgate/core';
import { chatCostMicros, chatHoldMicros, estimateCompletionTokens, outputLimitForHold, promptTokenBound } from '@tollgate/billing';
import { batchesOfReader, type CallOptions, type ChatProvider, type ChunkBatches, pairedChatBatches, type ProviderChatRequest } from '@tollgate/providers';
import { firstSystemText, lastUserTextBytes, type ParsedChatRequest, parseChatRequest, resolveChatRequest } from '@tollgate/validator';
import { type Admitted, admitMetered, type MeteredEndpoint } from './admit-metered';
import { callRoutes, type RouteResult } from './call-routes';
import { callUpstream } from './call-upstream';
import { billedUsage } from './billed-usage';
import { chatDeliveredCost } from './chat-delivered-cost';
import { chatSseFormat } from './chat-sse-format';
import { failed } from './failed';
import type { CreditHold } from './credit-hold';
import { createMeteredStream, type DeliveringFormat, type OpenedUpstream } from './metered-stream';
import type { ChatModel } from './model-catalogue';
import { PromptEstimate } from './prompt-estimate';
import { readUsage } from './read-usage';
import type { HandlerReply, MeteredContext, Runtime } from './runtime';
import { teeChat } from './tee-chat';

const MESSAGE_TOO_LONG_BYTES = 8_000;

/** A chat request ready for its upstream: the output limit decided, the prompt bounded for the hold. */
export interface PreparedChat {
  request: ProviderChatRequest;
  /** The prompt-token bound of the hold (docs/architecture.md, Billing). */
  promptBound: number;
  /** The prompt's token estimate, measured when first asked for (what a charge without reported usage bills). */
  prompt: PromptEstimate;
  /** The hold at the requested output limit. */
  full: number;
}

/**
 * What a chat request is charged, given what the upstream reported and what the client was sent:
 * called once to settle. `quote` prices the request without settling, for the usage a reply shows
 * before it settles (a stream's usage chunk): the first quote fixes the figure and the settle
 * charges that same figure, so a reply's `cost_micros` is always the ledger entry's amount.
 */
export interface ChatCharge {
  (reported: unknown, deliveredText: string, outcome: string): Promise<void>;
  /** The micros the request is charged; the first call fixes them for the settle. */
  quote(reported: unknown, deliveredText: string): number;
}

/** Chat's own steps: characters, media and part types, `message_too_long`, the hold of the prompt bound and output limit. */
export function chatEndpoint(runtime: Runtime): MeteredEndpoint<ParsedChatRequest, ChatModel, PreparedChat> {
  return {
    parse: parseChatRequest,
    model: (parsed) => runtime.catalogue.chat(parsed.model),
    resolve: (parsed, model, principal) => {
      const systemText = firstSystemText(parsed.request);
      const character = systemText !== undefined && runtime.isCharacter(systemText);
      if (character && !principal.app) return { ok: false, error: { code: 'characters_app_only' } };
      const resolved = resolveChatRequest(parsed, model.config);
      if (!resolved.ok) return resolved;
      const request = resolved.value;
      if (character && lastUserTextBytes(request) > MESSAGE_TOO_LONG_BYTES) return { ok: false, error: { code: 'message_too_long' } };
      const promptBound = promptTokenBound(request, model.config);
      const full = chatHoldMicros(model.price, promptBound, request.max_completion_tokens);
      return { ok: true, value: { request, promptBound, prompt: new PromptEstimate(request, model.config), full } };
    },
    // The minimum is the hold at an output limit of one: below it, not even one token fits.
    hold: (prepared, model) => ({ micros: prepared.full, minimum: chatHoldMicros(model.price, prepared.promptBound, 1) }),
  };
}

/** Lowers the output limit to what the hold pays for, when the balance held less than the full request; the extra headers to send. */
export function fitOutputToHold(model: ChatModel, prepared: PreparedChat, hold: CreditHold): Record<string, string> {
  if (hold.micros >= prepared.full) return {};
  const { request } = prepared;
  request.max_completion_tokens = outputLimitForHold(model.price, prepared.promptBound, hold.micros, request.max_completion_tokens);
  return { [HEADER.outputLimited]: 'balance' };
}

/** A chat request priced: the tokens billed, and their cost (docs/architecture.md, Billing). */
interface ChatPricing {
  micros: number;
  promptTokens: number;
  completionTokens: number;
  /** Of the prompt tokens billed, those billed at the cached price. */
  cachedTokens: number;
  /** What the upstream reported or sent beyond the limits sent to it, not billed. */
  over?: { promptTokens: number; completionTokens: number };
}

/**
 * The cost function of chat: the provider's usage when well formed, billed within the limits the
 * gateway sent upstream (completion tokens at most the output limit, prompt tokens at most the
 * hold's prompt bound; what it reported beyond them goes to the log as `usageOverLimit` and to the
 * entry's meta, unbilled), else the estimate of the prompt and the delivered text, within the same
 * limits: the charge never exceeds the hold. Reported cached prompt tokens are billed at the
 * model's cached price (at most the prompt tokens billed). `promptBound` is the request's bound
 * (what the hold counted), `prompt` its estimate (shared with the stream's other prices).
 */
export function chatCharge(
  context: MeteredContext,
  model: ChatModel,
  request: ProviderChatRequest,
  hold: CreditHold,
  promptBound: number,
  prompt: PromptEstimate,
): ChatCharge {
  // The closures below keep the output limit and the prompt's estimate, not the request (and its prompt text).
  const outputLimit = request.max_completion_tokens;
  const price = (reported: unknown, deliveredText: string): ChatPricing => {
    // Only well-formed usage is money; anything else is charged by the documented estimate.
    const usage = readUsage(reported);
    const promptCount = usage?.prompt_tokens ?? prompt.tokens();
    // The provider's usage counts what it sent, and it comes after the content: when it arrived,
    // everything it counts was delivered. Without it, count the text the client was sent.
    const completionCount = usage ? usage.completion_tokens : estimateCompletionTokens(deliveredText);
    // An upstream that reports or sends more than it was allowed (a model that ignores max_tokens, a
    // broken count, a tee server's text past the limit, whose estimate counts four characters a
    // token) is billed at the limits: the hold was "the most the request could cost" (spec Billing 1).
    const promptTokens = Math.min(promptCount, promptBound);
    const completionTokens = Math.min(completionCount, outputLimit);
    // readUsage kept only a cached count within the reported prompt; within the billed prompt too.
    const cachedTokens = Math.min(usage?.prompt_tokens_details?.cached_tokens ?? 0, promptTokens);
    let micros: number;
    try {
      micros = chatCostMicros(model.price, { prompt_tokens: promptTokens, completion_tokens: completionTokens, cached_tokens: cachedTokens });
    } catch {
      micros = hold.micros; // past the safe-integer range: the most the request was held for
    }
    // Within the limits the cost is at most the hold already; this keeps it so whatever the rounding.
    micros = Math.min(micros, hold.micros);
    const pricing: ChatPricing = { micros, promptTokens, completionTokens, cachedTokens };
    if (promptTokens < promptCount || completionTokens < completionCount) {
      pricing.over = { promptTokens: promptCount - promptTokens, completionTokens: completionCount - completionTokens };
    }
    return pricing;
  };
  let quoted: ChatPricing | undefined;
  const charge = (reported: unknown, deliveredText: string, outcome: string): Promise<void> => {
    // A reply that already showed its cost is charged exactly that.
    const { micros, promptTokens, completionTokens, cachedTokens, over } = quoted ?? price(reported, deliveredText);
    const meta: Record<string, unknown> = { model: model.id, prompt_tokens: promptTokens, completion_tokens: completionTokens, outcome };
    if (cachedTokens > 0) meta.cached_tokens = cachedTokens;
    if (over) {
      context.log.usageOverLimit = over;
      meta.usage_over_limit = { prompt_tokens: over.promptTokens, completion_tokens: over.completionTokens };
    }
    Object.assign(context.log, { promptTokens, completionTokens, costMicros: micros, outcome });
    return hold.settle(micros, meta, { promptTokens, completionTokens });
  };
  const quote = (reported: unknown, deliveredText: string): number => {
    quoted ??= price(reported, deliveredText);
    return quoted.micros;
  };
  return Object.assign(charge, { quote });
}

/** `POST /v1/chat/completions`: admission, then a whole reply, a stream, or a tee pass-through. */
export async function handleChat(runtime: Runtime, context: MeteredContext): Promise<HandlerReply> {
  const admitted = await admitMetered(runtime, context, chatEndpoint(runtime));
  if (!admitted.ok) return admitted.error;
  const { model, prepared, hold, started } = admitted.value;
  const { request, prompt } = prepared;
  const extra = fitOutputToHold(model, prepared, hold);
  context.log.stream = request.stream;
  const charge = chatCharge(context, model, request, hold, prepared.promptBound, prompt);
  const upstreamRequest: ProviderChatRequest = request.stream ? { ...request, stream_options: { include_usage: true } } : request;

  if (model.tee) return teeChat(runtime, context, { ...admitted.value, routes: model.tee }, upstreamRequest, extra, charge);
  // The closures made here share this call's scope: they name the prompt's estimate, never the
  // request, and the upstream calls are made by closures of their own (openChat, callChat), so a
  // stream that outlives this call keeps no prompt text (docs/architecture.md).
  if (request.stream) {
    const format = chatSseFormat({
      id: completionId(),
      model: model.id,
      includeUsage: request.stream_options?.include_usage === true,
      obfuscate: runtime.obfuscate,
      now: runtime.now,
      // A client that asked for usage gets it even from an upstream that reports none: the estimate it pays.
      usageFallback: (text) => billedUsage(prompt, undefined, text),
      // Priced once, for the usage chunk and the settle alike.
      cost: charge.quote,
    });
    return streamMetered(runtime, context, admitted.value, {
      open: openChat(upstreamRequest),
      format,
      charge,
      extra,
    });
  }

  // No client signal: a non-streamed call runs to its end (within its deadline) and is settled
  // exactly, client or not (docs/architecture.md, Billing).
  const result = await callUpstream(runtime, model.routes, { zdr: model.zdr }, callChat(upstreamRequest), { deadlineMs: runtime.wholeCallMs });
  if (!result.ok) return failed(runtime, context, hold, started, result.error);
  context.log.provider = result.route.name;
  const completion: ChatCompletion = result.value;
  const reported = readUsage(completion.usage);
  const text = completionText(completion);
  const micros = charge.quote(completion.usage, text);
  await charge(completion.usage, text, reported ? 'done' : 'no_usage');
  completion.id = completionId();
  completion.model = model.id;
  // The provider's usage as it came (extra detail fields included), or the estimate billed, with the charge.
  completion.usage = reported && completion.usage ? { ...completion.usage, cost_micros: micros } : billedUsage(prompt, undefined, text, micros);
  return runtime.replies.json(JSON.stringify(completion), started, extra, leanReply(context.request));
}

/** A stream's upstream call on one route, in a scope of its own (only the stream's opening keeps it). */
function openChat(request: ProviderChatRequest): StreamSpec<ChatCompletionChunk>['open'] {
  return (provider, upstream, signal) => chatBatches(provider, request, { upstream, signal });
}

/** A whole reply's upstream call on one route, in a scope of its own. */
function callChat(request: ProviderChatRequest): (provider: ChatProvider, upstream: string, signal: AbortSignal) => Promise<ChatCompletion> {
  return (provider, upstream, signal) => provider.chat(request, { upstream, signal });
}

/** What a metered stream of a chat model needs besides the admitted request. */
export interface StreamSpec<T> {
  /** Opens the upstream stream on one route; resolves once the upstream accepted the request. */
  open(provider: ChatProvider, upstream: string, signal: AbortSignal): Promise<ChunkBatches<T>>;
  /** The client's bytes, and what they delivered. */
  format: DeliveringFormat<T>;
  /** The cost function, called once when the stream ended (unless it failed before delivering anything). */
  charge: ChatCharge;
  /** Extra response headers (`X-Output-Limited`). */
  extra: Record<string, string>;
}

/**
 * A streamed chat-model request on the metered stream. The 200 waits for the first upstream
 * event, so a provider that fails at once gets its own status (and the next route, where
 * allowed), but no longer than a keepalive interval: then the 200 goes out and keepalives follow
 * while the upstream still thinks, or still has not answered at all, until the headers deadline.
 * A client that leaves meanwhile aborts the upstream and frees its slot and hold at once; it pays
 * the prompt and what was delivered, as any stream whose client left.
 */
export async function streamMetered<T>(
  runtime: Runtime,
  context: MeteredContext,
  admitted: Admitted<ChatModel, PreparedChat>,
  spec: StreamSpec<T>,
): Promise<HandlerReply> {
  const { model, hold, started } = admitted;
  // No closure of this call names `spec` or `admitted`: the stream's closures outlive the opening,
  // and `spec.open` keeps the upstream request (the prompt) that only the opening needs.
  const { format, charge } = spec;
  const abort = new AbortController();
  const startedAt = runtime.now();
  const opening = openUpstream(model, spec.open, abort.signal, context.log);
  const early = await withinDeadline(opening, Math.min(runtime.keepaliveMs, runtime.headersTimeoutMs), {
    timers: runtime.timers,
    signal: context.request.signal,
  });
  let upstream: OpenedUpstream<T> | Promise<OpenedUpstream<T>>;
  if (early.ok) {
    if (!early.value.ok) return failed(runtime, context, hold, started, early.value.error);
    upstream = early.value.value;
  } else if (early.error.reason === 'deadline' && runtime.headersTimeoutMs <= runtime.keepaliveMs) {
    // The upstream's deadline came before the 200 was due: the error has its own status.
    abort.abort();
    return failed(runtime, context, hold, started, new GatewayError('upstream_error'));
  } else {
    // Still thinking (or not answering) after a keepalive interval, or the client already left:
    // the stream takes it from here (a client gone ends it at once, a failure is its error event).
    upstream = opening.then((result) => {
      if (!result.ok) throw result.error;
      return result.value;
    });
  }
  // From here the stream owns the request: what it delivers is checkpointed on its hold until it settles.
  const deliveredCost = chatDeliveredCost(model, admitted.prepared);
  const touch = hold.track(runtime.checkpoints, () => deliveredCost(format.delivered));
  const { lazyBody, finished } = createMeteredStream({
    upstream,
    format,
    abort,
    signal: context.request.signal,
    releaseSlot: context.releaseSlot,
    settle: (end) => {
      if (end.code) context.log.code = end.code;
      // An upstream that broke before delivering anything is a failed call, as a 502 would be: no charge.
      if (end.outcome === 'upstream_failed' && !format.usage && format.delivered === '') {
        Object.assign(context.log, { costMicros: 0, outcome: end.outcome });
        return hold.release();
      }
      return charge(format.usage, format.delivered, end.outcome);
    },
    report: (error) => {
      // Never free service in silence: release, and tell the operator what to charge by hand.
      void hold.release();
      runtime.options.onSettleError?.({ requestId: started.requestId, accountId: context.principal.account.id, micros: hold.micros, error });
      runtime.reportError(error, context);
    },
    onDelivered: touch,
    keepaliveMs: runtime.keepaliveMs,
    idleTimeoutMs: runtime.idleTimeoutMs,
    clientStallTimeoutMs: runtime.clientStallTimeoutMs,
    headersTimeoutMs: runtime.headersTimeoutMs,
    startedAt,
    timers: runtime.timers,
    now: runtime.now,
  });
  const headers = runtime.replies.headers(started, 'text/event-stream; charset=utf-8', { 'cache-control': 'no-cache', ...spec.extra });
  // A server that writes the body from its source (@tollgate/node's listener) gets a reply that makes no stream.
  const lean = leanReply(context.request);
  return { response: lean ? lean(lazyBody, 200, headers) : new Response(lazyBody.stream(), { status: 200, headers }), finished };
}

/**
 * A stream's upstream, opened on the model's routes in order (callRoutes): resolved with the first
 * batch read, so a failure before the first event is mapped (and failed over where allowed). In a
 * scope of its own: `open` (and the request it calls with) is kept only until the stream opened.
 */
function openUpstream<T>(
  model: ChatModel,
  open: StreamSpec<T>['open'],
  signal: AbortSignal,
  log: MeteredContext['log'],
): Promise<RouteResult<OpenedUpstream<T>>> {
  return callRoutes(model.routes, { zdr: model.zdr }, async (provider, upstream) => {
    const batches = await open(provider, upstream, signal);
    const first = batches.read();
    await first; // a failure before the first event rejects here: mapped by callRoutes (and failed over where allowed)
    return { batches, first };
  }).then((result) => {
    if (result.ok) log.provider = result.route.name;
    return result;
  });
}

/**
 * A provider's streamed chat as batches: its own `chatBatches` while its `chatStream` is the one
 * made from them (no web stream between; `pairedChatBatches`), else its `chatStream`'s chunks one
 * by one — a wrapper that replaced `chatStream` is read through it.
 */
export async function chatBatches(provider: ChatProvider, request: ProviderChatRequest, options: CallOptions): Promise<ChunkBatches<ChatCompletionChunk>> {
  const batches = pairedChatBatches(provider);
  if (batches) return batches.call(provider, request, options);
  return batchesOfReader((await provider.chatStream(request, options)).getReader());
}

/** The text and tool-call arguments of a whole reply (the early-stop estimate counts them). */
export function completionText(completion: ChatCompletion): string {
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
