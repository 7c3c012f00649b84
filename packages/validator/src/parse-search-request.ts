import * as v from 'valibot';
import type { Result } from '@tollgate/core';
import type { Invalid } from './fail';
import { issuesToFail } from './issue-to-fail';
import { integerBetween } from './schema-helpers';

/** A validated web-search request. */
export interface SearchRequest {
  /** The search model, when the client chose one. */
  model?: string;
  /** What to search for. */
  query: string;
  /** Results wanted, 1 to 20; default 10. */
  max_results: number;
}

/** The result of {@link parseSearchRequest}. */
export type ParseSearchRequestResult = Result<SearchRequest, Invalid>;

/** `POST /v1/search` (docs/http-api.md): unlisted fields are refused. */
export const searchRequestSchema = v.strictObject({
  model: v.nullish(v.pipe(v.string(), v.minLength(1, 'must not be empty'))),
  query: v.pipe(v.string(), v.minLength(1, 'must not be empty')),
  max_results: v.nullish(integerBetween(1, 20)),
});

/**
 * Validates a search request: `{model?, query, max_results? (1-20, default 10)}`.
 *
 * @example
 * const search = parseSearchRequest(json.value);
 * if (search.ok) console.log(search.request.max_results); // 10
 */
export function parseSearchRequest(body: Record<string, unknown>): ParseSearchRequestResult {
  const result = v.safeParse(searchRequestSchema, body);
  if (!result.success) return issuesToFail(result.issues);
  const request: SearchRequest = { query: result.output.query, max_results: result.output.max_results ?? 10 };
  if (result.output.model != null) request.model = result.output.model;
  return { ok: true, value: request };
}
