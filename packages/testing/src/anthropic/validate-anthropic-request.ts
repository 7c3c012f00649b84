/** A Messages API request as the fake reads it (loosely typed: the fake checks every field). */
export interface AnthropicWireRequest {
  model: string;
  max_tokens: number;
  messages: { role: 'user' | 'assistant'; content: string | Record<string, unknown>[] }[];
  system?: string | { type: 'text'; text: string }[];
  tools?: { name: string; description?: string; input_schema: Record<string, unknown> }[];
  tool_choice?: { type: 'auto' | 'any' | 'tool' | 'none'; name?: string; disable_parallel_tool_use?: boolean };
  thinking?: { type: 'enabled' | 'disabled'; budget_tokens?: number };
  stream?: boolean;
  [field: string]: unknown;
}

/** The outcome of validating a body: the request, or the 400 message the real API would give. */
export type ValidateAnthropicResult = { ok: true; request: AnthropicWireRequest } | { ok: false; message: string };

const FIELDS = new Set([
  'model',
  'max_tokens',
  'messages',
  'system',
  'tools',
  'tool_choice',
  'thinking',
  'stream',
  'metadata',
  'stop_sequences',
  'temperature',
  'top_p',
  'top_k',
  'service_tier',
  'container',
  'mcp_servers',
]);
const BLOCKS = new Set(['text', 'image', 'document', 'tool_use', 'tool_result', 'thinking', 'redacted_thinking']);
const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp'];

/**
 * Validates a Messages API body the way the real API does, with its error messages: required
 * `model` and `max_tokens`, no unknown fields, `user`/`assistant` roles that alternate starting
 * with `user`, non-empty text blocks, image media types, tool_use/tool_result pairing, tool
 * schemas, and the thinking rules (budget >= 1024 and < max_tokens, no forced tool use).
 */
export function validateAnthropicRequest(body: unknown): ValidateAnthropicResult {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return fail('Input should be a valid dictionary');
  const request = body as AnthropicWireRequest;
  for (const field of Object.keys(request)) if (!FIELDS.has(field)) return fail(`${field}: Extra inputs are not permitted`);
  if (typeof request.model !== 'string' || request.model === '') return fail('model: Field required');
  if (request.max_tokens === undefined) return fail('max_tokens: Field required');
  if (!Number.isInteger(request.max_tokens) || request.max_tokens < 1) return fail('max_tokens: Input should be greater than or equal to 1');
  if (!Array.isArray(request.messages)) return fail('messages: Field required');
  if (request.messages.length === 0) return fail('messages: at least one message is required');
  const system = validateSystem(request.system);
  if (system) return fail(system);
  const messages = validateMessages(request.messages);
  if (messages) return fail(messages);
  const tools = validateTools(request);
  if (tools) return fail(tools);
  const thinking = request.thinking;
  if (thinking?.type === 'enabled') {
    const budget = thinking.budget_tokens;
    if (budget === undefined || !Number.isInteger(budget) || budget < 1024)
      return fail('thinking.enabled.budget_tokens: Input should be greater than or equal to 1024');
    if (request.max_tokens <= budget)
      return fail(
        '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size',
      );
    if (request.tool_choice?.type === 'any' || request.tool_choice?.type === 'tool')
      return fail('Thinking may not be enabled when tool_choice forces tool use.');
  }
  return { ok: true, request };
}

function fail(message: string): { ok: false; message: string } {
  return { ok: false, message };
}

function validateSystem(system: AnthropicWireRequest['system']): string | undefined {
  if (system === undefined || typeof system === 'string') return undefined;
  if (!Array.isArray(system)) return 'system: Input should be a valid list';
  for (const [index, block] of system.entries()) {
    if (block?.type !== 'text') return `system.${index}.type: Input should be 'text'`;
    if (typeof block.text !== 'string' || block.text === '') return 'system: text content blocks must be non-empty';
  }
  return undefined;
}

function validateMessages(messages: AnthropicWireRequest['messages']): string | undefined {
  let previousToolUses: string[] = [];
  for (const [index, message] of messages.entries()) {
    if (message?.role !== 'user' && message?.role !== 'assistant') return `messages.${index}.role: Input should be 'user' or 'assistant'`;
    if (index === 0 && message.role !== 'user') return 'messages: first message must use the "user" role';
    if (index > 0 && messages[index - 1]?.role === message.role) {
      return `messages: roles must alternate between "user" and "assistant", but found multiple "${message.role}" roles in a row`;
    }
    const blocks = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    if (!Array.isArray(blocks)) return `messages.${index}.content: Input should be a valid list`;
    if (blocks.length === 0 && index < messages.length - 1)
      return `messages.${index}: all messages must have non-empty content except for the optional final assistant message`;
    const results = blocks.filter((block) => block.type === 'tool_result').map((block) => String(block.tool_use_id));
    for (const id of results) {
      if (!previousToolUses.includes(id)) {
        return `messages.${index}.content.0: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
      }
    }
    const unanswered = previousToolUses.filter((id) => !results.includes(id));
    if (unanswered.length > 0) {
      return `messages.${index - 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${unanswered.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    }
    for (const [blockIndex, block] of blocks.entries()) {
      const problem = validateBlock(block, `messages.${index}.content.${blockIndex}`);
      if (problem) return problem;
    }
    previousToolUses = message.role === 'assistant' ? blocks.filter((block) => block.type === 'tool_use').map((block) => String(block.id)) : [];
  }
  return undefined;
}

function validateBlock(block: Record<string, unknown>, path: string): string | undefined {
  if (!BLOCKS.has(String(block?.type))) return `${path}.type: Input tag '${String(block?.type)}' found using 'type' does not match any of the expected tags`;
  if (block.type === 'text' && (typeof block.text !== 'string' || block.text === '')) return 'messages: text content blocks must be non-empty';
  if (block.type === 'image') {
    const source = block.source as { type?: unknown; media_type?: unknown; data?: unknown } | undefined;
    if (source?.type !== 'base64')
      return `${path}.image.source: Input tag '${String(source?.type)}' found using 'type' does not match any of the expected tags: 'base64', 'url', 'file'`;
    if (!IMAGE_TYPES.includes(String(source.media_type)))
      return `${path}.image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`;
    if (typeof source.data !== 'string' || source.data === '') return `${path}.image.source.base64.data: Field required`;
  }
  if (block.type === 'document') {
    const source = block.source as { type?: unknown; media_type?: unknown } | undefined;
    const valid = (source?.type === 'base64' && source.media_type === 'application/pdf') || (source?.type === 'text' && source.media_type === 'text/plain');
    if (!valid) return `${path}.document.source: Input does not match any of the expected document sources`;
  }
  if (block.type === 'tool_use') {
    if (!/^[a-zA-Z0-9_-]+$/.test(String(block.id))) return `${path}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`;
    if (typeof block.input !== 'object' || block.input === null || Array.isArray(block.input))
      return `${path}.tool_use.input: Input should be a valid dictionary`;
  }
  return undefined;
}

function validateTools(request: AnthropicWireRequest): string | undefined {
  const names: string[] = [];
  for (const [index, tool] of (request.tools ?? []).entries()) {
    if (!/^[a-zA-Z0-9_-]{1,128}$/.test(String(tool?.name))) return `tools.${index}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`;
    if (tool.input_schema?.type !== 'object') return `tools.${index}.custom.input_schema.type: Input should be 'object'`;
    names.push(tool.name);
  }
  const choice = request.tool_choice;
  if (choice === undefined) return undefined;
  if (!['auto', 'any', 'tool', 'none'].includes(String(choice.type)))
    return `tool_choice: Input tag '${String(choice.type)}' found using 'type' does not match any of the expected tags: 'auto', 'any', 'tool', 'none'`;
  if (choice.type === 'tool' && !names.includes(String(choice.name))) return `tool_choice.tool.name: Tool '${String(choice.name)}' not found in tools`;
  return undefined;
}
