import { encodeBase64 } from './encode-base64';
import { makePng } from './make-png';

/** A Gemini `inlineData` part holding a PNG, as a Gemini image model's reply carries it. */
export interface GeminiImagePart {
  inlineData: { mimeType: 'image/png'; data: string };
}

/**
 * The reply part of a Gemini image model (`candidates[0].content.parts[]`): a real PNG of the
 * given size, seeded, in base64 — for the Gemini fake to put in its `generateContent` replies.
 * @example
 * const part = await geminiImagePart(1024, 1024, 42); // { inlineData: { mimeType: 'image/png', data: 'iVBOR…' } }
 */
export async function geminiImagePart(width: number, height: number, seed = 0): Promise<GeminiImagePart> {
  return { inlineData: { mimeType: 'image/png', data: encodeBase64(await makePng(width, height, { seed })) } };
}
