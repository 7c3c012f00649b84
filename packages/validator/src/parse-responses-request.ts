import type { ChatMessage, ChatRequest, ContentPart, ResponseEcho, ResponseFunctionTool, ResponseTextFormat, Result, ToolCall } from '@tollgate/core';
import * as v from 'valibot';
import type { Invalid } from './fail';
import { issuesToFail } from './issue-to-fail';
import type { ParsedChatRequest } from './parse-chat-request';
import { type ResponsesRequestInput, responsesRequestSchema } from './responses-schema';

/**
 * A Responses request that passed the first phase, as the chat request every provider takes plus
 * what the response object echoes. The second phase is the chat one, {@link resolveChatRequest}.
 */
export interface ParsedResponsesRequest {
  /** The requested model id. */
  model: string;
  /** The same request as a chat request: what the model gets, billed and limited as chat. */
  chat: ParsedChatRequest;
  /** What the response object echoes from the request (`max_output_tokens` as requested). */
  echo: ResponseEcho;
  /** Whether stream events carry an `obfuscation` field (`stream_options.include_obfuscation`, default true). */
  obfuscation: boolean;
  /**
   * The checked body as the schema returned it (only the fields it lists, none refused), for an
   * upstream that speaks the Responses API natively.
   */
  body: ResponsesRequestInput;
}

/** The result of {@link parseResponsesRequest}. */
export type ParseResponsesRequestResult = Result<ParsedResponsesRequest, Invalid>;

type Item = Extract<ResponsesRequestInput['input'], unknown[]>[number];
type Part = { type: string; text?: string; refusal?: string; image_url?: string | null; detail?: 'auto' | 'low' | 'high' | null };

const DATA_URL = /^data:/i;

/**
 * First phase of a Responses request, before the model is known, with the chat endpoint's
 * precedence: wrong JSON types or a missing model (`invalid_request_body`), then
 * `too_many_messages` (input items), `invalid_output_limit` (`max_output_tokens`),
 * `invalid_parameter` (a value refused, or a feature not served, named by its field).
 *
 * @example
 * const parsed = parseResponsesRequest(json.value);
 * if (!parsed.ok) return refuse(parsed);
 * const resolved = resolveChatRequest(parsed.value.chat, model);
 */
export function parseResponsesRequest(body: Record<string, unknown>): ParseResponsesRequestResult {
  const result = v.safeParse(responsesRequestSchema, body);
  if (!result.success) return issuesToFail(result.issues);
  return { ok: true, value: normalise(result.output) };
}

function normalise(input: ResponsesRequestInput): ParsedResponsesRequest {
  const found: Pick<ParsedChatRequest, 'remoteMedia' | 'shapeProblem' | 'partUses'> = { partUses: [] };
  const shape = (problem: string) => {
    found.shapeProblem ??= problem;
  };

  const part = (raw: Part, at: string, role: string): ContentPart => {
    if (raw.type === 'input_text' || raw.type === 'output_text') return { type: 'text', text: raw.text ?? '' };
    if (raw.type === 'refusal') return { type: 'text', text: raw.refusal ?? '' };
    // input_image: the schema lets no other type through.
    if (role === 'assistant') shape(`${at} is an input_image; assistant messages hold only text.`);
    if (!found.partUses.some((use) => use.type === 'image_url')) found.partUses.push({ type: 'image_url', at });
    const url = raw.image_url ?? '';
    if (raw.image_url == null) shape(`${at}.image_url is required.`);
    else if (!DATA_URL.test(url)) found.remoteMedia ??= `${at}.image_url links a URL; media must be inline data: URLs.`;
    return { type: 'image_url', image_url: raw.detail == null ? { url } : { url, detail: raw.detail } };
  };

  const content = (raw: string | Part[], at: string, role: string): string | ContentPart[] =>
    typeof raw === 'string' ? raw : raw.map((item, index) => part(item, `${at}[${index}]`, role));

  const messages: ChatMessage[] = [];
  if (input.instructions != null) messages.push({ role: 'system', content: input.instructions });
  if (typeof input.input === 'string') messages.push({ role: 'user', content: input.input });
  else {
    for (const [index, item] of input.input.entries()) addItem(messages, item, `input[${index}]`, content);
  }

  const request: ChatRequest = { model: input.model, messages, stream: input.stream ?? false };
  // The response's usage always comes from the upstream's: ask for it whatever the client sends.
  if (request.stream) request.stream_options = { include_usage: true };
  const effort = input.reasoning?.effort ?? undefined;
  if (effort !== undefined) request.reasoning_effort = effort;
  if (input.tools != null && input.tools.length > 0) {
    request.tools = input.tools.map((tool) => {
      const fn: { name: string; description?: string; parameters?: Record<string, unknown> } = { name: tool.name };
      if (tool.description != null) fn.description = tool.description;
      if (tool.parameters != null) fn.parameters = tool.parameters;
      return { type: 'function', function: fn };
    });
  }
  const choice = input.tool_choice ?? undefined;
  if (choice !== undefined) request.tool_choice = typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
  if (input.parallel_tool_calls != null) request.parallel_tool_calls = input.parallel_tool_calls;
  if (input.temperature != null) request.temperature = input.temperature;
  if (input.top_p != null) request.top_p = input.top_p;
  const format = textFormat(input);
  if (format.type === 'json_object') request.response_format = { type: 'json_object' };
  if (format.type === 'json_schema') {
    const { type: _type, ...schema } = format;
    request.response_format = { type: 'json_schema', json_schema: schema };
  }

  const chat: ParsedChatRequest = { model: input.model, request, ...found };
  if (input.max_output_tokens != null) chat.requestedOutput = input.max_output_tokens;
  return {
    model: input.model,
    chat,
    echo: echoOf(input),
    obfuscation: input.stream_options?.include_obfuscation ?? true,
    body: input,
  };
}

/**
 * One input item onto the chat messages. A function call joins the assistant message just before
 * it (the chat form holds a turn's calls in one message); its output is a tool message.
 */
function addItem(messages: ChatMessage[], item: Item, at: string, content: (raw: string | Part[], at: string, role: string) => string | ContentPart[]) {
  if (item.type === 'function_call') {
    const call: ToolCall = { id: item.call_id, type: 'function', function: { name: item.name, arguments: item.arguments } };
    const last = messages.at(-1);
    if (last?.role === 'assistant') last.tool_calls = [...(last.tool_calls ?? []), call];
    else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
    return;
  }
  if (item.type === 'function_call_output') {
    messages.push({ role: 'tool', content: content(item.output, `${at}.output`, 'tool'), tool_call_id: item.call_id });
    return;
  }
  messages.push({ role: item.role, content: content(item.content, `${at}.content`, item.role) });
}

function echoOf(input: ResponsesRequestInput): ResponseEcho {
  const tools = (input.tools ?? []).map(
    (tool): ResponseFunctionTool => ({
      type: 'function',
      name: tool.name,
      description: tool.description ?? null,
      parameters: tool.parameters ?? null,
      strict: tool.strict ?? null,
    }),
  );
  const choice = input.tool_choice ?? 'auto';
  return {
    instructions: input.instructions ?? null,
    max_output_tokens: input.max_output_tokens ?? null,
    model: input.model,
    parallel_tool_calls: input.parallel_tool_calls ?? true,
    reasoning: { effort: input.reasoning?.effort ?? null, summary: null },
    temperature: input.temperature ?? null,
    text: { format: textFormat(input) },
    tool_choice: typeof choice === 'string' ? choice : { type: 'function', name: choice.name },
    tools,
    top_p: input.top_p ?? null,
    user: input.user ?? null,
    metadata: input.metadata ?? {},
  };
}

function textFormat(input: ResponsesRequestInput): ResponseTextFormat {
  const format = input.text?.format;
  if (format == null || format.type === 'text') return { type: 'text' };
  if (format.type === 'json_object') return { type: 'json_object' };
  const out: ResponseTextFormat = { type: 'json_schema', name: format.name, schema: format.schema };
  if (format.description != null) out.description = format.description;
  if (format.strict != null) out.strict = format.strict;
  return out;
}
