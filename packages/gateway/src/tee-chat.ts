import { concatBytes, GatewayError, type Usage, withinDeadline } from '@tollgate/core';
import { batchesOfReader, type ProviderChatRequest, type RawReply } from '@tollgate/providers';
import type { Admitted } from './admit-metered';
import { callRoutes, toGatewayError } from './call-routes';
import { callUpstream } from './call-upstream';
import { chatDeliveredCost } from './chat-delivered-cost';
import { failed } from './failed';
import type { ChatCharge, PreparedChat } from './handle-chat';
import { createMeteredStream, type StreamFormat } from './metered-stream';
import type { AttestedProvider, ChatModel, Route } from './model-catalogue';
import type { HandlerReply, MeteredContext, Runtime } from './runtime';

/** A tee model admitted, with its routes as attested pass-through ones. */
type TeeAdmitted = Admitted<ChatModel, PreparedChat> & { routes: Route<AttestedProvider>[] };

/** The pass-through: the same bytes, no keepalive, no error event (the gateway adds nothing to them). */
const PASS_THROUGH: StreamFormat<Uint8Array> = { item: (bytes) => bytes, done: () => undefined };

/**
 * Tee models: the attested server's reply passes through byte for byte; usage and the delivered
 * text are read on the side. The bytes are the server's, so the gateway adds nothing to them: the
 * usage chunk (forced upstream for billing) reaches the client even unasked, and a stalled stream
 * ends without `[DONE]` rather than with a gateway-made error event. The status is the server's,
 * so nothing is answered before it came (no early 200 and keepalives as on other streams).
 */
export async function teeChat(
  runtime: Runtime,
  context: MeteredContext,
  admitted: TeeAdmitted,
  request: ProviderChatRequest,
  extra: Record<string, string>,
  charge: ChatCharge,
): Promise<HandlerReply> {
  const { model, hold, started, routes } = admitted;
  const policy = { zdr: model.zdr, attested: (provider: AttestedProvider) => runtime.attestations.check(provider) };
  if (!request.stream) {
    // As for other chat models, a whole reply runs to its end (within its deadlines), client or not.
    const result = await callUpstream(runtime, routes, policy, (provider, upstream, signal) => provider.chatRaw(request, { upstream, signal }), {
      deadlineMs: runtime.headersTimeoutMs,
    });
    if (!result.ok) return failed(runtime, context, hold, started, result.error);
    context.log.provider = result.route.name;
    const raw = result.value;
    let bytes: Uint8Array<ArrayBuffer>;
    // Read through a reader of our own, so that past the deadline cancelling it closes the
    // upstream's reply (a body locked by another reader could not be cancelled, and stayed open).
    const reader = raw.body.getReader();
    try {
      const read = await withinDeadline(readAll(reader), runtime.bodyTimeoutMs, { timers: runtime.timers });
      if (!read.ok) {
        await reader.cancel().catch(() => undefined);
        return failed(runtime, context, hold, started, new GatewayError('upstream_error'));
      }
      bytes = read.value;
    } catch (error) {
      // A reply cut before its end is a failed call, as for other models: 502, hold released.
      return failed(runtime, context, hold, started, toGatewayError(error));
    }
    const usage = await raw.usage;
    await charge(usage, delivered(raw), usage ? 'done' : 'no_usage');
    return new Response(bytes, { status: raw.status, headers: runtime.replies.headers(started, raw.contentType, extra) });
  }

  const abort = new AbortController();
  const startedAt = runtime.now();
  const opening = callRoutes(routes, policy, (provider, upstream) => provider.chatRaw(request, { upstream, signal: abort.signal }));
  const answer = await withinDeadline(opening, runtime.headersTimeoutMs, { timers: runtime.timers, signal: context.request.signal });
  if (!answer.ok) {
    abort.abort();
    if (answer.error.reason === 'deadline') return failed(runtime, context, hold, started, new GatewayError('upstream_error'));
    // The client left before the server answered: it pays the prompt, as any stream whose client left.
    await context.releaseSlot();
    await charge(undefined, '', 'incomplete');
    context.log.outcome = 'client_gone';
    return new Response(null, { status: 200, headers: runtime.replies.headers(started, 'text/event-stream; charset=utf-8', extra) });
  }
  if (!answer.value.ok) return failed(runtime, context, hold, started, answer.value.error);
  context.log.provider = answer.value.route.name;
  const raw = answer.value.value;
  // A provider owes usage only for a body read to its end: after a cut or cancel, take what it has
  // already settled, so a usage promise that never resolves cannot hang the settlement.
  const deliveredCost = chatDeliveredCost(model, admitted.prepared);
  const touch = hold.track(runtime.checkpoints, () => deliveredCost(delivered(raw)));
  const { body, finished } = createMeteredStream({
    upstream: { batches: batchesOfReader(raw.body.getReader()) },
    format: PASS_THROUGH,
    abort,
    signal: context.request.signal,
    releaseSlot: context.releaseSlot,
    settle: async (end) => {
      const broke = end.outcome === 'upstream_failed';
      if (broke) context.log.code = 'upstream_error';
      const complete = end.outcome === 'done';
      let usage: Usage | undefined;
      try {
        usage = await (complete ? raw.usage : Promise.race([raw.usage, Promise.resolve(undefined)]));
      } catch {
        usage = undefined;
      }
      // An upstream that broke before delivering anything is a failed call, as for other models: no charge.
      if (broke && !usage && delivered(raw) === '') {
        context.log.costMicros = 0;
        return hold.release();
      }
      return charge(usage, delivered(raw), usage ? 'done' : complete ? 'no_usage' : 'incomplete');
    },
    report: (error) => {
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
  const headers = runtime.replies.headers(started, raw.contentType, { 'cache-control': 'no-cache', ...extra });
  return { response: new Response(body, { status: raw.status, headers }), finished };
}

/** A whole body's bytes, read to its end through `reader`. */
async function readAll(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<Uint8Array<ArrayBuffer>> {
  const chunks: Uint8Array[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
  }
  return concatBytes(chunks);
}

/** The text passed on so far; a provider without `delivered` is charged the prompt only when it reports no usage. */
function delivered(raw: RawReply): string {
  return raw.delivered?.() ?? '';
}
