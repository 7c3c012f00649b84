/**
 * The suite's HTTP client: chat requests whole or streamed, read the way an SDK reads them, with
 * every reply recorded for the secrets scan. A request the server cut (kill -9) is an outcome, not
 * a throw.
 */
import { recordOutput } from './secrets-log';

/** Usage as a reply or the usage chunk reports it. */
export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** What a client saw of one request. */
export interface Reply {
  /** 0 when no status line came (connection refused or cut before it). */
  status: number;
  code: string | undefined;
  requestId: string | undefined;
  version: string | undefined;
  retryAfter: string | undefined;
  contentType: string | undefined;
  body: string;
  usage: Usage | undefined;
  /** Milliseconds from sending to the end of the reply (or to the failure). */
  ms: number;
  /** The connection failed before the reply ended. */
  failed: boolean;
  /** Stream only: content chunks received, whether `[DONE]` came, the error event's code if one came. */
  chunks: number;
  done: boolean;
  errorEvent: string | undefined;
}

/** A chat body: one short user message, usage asked for when streamed. */
export function chatBody(model: string, options: { stream?: boolean; maxTokens?: number; content?: string } = {}): Record<string, unknown> {
  const body: Record<string, unknown> = { model, messages: [{ role: 'user', content: options.content ?? 'hi' }] };
  if (options.maxTokens !== undefined) body.max_completion_tokens = options.maxTokens;
  if (options.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}

/** The hold of {@link chatBody}'s request at {@link PRICE}: 8 per message + the text's bytes, plus the output limit. */
export function holdOf(maxTokens: number, content = 'hi'): number {
  return 8 + Buffer.byteLength(content) + maxTokens;
}

/** Options of {@link send}. */
export interface SendOptions {
  signal?: AbortSignal;
  /** Called with the count of content chunks each time one arrives (streams). */
  onChunk?: (chunks: number) => void;
}

/** POSTs a chat body with a key and reads the whole reply (a stream event by event). */
export async function send(url: string, key: string, body: Record<string, unknown>, options: SendOptions = {}): Promise<Reply> {
  const started = performance.now();
  const reply: Reply = {
    status: 0,
    code: undefined,
    requestId: undefined,
    version: undefined,
    retryAfter: undefined,
    contentType: undefined,
    body: '',
    usage: undefined,
    ms: 0,
    failed: false,
    chunks: 0,
    done: false,
    errorEvent: undefined,
  };
  try {
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: options.signal ?? null,
    });
    reply.status = response.status;
    reply.requestId = response.headers.get('x-request-id') ?? undefined;
    reply.version = response.headers.get('x-service-version') ?? undefined;
    reply.retryAfter = response.headers.get('retry-after') ?? undefined;
    reply.contentType = response.headers.get('content-type') ?? undefined;
    if (reply.contentType?.startsWith('text/event-stream') && response.body) await readEvents(response.body, reply, options);
    else reply.body = await response.text();
  } catch {
    reply.failed = true;
  }
  reply.ms = performance.now() - started;
  recordOutput(reply.body);
  if (!reply.contentType?.startsWith('text/event-stream')) {
    const parsed = parseJson(reply.body);
    reply.code = parsed?.error?.code;
    reply.usage = parsed?.usage;
  }
  return reply;
}

interface Parsed {
  error?: { code?: string };
  usage?: Usage;
  choices?: { delta?: { content?: string } }[];
}

function parseJson(text: string): Parsed | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Parsed) : undefined;
  } catch {
    return undefined;
  }
}

async function readEvents(stream: ReadableStream<Uint8Array>, reply: Reply, options: SendOptions): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = '';
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const text = decoder.decode(value, { stream: true });
    buffer += text;
    if (reply.body.length < 1_000_000) reply.body += text;
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf('\n\n');
      for (const line of event.split('\n')) {
        if (!line.startsWith('data: ')) continue;
        const data = line.slice(6);
        if (data === '[DONE]') {
          reply.done = true;
          continue;
        }
        const chunk = parseJson(data);
        if (chunk?.error) reply.errorEvent = chunk.error.code ?? 'unknown';
        if (chunk?.usage) reply.usage = chunk.usage;
        if (chunk?.choices?.[0]?.delta?.content) {
          reply.chunks++;
          options.onChunk?.(reply.chunks);
        }
      }
    }
  }
}

/** What a request should cost at PRICE, from the usage it reported. */
export function costOf(usage: Usage): number {
  return usage.prompt_tokens + usage.completion_tokens;
}

/** Waits until `condition` holds, checking every 50 ms, for at most `ms`; returns whether it held. */
export async function waitFor(condition: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The pth percentile (0-100) of a list of numbers. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
}

/** Counts of each `status code` pair, for the table. */
export function tally(replies: Reply[]): string {
  const counts = new Map<string, number>();
  for (const reply of replies) {
    const label = reply.failed && reply.status === 0 ? 'failed' : `${reply.status}${reply.code ? ` ${reply.code}` : ''}`;
    counts.set(label, (counts.get(label) ?? 0) + 1);
  }
  return [...counts].map(([label, count]) => `${count}× ${label}`).join(', ');
}
