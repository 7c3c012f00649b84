import type { Fault, FaultPlan } from '../fault';
import { createFakeUpstream, type FakeExchange, type FakeUpstream, type FakeUpstreamOptions } from '../fake-upstream';
import { fakeSearchHits, type FakeSearchHit } from './fake-search-hits';

/** Options of {@link fakeBrave}. */
export interface FakeBraveOptions extends FakeUpstreamOptions {
  /** The subscription token the fake accepts; default `brave-test-key`. */
  apiKey?: string;
  /** The index: up to `count` results of a query; default {@link fakeSearchHits}. */
  results?: (query: string, count: number) => FakeSearchHit[];
  /** Faults: a list used one per request in order, or a function asked on every request. A 429 `retryAfter` becomes the per-second window of X-RateLimit-Reset, as Brave sends it. */
  faults?: FaultPlan;
  /** Clock in milliseconds for the error body's `time`; default `Date.now`. */
  now?: () => number;
}

// Brave's own error wording, so adapters are tested against the real shapes.
const ERRORS: Record<number, { code: string; detail: string }> = {
  401: { code: 'SUBSCRIPTION_TOKEN_INVALID', detail: 'The provided subscription token is invalid.' },
  403: { code: 'OPTION_NOT_IN_PLAN', detail: 'The option is not subscribed in the plan.' },
  422: { code: 'VALIDATION', detail: 'Unable to validate request parameter(s)' },
  429: { code: 'RATE_LIMITED', detail: 'Request rate limit exceeded for plan.' },
};

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#x27;');
}

/** Brave highlights the query's words with <strong> unless `text_decorations=false`. */
function decorate(text: string, query: string, decorations: boolean): string {
  const escaped = escapeHtml(text);
  if (!decorations) return escaped;
  const words = query.split(/\s+/).filter((word) => /^[\p{L}\p{N}]+$/u.test(word));
  if (words.length === 0) return escaped;
  return escaped.replace(new RegExp(`\\b(${words.join('|')})\\b`, 'giu'), '<strong>$1</strong>');
}

function humanAge(iso: string): string {
  return new Date(`${iso}Z`).toLocaleDateString('en-US', { month: 'long', day: 'numeric', year: 'numeric', timeZone: 'UTC' });
}

/**
 * A wire-accurate fake of the Brave Search API (`GET /res/v1/web/search?q=…&count=…` with
 * `X-Subscription-Token`): deterministic results per query, Brave's reply and `ErrorResponse`
 * shapes, its X-RateLimit-* headers, and injected faults.
 *
 * @example
 * const upstream = fakeBrave({ faults: [{ kind: 'status', status: 429, retryAfter: 2 }] });
 * const provider = brave({ apiKey: 'brave-test-key', fetch: upstream.fetch });
 */
export function fakeBrave(options: FakeBraveOptions = {}): FakeUpstream {
  const now = options.now ?? Date.now;
  const apiKey = options.apiKey ?? 'brave-test-key';
  const index = options.results ?? ((query: string, count: number) => fakeSearchHits(query, 0, count));
  let used = 0;

  const rateHeaders = (resetSeconds = 1, remainingNow = 0): Record<string, string> => ({
    'x-ratelimit-limit': '1, 15000',
    'x-ratelimit-policy': '1;w=1, 15000;w=2592000',
    'x-ratelimit-remaining': `${remainingNow}, ${Math.max(0, 15000 - used)}`,
    'x-ratelimit-reset': `${resetSeconds}, 1419704`,
  });

  function error(status: number, extra: { code?: string; detail?: string; meta?: object; headers?: Record<string, string> } = {}): Response {
    const known = ERRORS[status] ?? { code: 'INTERNAL_ERROR', detail: 'An unexpected error occurred.' };
    const body = {
      type: 'ErrorResponse',
      error: {
        id: `0f1e2d3c-${String(status).padStart(4, '0')}-4b5a-9876-${String(upstream.requests.length).padStart(12, '0')}`,
        status,
        code: extra.code ?? known.code,
        detail: extra.detail ?? known.detail,
        meta:
          extra.meta ??
          (status === 429 ? { plan: 'Free', rate_limit: 1, rate_current: 1, quota_limit: 15000, quota_current: used, component: 'rate_limiter' } : {}),
      },
      time: Math.floor(now() / 1000),
    };
    return Response.json(body, { status, headers: extra.headers ?? {} });
  }

  function statusFault(fault: Extract<Fault, { kind: 'status' }>): Response {
    const headers = fault.status === 429 ? rateHeaders(fault.retryAfter ?? 1) : {};
    if (fault.body !== undefined) return new Response(fault.body, { status: fault.status, headers });
    return error(fault.status, { code: fault.code, detail: fault.message, headers });
  }

  function route(request: Request, { fault, stream }: FakeExchange): Response {
    const url = new URL(request.url);
    if (!url.pathname.endsWith('/web/search')) return error(404, { code: 'RESOURCE_NOT_FOUND', detail: 'Resource not found.' });
    const token = request.headers.get('x-subscription-token');
    if (token === null || token === '') {
      return error(422, { meta: { errors: [{ type: 'missing', loc: ['header', 'x-subscription-token'], msg: 'Field required', input: null }] } });
    }
    // As Brave answers a wrong or lapsed token: 422, not 401.
    if (token !== apiKey) return error(422, { code: 'SUBSCRIPTION_TOKEN_INVALID', detail: 'The provided subscription token is invalid.' });
    if (fault?.kind === 'status') return statusFault(fault);
    const query = url.searchParams.get('q') ?? '';
    const count = Number(url.searchParams.get('count') ?? '20');
    const invalid =
      query.trim() === ''
        ? { loc: ['query', 'q'], msg: 'String should have at least 1 character' }
        : query.length > 400 || query.trim().split(/\s+/).length > 50
          ? { loc: ['query', 'q'], msg: 'Query is too long' }
          : !Number.isInteger(count) || count < 1 || count > 20
            ? { loc: ['query', 'count'], msg: 'Input should be less than or equal to 20' }
            : undefined;
    if (invalid) return error(422, { meta: { errors: [{ type: 'value_error', ...invalid, input: query }] } });
    used += 1;
    const decorations = url.searchParams.get('text_decorations') !== 'false' && url.searchParams.get('text_decorations') !== '0';
    const results = index(query, count).map((hit) => {
      const target = new URL(hit.url);
      const result: Record<string, unknown> = {
        title: decorate(hit.title, query, false),
        url: hit.url,
        is_source_local: false,
        is_source_both: false,
        description: decorate(hit.content, query, decorations),
        profile: { name: target.hostname, url: hit.url, long_name: target.hostname, img: `https://imgs.search.brave.com/${target.hostname}.png` },
        language: 'en',
        family_friendly: true,
        type: 'search_result',
        subtype: 'generic',
        is_live: false,
        meta_url: {
          scheme: 'https',
          netloc: target.hostname,
          hostname: target.hostname,
          favicon: `https://imgs.search.brave.com/${target.hostname}.ico`,
          path: target.pathname
            .split('/')
            .filter(Boolean)
            .map((part) => `› ${part}`)
            .join(' '),
        },
      };
      if (hit.publishedDate !== null) {
        result.page_age = hit.publishedDate;
        result.age = humanAge(hit.publishedDate);
      }
      return result;
    });
    const body = JSON.stringify({
      query: {
        original: query,
        show_strict_warning: false,
        is_navigational: false,
        is_news_breaking: false,
        spellcheck_off: true,
        country: 'us',
        bad_results: false,
        should_fallback: false,
        postal_code: '',
        city: '',
        header_country: '',
        more_results_available: results.length === count,
        state: '',
      },
      mixed: { type: 'mixed', main: results.map((_, position) => ({ type: 'web', index: position, all: false })), top: [], side: [] },
      type: 'search',
      web: { type: 'search', results, family_friendly: true },
    });
    const reply = stream([body], {
      fault,
      malformed: '{"query": {"original": ',
    });
    return new Response(reply, { status: 200, headers: { 'content-type': 'application/json', ...rateHeaders(1, 0) } });
  }

  const upstream = createFakeUpstream(options, route);
  return upstream;
}
