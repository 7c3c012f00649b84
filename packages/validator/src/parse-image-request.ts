import * as v from 'valibot';
import type { Result } from '@tollgate/core';
import type { Invalid } from './fail';
import { imageRequestSchema } from './image-schema';
import { issuesToFail } from './issue-to-fail';

/** An image request that passed the first phase; {@link resolveImageRequest} checks it against the model. */
export interface ParsedImageRequest {
  /** The requested model id. */
  model: string;
  /** The text prompt. */
  prompt: string;
  /** Images to generate, 1 to 4; default 1. */
  n: number;
  /** One of the spec's ratios, when the client chose one. */
  aspect_ratio?: string;
  /** `1k` or `2k`, when the client chose one. */
  resolution?: string;
  /** The quality setting, when the client chose one. */
  quality?: string;
  /** Reference images as sent (data URLs are checked in the second phase). */
  reference_images: string[];
}

/** The result of {@link parseImageRequest}. */
export type ParseImageRequestResult = Result<ParsedImageRequest, Invalid>;

/**
 * First phase of an image request: wrong types or a missing model or prompt are
 * `invalid_request_body`; values out of range and unlisted fields `invalid_parameter` naming the field.
 *
 * @example
 * const image = parseImageRequest(json.value);
 * if (!image.ok) return refuse(image);
 */
export function parseImageRequest(body: Record<string, unknown>): ParseImageRequestResult {
  const result = v.safeParse(imageRequestSchema, body);
  if (!result.success) return issuesToFail(result.issues);
  const input = result.output;
  const parsed: ParsedImageRequest = {
    model: input.model,
    prompt: input.prompt,
    n: input.n ?? 1,
    reference_images: input.reference_images ?? [],
  };
  if (input.aspect_ratio != null) parsed.aspect_ratio = input.aspect_ratio;
  if (input.resolution != null) parsed.resolution = input.resolution;
  if (input.quality != null) parsed.quality = input.quality;
  return { ok: true, value: parsed };
}
