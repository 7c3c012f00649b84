import type { Usage } from '@tollgate/core';
import { createSseParser } from '@tollgate/sse';
import { ProviderError, type RawReply } from '../provider';
import { abortReason } from '../http/post-json';
import type { UpstreamCall } from './post-openai';

// Only events that may hold usage are parsed; content chunks pass by with one regex test.
const HAS_USAGE = /"usage"\s*:\s*\{/;

/**
 * The tee pass-through: the upstream's bytes, unchanged and in one pass, while usage is read on
 * the side (SSE events parsed incrementally for streams; the JSON body parsed at its end
 * otherwise, from the same chunks, not a copy). `usage` resolves when the body ends, errors or is
 * cancelled, with what was seen.
 */
export function openaiRawReply(call: UpstreamCall, stream: boolean, signal: AbortSignal | undefined): RawReply {
  const { response } = call;
  let usage: Usage | undefined;
  let resolveUsage!: (usage: Usage | undefined) => void;
  const usagePromise = new Promise<Usage | undefined>((resolve) => (resolveUsage = resolve));
  const seen: Uint8Array[] = [];
  const parser = stream
    ? createSseParser((event) => {
        if (HAS_USAGE.test(event.data)) usage = readUsage(event.data) ?? usage;
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
        let read: ReadableStreamReadResult<Uint8Array>;
        try {
          read = await reader.read();
        } catch {
          end(true);
          return controller.error(signal?.aborted ? abortReason(signal) : new ProviderError('upstream_error', { accepted: true, status: response.status }));
        }
        if (read.done) {
          if (parser) parser.end();
          else usage = readUsage(concatText(seen));
          end(false);
          return controller.close();
        }
        if (parser) parser.push(read.value);
        else seen.push(read.value);
        controller.enqueue(read.value);
      },
      cancel(reason) {
        end(true);
        return reader?.cancel(reason).catch(() => undefined);
      },
    },
    { highWaterMark: 0 },
  );
  const contentType = response.headers.get('content-type') ?? (stream ? 'text/event-stream' : 'application/json');
  return { status: response.status, contentType, body, usage: usagePromise };
}

function readUsage(json: string): Usage | undefined {
  try {
    const usage = (JSON.parse(json) as { usage?: unknown }).usage as Usage | undefined;
    if (usage && typeof usage.prompt_tokens === 'number' && typeof usage.completion_tokens === 'number') return usage;
  } catch {
    // Not JSON: no usage to read; the bytes still pass through unchanged.
  }
  return undefined;
}

function concatText(chunks: Uint8Array[]): string {
  const decoder = new TextDecoder();
  let text = '';
  for (const chunk of chunks) text += decoder.decode(chunk, { stream: true });
  return text + decoder.decode();
}
