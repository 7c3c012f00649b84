export { fakeGemini } from './fake-gemini';
export type { FakeGeminiOptions } from './fake-gemini';
export { geminiErrorBody, geminiErrorResponse } from './gemini-error-response';
export type { GeminiErrorOptions } from './gemini-error-response';
export { validateGeminiRequest } from './validate-gemini-request';
export type { GeminiWirePart, GeminiWireRequest, ValidateGeminiResult } from './validate-gemini-request';
export * as geminiFixtures from './__fixtures__/gemini-transcripts';
