/** Resolves a host name to all of its addresses (A and AAAA), as IP literals. */
export type PageResolver = (hostname: string) => Promise<string[]>;

/** One connection a {@link PageTransport} makes. */
export interface PageTransportRequest {
  /** The page address; Host (and TLS SNI for https) are `url.hostname`, the path is `url.pathname + url.search`. */
  url: URL;
  /** The checked IP address to connect to: the transport must not look the name up again. */
  address: string;
  /** Aborts the connection and the body (time cap, client gone). */
  signal: AbortSignal;
  /** Request headers to send (User-Agent, Accept). */
  headers: Record<string, string>;
}

/** Sends one GET to a fixed address and returns the reply without following redirects. */
export type PageTransport = (request: PageTransportRequest) => Promise<Response>;

/** Options of {@link createPageFetcher}. */
export interface PageFetcherOptions {
  /** DNS: all addresses of a name. */
  resolve: PageResolver;
  /** Connects to the checked address, sending Host/SNI of the URL's host name. */
  transport: PageTransport;
  /** Most body bytes read; the rest is cut and the page marked `truncated`. Default 5 MiB. */
  maxBytes?: number;
  /** Time cap of the whole fetch, redirects and body included, in ms. Default 15,000. */
  timeoutMs?: number;
  /** Most redirects followed. Default 5. */
  maxRedirects?: number;
  /** TEST-ONLY: admits a non-public address (e.g. the loopback test server). Default: none admitted. */
  allowAddress?: (address: string) => boolean;
  /** The User-Agent header sent. */
  userAgent?: string;
}

/** A page fetch request: the body of `POST /v1/fetch` after validation. */
export interface PageRequest {
  /** The page address (http or https). */
  url: string;
  /** `markdown` (default of the endpoint) or `text`. */
  format: 'markdown' | 'text';
}

/** A fetched page: the reply body of `POST /v1/fetch`. */
export interface Page {
  object: 'page';
  /** The requested address, normalised. */
  url: string;
  /** The address after redirects. */
  final_url: string;
  /** The HTTP status of the final reply (a 404 page is returned with status 404). */
  status: number;
  /** The HTML `<title>`; null for other content types or when absent. */
  title: string | null;
  /** The media type of the upstream reply, without parameters (`text/html`). */
  content_type: string;
  /** Markdown or text of HTML pages; the body as it is for text, markdown, JSON and XML. */
  content: string;
  /** Whether the body was cut at the size cap. */
  truncated: boolean;
}

/** What a page fetch returns: the page, or a refusal with a code of the catalogue and a message for the client. */
export type PageFetchResult = { ok: true; page: Page } | { ok: false; code: 'invalid_parameter' | 'upstream_error' | 'upstream_unavailable'; message: string };

/** The outcome of {@link PageFetcher.precheck}: refused on its spelling alone, or worth fetching. */
export type PageUrlCheck = { ok: true } | { ok: false; code: 'invalid_parameter'; message: string };

/** The built-in page fetch of `POST /v1/fetch`. */
export interface PageFetcher {
  /** Fetches one page; never throws for expected failures. */
  fetch(request: PageRequest, options?: { signal?: AbortSignal }): Promise<PageFetchResult>;
  /**
   * Optional, synchronous and without I/O: refuses a URL its spelling already condemns (scheme,
   * credentials, port, an IP-literal host that is not public), so the gateway can refuse it
   * before holding credit. `ok: true` is no promise: `fetch` still checks every resolved address.
   */
  precheck?(url: string): PageUrlCheck;
}
