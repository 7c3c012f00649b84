import { randomBase62 } from '@tollgate/core';
import { countWords, splitWords, type FakeToolCall } from '../openai/openai-reply';
import type { AnthropicReplyPlan } from './anthropic-transcript';
import type { AnthropicWireRequest } from './validate-anthropic-request';

/** What shapes a reply besides the request: the fake's options, resolved for this request. */
export interface AnthropicReplyInput {
  text: string;
  /** Whether `text` was configured for tool turns too (else tool turns carry no text). */
  textWithTools: boolean;
  toolCalls: FakeToolCall[] | undefined;
  thinking: string;
  stopReason?: string;
  promptTokens: number;
  cacheReadTokens: number;
  cacheCreationTokens: number;
}

/**
 * Decides a reply like the model would: thinking first when enabled (within its budget), tool
 * calls when tools are offered and allowed and the last turn is not already tool results (only
 * the first with `disable_parallel_tool_use`, only the named one with `tool_choice: tool`), text
 * cut at `max_tokens` (then `max_tokens` is the stop reason and no tool is called).
 */
export function planAnthropicReply(request: AnthropicWireRequest, input: AnthropicReplyInput): AnthropicReplyPlan {
  const thinking = request.thinking?.type === 'enabled' ? splitWords(input.thinking).slice(0, request.thinking.budget_tokens).join('') : undefined;
  const thinkingTokens = thinking === undefined ? 0 : countWords(thinking);
  const budget = Math.max(0, request.max_tokens - thinkingTokens);
  let toolCalls = chooseToolCalls(request, input.toolCalls);
  const pieces = splitWords(toolCalls.length > 0 && !input.textWithTools ? '' : input.text);
  const cut = pieces.length > budget;
  const text = pieces.slice(0, budget).join('');
  if (cut) toolCalls = [];
  const calls = toolCalls.map((call) => ({ id: `toolu_01${randomBase62(22)}`, name: call.name, input: parseInput(call.arguments) }));
  // A tool call costs one token per 12-character piece of its arguments, as the stream sends them.
  const callTokens = calls.reduce((sum, call) => sum + Math.ceil(JSON.stringify(call.input).length / 12), 0);
  const cached = Math.min(input.cacheReadTokens, input.promptTokens);
  const created = Math.min(input.cacheCreationTokens, input.promptTokens - cached);
  return {
    id: `msg_01${randomBase62(22)}`,
    model: request.model,
    ...(thinking !== undefined ? { thinking } : {}),
    text,
    toolCalls: calls,
    stopReason: input.stopReason ?? (cut ? 'max_tokens' : calls.length > 0 ? 'tool_use' : 'end_turn'),
    usage: {
      input_tokens: input.promptTokens - cached - created,
      output_tokens: Math.max(1, thinkingTokens + Math.min(pieces.length, budget) + callTokens),
      cache_read_input_tokens: cached,
      cache_creation_input_tokens: created,
    },
  };
}

function chooseToolCalls(request: AnthropicWireRequest, calls: FakeToolCall[] | undefined): FakeToolCall[] {
  const choice = request.tool_choice;
  if (!calls?.length || !request.tools?.length || choice?.type === 'none') return [];
  const last = request.messages[request.messages.length - 1];
  const answered = Array.isArray(last?.content) && last.content.some((block) => block.type === 'tool_result');
  if (answered && choice?.type !== 'any' && choice?.type !== 'tool') return [];
  let chosen = choice?.type === 'tool' ? calls.filter((call) => call.name === choice.name) : calls;
  if (choice?.type === 'tool' && chosen.length === 0) chosen = [{ name: choice.name ?? '', arguments: '{}' }];
  return choice?.disable_parallel_tool_use ? chosen.slice(0, 1) : chosen;
}

function parseInput(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
