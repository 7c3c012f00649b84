import { splitWords } from '../openai/openai-reply';

/** Everything one fake Messages reply says, decided before it is put on the wire. */
export interface AnthropicReplyPlan {
  id: string;
  model: string;
  /** Thinking text (a thinking block first), when the request enabled thinking. */
  thinking?: string;
  text: string;
  toolCalls: { id: string; name: string; input: Record<string, unknown> }[];
  stopReason: string;
  usage: { input_tokens: number; output_tokens: number; cache_read_input_tokens: number; cache_creation_input_tokens: number };
}

/** A fake thinking signature: real ones are opaque base64. */
export const FAKE_THINKING_SIGNATURE = 'EqQBCkgIARABGAIiQFakeSignatureForTestsOnlyAAAA';

/** The non-streamed reply body of a plan, as `POST /v1/messages` returns it. */
export function anthropicMessage(plan: AnthropicReplyPlan): Record<string, unknown> {
  const content: Record<string, unknown>[] = [];
  if (plan.thinking !== undefined) content.push({ type: 'thinking', thinking: plan.thinking, signature: FAKE_THINKING_SIGNATURE });
  if (plan.text !== '') content.push({ type: 'text', text: plan.text });
  for (const call of plan.toolCalls) content.push({ type: 'tool_use', id: call.id, name: call.name, input: call.input });
  return {
    id: plan.id,
    type: 'message',
    role: 'assistant',
    model: plan.model,
    content,
    stop_reason: plan.stopReason,
    stop_sequence: null,
    usage: { ...plan.usage, service_tier: 'standard' },
  };
}

/**
 * The SSE events of a streamed reply, in the API's order: message_start (input usage, one output
 * token so far), each content block as start / ping after the first start / deltas / stop,
 * message_delta (stop reason, cumulative output tokens), message_stop.
 */
export function anthropicStreamEvents(plan: AnthropicReplyPlan): string[] {
  const events: string[] = [];
  const start = { ...anthropicMessage(plan), content: [], stop_reason: null, usage: { ...plan.usage, output_tokens: 1, service_tier: 'standard' } };
  events.push(event('message_start', { type: 'message_start', message: start }));
  let index = 0;
  const block = (contentBlock: Record<string, unknown>, deltas: Record<string, unknown>[]) => {
    events.push(event('content_block_start', { type: 'content_block_start', index, content_block: contentBlock }));
    if (index === 0) events.push(event('ping', { type: 'ping' }));
    for (const delta of deltas) events.push(event('content_block_delta', { type: 'content_block_delta', index, delta }));
    events.push(event('content_block_stop', { type: 'content_block_stop', index }));
    index++;
  };
  if (plan.thinking !== undefined) {
    const deltas = splitWords(plan.thinking).map((thinking) => ({ type: 'thinking_delta', thinking }));
    block({ type: 'thinking', thinking: '', signature: '' }, [...deltas, { type: 'signature_delta', signature: FAKE_THINKING_SIGNATURE }]);
  }
  if (plan.text !== '')
    block(
      { type: 'text', text: '' },
      splitWords(plan.text).map((text) => ({ type: 'text_delta', text })),
    );
  for (const call of plan.toolCalls) {
    // The API opens with an empty partial_json, then sends the arguments in small pieces; for a
    // call without input, that empty piece is all it sends (no "{}").
    const json = JSON.stringify(call.input);
    const pieces = [''];
    if (json !== '{}') for (let at = 0; at < json.length; at += 12) pieces.push(json.slice(at, at + 12));
    block(
      { type: 'tool_use', id: call.id, name: call.name, input: {} },
      pieces.map((partial_json) => ({ type: 'input_json_delta', partial_json })),
    );
  }
  events.push(
    event('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: plan.stopReason, stop_sequence: null },
      usage: { output_tokens: plan.usage.output_tokens },
    }),
  );
  events.push(event('message_stop', { type: 'message_stop' }));
  return events;
}

/** One SSE event as the API writes it: `event:` then `data:`, a blank line after. */
export function event(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}
