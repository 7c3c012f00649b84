import { randomBase62 } from '@tollgate/core';
import { countWords, splitWords, type FakeToolCall } from '../openai/openai-reply';
import { FAKE_THOUGHT_SIGNATURE, type GeminiReplyPlan } from './gemini-transcript';
import { isGemini3, type GeminiWireRequest } from './validate-gemini-request';

/** What shapes a reply besides the request: the fake's options, resolved for this request. */
export interface GeminiReplyInput {
  model: string;
  text: string;
  /** Whether `text` was configured for tool turns too (else tool turns carry no text). */
  textWithTools: boolean;
  toolCalls: FakeToolCall[] | undefined;
  thinking: string;
  finishReason?: string;
  blockReason?: string;
  images: { mimeType: string; data: string }[];
  promptTokens: number;
  cachedTokens: number;
}

/**
 * Decides a reply like the model would: it thinks (billed as thoughts, not returned) when the
 * request sets a non-zero thinking budget or a level, calls functions when tools are offered and
 * the mode allows it and the last turn is not already function responses (only allowed names in
 * ANY mode), and cuts text at `maxOutputTokens`, which thoughts count towards (then MAX_TOKENS).
 */
export function planGeminiReply(request: GeminiWireRequest, input: GeminiReplyInput): GeminiReplyPlan {
  const config = request.generationConfig ?? {};
  const thinkingConfig = config.thinkingConfig;
  const thinks = thinkingConfig !== undefined && (thinkingConfig.thinkingLevel !== undefined || (thinkingConfig.thinkingBudget ?? 0) !== 0);
  const budget = thinkingConfig?.thinkingBudget !== undefined && thinkingConfig.thinkingBudget > 0 ? thinkingConfig.thinkingBudget : Infinity;
  const thoughts = thinks ? Math.min(countWords(input.thinking), budget) : 0;
  const room = Math.max(0, (config.maxOutputTokens ?? 65536) - thoughts);
  let calls = chooseCalls(request, input.toolCalls);
  const pieces = splitWords(calls.length > 0 && !input.textWithTools ? '' : input.text);
  const cut = pieces.length > room;
  if (cut) calls = [];
  const functionCalls = calls.map((call, index) => ({
    name: call.name,
    args: parseArgs(call.arguments),
    // Gemini signs the first call of a turn when the model thought (always on Gemini 3).
    ...(index === 0 && (thinks || isGemini3(input.model)) ? { thoughtSignature: FAKE_THOUGHT_SIGNATURE } : {}),
  }));
  const callTokens = functionCalls.reduce((sum, call) => sum + Math.ceil(JSON.stringify(call.args).length / 12), 0);
  const text = pieces.slice(0, room).join('');
  return {
    responseId: randomBase62(22),
    modelVersion: input.model,
    ...(input.blockReason ? { blockReason: input.blockReason } : {}),
    text,
    functionCalls,
    images: input.images,
    finishReason: input.finishReason ?? (cut ? 'MAX_TOKENS' : 'STOP'),
    usage: {
      promptTokenCount: input.promptTokens,
      candidatesTokenCount: Math.min(pieces.length, room) + callTokens + input.images.length * 1290,
      thoughtsTokenCount: thoughts,
      cachedContentTokenCount: Math.min(input.cachedTokens, input.promptTokens),
    },
  };
}

function chooseCalls(request: GeminiWireRequest, calls: FakeToolCall[] | undefined): FakeToolCall[] {
  const declared = (request.tools ?? []).flatMap((tool) => tool.functionDeclarations ?? []);
  const config = request.toolConfig?.functionCallingConfig;
  if (!calls?.length || declared.length === 0 || config?.mode === 'NONE') return [];
  const last = request.contents[request.contents.length - 1];
  const answered = last?.parts.some((part) => part.functionResponse) ?? false;
  if (answered && config?.mode !== 'ANY') return [];
  const allowed = config?.mode === 'ANY' && config.allowedFunctionNames?.length ? config.allowedFunctionNames : undefined;
  return allowed ? calls.filter((call) => allowed.includes(call.name)) : calls;
}

function parseArgs(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
