import { sniffBase64ImageType } from '@tollgate/validator';
import { ProviderError, type CallOptions, type GeneratedImage, type ProviderImageRequest } from '../provider';
import { parseDataUrl } from '../http/parse-data-url';
import type { GeminiPart, GeminiRequest, GeminiResponse } from './gemini-api';
import { mapGeminiFinishReason } from './map-gemini-finish-reason';
import { geminiUrl, postGemini, readGeminiReply, type GeminiTransport } from './post-gemini';

/**
 * The `generateContent` body of one image: reference images then the prompt, IMAGE output only,
 * the aspect ratio, and `imageSize: '2K'` for the 2k resolution (1K is the API's default).
 */
export function convertToGeminiImageRequest(request: ProviderImageRequest): GeminiRequest {
  const parts: GeminiPart[] = [];
  for (const url of request.reference_images) {
    const data = parseDataUrl(url);
    if (data === undefined) throw new ProviderError('invalid_request', { accepted: false });
    // The type of the bytes, not the label: Gemini refuses `image/jpg`, which clients send and the validator takes.
    parts.push({ inlineData: { mimeType: sniffBase64ImageType(data.base64) ?? data.mediaType, data: data.base64 } });
  }
  parts.push({ text: request.prompt });
  return {
    contents: [{ role: 'user', parts }],
    generationConfig: {
      responseModalities: ['IMAGE'],
      imageConfig: { aspectRatio: request.aspect_ratio, ...(request.resolution === '2k' ? { imageSize: '2K' as const } : {}) },
    },
  };
}

/**
 * Generates `n` images with `n` parallel `generateContent` calls (image models take no
 * `candidateCount` above 1). Delivered images are returned even when some calls fail; when none
 * delivers, the first failure is thrown.
 * @example
 * const images = await geminiImages(transport, { prompt: 'a fox', n: 2, aspect_ratio: '1:1', resolution: '1k', reference_images: [] }, { upstream: 'gemini-2.5-flash-image' });
 */
export async function geminiImages(transport: GeminiTransport, request: ProviderImageRequest, options: CallOptions): Promise<GeneratedImage[]> {
  const body = convertToGeminiImageRequest(request);
  const url = geminiUrl(transport, options.upstream, 'generateContent');
  const one = async (): Promise<GeneratedImage> => {
    const response = await postGemini(transport, url, body, options.signal);
    return imageOf(await readGeminiReply(response, options.signal));
  };
  const results = await Promise.allSettled(Array.from({ length: request.n }, one));
  const images = results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  if (images.length > 0) return images;
  const failure = results.find((result) => result.status === 'rejected') as PromiseRejectedResult;
  throw failure.reason;
}

/** The first non-thought inline image of a reply; a filtered or image-less reply is an error. */
function imageOf(response: GeminiResponse): GeneratedImage {
  const candidate = response.candidates?.[0];
  // Gemini 3 image models may return draft images marked as thoughts before the final one.
  const part = candidate?.content?.parts?.find((item) => item.inlineData?.mimeType?.startsWith('image/') && !item.thought);
  if (part?.inlineData) return { b64_json: part.inlineData.data, mime_type: part.inlineData.mimeType };
  const filtered = response.promptFeedback?.blockReason !== undefined || mapGeminiFinishReason(candidate?.finishReason, false) === 'content_filter';
  throw new ProviderError(filtered ? 'content_filter' : 'upstream_error', { accepted: true, status: 200 });
}
