/** A part as the fake reads it. */
export interface GeminiWirePart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: { mimeType?: string; data?: string };
  functionCall?: { name: string; args?: Record<string, unknown>; id?: string };
  functionResponse?: { name: string; response?: Record<string, unknown>; id?: string };
  [field: string]: unknown;
}

/** A `generateContent` body as the fake reads it (loosely typed: the fake checks every field). */
export interface GeminiWireRequest {
  contents: { role?: string; parts: GeminiWirePart[] }[];
  systemInstruction?: { role?: string; parts: GeminiWirePart[] };
  tools?: { functionDeclarations?: { name: string; description?: string; parameters?: unknown; parametersJsonSchema?: unknown }[] }[];
  toolConfig?: { functionCallingConfig?: { mode?: string; allowedFunctionNames?: string[] } };
  generationConfig?: {
    maxOutputTokens?: number;
    candidateCount?: number;
    thinkingConfig?: { thinkingBudget?: number; thinkingLevel?: string; includeThoughts?: boolean };
    responseModalities?: string[];
    imageConfig?: { aspectRatio?: string; imageSize?: string };
    [field: string]: unknown;
  };
  [field: string]: unknown;
}

/** The outcome of validating a body: the request, or the 400 message the real API would give. */
export type ValidateGeminiResult = { ok: true; request: GeminiWireRequest } | { ok: false; message: string };

const FIELDS = new Set(['contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig', 'safetySettings', 'cachedContent']);
const CONFIG_FIELDS = new Set([
  'maxOutputTokens',
  'candidateCount',
  'thinkingConfig',
  'responseModalities',
  'imageConfig',
  'temperature',
  'topP',
  'topK',
  'stopSequences',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  'seed',
]);
const DATA_FIELDS = ['text', 'inlineData', 'functionCall', 'functionResponse', 'fileData', 'executableCode', 'codeExecutionResult'];
const MODES = new Set(['AUTO', 'ANY', 'NONE', 'VALIDATED']);

/** Gemini 3 and later check thought signatures on replayed function calls and take thinking levels. */
export function isGemini3(model: string): boolean {
  return !/gemini-(1|2)[.-]/.test(model);
}

/**
 * Validates a body the way the Gemini API does, with its error messages: known fields only,
 * non-empty `contents` with roles `user`/`model`, exactly one data field per part, function call
 * turns after a user or function-response turn, function response turns right after a call turn
 * with as many responses as calls, thought signatures on replayed calls of Gemini 3 models,
 * function names and schemas, and the thinking settings each model family takes.
 */
export function validateGeminiRequest(body: unknown, model: string): ValidateGeminiResult {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return fail('Invalid JSON payload received. Unknown name "": Root element must be a message.');
  const request = body as GeminiWireRequest;
  for (const field of Object.keys(request)) if (!FIELDS.has(field)) return fail(`Invalid JSON payload received. Unknown name "${field}": Cannot find field.`);
  for (const field of Object.keys(request.generationConfig ?? {})) {
    if (!CONFIG_FIELDS.has(field)) return fail(`Invalid JSON payload received. Unknown name "${field}" at 'generation_config': Cannot find field.`);
  }
  if (!Array.isArray(request.contents) || request.contents.length === 0) return fail('* GenerateContentRequest.contents: contents is not specified\n');
  for (const [index, content] of request.contents.entries()) {
    if (content.role !== 'user' && content.role !== 'model') return fail('Please use a valid role: user, model.');
    if (!Array.isArray(content.parts) || content.parts.length === 0)
      return fail(`* GenerateContentRequest.contents[${index}].parts: contents.parts must not be empty.\n`);
    for (const [partIndex, part] of content.parts.entries()) {
      const problem = validatePart(part, `contents[${index}].parts[${partIndex}]`);
      if (problem) return fail(problem);
    }
  }
  for (const [index, part] of (request.systemInstruction?.parts ?? []).entries()) {
    if (typeof part.text !== 'string')
      return fail(`* GenerateContentRequest.system_instruction.parts[${index}]: only text parts are allowed in system instruction\n`);
  }
  const turns = validateTurns(request.contents, model);
  if (turns) return fail(turns);
  const tools = validateTools(request);
  if (tools) return fail(tools);
  const thinking = validateThinking(request, model);
  if (thinking) return fail(thinking);
  const max = request.generationConfig?.maxOutputTokens;
  if (max !== undefined && (!Number.isInteger(max) || max < 1))
    return fail('* GenerateContentRequest.generation_config.max_output_tokens: max_output_tokens must be positive.\n');
  return { ok: true, request };
}

function fail(message: string): { ok: false; message: string } {
  return { ok: false, message };
}

function validatePart(part: GeminiWirePart, path: string): string | undefined {
  const fields = DATA_FIELDS.filter((field) => part?.[field] !== undefined);
  if (fields.length !== 1) return `* GenerateContentRequest.${path}.data: required oneof field 'data' must have one initialized field\n`;
  if (part.text === '') return 'Unable to submit request because it has an empty text parameter. Add a value to the parameter and try again.';
  if (part.inlineData && (typeof part.inlineData.mimeType !== 'string' || typeof part.inlineData.data !== 'string' || part.inlineData.data === '')) {
    return `* GenerateContentRequest.${path}.inline_data: mime_type and data are required\n`;
  }
  if (part.functionResponse && (typeof part.functionResponse.response !== 'object' || part.functionResponse.response === null)) {
    return `* GenerateContentRequest.${path}.function_response.response: must be a JSON object\n`;
  }
  return undefined;
}

function validateTurns(contents: GeminiWireRequest['contents'], model: string): string | undefined {
  // The current turn begins at the last user content that is not only function responses.
  let currentTurn = 0;
  contents.forEach((content, index) => {
    if (content.role === 'user' && content.parts.some((part) => !part.functionResponse)) currentTurn = index;
  });
  for (const [index, content] of contents.entries()) {
    const calls = content.parts.filter((part) => part.functionCall);
    const responses = content.parts.filter((part) => part.functionResponse);
    const previous = contents[index - 1];
    const previousCalls = previous?.role === 'model' ? previous.parts.filter((part) => part.functionCall) : [];
    if (calls.length > 0 && previous !== undefined && previous.role !== 'user') {
      return 'Please ensure that function call turn comes immediately after a user turn or after a function response turn.';
    }
    if (responses.length > 0) {
      if (previousCalls.length === 0) return 'Please ensure that function response turn comes immediately after a function call turn.';
      if (responses.length !== previousCalls.length) {
        return 'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.';
      }
    }
    const firstCall = calls[0];
    if (firstCall !== undefined && index > currentTurn && isGemini3(model) && !firstCall.thoughtSignature) {
      return `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${firstCall.functionCall?.name}\` , position ${index + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`;
    }
  }
  return undefined;
}

function validateTools(request: GeminiWireRequest): string | undefined {
  const names: string[] = [];
  for (const [toolIndex, tool] of (request.tools ?? []).entries()) {
    for (const [index, declaration] of (tool.functionDeclarations ?? []).entries()) {
      const path = `tools[${toolIndex}].function_declarations[${index}]`;
      if (!/^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$/.test(String(declaration?.name))) {
        return `* GenerateContentRequest.${path}.name: Invalid function name. Must start with a letter or an underscore. Must be a-z, A-Z, 0-9, or contain underscores, dots, colons and dashes, with a maximum length of 64.\n`;
      }
      if (declaration.parameters !== undefined && declaration.parametersJsonSchema !== undefined) {
        return `* GenerateContentRequest.${path}: parameters and parameters_json_schema are mutually exclusive\n`;
      }
      names.push(declaration.name);
    }
  }
  const config = request.toolConfig?.functionCallingConfig;
  if (config?.mode !== undefined && !MODES.has(config.mode))
    return `Invalid value at 'tool_config.function_calling_config.mode' (type.googleapis.com/google.ai.generativelanguage.v1beta.FunctionCallingConfig.Mode), "${config.mode}"`;
  if (config?.allowedFunctionNames?.length && config.mode !== 'ANY')
    return '* GenerateContentRequest.tool_config.function_calling_config.allowed_function_names: only allowed when mode is ANY\n';
  for (const name of config?.allowedFunctionNames ?? []) {
    if (!names.includes(name)) return `* GenerateContentRequest.tool_config.function_calling_config.allowed_function_names: function ${name} is not declared\n`;
  }
  return undefined;
}

function validateThinking(request: GeminiWireRequest, model: string): string | undefined {
  const thinking = request.generationConfig?.thinkingConfig;
  if (thinking === undefined) return undefined;
  if (thinking.thinkingBudget !== undefined && thinking.thinkingLevel !== undefined) return 'You can only set only one of thinking budget and thinking level.';
  if (thinking.thinkingLevel !== undefined) {
    if (!isGemini3(model)) return 'Thinking level is not supported for this model.';
    if (!['minimal', 'low', 'medium', 'high'].includes(thinking.thinkingLevel.toLowerCase()))
      return `Invalid value at 'generation_config.thinking_config.thinking_level', "${thinking.thinkingLevel}"`;
  }
  const budget = thinking.thinkingBudget;
  if (budget !== undefined && budget !== -1) {
    const pro = /-pro\b/.test(model);
    if (pro && budget === 0) return 'Budget 0 is invalid. This model only works in thinking mode.';
    const [low, high] = pro ? [128, 32768] : [0, 24576];
    if (!Number.isInteger(budget) || budget < low || budget > high)
      return `The thinking budget ${budget} is invalid. Please choose a value between ${low} and ${high}.`;
  }
  return undefined;
}
