import { errorRecord, type ChatCompletionChunk, type ErrorCode, type Timers, type Usage } from '@tollgate/core';
import { SSE_DONE, SSE_KEEPALIVE, createKeepalive, sseData, sseError } from '@tollgate/sse';
import { ProviderError } from '@tollgate/providers';
import { readUsage } from './read-usage';

/** How a stream ended. */
export type StreamOutcome = 'done' | 'client_gone' | 'upstream_failed';

/** What a finished stream delivered, for settlement. */
export interface StreamSummary {
  outcome: StreamOutcome;
  /** Usage as the upstream reported it, when it did. */
  usage: Usage | undefined;
  /** Text and tool-call arguments the client was sent (for the early-stop charge). */
  deliveredText: string;
  /** The code of the error event, when the upstream failed. */
  code?: ErrorCode;
}

/** Options of {@link createChatStream}. */
export interface ChatStreamOptions {
  upstream: ReadableStream<ChatCompletionChunk>;
  /** A read of `upstream`'s reader already under way (the gateway waits for the first event before answering). */
  pending?: { reader: ReadableStreamDefaultReader<ChatCompletionChunk>; read: Promise<ReadableStreamReadResult<ChatCompletionChunk>> };
  /** The `chatcmpl-` id every chunk carries. */
  id: string;
  /** The model id the client sent. */
  model: string;
  /** Whether the client asked for the usage chunk. */
  includeUsage: boolean;
  /**
   * The usage to show in the usage chunk when the upstream reported none (the estimate the account
   * is charged). Without it such a stream has no usage chunk even when the client asked for one.
   */
  usageFallback?: (deliveredText: string) => Usage;
  obfuscate: () => string;
  keepaliveMs: number;
  idleTimeoutMs: number;
  timers: Timers;
  now: () => number;
  /** Called once, when the stream ended in any way. */
  onEnd: (summary: StreamSummary) => void;
}

const encoder = new TextEncoder();

/**
 * The client's SSE body over the upstream's chunks. Pull-based: the upstream is read only when the
 * client reads, so backpressure reaches the provider. Rewrites `id` and `model`, adds
 * `obfuscation`, strips the usage chunk unless asked, sends `: keepalive` after quiet periods,
 * turns an upstream failure or stall into one error event without `[DONE]`, and aborts the
 * upstream when the client goes away.
 */
export function createChatStream(options: ChatStreamOptions): ReadableStream<Uint8Array> {
  const { upstream, id, model, includeUsage, obfuscate, timers, now } = options;
  const reader = options.pending?.reader ?? upstream.getReader();
  let pendingRead = options.pending?.read;
  let usage: Usage | undefined;
  let created: number | undefined;
  let delivered = '';
  let ended = false;
  // The idle clock: since when we wait on the upstream (a read is pending) or, between reads, on
  // the client. Only upstream silence is a stall; a client that does not read must not be reported
  // as a provider failure (backpressure keeps the upstream unread meanwhile).
  let waitingOnUpstream = false;
  let since = now();
  let idleTimer: unknown;
  let controllerRef: ReadableStreamDefaultController<Uint8Array> | undefined;

  const keepalive = createKeepalive({
    intervalMs: options.keepaliveMs,
    timers,
    now,
    onKeepalive: () => {
      if (!ended && controllerRef) controllerRef.enqueue(encoder.encode(SSE_KEEPALIVE));
    },
  });

  const end = (summary: Omit<StreamSummary, 'usage' | 'deliveredText'>) => {
    if (ended) return;
    ended = true;
    keepalive.stop();
    timers.clearTimeout(idleTimer);
    try {
      options.onEnd({ ...summary, usage, deliveredText: delivered });
    } catch {
      // onEnd settles and frees the slot; it must not take the stream down with it.
    }
  };

  const fail = (controller: ReadableStreamDefaultController<Uint8Array>, code: ErrorCode) => {
    if (ended) return;
    controller.enqueue(encoder.encode(sseError(errorRecord(code))));
    controller.close();
    end({ outcome: 'upstream_failed', code });
  };

  // One lazily re-armed timer, not one per chunk. An upstream silent that long while we wait on it
  // fails the stream. A client that read nothing that long is stuck: the stream ends as if it had
  // left (upstream aborted, slot freed, delivered text paid), without blaming the provider.
  const watchIdle = () => {
    const idle = now() - since;
    if (idle >= options.idleTimeoutMs) {
      if (controllerRef && !ended) {
        reader.cancel().catch(() => {});
        if (waitingOnUpstream) fail(controllerRef, 'upstream_error');
        else {
          controllerRef.close();
          end({ outcome: 'client_gone' });
        }
      }
      return;
    }
    idleTimer = timers.setTimeout(watchIdle, options.idleTimeoutMs - idle);
  };

  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        controllerRef = controller;
        idleTimer = timers.setTimeout(watchIdle, options.idleTimeoutMs);
      },
      async pull(controller) {
        try {
          await forward(controller);
        } catch {
          // A chunk of a shape no provider should send: the provider failed, never the gateway.
          reader.cancel().catch(() => {});
          fail(controller, 'upstream_error');
        }
      },
      cancel() {
        // The client went away: abort the upstream and pay for what was delivered.
        reader.cancel().catch(() => {});
        end({ outcome: 'client_gone' });
      },
    },
    { highWaterMark: 0 },
  );

  async function forward(controller: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    for (;;) {
      let result: ReadableStreamReadResult<ChatCompletionChunk>;
      waitingOnUpstream = true;
      since = now();
      try {
        const read = pendingRead ?? reader.read();
        pendingRead = undefined;
        result = await read;
      } catch (error) {
        fail(controller, error instanceof ProviderError ? error.code : 'upstream_error');
        return;
      }
      if (ended) return;
      if (result.done) {
        const shown = includeUsage ? (usage ?? options.usageFallback?.(delivered)) : undefined;
        if (shown) {
          controller.enqueue(
            encoder.encode(
              sseData(
                JSON.stringify({
                  id,
                  object: 'chat.completion.chunk',
                  created: created ?? Math.floor(now() / 1000),
                  model,
                  choices: [],
                  usage: shown,
                  obfuscation: obfuscate(),
                }),
              ),
            ),
          );
        }
        controller.enqueue(encoder.encode(SSE_DONE));
        controller.close();
        end({ outcome: 'done' });
        return;
      }
      const chunk = result.value;
      waitingOnUpstream = false;
      since = now();
      keepalive.touch();
      created ??= chunk.created;
      if (chunk.usage) usage = readUsage(chunk.usage) ?? usage;
      if (!Array.isArray(chunk.choices) || chunk.choices.length === 0) continue; // the usage chunk: sent (if asked) just before [DONE]
      for (const choice of chunk.choices) {
        const delta = (choice.delta ??= {});
        // Some compatible servers send "" until the end; the spec's value there is null.
        if ((choice.finish_reason as string) === '') choice.finish_reason = null;
        if (typeof delta.content === 'string') delivered += delta.content;
        if (delta.tool_calls) for (const call of delta.tool_calls) if (call.function?.arguments) delivered += call.function.arguments;
      }
      chunk.id = id;
      chunk.model = model;
      chunk.usage = undefined;
      chunk.obfuscation = obfuscate();
      controller.enqueue(encoder.encode(sseData(JSON.stringify(chunk))));
      return;
    }
  }
}
