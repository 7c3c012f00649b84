import type { Timers, Usage } from '@tollgate/core';
import type { ProviderChatRequest } from '@tollgate/providers';
import { callRoutes, toGatewayError } from './call-routes';
import type { CreditHold } from './credit-hold';
import { failed } from './failed';
import type { StartedHeaders } from './reply';
import type { MeteredContext, Runtime } from './runtime';

/**
 * Tee models: the attested server's reply passes through byte for byte; usage and the delivered
 * text are read on the side. The bytes are the server's, so the gateway adds nothing to them: the
 * usage chunk (forced upstream for billing) reaches the client even unasked, and a stalled stream
 * ends without `[DONE]` rather than with a gateway-made error event.
 */
export async function teeChat(
  runtime: Runtime,
  context: MeteredContext,
  model: NonNullable<ReturnType<Runtime['catalogue']['find']>>,
  request: ProviderChatRequest,
  hold: CreditHold,
  started: StartedHeaders,
  extra: Record<string, string>,
  charge: (usage: Usage | undefined, deliveredText: string, outcome: string) => Promise<void>,
): Promise<Response> {
  const abort = new AbortController();
  const result = await callRoutes(model, runtime.attestations, (provider, upstream) =>
    provider.chatRaw!(request, { upstream, ...(request.stream ? { signal: abort.signal } : {}) }),
  );
  if (!result.ok) return failed(runtime, context, hold, started, result.error);
  context.log.provider = result.route.name;
  const raw = result.value;
  // A provider without `delivered` is charged the prompt only when it reports no usage.
  const delivered = () => raw.delivered?.() ?? '';
  if (!request.stream) {
    let bytes: ArrayBuffer;
    try {
      bytes = await new Response(raw.body).arrayBuffer();
    } catch (error) {
      // A reply cut before its end is a failed call, as for other models: 502, hold released.
      return failed(runtime, context, hold, started, toGatewayError(error));
    }
    const usage = await raw.usage;
    await charge(usage, delivered(), usage ? 'done' : 'no_usage');
    return new Response(bytes, { status: raw.status, headers: runtime.replies.headers(started, raw.contentType, extra) });
  }
  const endSlot = context.keepSlot();
  // The slot is held until the body ends, errors, stalls or is cancelled; only then is usage final.
  // A provider owes usage only for a body read to its end: after a cut or cancel, take what it has
  // already settled, so a usage promise that never resolves cannot hang the settlement.
  const body = teePassThrough(raw.body, {
    idleTimeoutMs: runtime.idleTimeoutMs,
    timers: runtime.timers,
    now: runtime.now,
    onEnd: (end) => {
      const broke = end === 'cut' || end === 'stalled';
      if (broke) context.log.code = 'upstream_error';
      const complete = end === 'done';
      const usage = complete ? raw.usage : Promise.race([raw.usage, Promise.resolve(undefined)]);
      const settle = (usage: Usage | undefined) => {
        // An upstream that broke before delivering anything is a failed call, as for other models: no charge.
        if (broke && !usage && delivered() === '') return hold.release().then(() => void (context.log.costMicros = 0));
        return charge(usage, delivered(), usage ? 'done' : complete ? 'no_usage' : 'incomplete');
      };
      endSlot(usage.then(settle, () => settle(undefined)));
    },
  });
  const headers = runtime.replies.headers(started, raw.contentType, { 'cache-control': 'no-cache', ...extra });
  return new Response(body, { status: raw.status, headers });
}

/** How a tee body ended: read to its end, cut by the upstream, left by the client, or stalled upstream. */
type TeeEnd = 'done' | 'cut' | 'client_gone' | 'stalled';

/**
 * The same bytes, unchanged, calling `onEnd` once when the body ends, errors or is cancelled. The
 * idle rule of createChatStream: an upstream silent for `idleTimeoutMs` while a read is pending,
 * or a client that read nothing that long, aborts the upstream and ends the body (without `[DONE]`,
 * which the client treats as incomplete). One lazily re-armed timer, not one per chunk.
 */
function teePassThrough(
  source: ReadableStream<Uint8Array>,
  options: { idleTimeoutMs: number; timers: Timers; now: () => number; onEnd: (end: TeeEnd) => void },
): ReadableStream<Uint8Array> {
  const { idleTimeoutMs, timers, now } = options;
  const reader = source.getReader();
  let closed = false; // the client's body is over: nothing more is read or enqueued
  let ended = false;
  let waitingOnUpstream = false;
  let since = now();
  let timer: unknown;
  const end = (how: TeeEnd) => {
    if (ended) return;
    ended = true;
    options.onEnd(how);
  };
  const close = () => {
    closed = true;
    timers.clearTimeout(timer);
  };
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        const watch = () => {
          if (closed) return;
          const idle = now() - since;
          if (idle < idleTimeoutMs) {
            timer = timers.setTimeout(watch, idleTimeoutMs - idle);
            return;
          }
          const how = waitingOnUpstream ? 'stalled' : 'client_gone';
          close();
          controller.close();
          // Cancel the source first: the provider aborts the upstream and settles its usage promise.
          void reader
            .cancel()
            .catch(() => undefined)
            .then(() => end(how));
        };
        timer = timers.setTimeout(watch, idleTimeoutMs);
      },
      async pull(controller) {
        waitingOnUpstream = true;
        since = now();
        let read: ReadableStreamReadResult<Uint8Array>;
        try {
          read = await reader.read();
        } catch (error) {
          if (closed) return;
          close();
          end('cut');
          return controller.error(error);
        }
        if (closed) return; // stopped by the idle rule while this read was pending
        waitingOnUpstream = false;
        since = now();
        if (read.done) {
          close();
          end('done');
          return controller.close();
        }
        controller.enqueue(read.value);
      },
      async cancel(reason) {
        close();
        await reader.cancel(reason).catch(() => undefined);
        end('client_gone');
      },
    },
    { highWaterMark: 0 },
  );
}
