import type { ChatMessage, ChatTool, ToolChoice } from '@tollgate/core';
import type { ProviderChatRequest } from '../provider';
import type { AnthropicMessage, AnthropicRequest, AnthropicRequestBlock, AnthropicTool, AnthropicToolChoice } from './anthropic-api';
import { anthropicSampling } from './anthropic-sampling';
import { anthropicThinking } from './anthropic-thinking';
import { convertToAnthropicContent } from './convert-to-anthropic-content';
import { parseToolArguments } from '../http/parse-tool-arguments';

/** The result of {@link convertToAnthropicRequest}: a request body, or why it cannot be sent. */
export type ConvertToAnthropicResult = { ok: true; request: AnthropicRequest } | { ok: false; message: string };

/**
 * Translates a normalised chat request into a Messages API body: system and developer messages
 * become `system`, tool messages become `tool_result` blocks of a user turn, and consecutive turns
 * of one role are merged because the API demands alternation.
 * @example
 * const result = convertToAnthropicRequest(request, 'claude-sonnet-4-5');
 * if (result.ok) await fetch(url, { method: 'POST', body: JSON.stringify(result.request) });
 */
export function convertToAnthropicRequest(request: ProviderChatRequest, upstream: string): ConvertToAnthropicResult {
  const system: { type: 'text'; text: string }[] = [];
  const turns: AnthropicMessage[] = [];
  for (const message of request.messages) {
    if (message.role === 'system' || message.role === 'developer') {
      const content = convertToAnthropicContent(message.content, false);
      if (!content.ok) return content;
      for (const block of content.blocks) if (block.type === 'text') system.push(block);
      continue;
    }
    const converted = convertMessage(message);
    if (!converted.ok) return converted;
    if (converted.message.content.length > 0) pushMerged(turns, converted.message);
  }
  const tools = request.tools?.length ? request.tools.map(convertTool) : undefined;
  const toolChoice = tools ? convertToolChoice(request.tool_choice, request.parallel_tool_calls) : undefined;
  const thinking = anthropicThinking({
    effort: request.reasoning_effort,
    maxTokens: request.max_completion_tokens,
    forcesTool: toolChoice?.type === 'any' || toolChoice?.type === 'tool',
    inToolLoop: inToolLoop(request.messages),
  });
  const sampling = anthropicSampling(request, thinking !== undefined);
  if (!sampling.ok) return sampling;
  return {
    ok: true,
    request: {
      model: upstream,
      max_tokens: request.max_completion_tokens,
      messages: turns,
      ...(system.length > 0 ? { system } : {}),
      ...(tools ? { tools } : {}),
      ...(toolChoice ? { tool_choice: toolChoice } : {}),
      ...(thinking ? { thinking } : {}),
      ...sampling.fields,
    },
  };
}

type ConvertMessageResult = { ok: true; message: AnthropicMessage } | { ok: false; message: string };

function convertMessage(message: ChatMessage): ConvertMessageResult {
  const content = convertToAnthropicContent(message.content);
  if (!content.ok) return content;
  if (message.role === 'tool') {
    const result: AnthropicRequestBlock = {
      type: 'tool_result',
      tool_use_id: toolUseId(message.tool_call_id ?? ''),
      content: content.blocks.length === 1 && content.blocks[0]?.type === 'text' ? content.blocks[0].text : content.blocks,
    };
    return { ok: true, message: { role: 'user', content: [result] } };
  }
  if (message.role !== 'assistant') return { ok: true, message: { role: 'user', content: content.blocks } };
  const blocks = content.blocks;
  for (const call of message.tool_calls ?? []) {
    const input = parseToolArguments(call.function.arguments);
    if (input === undefined) return { ok: false, message: `the arguments of tool call ${call.id} are not a JSON object` };
    blocks.push({ type: 'tool_use', id: toolUseId(call.id), name: call.function.name, input });
  }
  return { ok: true, message: { role: 'assistant', content: blocks } };
}

/** Appends a turn, merging it into the previous one of the same role. */
function pushMerged(turns: AnthropicMessage[], message: AnthropicMessage): void {
  const last = turns[turns.length - 1];
  if (last === undefined || last.role !== message.role) {
    turns.push(message);
    return;
  }
  last.content.push(...message.content);
  // The API wants tool_result blocks first in a user turn; a stable sort keeps both groups' order.
  if (last.role === 'user') last.content.sort((a, b) => Number(b.type === 'tool_result') - Number(a.type === 'tool_result'));
}

function convertTool(tool: ChatTool): AnthropicTool {
  return {
    name: tool.function.name,
    ...(tool.function.description ? { description: tool.function.description } : {}),
    input_schema: tool.function.parameters ?? { type: 'object', properties: {} },
  };
}

function convertToolChoice(choice: ToolChoice | undefined, parallel: boolean | undefined): AnthropicToolChoice | undefined {
  const serial = parallel === false ? { disable_parallel_tool_use: true } : {};
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required') return { type: 'any', ...serial };
  if (typeof choice === 'object') return { type: 'tool', name: choice.function.name, ...serial };
  if (choice === 'auto' || parallel === false) return { type: 'auto', ...serial };
  return undefined;
}

/** Anthropic ids match `^[a-zA-Z0-9_-]+$`; ids minted by other providers may not. */
function toolUseId(id: string): string {
  const safe = id.replace(/[^a-zA-Z0-9_-]/g, '_');
  return safe === '' ? 'toolu_' : safe;
}

/**
 * Whether the last assistant turn called tools: the API then wants that turn's signed thinking
 * blocks back, which an OpenAI-shaped history does not carry, so thinking is left off.
 */
function inToolLoop(messages: ChatMessage[]): boolean {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (message?.role === 'assistant') return (message.tool_calls?.length ?? 0) > 0;
  }
  return false;
}
