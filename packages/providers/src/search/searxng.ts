import type { CallOptions, ProviderSettings, SearchProvider, SearchResult } from '../provider';
import * as v from 'valibot';
import { checkReply } from '../http/check-reply';
import { toPublishedAt } from './published-at';
import { searchGet } from './search-get';

/**
 * A SearXNG JSON reply as far as Tollgate reads it: a `results` list. A result's fields are read
 * one by one below, and a result without an http(s) URL is skipped rather than failing the reply.
 */
const searxngReplySchema = v.looseObject({
  results: v.array(
    v.nullable(
      v.looseObject({
        url: v.optional(v.unknown()),
        title: v.optional(v.unknown()),
        content: v.optional(v.unknown()),
        publishedDate: v.optional(v.unknown()),
      }),
    ),
  ),
});

/** Normalised results of a SearXNG JSON reply: http(s) results with a URL, at most `max`. */
export function searxngResults(reply: unknown, max: number): SearchResult[] {
  const { results } = checkReply(searxngReplySchema, reply, 200);
  const out: SearchResult[] = [];
  for (const result of results) {
    if (out.length >= max) break;
    if (typeof result?.url !== 'string' || !/^https?:\/\//i.test(result.url)) continue;
    const title = typeof result.title === 'string' && result.title.trim() !== '' ? result.title.trim() : result.url;
    const entry: SearchResult = { title, url: result.url, snippet: typeof result.content === 'string' ? result.content.trim() : '' };
    const published = toPublishedAt(result.publishedDate);
    if (published !== undefined) entry.published_at = published;
    out.push(entry);
  }
  return out;
}

/**
 * A search provider on a self-hosted SearXNG instance's JSON API (`GET {baseURL}/search?q=…&format=json`;
 * the instance must enable the `json` format in settings.yml). `baseURL` is required; no key by
 * default (`apiKey`, when set, is sent as a Bearer token for an authenticating proxy). SearXNG
 * cannot limit its result count: one page is asked for and cut to `max_results`.
 *
 * @example
 * const provider = searxng({ baseURL: 'http://searxng.internal:8080' });
 * await provider.search({ query: 'tollgate', max_results: 5 }, { upstream: 'searxng' });
 */
export function searxng(settings: ProviderSettings): SearchProvider {
  if (!settings.baseURL) throw new TypeError('searxng: baseURL is required (the self-hosted instance)');
  const base = settings.baseURL.replace(/\/+$/, '');
  const fetch = settings.fetch ?? globalThis.fetch;
  return {
    kind: 'searxng',
    zeroDataRetention: settings.zeroDataRetention === true,
    ...(settings.attest ? { attest: settings.attest } : {}),
    async search(request: { query: string; max_results: number }, options: CallOptions): Promise<SearchResult[]> {
      const url = new URL(`${base}/search`);
      url.searchParams.set('q', request.query);
      url.searchParams.set('format', 'json');
      url.searchParams.set('pageno', '1');
      const headers: Record<string, string> = { accept: 'application/json', ...settings.headers };
      if (settings.apiKey) headers.authorization = `Bearer ${settings.apiKey}`;
      const reply = await searchGet({ fetch, url, headers, signal: options.signal });
      return searxngResults(reply, request.max_results);
    },
  };
}
