import type { Fault } from '../fault';
import { createFakeUpstream, type FakeExchange, type FakeUpstream, type FakeUpstreamOptions } from '../fake-upstream';
import { fakeSearchHits, type FakeSearchHit } from './fake-search-hits';

/** Options of {@link fakeSearxng}. */
export interface FakeSearxngOptions extends FakeUpstreamOptions {
  /** The index: results of a query's page (1-based); default {@link fakeSearchHits}, `resultsPerPage` a page. */
  results?: (query: string, page: number) => FakeSearchHit[];
  /** Results a page of the default index; default 12 (merged engines give 10-30 on a real instance). */
  resultsPerPage?: number;
  /** Output formats enabled in settings.yml; default `['html', 'json']`. Others answer 403. */
  formats?: string[];
}

const ENGINES = ['duckduckgo', 'brave', 'startpage', 'wikipedia'];

function htmlError(status: number, title: string, text: string): Response {
  // Flask's (werkzeug's) default error page, which SearXNG sends for 403/404/405/500.
  const body = `<!doctype html>\n<html lang=en>\n<title>${status} ${title}</title>\n<h1>${title}</h1>\n<p>${text}</p>\n`;
  return new Response(body, { status, headers: { 'content-type': 'text/html; charset=utf-8' } });
}

function statusFault(fault: Extract<Fault, { kind: 'status' }>): Response {
  const headers: Record<string, string> = {};
  if (fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
  if (fault.body !== undefined) return new Response(fault.body, { status: fault.status, headers });
  // SearXNG's bot limiter answers 429 in plain text; everything else is a werkzeug page.
  if (fault.status === 429) return new Response('Too Many Requests', { status: 429, headers: { ...headers, 'content-type': 'text/plain' } });
  const response = htmlError(fault.status, fault.code ?? 'Error', fault.message ?? 'The server could not complete the request.');
  for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
  return response;
}

/** A SearXNG result record, as `format=json` sends it. */
function searxngResult(hit: FakeSearchHit, position: number) {
  const url = new URL(hit.url);
  const engines = [ENGINES[position % ENGINES.length] as string, ENGINES[(position + 1) % ENGINES.length] as string];
  return {
    url: hit.url,
    title: hit.title,
    content: hit.content,
    publishedDate: hit.publishedDate,
    thumbnail: null,
    engine: engines[0],
    template: 'default.html',
    parsed_url: [url.protocol.slice(0, -1), url.host, url.pathname, '', url.search.slice(1), ''],
    img_src: '',
    priority: '',
    engines,
    positions: [position, position + 1],
    score: Math.round((4 / position) * 1000) / 1000,
    category: 'general',
  };
}

/**
 * A wire-accurate fake of a self-hosted SearXNG's search API (`GET /search?q=…&format=json`):
 * deterministic results per query, SearXNG's reply shape and error pages, and injected faults.
 *
 * @example
 * const upstream = fakeSearxng({ faults: [{ kind: 'status', status: 429 }] });
 * const provider = searxng({ baseURL: 'http://searxng.local', fetch: upstream.fetch });
 */
export function fakeSearxng(options: FakeSearxngOptions = {}): FakeUpstream {
  const formats = options.formats ?? ['html', 'json'];
  const perPage = options.resultsPerPage ?? 12;
  const index = options.results ?? ((query: string, page: number) => fakeSearchHits(query, (page - 1) * perPage, perPage));

  function route(request: Request, { fault, text, stream }: FakeExchange): Response {
    if (fault?.kind === 'status') return statusFault(fault);
    const url = new URL(request.url);
    if (url.pathname !== '/search' && url.pathname !== '/' && !url.pathname.endsWith('/search')) {
      return htmlError(404, 'Not Found', 'The requested URL was not found on the server.');
    }
    if (request.method !== 'GET' && request.method !== 'POST') return htmlError(405, 'Method Not Allowed', 'The method is not allowed for the requested URL.');
    const parameters = request.method === 'POST' ? new URLSearchParams(text) : url.searchParams;
    const format = parameters.get('format') ?? 'html';
    if (!formats.includes(format)) return htmlError(403, 'Forbidden', "You don't have the permission to access the requested resource.");
    const query = (parameters.get('q') ?? '').trim();
    if (format !== 'json')
      return new Response('<!DOCTYPE html><html><title>SearXNG</title></html>', { headers: { 'content-type': 'text/html; charset=utf-8' } });
    if (query === '') return Response.json({ error: 'No query' }, { status: 400 });
    const page = Math.max(1, Number.parseInt(parameters.get('pageno') ?? '1', 10) || 1);
    const hits = index(query, page);
    const body = JSON.stringify({
      query,
      number_of_results: 0,
      results: hits.map((hit, position) => searxngResult(hit, (page - 1) * hits.length + position + 1)),
      answers: [],
      corrections: [],
      infoboxes: [],
      suggestions: [`${query} tutorial`, `${query} example`],
      unresponsive_engines: [],
    });
    const reply = stream([body], {
      fault,
      malformed: '{"query": "broken", "results": [{"url": ',
    });
    return new Response(reply, { status: 200, headers: { 'content-type': 'application/json' } });
  }

  return createFakeUpstream(options, route);
}
