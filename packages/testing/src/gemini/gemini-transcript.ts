import { splitWords } from '../openai/openai-reply';

/** Everything one fake Gemini reply says, decided before it is put on the wire. */
export interface GeminiReplyPlan {
  responseId: string;
  modelVersion: string;
  /** When set, the prompt was blocked: no candidates, only promptFeedback. */
  blockReason?: string;
  text: string;
  functionCalls: { name: string; args: Record<string, unknown>; thoughtSignature?: string }[];
  /** Inline images of the reply (image models). */
  images: { mimeType: string; data: string }[];
  finishReason: string;
  usage: { promptTokenCount: number; candidatesTokenCount: number; thoughtsTokenCount: number; cachedContentTokenCount: number };
}

/** A fake thought signature: real ones are opaque base64. */
export const FAKE_THOUGHT_SIGNATURE = 'CiQB0e2Kb3FakeThoughtSignatureForTestsOnly==';

/** The `usageMetadata` of a plan; `final` false gives the running figures of a mid-stream event. */
export function geminiUsageMetadata(plan: GeminiReplyPlan, final = true): Record<string, unknown> {
  const { promptTokenCount, candidatesTokenCount, thoughtsTokenCount, cachedContentTokenCount } = plan.usage;
  const candidates = final ? candidatesTokenCount : 0;
  const thoughts = final || thoughtsTokenCount > 0 ? thoughtsTokenCount : 0;
  return {
    promptTokenCount,
    ...(final && !plan.blockReason ? { candidatesTokenCount: candidates } : {}),
    totalTokenCount: promptTokenCount + candidates + thoughts,
    ...(cachedContentTokenCount > 0 ? { cachedContentTokenCount, cacheTokensDetails: [{ modality: 'TEXT', tokenCount: cachedContentTokenCount }] } : {}),
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: promptTokenCount }],
    ...(thoughts > 0 ? { thoughtsTokenCount: thoughts } : {}),
  };
}

/** The non-streamed `generateContent` reply of a plan. */
export function geminiResponse(plan: GeminiReplyPlan): Record<string, unknown> {
  if (plan.blockReason)
    return {
      promptFeedback: { blockReason: plan.blockReason },
      usageMetadata: geminiUsageMetadata(plan),
      modelVersion: plan.modelVersion,
      responseId: plan.responseId,
    };
  const parts: Record<string, unknown>[] = [];
  if (plan.text !== '') parts.push({ text: plan.text });
  for (const image of plan.images) parts.push({ inlineData: image });
  for (const call of plan.functionCalls) parts.push(functionCallPart(call));
  return {
    candidates: [{ content: { parts, role: 'model' }, finishReason: plan.finishReason, index: 0 }],
    usageMetadata: geminiUsageMetadata(plan),
    modelVersion: plan.modelVersion,
    responseId: plan.responseId,
  };
}

/**
 * The events of `streamGenerateContent?alt=sse` for a plan: each a whole GenerateContentResponse
 * with the next text piece (one word here) and running usage; function calls arrive whole in one
 * event; the last event carries the finish reason and the final usage. Lines end `\r\n` like
 * Google's frontends send them.
 */
export function geminiStreamEvents(plan: GeminiReplyPlan): string[] {
  if (plan.blockReason) return [sse(geminiResponse(plan))];
  const partsList: Record<string, unknown>[][] = splitWords(plan.text).map((text) => [{ text }]);
  if (plan.images.length > 0) partsList.push(plan.images.map((image) => ({ inlineData: image })));
  if (plan.functionCalls.length > 0) partsList.push(plan.functionCalls.map(functionCallPart));
  if (partsList.length === 0) partsList.push([{ text: '' }]);
  return partsList.map((parts, index) => {
    const last = index === partsList.length - 1;
    const candidate = { content: { parts, role: 'model' }, ...(last ? { finishReason: plan.finishReason } : {}), index: 0 };
    return sse({ candidates: [candidate], usageMetadata: geminiUsageMetadata(plan, last), modelVersion: plan.modelVersion, responseId: plan.responseId });
  });
}

function functionCallPart(call: GeminiReplyPlan['functionCalls'][number]): Record<string, unknown> {
  return { functionCall: { name: call.name, args: call.args }, ...(call.thoughtSignature ? { thoughtSignature: call.thoughtSignature } : {}) };
}

/** One SSE event as Google's frontends write it. */
export function sse(data: unknown): string {
  return `data: ${JSON.stringify(data)}\r\n\r\n`;
}
