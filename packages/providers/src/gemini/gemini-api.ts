/**
 * Wire shapes of the Gemini API (`models/{model}:generateContent` and
 * `:streamGenerateContent?alt=sse`), only the fields Tollgate sends or reads.
 * Reference: https://ai.google.dev/api/generate-content
 */
import * as v from 'valibot';

/** One part of a content. */
export interface GeminiPart {
  text?: string;
  /** Marks a thought summary part (only returned with `includeThoughts`). */
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  functionCall?: { name: string; args?: Record<string, unknown>; id?: string };
  functionResponse?: { name: string; response: Record<string, unknown>; id?: string };
}

/** A turn: the API knows the roles `user` and `model`. */
export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

/** A function the model may call; `parametersJsonSchema` takes full JSON Schema. */
export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  parametersJsonSchema?: Record<string, unknown>;
}

/** Thinking controls: a token budget (2.5 models) or a level (3 models). */
export interface GeminiThinkingConfig {
  thinkingBudget?: number;
  thinkingLevel?: 'minimal' | 'low' | 'medium' | 'high';
  includeThoughts?: boolean;
}

/** The body of `generateContent` and `streamGenerateContent`. */
export interface GeminiRequest {
  contents: GeminiContent[];
  systemInstruction?: { parts: { text: string }[] };
  tools?: { functionDeclarations: GeminiFunctionDeclaration[] }[];
  toolConfig?: { functionCallingConfig: { mode: 'AUTO' | 'ANY' | 'NONE'; allowedFunctionNames?: string[] } };
  generationConfig?: {
    maxOutputTokens?: number;
    candidateCount?: number;
    thinkingConfig?: GeminiThinkingConfig;
    responseModalities?: ('TEXT' | 'IMAGE')[];
    imageConfig?: { aspectRatio?: string; imageSize?: '1K' | '2K' | '4K' };
    temperature?: number;
    topP?: number;
    responseMimeType?: 'application/json';
    responseJsonSchema?: Record<string, unknown>;
  };
}

/** Token counts. The prompt count includes cached tokens; thoughts are counted apart from candidates. */
export interface GeminiUsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
  toolUsePromptTokenCount?: number;
  totalTokenCount?: number;
}

/** One candidate answer. */
export interface GeminiCandidate {
  content?: { role?: string; parts?: GeminiPart[] };
  finishReason?: string;
  index?: number;
}

/** The reply of `generateContent`, and each event of a stream. */
export interface GeminiResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  responseId?: string;
}

/** The error body: a google.rpc.Status. */
export interface GeminiErrorBody {
  error: { code: number; message: string; status: string; details?: { '@type': string; [field: string]: unknown }[] };
}

const count = v.optional(v.number());

/** The parts of a reply Tollgate reads: text, the thought flag, inline images and function calls. */
const geminiReplyPartSchema = v.looseObject({
  text: v.optional(v.string()),
  thought: v.optional(v.boolean()),
  thoughtSignature: v.optional(v.string()),
  inlineData: v.optional(v.looseObject({ mimeType: v.string(), data: v.string() })),
  functionCall: v.optional(v.looseObject({ name: v.string(), args: v.optional(v.record(v.string(), v.unknown())), id: v.optional(v.string()) })),
});

/**
 * A `generateContent` reply as far as Tollgate reads it; its output is a {@link GeminiResponse}.
 * Checked once per whole reply (stream events are read field by field as they come).
 */
export const geminiResponseSchema = v.looseObject({
  candidates: v.optional(
    v.array(
      v.looseObject({
        content: v.optional(v.looseObject({ role: v.optional(v.string()), parts: v.optional(v.array(geminiReplyPartSchema)) })),
        finishReason: v.optional(v.string()),
        index: v.optional(v.number()),
      }),
    ),
  ),
  promptFeedback: v.optional(v.looseObject({ blockReason: v.optional(v.string()) })),
  usageMetadata: v.optional(
    v.looseObject({
      promptTokenCount: count,
      candidatesTokenCount: count,
      thoughtsTokenCount: count,
      cachedContentTokenCount: count,
      toolUsePromptTokenCount: count,
      totalTokenCount: count,
    }),
  ),
  modelVersion: v.optional(v.string()),
  responseId: v.optional(v.string()),
});
