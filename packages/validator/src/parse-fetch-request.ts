import * as v from 'valibot';
import type { Result } from '@tollgate/core';
import { fail, type Invalid } from './fail';
import { issuesToFail } from './issue-to-fail';
import { oneOf } from './schema-helpers';

/** A validated page-fetch request. */
export interface FetchRequest {
  /** An absolute http(s) URL. */
  url: string;
  /** How the page comes back; default markdown. */
  format: 'markdown' | 'text';
}

/** The result of {@link parseFetchRequest}. */
export type ParseFetchRequestResult = Result<FetchRequest, Invalid>;

// `url` is checked by hand: any wrong url, missing or of the wrong type, is invalid_parameter naming it.
const fetchRequestSchema = v.strictObject({
  url: v.optional(v.unknown()),
  format: v.nullish(oneOf(['markdown', 'text'])),
});

/**
 * Validates a page-fetch request: `{url, format?: "markdown" | "text"}`; `url` must be an absolute
 * http(s) URL (whether its address may be reached is the fetcher's check, after DNS).
 *
 * @example
 * const page = parseFetchRequest({ url: 'https://example.com/' });
 * if (page.ok) console.log(page.request.format); // 'markdown'
 */
export function parseFetchRequest(body: Record<string, unknown>): ParseFetchRequestResult {
  const result = v.safeParse(fetchRequestSchema, body);
  if (!result.success) return issuesToFail(result.issues);
  const url = result.output.url;
  if (typeof url !== 'string' || !isHttpUrl(url)) return fail('invalid_parameter', 'url must be an absolute http or https URL.');
  return { ok: true, value: { url, format: result.output.format ?? 'markdown' } };
}

function isHttpUrl(url: string): boolean {
  try {
    const parsed = new URL(url);
    return (parsed.protocol === 'http:' || parsed.protocol === 'https:') && parsed.hostname !== '';
  } catch {
    return false;
  }
}
