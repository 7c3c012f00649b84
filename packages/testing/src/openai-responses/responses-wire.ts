import type { FakeGeneration } from '../openai/openai-reply';

/** What the response object of one request shares with its events. */
export interface ResponsesWireMeta {
  id: string;
  createdAt: number;
  model: string;
  /** The request body, for the fields a response echoes. */
  request: Record<string, unknown>;
  /** Item ids, in the order the items appear. */
  itemIds: string[];
}

type Item = Record<string, unknown>;

/** The output items of a generation: a message, or its function calls. */
function outputItems(generation: FakeGeneration, meta: ResponsesWireMeta, status: 'completed' | 'incomplete'): Item[] {
  if (generation.toolCalls.length > 0) {
    return generation.toolCalls.map((call, index) => ({
      id: meta.itemIds[index],
      type: 'function_call',
      status: 'completed',
      arguments: call.arguments,
      call_id: call.id,
      name: call.name,
    }));
  }
  const text = generation.pieces.join('');
  return [{ id: meta.itemIds[0], type: 'message', status, content: [{ type: 'output_text', annotations: [], logprobs: [], text }], role: 'assistant' }];
}

/** The response object, field for field in the order OpenAI sends it, with OpenAI's own extras. */
export function responseBody(generation: FakeGeneration | undefined, meta: ResponsesWireMeta, status: 'in_progress' | 'completed' | 'incomplete'): Item {
  const request = meta.request;
  const usage = generation?.usage;
  return {
    id: meta.id,
    object: 'response',
    created_at: meta.createdAt,
    status,
    background: false,
    billing: { payer: 'developer' },
    error: null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    max_tool_calls: null,
    model: `${meta.model}-2025-04-14`,
    output: generation === undefined || status === 'in_progress' ? [] : outputItems(generation, meta, status === 'incomplete' ? 'incomplete' : 'completed'),
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: null,
    prompt_cache_key: null,
    reasoning: { effort: null, summary: null },
    safety_identifier: null,
    service_tier: 'default',
    store: request.store ?? true,
    temperature: request.temperature ?? 1,
    text: { format: { type: 'text' }, verbosity: 'medium' },
    tool_choice: request.tool_choice ?? 'auto',
    tools: request.tools ?? [],
    top_logprobs: 0,
    top_p: request.top_p ?? 1,
    truncation: 'disabled',
    usage:
      usage === undefined || status === 'in_progress'
        ? null
        : {
            input_tokens: usage.prompt_tokens,
            input_tokens_details: { cached_tokens: usage.prompt_tokens_details.cached_tokens },
            output_tokens: usage.completion_tokens,
            output_tokens_details: { reasoning_tokens: usage.completion_tokens_details.reasoning_tokens },
            total_tokens: usage.total_tokens,
          },
    user: null,
    metadata: request.metadata ?? {},
  };
}

/**
 * The SSE events of a streamed response as OpenAI sends them: `event:` lines, `sequence_number`
 * from 0, one delta per token piece with `obfuscation` (unless turned off), and no `[DONE]`.
 */
export function responseEvents(generation: FakeGeneration, meta: ResponsesWireMeta, obfuscation: (() => string) | undefined): string[] {
  const events: string[] = [];
  let sequence = 0;
  const emit = (type: string, fields: Item, padded = false) => {
    const data: Item = { type, sequence_number: sequence++, ...fields };
    if (padded && obfuscation) data.obfuscation = obfuscation();
    events.push(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  const status = generation.finishReason === 'length' ? 'incomplete' : 'completed';
  const final = responseBody(generation, meta, status);
  emit('response.created', { response: responseBody(generation, meta, 'in_progress') });
  emit('response.in_progress', { response: responseBody(generation, meta, 'in_progress') });
  const items = final.output as Item[];
  items.forEach((item, index) => {
    const base = { item_id: item.id, output_index: index };
    if (item.type === 'function_call') {
      emit('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', arguments: '' } });
      for (const piece of generation.toolCalls[index]?.pieces ?? []) emit('response.function_call_arguments.delta', { ...base, delta: piece }, true);
      emit('response.function_call_arguments.done', { ...base, arguments: item.arguments });
    } else {
      emit('response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', content: [] } });
      const part = { type: 'output_text', annotations: [], logprobs: [], text: '' };
      emit('response.content_part.added', { ...base, content_index: 0, part });
      for (const piece of generation.pieces) emit('response.output_text.delta', { ...base, content_index: 0, delta: piece, logprobs: [] }, true);
      const text = generation.pieces.join('');
      emit('response.output_text.done', { ...base, content_index: 0, text, logprobs: [] });
      emit('response.content_part.done', { ...base, content_index: 0, part: { ...part, text } });
    }
    emit('response.output_item.done', { output_index: index, item });
  });
  emit(status === 'completed' ? 'response.completed' : 'response.incomplete', { response: final });
  return events;
}
