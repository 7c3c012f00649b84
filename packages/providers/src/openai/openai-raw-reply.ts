import type { Usage } from '@tollgate/core';
import { createSseParser } from '@tollgate/sse';
import { ProviderError, type RawReply } from '../provider';
import { abortReason } from '../http/post-json';
import { REPLY_BODY_LIMIT } from '../http/read-json-reply';
import type { UpstreamCall } from './post-openai';

/**
 * The tee pass-through: the upstream's bytes, unchanged and in one pass, while usage and the
 * delivered text are read on the side (SSE events parsed incrementally for streams; the JSON body
 * parsed at its end otherwise, from the same chunks, not a copy). `usage` resolves when the body
 * ends, errors or is cancelled, with what was seen; `delivered()` is the text of the events
 * already passed on.
 */
export function openaiRawReply(call: UpstreamCall, stream: boolean, signal: AbortSignal | undefined): RawReply {
  const { response } = call;
  let usage: Usage | undefined;
  let delivered = '';
  let resolveUsage!: (usage: Usage | undefined) => void;
  const usagePromise = new Promise<Usage | undefined>((resolve) => (resolveUsage = resolve));
  const seen: Uint8Array[] = [];
  let seenBytes = 0;
  // Each event is parsed before its bytes are passed on, so `delivered` never runs behind the body.
  const read = (json: string, key: 'delta' | 'message') => {
    const value = parseJson(json);
    usage = readUsage(value) ?? usage;
    delivered += readText(value, key);
  };
  const parser = stream
    ? createSseParser((event) => {
        if (event.data !== '[DONE]') read(event.data, 'delta');
      })
    : undefined;
  const reader = response.body?.getReader();
  let over = false;
  const end = (abort: boolean) => {
    if (over) return;
    over = true;
    call.unlink();
    if (abort) call.abort();
    resolveUsage(usage);
  };

  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (!reader) {
          end(false);
          return controller.close();
        }
        let result: ReadableStreamReadResult<Uint8Array>;
        try {
          result = await reader.read();
        } catch {
          if (over) return; // cancelled meanwhile: nothing left to report
          end(true);
          return controller.error(signal?.aborted ? abortReason(signal) : new ProviderError('upstream_error', { accepted: true, status: response.status }));
        }
        if (over) return;
        try {
          if (result.done) {
            // The parser's last event is complete only now: it too may be past the bound.
            if (parser) parser.end();
            else read(concatText(seen), 'message');
          } else if (parser) parser.push(result.value);
          else {
            seenBytes += result.value.byteLength;
            if (seenBytes > REPLY_BODY_LIMIT) throw new RangeError(`reply over ${REPLY_BODY_LIMIT} bytes`);
            seen.push(result.value);
          }
        } catch {
          // An event or a whole reply past its bound (the parser's, REPLY_BODY_LIMIT): a broken reply.
          end(true);
          void reader.cancel().catch(() => undefined);
          return controller.error(new ProviderError('upstream_error', { accepted: true, status: response.status }));
        }
        if (result.done) {
          end(false);
          return controller.close();
        }
        controller.enqueue(result.value);
      },
      cancel(reason) {
        end(true);
        return reader?.cancel(reason).catch(() => undefined);
      },
    },
    { highWaterMark: 0 },
  );
  const contentType = response.headers.get('content-type') ?? (stream ? 'text/event-stream' : 'application/json');
  return { status: response.status, contentType, body, usage: usagePromise, delivered: () => delivered };
}

function parseJson(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return undefined; // not JSON: nothing to read; the bytes still pass through unchanged
  }
}

function readUsage(value: unknown): Usage | undefined {
  const usage = (value as { usage?: Usage } | undefined)?.usage;
  if (usage && typeof usage.prompt_tokens === 'number' && typeof usage.completion_tokens === 'number') return usage;
  return undefined;
}

/** Content and tool-call arguments of a chunk's deltas (`delta`) or a whole reply's messages (`message`). */
function readText(value: unknown, key: 'delta' | 'message'): string {
  const choices = (value as { choices?: unknown } | undefined)?.choices;
  if (!Array.isArray(choices)) return '';
  let text = '';
  for (const choice of choices) {
    const part = (choice as Record<string, unknown> | null)?.[key] as { content?: unknown; tool_calls?: unknown } | undefined;
    if (typeof part?.content === 'string') text += part.content;
    if (!Array.isArray(part?.tool_calls)) continue;
    for (const call of part.tool_calls) {
      const args = (call as { function?: { arguments?: unknown } } | null)?.function?.arguments;
      if (typeof args === 'string') text += args;
    }
  }
  return text;
}

function concatText(chunks: Uint8Array[]): string {
  const decoder = new TextDecoder();
  let text = '';
  for (const chunk of chunks) text += decoder.decode(chunk, { stream: true });
  return text + decoder.decode();
}
