import { SSE_DONE, sseData } from '@tollgate/sse';
import type { FakeGeneration } from './openai-reply';

/** What every chunk and reply of one request shares. */
export interface WireMeta {
  id: string;
  created: number;
  model: string;
}

const FINGERPRINT = 'fp_fake0001';

/** The non-streamed `chat.completion` body, field for field as OpenAI sends it. */
export function completionBody(generation: FakeGeneration, meta: WireMeta): string {
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: generation.toolCalls.length > 0 ? null : generation.pieces.join(''),
    refusal: null,
    annotations: [],
  };
  if (generation.toolCalls.length > 0) {
    message.tool_calls = generation.toolCalls.map((call) => ({
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: call.arguments },
    }));
  }
  return JSON.stringify({
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: generation.finishReason }],
    usage: generation.usage,
    service_tier: 'default',
    system_fingerprint: FINGERPRINT,
  });
}

/** Options of {@link streamEvents}. */
export interface StreamShape {
  /** `stream_options.include_usage`: every chunk carries `usage: null` and a usage chunk ends the stream. */
  includeUsage: boolean;
  /** Makes the `obfuscation` field; absent when the client turned it off. */
  obfuscation?: () => string;
}

/**
 * The SSE events of a streamed reply: the role delta, content (or tool-call) deltas, the
 * finish_reason chunk, the usage chunk when asked for, then `[DONE]`.
 */
export function streamEvents(generation: FakeGeneration, meta: WireMeta, shape: StreamShape): string[] {
  const events: string[] = [];
  const chunk = (choices: unknown[], usage?: unknown) => {
    const body: Record<string, unknown> = {
      id: meta.id,
      object: 'chat.completion.chunk',
      created: meta.created,
      model: meta.model,
      service_tier: 'default',
      system_fingerprint: FINGERPRINT,
      choices,
    };
    if (shape.includeUsage) body.usage = usage ?? null;
    if (shape.obfuscation) body.obfuscation = shape.obfuscation();
    events.push(sseData(JSON.stringify(body)));
  };
  const choice = (delta: unknown, finishReason: string | null = null) => ({ index: 0, delta, logprobs: null, finish_reason: finishReason });

  if (generation.toolCalls.length > 0) {
    generation.toolCalls.forEach((call, index) => {
      const head = { index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } };
      chunk([choice(index === 0 ? { role: 'assistant', content: null, tool_calls: [head], refusal: null } : { tool_calls: [head] })]);
      for (const piece of call.pieces) chunk([choice({ tool_calls: [{ index, function: { arguments: piece } }] })]);
    });
  } else {
    chunk([choice({ role: 'assistant', content: '', refusal: null })]);
    for (const piece of generation.pieces) chunk([choice({ content: piece })]);
  }
  chunk([choice({}, generation.finishReason)]);
  if (shape.includeUsage) chunk([], generation.usage);
  events.push(SSE_DONE);
  return events;
}
