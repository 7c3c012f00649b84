import type { ChatMessage, ChatTool, ToolChoice } from '@tollgate/core';
import type { ProviderChatRequest } from '../provider';
import type { GeminiContent, GeminiFunctionDeclaration, GeminiPart, GeminiRequest } from './gemini-api';
import { geminiGenerationOptions } from './gemini-generation-options';
import { geminiThinking, usesThinkingLevels } from './gemini-thinking';
import { convertToGeminiParts } from './convert-to-gemini-parts';
import { parseToolArguments } from '../http/parse-tool-arguments';

/** The result of {@link convertToGeminiRequest}: a request body, or why it cannot be sent. */
export type ConvertToGeminiResult = { ok: true; request: GeminiRequest } | { ok: false; message: string };

/**
 * The documented placeholder for a replayed function call whose thought signature we do not have
 * (an OpenAI-shaped history cannot carry it); Gemini 3 refuses replayed calls without one.
 */
export const SKIP_THOUGHT_SIGNATURE = 'skip_thought_signature_validator';

/**
 * Translates a normalised chat request into a `generateContent` body: system and developer text
 * become `systemInstruction`, assistant turns `model` turns with `functionCall` parts, tool results
 * `functionResponse` parts named after the call they answer; consecutive turns of a role merge.
 * @example
 * const result = convertToGeminiRequest(request, 'gemini-2.5-flash');
 * if (result.ok) await fetch(url, { method: 'POST', body: JSON.stringify(result.request) });
 */
export function convertToGeminiRequest(request: ProviderChatRequest, upstream: string): ConvertToGeminiResult {
  const system: { text: string }[] = [];
  const contents: GeminiContent[] = [];
  const callNames = new Map<string, string>();
  const signCalls = usesThinkingLevels(upstream);
  for (const message of request.messages) {
    const converted = convertToGeminiParts(message.content, message.role !== 'system' && message.role !== 'developer');
    if (!converted.ok) return converted;
    if (message.role === 'system' || message.role === 'developer') {
      for (const part of converted.parts) if (part.text !== undefined) system.push({ text: part.text });
      continue;
    }
    if (message.role === 'tool') {
      const name = callNames.get(message.tool_call_id ?? '');
      if (name === undefined) return { ok: false, message: 'a tool message answers no earlier tool call' };
      pushMerged(contents, { role: 'user', parts: [{ functionResponse: { name, response: toolResponse(message.content) } }] });
      continue;
    }
    if (message.role !== 'assistant') {
      pushMerged(contents, { role: 'user', parts: converted.parts });
      continue;
    }
    const parts: GeminiPart[] = converted.parts;
    for (const [index, call] of (message.tool_calls ?? []).entries()) {
      const args = parseToolArguments(call.function.arguments);
      if (args === undefined) return { ok: false, message: `the arguments of tool call ${call.id} are not a JSON object` };
      callNames.set(call.id, call.function.name);
      // Only the first call of a turn carries a signature, as Gemini itself returns them.
      parts.push({ functionCall: { name: call.function.name, args }, ...(signCalls && index === 0 ? { thoughtSignature: SKIP_THOUGHT_SIGNATURE } : {}) });
    }
    pushMerged(contents, { role: 'model', parts });
  }
  const thinkingConfig = geminiThinking(request.reasoning_effort, upstream);
  const tools = request.tools?.length ? [{ functionDeclarations: request.tools.map(convertTool) }] : undefined;
  const mode = tools ? functionCallingConfig(request.tool_choice) : undefined;
  return {
    ok: true,
    request: {
      contents,
      ...(system.length > 0 ? { systemInstruction: { parts: system } } : {}),
      ...(tools ? { tools } : {}),
      ...(mode ? { toolConfig: { functionCallingConfig: mode } } : {}),
      generationConfig: { maxOutputTokens: request.max_completion_tokens, ...(thinkingConfig ? { thinkingConfig } : {}), ...geminiGenerationOptions(request) },
    },
  };
}

/** Appends a turn, merging it into the previous one of the same role (and dropping empty turns). */
function pushMerged(contents: GeminiContent[], content: GeminiContent): void {
  if (content.parts.length === 0) return;
  const last = contents[contents.length - 1];
  if (last !== undefined && last.role === content.role) last.parts.push(...content.parts);
  else contents.push(content);
}

function convertTool(tool: ChatTool): GeminiFunctionDeclaration {
  return {
    name: tool.function.name,
    ...(tool.function.description ? { description: tool.function.description } : {}),
    ...(tool.function.parameters ? { parametersJsonSchema: tool.function.parameters } : {}),
  };
}

/** tool_choice -> mode; parallel_tool_calls has no Gemini equivalent and is not sent. */
function functionCallingConfig(choice: ToolChoice | undefined): { mode: 'AUTO' | 'ANY' | 'NONE'; allowedFunctionNames?: string[] } | undefined {
  if (choice === 'none') return { mode: 'NONE' };
  if (choice === 'required') return { mode: 'ANY' };
  if (typeof choice === 'object') return { mode: 'ANY', allowedFunctionNames: [choice.function.name] };
  if (choice === 'auto') return { mode: 'AUTO' };
  return undefined;
}

/** A tool result as the `response` object: a JSON object as it is, anything else under `result`. */
function toolResponse(content: ChatMessage['content']): Record<string, unknown> {
  const text = typeof content === 'string' ? content : (content ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Plain text: wrapped below.
  }
  return { result: text };
}
