import type { Result, ChatMessage, ChatRequest, ChatTool, ContentPart, ToolCall, ToolChoice } from '@tollgate/core';
import * as v from 'valibot';
import { chatRequestSchema, type ChatRequestInput } from './chat-schema';
import type { Invalid } from './fail';
import { issuesToFail } from './issue-to-fail';
import { isJsonObject } from './schema-helpers';

/**
 * A chat request that passed the first phase (types and values). The second phase,
 * {@link resolveChatRequest}, needs the model: it reports what was found here and decides the output limit.
 */
export interface ParsedChatRequest {
  /** The requested model id. */
  model: string;
  /** The normalised request: only the listed fields, per role only the kept ones; no output limit yet. */
  request: ChatRequest;
  /** `max_completion_tokens`, else `max_tokens`, when the client set one. */
  requestedOutput?: number;
  /** Why the request is `remote_media` (the first media part that links a URL), if it is. */
  remoteMedia?: string;
  /** Why the request is `invalid_request` whatever the model (the first such shape), if it is. */
  shapeProblem?: string;
  /** The first use of each part type other than text, in document order. */
  partUses: { type: string; at: string }[];
}

/** The result of {@link parseChatRequest}. */
export type ParseChatRequestResult = Result<ParsedChatRequest, Invalid>;

/** Part types whose media must be inline: their URL must be a `data:` URL. */
const LINKABLE_PARTS = new Set(['image_url', 'video_url', 'audio_url', 'file_url']);
const DATA_URL = /^data:/i;

/**
 * First phase of a chat request, before the model is known: wrong JSON types or a missing model
 * (`invalid_request_body`), then `too_many_messages`, `invalid_output_limit`, `invalid_parameter`.
 *
 * @example
 * const chat = parseChatRequest(json.value);
 * if (!chat.ok) return refuse(chat);
 * const model = models.get(chat.value.model);
 */
export function parseChatRequest(body: Record<string, unknown>): ParseChatRequestResult {
  const result = v.safeParse(chatRequestSchema, body);
  if (!result.success) return issuesToFail(result.issues);
  return { ok: true, value: normalise(result.output) };
}

function normalise(input: ChatRequestInput): ParsedChatRequest {
  const found: Pick<ParsedChatRequest, 'remoteMedia' | 'shapeProblem' | 'partUses'> = { partUses: [] };
  const seenTypes = new Set<string>();
  const shape = (problem: string) => {
    found.shapeProblem ??= problem;
  };

  const part = (raw: Record<string, unknown>, at: string): ContentPart => {
    const type = raw.type as string;
    if (type === 'text') return { type, text: raw.text as string };
    if (!seenTypes.has(type)) {
      seenTypes.add(type);
      found.partUses.push({ type, at });
    }
    if (type === 'file') return filePart(raw.file as Record<string, unknown>, at, shape);
    const media = raw[type];
    if (LINKABLE_PARTS.has(type)) {
      const url = typeof media === 'string' ? media : isJsonObject(media) ? media.url : undefined;
      if (typeof url !== 'string') shape(`${at}.${type}.url is required.`);
      else if (!DATA_URL.test(url)) found.remoteMedia ??= `${at}.${type} links a URL; media must be inline data: URLs.`;
    }
    if (type === 'image_url') {
      const image = media as { url: string; detail?: 'auto' | 'low' | 'high' | null };
      return { type, image_url: image.detail == null ? { url: image.url } : { url: image.url, detail: image.detail } };
    }
    return media === undefined ? { type } : { type, [type]: media };
  };

  const content = (raw: unknown, at: string): string | ContentPart[] | null => {
    if (raw === undefined || raw === null) return null;
    if (typeof raw === 'string') return raw;
    return (raw as Record<string, unknown>[]).map((item, index) => part(item, `${at}[${index}]`));
  };

  const messages = input.messages.map((raw, index): ChatMessage => {
    const message = raw as Record<string, unknown>;
    const at = `messages[${index}]`;
    const body = content(message.content, `${at}.content`);
    if (message.role === 'assistant') {
      const calls = message.tool_calls as Record<string, unknown>[] | null | undefined;
      if (calls == null) return { role: 'assistant', content: body };
      return { role: 'assistant', content: body, tool_calls: calls.map((call, i) => toolCall(call, `${at}.tool_calls[${i}]`, shape)) };
    }
    if (message.role === 'tool') {
      const id = message.tool_call_id as string | null | undefined;
      return id == null ? { role: 'tool', content: body } : { role: 'tool', content: body, tool_call_id: id };
    }
    return { role: message.role as 'system' | 'developer' | 'user', content: body };
  });

  const request: ChatRequest = { model: input.model, messages, stream: input.stream ?? false };
  if (input.stream_options != null) request.stream_options = { include_usage: input.stream_options.include_usage ?? false };
  if (input.reasoning_effort != null) request.reasoning_effort = input.reasoning_effort;
  if (input.tools != null) request.tools = input.tools.map((raw, index) => tool(raw as Record<string, unknown>, `tools[${index}]`, shape));
  if (input.tool_choice != null) request.tool_choice = toolChoice(input.tool_choice);
  if (input.parallel_tool_calls != null) request.parallel_tool_calls = input.parallel_tool_calls;

  const parsed: ParsedChatRequest = { model: input.model, request, ...found };
  const requested = input.max_completion_tokens ?? input.max_tokens;
  if (requested != null) parsed.requestedOutput = requested;
  return parsed;
}

function filePart(file: Record<string, unknown>, at: string, shape: (problem: string) => void): ContentPart {
  const extra = Object.keys(file).find((key) => key !== 'file_data' && key !== 'filename');
  if (extra !== undefined) shape(`${at}.file may carry only file_data and filename, not ${extra}.`);
  else if (typeof file.file_data !== 'string') shape(`${at}.file.file_data is required.`);
  const kept: { file_data?: string; filename?: string } = {};
  if (typeof file.file_data === 'string') kept.file_data = file.file_data;
  if (typeof file.filename === 'string') kept.filename = file.filename;
  return { type: 'file', file: kept };
}

function toolCall(raw: Record<string, unknown>, at: string, shape: (problem: string) => void): ToolCall {
  const fn = isJsonObject(raw.function) ? raw.function : {};
  const ok =
    typeof raw.id === 'string' && (raw.type === undefined || raw.type === 'function') && typeof fn.name === 'string' && typeof fn.arguments === 'string';
  if (!ok) shape(`${at} must be {id, type: "function", function: {name, arguments}} with string values.`);
  return { id: String(raw.id ?? ''), type: 'function', function: { name: String(fn.name ?? ''), arguments: String(fn.arguments ?? '') } };
}

function tool(raw: Record<string, unknown>, at: string, shape: (problem: string) => void): ChatTool {
  if (raw.type !== 'function') {
    shape(`${at} is a ${String(raw.type)} tool; only function tools are taken.`);
    return { type: 'function', function: { name: '' } };
  }
  const fn = raw.function as { name: string; description?: string | null; parameters?: Record<string, unknown> | null };
  const kept: ChatTool['function'] = { name: fn.name };
  if (fn.description != null) kept.description = fn.description;
  if (fn.parameters != null) kept.parameters = fn.parameters;
  return { type: 'function', function: kept };
}

function toolChoice(raw: unknown): ToolChoice {
  if (typeof raw === 'string') return raw as ToolChoice;
  const choice = raw as { function: { name: string } };
  return { type: 'function', function: { name: choice.function.name } };
}
