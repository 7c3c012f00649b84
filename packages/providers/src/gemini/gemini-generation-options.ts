import type { ProviderChatRequest } from '../provider';

/** The `generationConfig` members of the Responses-only request fields. */
export interface GeminiGenerationOptions {
  temperature?: number;
  topP?: number;
  responseMimeType?: 'application/json';
  responseJsonSchema?: Record<string, unknown>;
}

/**
 * Gemini's share of the Responses-only request fields (see
 * `packages/validator/src/parse-responses-request.ts`): `temperature` and `top_p` as
 * `temperature`/`topP`; a structured output as `responseMimeType: application/json`, with the
 * JSON Schema as `responseJsonSchema` (full JSON Schema, as the tools' `parametersJsonSchema`).
 */
export function geminiGenerationOptions(request: ProviderChatRequest): GeminiGenerationOptions {
  const options: GeminiGenerationOptions = {};
  if (request.temperature !== undefined) options.temperature = request.temperature;
  if (request.top_p !== undefined) options.topP = request.top_p;
  const format = request.response_format;
  if (format !== undefined) options.responseMimeType = 'application/json';
  if (format?.type === 'json_schema') options.responseJsonSchema = format.json_schema.schema;
  return options;
}
