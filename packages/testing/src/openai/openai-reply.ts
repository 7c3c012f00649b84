import type { ChatRequest, ToolCall } from '@tollgate/core';

/** A chat request body as the fake receives it: the OpenAI fields it reads, anything else kept. */
export type FakeChatRequest = Partial<ChatRequest> & { max_tokens?: number | null; [field: string]: unknown };

/** A tool call the fake returns: a function name and its JSON arguments. */
export interface FakeToolCall {
  name: string;
  arguments: string;
}

/** Usage as OpenAI reports it, with the detail objects it always sends. */
export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number; audio_tokens: number };
  completion_tokens_details: { reasoning_tokens: number; audio_tokens: number; accepted_prediction_tokens: number; rejected_prediction_tokens: number };
}

/** What the fake generates for one request, before it is shaped into a reply or a stream. */
export interface FakeGeneration {
  /** Content pieces, one per completion token; they join to the reply text. */
  pieces: string[];
  /** Tool calls with their ids and argument pieces (one completion token per piece). */
  toolCalls: { id: string; name: string; arguments: string; pieces: string[] }[];
  finishReason: 'stop' | 'length' | 'tool_calls';
  usage: FakeUsage;
}

/** Whitespace-separated words: the fake's token count, deterministic and easy to predict in tests. */
export function countWords(text: string): number {
  const matches = text.match(/\S+/g);
  return matches ? matches.length : 0;
}

/** The fake's prompt tokens: words of every message's text and tool-call arguments (at least 1). */
export function countPromptTokens(request: FakeChatRequest): number {
  let tokens = 0;
  for (const message of request.messages ?? []) {
    const content = (message as { content?: unknown }).content;
    if (typeof content === 'string') tokens += countWords(content);
    else if (Array.isArray(content)) {
      for (const part of content) if (part && typeof part.text === 'string') tokens += countWords(part.text);
    }
    const calls = (message as { tool_calls?: ToolCall[] }).tool_calls ?? [];
    for (const call of calls) tokens += countWords(call.function?.arguments ?? '');
  }
  return Math.max(1, tokens);
}

/** Splits a text into word pieces that join back to it exactly: `Hello`, ` big`, ` world`. */
export function splitWords(text: string): string[] {
  const pieces = text.match(/\s*\S+/g) ?? [];
  const joined = pieces.join('');
  if (joined.length < text.length) {
    if (pieces.length === 0) return text.length > 0 ? [text] : [];
    pieces[pieces.length - 1] += text.slice(joined.length);
  }
  return pieces;
}

/** Splits tool-call arguments into pieces of up to 8 characters, as streamed argument deltas. */
function splitArguments(text: string): string[] {
  const pieces: string[] = [];
  for (let at = 0; at < text.length; at += 8) pieces.push(text.slice(at, at + 8));
  return pieces;
}

/** Decides the reply: tool calls when the request offers tools and the fake has some, else text. */
export function generate(
  request: FakeChatRequest,
  text: string,
  toolCalls: FakeToolCall[] | undefined,
  callId: (index: number) => string,
  extras: { cachedTokens?: number; thinking?: string } = {},
): FakeGeneration {
  const prompt = countPromptTokens(request);
  // Reasoning models spend hidden reasoning tokens inside the output limit and the completion count.
  const reasoning = request.reasoning_effort && request.reasoning_effort !== 'none' && extras.thinking ? countWords(extras.thinking) : 0;
  const limit = Math.max(0, (request.max_completion_tokens ?? request.max_tokens ?? Infinity) - reasoning);
  const cached = Math.min(extras.cachedTokens ?? 0, prompt);
  // Like a model: call tools when offered, but answer in text once the tool results are in.
  const lastRole = request.messages?.at(-1)?.role;
  const useTools = toolCalls !== undefined && toolCalls.length > 0 && (request.tools?.length ?? 0) > 0 && request.tool_choice !== 'none' && lastRole !== 'tool';
  let pieces: string[] = [];
  let calls: FakeGeneration['toolCalls'] = [];
  let finishReason: FakeGeneration['finishReason'] = 'stop';
  let completion: number;
  if (useTools) {
    calls = toolCalls.map((call, index) => ({ ...call, id: callId(index), pieces: splitArguments(call.arguments) }));
    completion = calls.reduce((sum, call) => sum + call.pieces.length, 0);
    finishReason = 'tool_calls';
  } else {
    pieces = splitWords(text);
    if (pieces.length > limit) {
      pieces = pieces.slice(0, limit);
      finishReason = 'length';
    }
    completion = pieces.length;
  }
  completion += reasoning;
  return {
    pieces,
    toolCalls: calls,
    finishReason,
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      prompt_tokens_details: { cached_tokens: cached, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: reasoning, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    },
  };
}
