import { checkPageUrl } from './check-page-url';
import { contentKind, decodeBody, loadHtmlConverter, pageContent, parseContentType, sniffContentType } from './page-content';
import type { PageFetchResult, PageFetcher, PageFetcherOptions, PageRequest, PageUrlCheck } from './page-fetcher';
import { raceSignal } from './race-signal';
import { readCappedBody } from '../http/read-capped-body';
import { isPublicAddress } from './is-public-address';
import { parseHostAddress } from './parse-host-address';
import { NOT_PUBLIC_MESSAGE, resolvePageAddress } from './resolve-page-address';

const DEFAULT_MAX_BYTES = 5 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 15_000;
const DEFAULT_MAX_REDIRECTS = 5;
const DEFAULT_USER_AGENT = 'Tollgate-PageFetch/0.1 (+https://github.com/tollgate)';
const ACCEPT = 'text/html, application/xhtml+xml;q=0.9, text/markdown;q=0.9, text/plain;q=0.8, application/json;q=0.8, */*;q=0.1';
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** Why a fetch was stopped, to tell a time cap from a gone client. */
class FetchStopped extends Error {
  constructor(readonly reason: 'timeout' | 'cancelled') {
    super(reason);
  }
}

type Failure = Extract<PageFetchResult, { ok: false }>;

function refused(message: string): Failure & { code: 'invalid_parameter' } {
  return { ok: false, code: 'invalid_parameter', message };
}

/**
 * The built-in page fetch of `POST /v1/fetch`, guarded against SSRF: http(s) only, the host
 * resolved and every address checked public on the first request and on every redirect, the
 * connection made to the checked address (the transport never looks the name up again), with a
 * size cap, a time cap and HTML turned into clean markdown.
 *
 * @example
 * const fetcher = createPageFetcher({ resolve: nodeResolver(), transport: nodeTransport() });
 * const result = await fetcher.fetch({ url: 'https://example.com/', format: 'markdown' });
 * if (result.ok) console.log(result.page.title, result.page.content);
 */
export function createPageFetcher(options: PageFetcherOptions): PageFetcher {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const headers = { 'user-agent': options.userAgent ?? DEFAULT_USER_AGENT, accept: ACCEPT };
  // A configured fetcher starts loading the HTML converter now, off the first page's clock. A failed
  // load is not lost: the first HTML page loads it again and that error reaches its caller.
  void loadHtmlConverter().catch(() => undefined);

  async function run(request: PageRequest, signal: AbortSignal): Promise<PageFetchResult> {
    const first = checkPageUrl(request.url);
    if (!first.ok) return refused(first.message);
    const requested = first.url;
    let url = requested;
    for (let redirects = 0; ; redirects += 1) {
      const target = await raceSignal(resolvePageAddress(url, options), signal);
      if (!target.ok) {
        // After a redirect, say so: the client's own url was public.
        if (redirects > 0 && target.code === 'invalid_parameter') return refused(`url redirected to an address that is refused: ${target.message}`);
        return target;
      }
      let response: Response;
      try {
        response = await raceSignal(options.transport({ url, address: target.address, signal, headers: { ...headers } }), signal);
      } catch (error) {
        if (signal.aborted) throw error;
        return { ok: false, code: 'upstream_unavailable', message: 'The page could not be reached.' };
      }
      const location = response.headers.get('location');
      if (REDIRECT_STATUSES.has(response.status) && location !== null) {
        response.body?.cancel().catch(() => undefined);
        if (redirects >= maxRedirects) return refused(`url redirected more than ${maxRedirects} times.`);
        const next = checkPageUrl(location, url);
        if (!next.ok) return refused(`url redirected to an address that is refused: ${next.message}`);
        url = next.url;
        continue;
      }
      return readPage(request, requested, url, response, signal);
    }
  }

  async function readPage(request: PageRequest, requested: URL, url: URL, response: Response, signal: AbortSignal): Promise<PageFetchResult> {
    const { type: declared, charset } = parseContentType(response.headers.get('content-type'));
    // Refuse a declared binary type before reading a byte of it.
    if (declared !== '' && contentKind(declared) === 'refused') {
      response.body?.cancel().catch(() => undefined);
      return refused(`url points to content of type ${declared}; fetch reads HTML, text, markdown, JSON and XML.`);
    }
    let body: Awaited<ReturnType<typeof readCappedBody>>;
    try {
      body = await readCappedBody(response, maxBytes, signal);
    } catch (error) {
      if (signal.aborted) throw error;
      return { ok: false, code: 'upstream_error', message: 'The page failed while its body was read.' };
    }
    const type = declared !== '' ? declared : sniffContentType(body.bytes);
    const kind = type === '' ? 'refused' : contentKind(type);
    if (kind === 'refused') return refused('url points to binary content; fetch reads HTML, text, markdown, JSON and XML.');
    const text = decodeBody(body.bytes, charset, body.truncated, kind === 'html');
    const { title, content } = await pageContent(kind, text, request.format, url.href);
    return {
      ok: true,
      page: {
        object: 'page',
        url: requested.href,
        final_url: url.href,
        status: response.status,
        title,
        content_type: type,
        content,
        truncated: body.truncated,
      },
    };
  }

  return {
    precheck(input: string): PageUrlCheck {
      const checked = checkPageUrl(input);
      if (!checked.ok) return refused(checked.message);
      // The same rule as after DNS (allowAddress included), applied to a literal host without I/O.
      const literal = parseHostAddress(checked.url.hostname);
      if (literal !== undefined && !isPublicAddress(literal) && options.allowAddress?.(literal) !== true) return refused(NOT_PUBLIC_MESSAGE);
      return { ok: true };
    },
    async fetch(request, callOptions = {}) {
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(new FetchStopped('timeout')), timeoutMs);
      const outer = callOptions.signal;
      const onAbort = () => controller.abort(new FetchStopped('cancelled'));
      if (outer?.aborted) onAbort();
      outer?.addEventListener('abort', onAbort, { once: true });
      try {
        return await run(request, controller.signal);
      } catch (error) {
        if (!controller.signal.aborted) throw error;
        const reason = controller.signal.reason instanceof FetchStopped ? controller.signal.reason.reason : 'cancelled';
        return {
          ok: false,
          code: 'upstream_error',
          message: reason === 'timeout' ? `The page did not load within ${Math.ceil(timeoutMs / 1000)} s.` : 'The fetch was cancelled.',
        };
      } finally {
        clearTimeout(timer);
        outer?.removeEventListener('abort', onAbort);
      }
    },
  };
}
