import type { CallOptions, ProviderSettings, SearchProvider, SearchResult } from '../provider';
import * as v from 'valibot';
import { checkReply } from '../http/check-reply';
import { toPublishedAt } from './published-at';
import { searchGet } from './search-get';
import { stripHtml } from './strip-html';

/** Brave's largest `count`. */
const MAX_COUNT = 20;

/**
 * A Brave web search reply as far as Tollgate reads it: an object whose `web.results`, when
 * present, is a list. A result without an http(s) URL is skipped rather than failing the reply.
 */
const braveReplySchema = v.looseObject({
  web: v.nullish(
    v.looseObject({
      results: v.nullish(
        v.array(
          v.nullable(
            v.looseObject({
              url: v.optional(v.unknown()),
              title: v.optional(v.unknown()),
              description: v.optional(v.unknown()),
              page_age: v.optional(v.unknown()),
            }),
          ),
        ),
      ),
    }),
  ),
});

/** Normalised results of a Brave web search reply (snippets without highlight tags), at most `max`. */
export function braveResults(reply: unknown, max: number): SearchResult[] {
  const results = checkReply(braveReplySchema, reply, 200).web?.results ?? [];
  const out: SearchResult[] = [];
  for (const result of results) {
    if (out.length >= max) break;
    if (typeof result?.url !== 'string' || !/^https?:\/\//i.test(result.url)) continue;
    const title = typeof result.title === 'string' ? stripHtml(result.title) : '';
    const entry: SearchResult = {
      title: title === '' ? result.url : title,
      url: result.url,
      snippet: typeof result.description === 'string' ? stripHtml(result.description) : '',
    };
    // `page_age` is the page's date; `age` is a human phrase ("2 days ago") and is not used.
    const published = toPublishedAt(result.page_age);
    if (published !== undefined) entry.published_at = published;
    out.push(entry);
  }
  return out;
}

/**
 * Seconds until Brave admits again, from X-RateLimit-Remaining/Reset ("1, 1419704": one value per
 * policy window): the reset of the first exhausted window, else the first window's reset.
 */
export function braveRetryAfter(headers: Headers): number | undefined {
  const numbers = (name: string) => (headers.get(name) ?? '').split(',').map((value) => (/^\s*\d+\s*$/.test(value) ? Number(value) : Number.NaN));
  const resets = numbers('x-ratelimit-reset');
  const remaining = numbers('x-ratelimit-remaining');
  const exhausted = remaining.indexOf(0);
  const reset = resets[Math.max(exhausted, 0)];
  return reset !== undefined && Number.isFinite(reset) && reset >= 0 ? reset : undefined;
}

/**
 * A search provider on the Brave Search API (`GET {baseURL}/web/search?q=…&count=…`, key in
 * `X-Subscription-Token`). `apiKey` is required; `baseURL` defaults to
 * `https://api.search.brave.com/res/v1`.
 *
 * @example
 * const provider = brave({ apiKey: process.env.BRAVE_API_KEY });
 * await provider.search({ query: 'tollgate', max_results: 5 }, { upstream: 'brave' });
 */
export function brave(settings: ProviderSettings): SearchProvider {
  if (!settings.apiKey) throw new TypeError('brave: apiKey is required (the X-Subscription-Token)');
  const apiKey = settings.apiKey;
  const base = (settings.baseURL ?? 'https://api.search.brave.com/res/v1').replace(/\/+$/, '');
  const fetch = settings.fetch ?? globalThis.fetch;
  return {
    kind: 'brave',
    zeroDataRetention: settings.zeroDataRetention === true,
    ...(settings.attest ? { attest: settings.attest } : {}),
    async search(request: { query: string; max_results: number }, options: CallOptions): Promise<SearchResult[]> {
      const url = new URL(`${base}/web/search`);
      url.searchParams.set('q', request.query);
      url.searchParams.set('count', String(Math.min(MAX_COUNT, Math.max(1, request.max_results))));
      url.searchParams.set('text_decorations', 'false');
      url.searchParams.set('result_filter', 'web');
      const headers = { accept: 'application/json', ...settings.headers, 'x-subscription-token': apiKey };
      const reply = await searchGet({ fetch, url, headers, signal: options.signal, retryAfter: braveRetryAfter });
      return braveResults(reply, request.max_results);
    },
  };
}
